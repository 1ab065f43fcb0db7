package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/reme-dev/reme/jobs/llm"
	"github.com/reme-dev/reme/store"
)

// reme context: what an agent is shown of its memory on every turn,
// within a byte budget, in this priority: the profile, the MEMORY.md
// index, the entries relevant to the message, excerpts of today's and
// yesterday's daily notes; then a short manifest of what was included and
// what was left out and why. The same input (and session state) gives the
// same output, and the budget is never exceeded.

// Context defaults.
const (
	DefaultContextBudget   = 8 << 10
	DefaultContextEntries  = 5
	DefaultVerifyAfterDays = 30
	// MinContextBudget is the smallest budget that holds a manifest.
	MinContextBudget = 256
	// Entry counts from which the model picks the relevant entries by name
	// and description: from pickAlways entries, or from pickNoHit when
	// keywords found none.
	pickAlways = 30
	pickNoHit  = 20
	// The most of the budget the profile and the index take: cut beyond
	// it, so that the relevant entries always have room.
	profileShare = 0.25
	indexShare   = 0.5
)

// Context modes.
const (
	// ContextTurn is everything, for a user's message.
	ContextTurn = "turn"
	// ContextStart is the profile and the index, for a new session.
	ContextStart = "start"
)

// ContextRequest asks for the context of one turn.
type ContextRequest struct {
	Query string
	// SessionID keeps, under metadata/context/, which entries' text this
	// session was shown, so that it is not shown again; "" keeps nothing.
	SessionID string
	// Budget bounds the text in bytes (0: DefaultContextBudget).
	Budget int
	// RecentTools were used recently in the session: reference entries on
	// how to use them are skipped unless they warn.
	RecentTools []string
	// Entries is the most relevant entries shown (0: DefaultContextEntries).
	Entries int
	// Mode is ContextTurn (default) or ContextStart.
	Mode string
	// Reset forgets what the session was shown (its context was cleared).
	Reset bool
	// PickTimeout bounds the model's pick (0: no bound of its own).
	PickTimeout time.Duration
}

// ContextItem is something the context holds, or left out.
type ContextItem struct {
	Kind   string `json:"kind"` // profile, index, entry, daily
	Path   string `json:"path"`
	Name   string `json:"name,omitempty"`
	Reason string `json:"reason,omitempty"`
}

// ContextResult is the context of one turn.
type ContextResult struct {
	Text     string        `json:"text"`
	Bytes    int           `json:"bytes"`
	Budget   int           `json:"budget"`
	Included []ContextItem `json:"included"`
	LeftOut  []ContextItem `json:"left_out"`
	// Picker says how the entries were chosen: keyword, or the model.
	Picker   string   `json:"picker"`
	Warnings []string `json:"warnings,omitempty"`
}

// Reasons an item is left out.
const (
	reasonBudget = "budget"
	reasonShown  = "already shown in this session"
)

type ctxBlock struct {
	item ContextItem
	// section heads the first block of its section that is shown
	section string
	// spaced blocks are set apart from the one before by a blank line
	spaced bool
	// share, when set, is the most of the budget the block may take: a
	// long profile or index is cut so that relevant entries keep room
	share float64
	text  string
	// cut, when set, is the block shortened to fit a smaller room
	cut func(room int) (string, bool)
	// hash is an entry's version, recorded as shown
	hash string
}

// BuildContext assembles the context of one turn.
func BuildContext(ctx context.Context, env *Env, req ContextRequest) (*ContextResult, error) {
	if req.Budget == 0 {
		req.Budget = DefaultContextBudget
	}
	if req.Budget < MinContextBudget {
		return nil, inputErr("budget must be at least %d bytes, not %d", MinContextBudget, req.Budget)
	}
	if req.Entries <= 0 {
		req.Entries = DefaultContextEntries
	}
	if req.Mode == "" {
		req.Mode = ContextTurn
	}
	if req.Mode != ContextTurn && req.Mode != ContextStart {
		return nil, inputErr("mode must be %s or %s, not %q", ContextTurn, ContextStart, req.Mode)
	}
	if req.SessionID != "" {
		if err := store.ValidateSessionID(req.SessionID); err != nil {
			return nil, err
		}
	}
	req.Query = strings.TrimSpace(req.Query)
	if req.Mode == ContextTurn && req.Query == "" {
		return nil, inputErr("query cannot be empty: give the user's message")
	}
	res := &ContextResult{Budget: req.Budget, Picker: "keyword", Included: []ContextItem{}, LeftOut: []ContextItem{}}
	shown := map[string]string{}
	if req.SessionID != "" && !req.Reset {
		shown = readShown(env, req.SessionID)
	}

	var blocks []ctxBlock
	if b, ok, warn := profileBlock(env); ok {
		blocks = append(blocks, b)
		if warn != "" {
			res.Warnings = append(res.Warnings, warn)
		}
	}
	if b, ok, err := indexBlock(env); err != nil {
		return nil, err
	} else if ok {
		blocks = append(blocks, b)
	}
	if req.Mode == ContextTurn {
		entries, err := entryBlocks(ctx, env, req, shown, res)
		if err != nil {
			return nil, err
		}
		blocks = append(blocks, entries...)
		daily, err := dailyBlocks(env, req.Query)
		if err != nil {
			return nil, err
		}
		blocks = append(blocks, daily...)
	}
	layout(blocks, res)
	if req.SessionID != "" {
		changed := req.Reset
		for _, b := range blocks {
			if b.hash != "" && hasItem(res.Included, b.item) && shown[b.item.Path] != b.hash {
				shown[b.item.Path], changed = b.hash, true
			}
		}
		// most turns show nothing new: no write, no fsync
		if changed {
			if err := writeShown(env, req.SessionID, shown); err != nil {
				res.Warnings = append(res.Warnings, fmt.Sprintf("could not record what this session was shown: %v", err))
			}
		}
	}
	return res, nil
}

func hasItem(items []ContextItem, it ContextItem) bool {
	for _, x := range items {
		if x.Path == it.Path && x.Kind == it.Kind {
			return true
		}
	}
	return false
}

// layout places the blocks in order within the budget: a block that does
// not fit is shortened when it can say so, else left out; a section's
// heading goes with its first block shown; the manifest comes last and
// always fits.
func layout(blocks []ctxBlock, res *ContextResult) {
	included := make([]bool, len(blocks))
	texts := make([]string, len(blocks))
	for {
		reserve := len(manifest(blocks, included, res, 0, false)) + 64
		var b strings.Builder
		section := ""
		for i, bl := range blocks {
			included[i] = false
			if bl.item.Reason != "" {
				continue // left out before the layout (shown, skipped)
			}
			head := ""
			switch {
			case bl.section != "" && bl.section != section:
				head = "## " + bl.section + "\n\n"
				if b.Len() > 0 {
					head = "\n" + head
				}
			case bl.spaced:
				head = "\n"
			}
			room := res.Budget - reserve - b.Len() - len(head)
			if bl.share > 0 {
				room = min(room, int(bl.share*float64(res.Budget))-len(head))
			}
			text := bl.text
			if len(text) > room {
				cut, ok := "", false
				if bl.cut != nil {
					cut, ok = bl.cut(room)
				}
				if !ok {
					continue
				}
				text = cut
			}
			included[i], texts[i] = true, text
			b.WriteString(head + text)
			section = bl.section
		}
		body := b.String()
		for _, compact := range []bool{false, true} {
			m := sizedManifest(blocks, included, res, len(body), compact)
			if len(body)+len(m) <= res.Budget {
				res.Text = body + m
				res.Bytes = len(res.Text)
				collect(blocks, included, texts, res)
				return
			}
		}
		// the manifest grew past its reserve: give up the last block and try again
		last := -1
		for i := range blocks {
			if included[i] {
				last = i
			}
		}
		if last < 0 {
			res.Text = store.TruncateBytes(manifest(blocks, included, res, 0, true), res.Budget)
			res.Bytes = len(res.Text)
			collect(blocks, included, texts, res)
			return
		}
		blocks[last].item.Reason = reasonBudget
	}
}

func collect(blocks []ctxBlock, included []bool, texts []string, res *ContextResult) {
	res.Included, res.LeftOut = []ContextItem{}, []ContextItem{}
	for i, b := range blocks {
		it := b.item
		switch {
		case included[i]:
			if texts[i] != b.text {
				it.Reason = "cut to fit the budget"
			}
			res.Included = append(res.Included, it)
		default:
			if it.Reason == "" {
				it.Reason = reasonBudget
			}
			res.LeftOut = append(res.LeftOut, it)
		}
	}
}

// sizedManifest is the manifest whose byte count is that of the whole
// output, itself included.
func sizedManifest(blocks []ctxBlock, included []bool, res *ContextResult, body int, compact bool) string {
	m := manifest(blocks, included, res, body, compact)
	for i := 0; i < 4; i++ {
		next := manifest(blocks, included, res, body+len(m), compact)
		if len(next) == len(m) {
			return next
		}
		m = next
	}
	return m
}

// manifest says what the context holds and what it left out, in one
// short paragraph; compact counts instead of naming.
func manifest(blocks []ctxBlock, included []bool, res *ContextResult, used int, compact bool) string {
	type group struct {
		kind, reason string
		names        []string
	}
	var in, out []*group
	add := func(list *[]*group, kind, reason, name string) {
		for _, g := range *list {
			if g.kind == kind && g.reason == reason {
				g.names = append(g.names, name)
				return
			}
		}
		*list = append(*list, &group{kind: kind, reason: reason, names: []string{name}})
	}
	for i, b := range blocks {
		name := b.item.Name
		if name == "" {
			name = b.item.Path
		}
		if included[i] && b.item.Reason == "" {
			add(&in, b.item.Kind, "", name)
		} else {
			reason := b.item.Reason
			if reason == "" {
				reason = reasonBudget
			}
			add(&out, b.item.Kind, reason, name)
		}
	}
	describe := func(g *group) string {
		kind := map[string][2]string{"profile": {"the profile", "the profile"}, "index": {"MEMORY.md", "MEMORY.md"},
			"entry": {"entry", "entries"}, "daily": {"daily note", "daily notes"}}[g.kind]
		if g.kind == "profile" || g.kind == "index" {
			return kind[0]
		}
		n := len(g.names)
		label := kind[1]
		if n == 1 {
			label = kind[0]
		}
		if compact || g.kind == "daily" {
			return fmt.Sprintf("%d %s", n, label)
		}
		return fmt.Sprintf("%d %s (%s)", n, label, strings.Join(g.names, ", "))
	}
	var b strings.Builder
	b.WriteString("\n---\nreme context: ")
	if len(in) == 0 {
		b.WriteString("nothing included")
	} else {
		var parts []string
		for _, g := range in {
			parts = append(parts, describe(g))
		}
		b.WriteString("included " + strings.Join(parts, ", "))
	}
	if len(out) > 0 {
		var parts []string
		for _, g := range out {
			parts = append(parts, describe(g)+": "+g.reason)
		}
		b.WriteString("; left out " + strings.Join(parts, "; "))
	}
	if res.Picker != "keyword" {
		b.WriteString("; entries picked by " + res.Picker)
	}
	fmt.Fprintf(&b, ". %s of %s bytes.\n", thousands(used), thousands(res.Budget))
	return b.String()
}

func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// cutLines shortens text at a line boundary to room bytes, with a last
// line saying where the rest is; min is the least worth showing.
func cutLines(text, where string, min int) func(room int) (string, bool) {
	return func(room int) (string, bool) {
		note := fmt.Sprintf("… (cut to fit the budget; the rest: reme read %s)\n", where)
		if room-len(note) < min {
			return "", false
		}
		keep := store.TruncateBytes(text, room-len(note))
		if i := strings.LastIndexByte(keep, '\n'); i > 0 {
			keep = keep[:i+1]
		} else {
			keep += "\n"
		}
		if len(keep)+len(note) > room {
			return "", false
		}
		return keep + note, true
	}
}

// profileBlock is memory/profile.md as written, its frontmatter
// included; a header that does not parse is left out with a warning, its
// text stays.
func profileBlock(env *Env) (ctxBlock, bool, string) {
	raw, err := os.ReadFile(env.WS.Abs(store.ProfilePath))
	if err != nil {
		return ctxBlock{}, false, ""
	}
	n := store.ParseNote(store.ProfilePath, raw)
	text, _ := store.DecodeText(raw)
	warn := ""
	if n.FMErr != nil {
		warn = fmt.Sprintf("the frontmatter of %s does not parse (%v); only its text is shown", store.ProfilePath, n.FMErr)
		text = n.Content()
	} else if header, body, _, ok := store.SplitFrontmatter(text); ok {
		text = strings.TrimSpace(header) + "\n\n" + strings.TrimSpace(body)
	}
	text = strings.TrimSpace(text)
	if text == "" {
		return ctxBlock{}, false, warn
	}
	text += "\n"
	return ctxBlock{item: ContextItem{Kind: "profile", Path: store.ProfilePath}, section: "About the user (" + store.ProfilePath + ")",
		text: text, cut: cutLines(text, store.ProfilePath, 120), share: profileShare}, true, warn
}

// indexBlock is MEMORY.md without its frontmatter and markers.
func indexBlock(env *Env) (ctxBlock, bool, error) {
	n, err := env.WS.ReadNote(store.MemoryIndexPath)
	if errors.Is(err, store.ErrNotFound) {
		return ctxBlock{}, false, nil
	}
	if err != nil {
		return ctxBlock{}, false, err
	}
	var kept []string
	for _, line := range strings.Split(n.Content(), "\n") {
		t := strings.TrimSpace(line)
		if t == store.MemoryIndexStart || t == store.MemoryIndexEnd {
			continue
		}
		kept = append(kept, line)
	}
	body := strings.TrimSpace(strings.Join(kept, "\n"))
	if body == "" {
		return ctxBlock{}, false, nil
	}
	text := body + "\n"
	return ctxBlock{item: ContextItem{Kind: "index", Path: store.MemoryIndexPath}, section: "Long-term memory index (" + store.MemoryIndexPath + ")",
		text: text, cut: cutLines(text, store.MemoryIndexPath, 200), share: indexShare}, true, nil
}

// warningMark keeps a reference entry about a recently used tool: it warns.
var warningMark = store.LazyRegexp(`(?i)\bwarning\b|\bcaution\b|注意|警告|(?m)^\s*(?:\*\*)?why(?:\*\*)?\s*[:：]`)

// entryBlocks picks the relevant entries and renders their text.
func entryBlocks(ctx context.Context, env *Env, req ContextRequest, shown map[string]string, res *ContextResult) ([]ctxBlock, error) {
	if err := env.Index.SyncScope(ctx, store.MemoryDir); err != nil {
		return nil, err
	}
	all, err := env.Index.ListNotes(ctx, store.KindEntry)
	if err != nil {
		return nil, err
	}
	if len(all) == 0 {
		return nil, nil
	}
	hits, err := env.Index.SearchNotes(ctx, NoteQuery{Query: req.Query, Types: []string{store.KindEntry}, Limit: req.Entries})
	if err != nil {
		return nil, err
	}
	var picked []string
	for _, h := range hits {
		picked = append(picked, h.Path)
	}
	if env.Model != nil && (len(all) >= pickAlways || (len(all) >= pickNoHit && len(hits) == 0)) {
		byModel, err := pickEntries(ctx, env, req, all)
		if err != nil {
			res.Warnings = append(res.Warnings, fmt.Sprintf("the model could not pick entries (%v); keyword matches are shown", err))
		} else {
			picked, res.Picker = byModel, env.ModelID
		}
	}
	today, _ := time.Parse(time.DateOnly, env.Today())
	verify := env.Memory.VerifyAfterDays
	if verify == 0 {
		verify = DefaultVerifyAfterDays
	}
	var out []ctxBlock
	for _, p := range picked {
		raw, err := os.ReadFile(env.WS.Abs(p))
		if errors.Is(err, fs.ErrNotExist) {
			continue // removed since the index saw it
		}
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", p, err)
		}
		n := store.ParseNote(p, raw)
		info := store.EntryInfoOf(n)
		item := ContextItem{Kind: "entry", Path: p, Name: effectiveName(info)}
		hash := store.Sum(raw)
		switch {
		case shown[p] == hash:
			item.Reason = reasonShown
		case info.Type == "reference":
			if tool := toolTopic(n, req.RecentTools); tool != "" && !warningMark().MatchString(n.Content()) {
				item.Reason = "skipped: how to use " + tool + ", which the session used recently"
			}
		}
		var b strings.Builder
		fmt.Fprintf(&b, "### %s (%s) — %s\n", item.Name, firstNonEmpty(info.Type, "untyped"), p)
		if d := strings.Join(strings.Fields(info.Description), " "); d != "" {
			b.WriteString(d + "\n")
		}
		b.WriteString("\n" + strings.TrimSpace(n.Content()) + "\n")
		if saved, err := time.Parse(time.DateOnly, info.Date()); err == nil {
			if days := int(today.Sub(saved).Hours() / 24); days >= verify {
				fmt.Fprintf(&b, "(saved %d days ago — verify before relying on it)\n", days)
			}
		}
		text := b.String()
		out = append(out, ctxBlock{item: item, section: "Relevant long-term entries", spaced: true, text: text, hash: hash, cut: cutLines(text, p, 200)})
	}
	return out, nil
}

// toolTopic names the recently used tool a note is about (its name,
// description or first line mention it as a word), or "".
func toolTopic(n *store.Note, tools []string) string {
	about := strings.ToLower(n.Name() + " " + n.Description() + " " + firstLine(n.Content()))
	for _, t := range tools {
		t = strings.ToLower(strings.TrimSpace(t))
		if t == "" {
			continue
		}
		if containsWord(about, t) {
			return t
		}
	}
	return ""
}

// containsWord reports whether w occurs in s with no letter, digit or _
// right before or after it (a test run for every note and tool of a
// prompt, so no regexp is compiled for it).
func containsWord(s, w string) bool {
	for i := 0; i <= len(s); {
		j := strings.Index(s[i:], w)
		if j < 0 {
			return false
		}
		j += i
		before, _ := utf8.DecodeLastRuneInString(s[:j])
		after, _ := utf8.DecodeRuneInString(s[j+len(w):])
		if (j == 0 || !isWordRune(before)) && (j+len(w) == len(s) || !isWordRune(after)) {
			return true
		}
		_, size := utf8.DecodeRuneInString(s[j:])
		i = j + max(size, 1)
	}
	return false
}

func isWordRune(r rune) bool { return r == '_' || unicode.IsLetter(r) || unicode.IsNumber(r) }

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// pickEntries asks the model for the entries most relevant to the message,
// by name and description; an answer that is not a list of their numbers
// is an error.
func pickEntries(ctx context.Context, env *Env, req ContextRequest, all []NoteInfo) ([]string, error) {
	if req.PickTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, req.PickTimeout)
		defer cancel()
	}
	var list strings.Builder
	for i, e := range all {
		fmt.Fprintf(&list, "%d. %s (%s): %s\n", i+1, firstNonEmpty(e.Name, stemOf(e.Path)), e.Type,
			store.TruncateRunes(strings.Join(strings.Fields(e.Description), " "), 200, "…"))
	}
	data := map[string]any{"Query": req.Query, "Entries": strings.TrimSpace(list.String()), "N": req.Entries}
	system, err := renderPrompt("context_pick", env.Language, "system", data)
	if err != nil {
		return nil, err
	}
	user, err := renderPrompt("context_pick", env.Language, "user", data)
	if err != nil {
		return nil, err
	}
	resp, err := env.model().Chat(ctx, llm.Request{Model: env.ModelID, Messages: []llm.Message{
		llm.TextMessage(llm.RoleSystem, system), llm.TextMessage(llm.RoleUser, user)}})
	if err != nil {
		return nil, err
	}
	answer := strings.TrimSpace(resp.Message.Text())
	start, end := strings.IndexByte(answer, '['), strings.LastIndexByte(answer, ']')
	var nums []int
	if start < 0 || end < start || json.Unmarshal([]byte(answer[start:end+1]), &nums) != nil {
		return nil, fmt.Errorf("the answer %q is not a list of entry numbers", store.TruncateRunes(answer, 120, "…"))
	}
	var out []string
	seen := map[int]bool{}
	for _, k := range nums {
		if k < 1 || k > len(all) {
			return nil, fmt.Errorf("the answer names entry %d of %d", k, len(all))
		}
		if !seen[k] && len(out) < req.Entries {
			seen[k] = true
			out = append(out, all[k-1].Path)
		}
	}
	return out, nil
}

// dailyBlocks lists today's and yesterday's cards, those sharing words
// with the message first.
func dailyBlocks(env *Env, query string) ([]ctxBlock, error) {
	today, _ := time.Parse(time.DateOnly, env.Today())
	words := queryWords(query)
	var out []ctxBlock
	for i, label := range []string{"today", "yesterday"} {
		date := today.AddDate(0, 0, -i).Format(time.DateOnly)
		notes, err := env.WS.DailyNotes(date)
		if err != nil {
			return nil, err
		}
		type card struct {
			n    store.DailyNote
			hits int
		}
		var cards []card
		for _, n := range notes {
			text := strings.ToLower(n.FM.String("name") + " " + n.FM.String("description"))
			hits := 0
			for _, w := range words {
				if strings.Contains(text, w) {
					hits++
				}
			}
			cards = append(cards, card{n, hits})
		}
		sort.SliceStable(cards, func(a, b int) bool { return cards[a].hits > cards[b].hits })
		for _, c := range cards {
			name := firstNonEmpty(c.n.FM.String("name"), stemOf(c.n.Path))
			line := "- [[" + c.n.Path + "|" + name + "]]"
			if d := strings.Join(strings.Fields(c.n.FM.String("description")), " "); d != "" {
				line += ": " + store.TruncateRunes(d, 400, "…")
			}
			out = append(out, ctxBlock{item: ContextItem{Kind: "daily", Path: c.n.Path, Name: name},
				section: fmt.Sprintf("Daily notes, %s (%s)", label, date), text: line + "\n"})
		}
	}
	return out, nil
}

// queryWords are the message's words of three letters or more and its
// CJK character pairs, lower-cased.
func queryWords(q string) []string {
	var out []string
	for _, w := range strings.Fields(strings.ToLower(q)) {
		w = strings.Trim(w, ".,;:!?\"'()[]{}，。；：！？“”‘’（）")
		var run []rune
		flush := func() {
			for i := 0; i+1 < len(run); i++ {
				out = append(out, string(run[i:i+2]))
			}
			if len(run) == 1 {
				out = append(out, string(run))
			}
			run = run[:0]
		}
		latin := strings.Builder{}
		for _, r := range w {
			if store.IsCJK(r) {
				run = append(run, r)
				continue
			}
			flush()
			latin.WriteRune(r)
		}
		flush()
		if l := latin.String(); utf8.RuneCountInString(l) >= 3 {
			out = append(out, l)
		}
	}
	return out
}

// The session's shown entries: path -> sha256 of the version shown.
type shownFile struct {
	Version int               `json:"version"`
	Shown   map[string]string `json:"shown"`
}

func shownPath(env *Env, sid string) string { return env.WS.MetadataPath("context", sid+".json") }

func readShown(env *Env, sid string) map[string]string {
	out := map[string]string{}
	b, err := os.ReadFile(shownPath(env, sid))
	if err != nil {
		return out // nothing recorded: everything is new to the session
	}
	var f shownFile
	if json.Unmarshal(b, &f) != nil {
		env.logger().Warn("the context state of the session does not parse; every entry counts as new", "path", shownPath(env, sid))
		return out
	}
	for p, h := range f.Shown {
		if store.IsEntryPath(p) {
			out[p] = h
		}
	}
	return out
}

func writeShown(env *Env, sid string, shown map[string]string) error {
	b, err := json.Marshal(shownFile{Version: 1, Shown: shown})
	if err != nil {
		return err
	}
	return store.WriteFileAbs(shownPath(env, sid), b) // it creates the folder
}
