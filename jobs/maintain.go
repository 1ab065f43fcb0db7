package jobs

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/reme-dev/reme/store"
)

// ErrAlreadyRunning is returned when another maintain holds the workspace.
var ErrAlreadyRunning = errors.New("maintain is already running in this workspace")

// Maintain step names, in the order they run; each has its own count.
const (
	StepDuplicateEntries = "duplicate_entries"
	StepDuplicateCards   = "duplicate_cards"
	StepSameNameEntries  = "same_name_entries"
	StepExpiredEntries   = "expired_entries"
	StepStaleMilestones  = "stale_milestones"
	StepExpiredDigest    = "expired_digest"
	StepDailyRetention   = "daily_retention"
	StepNearDuplicates   = "near_duplicates"  // with a model
	StepModelMilestones  = "milestone_review" // with a model
)

var deterministicSteps = []string{StepDuplicateEntries, StepDuplicateCards, StepSameNameEntries,
	StepExpiredEntries, StepStaleMilestones, StepExpiredDigest, StepDailyRetention}

// EntriesDir holds long-term memory entries.
const EntriesDir = "memory/entries"

// MaintainIndex is what maintain needs from the index.
type MaintainIndex interface {
	Locked(ctx context.Context, fn func() error) error
	UpdatePaths(ctx context.Context, paths ...string) error
	// Reconcile brings the index up to date with the files.
	Reconcile(ctx context.Context) (added, modified, deleted int, err error)
	IntegrityCheck(ctx context.Context) ([]string, error)
	// Rebuild indexes every note again from the files.
	Rebuild(ctx context.Context) error
	Optimize(ctx context.Context) error
	// Archive moves src to dst inside run, rewriting every inbound link,
	// after edit (when set) changed the bytes written at dst.
	// Archive runs under the lock held since Reconcile: it does not scan.
	Archive(ctx context.Context, run *store.Run, src, dst string, edit func([]byte) ([]byte, error), why store.Why) error
	Journal() *store.Journal
}

// MaintainOptions configure a maintain run.
type MaintainOptions struct {
	DryRun  bool
	Trigger string
	// MaxChanges caps archive actions per run; MaxPercent caps them at a
	// share of each kind of note (entries, cards, digest nodes), never
	// below one.
	MaxChanges       int
	MaxPercent       int
	DueGraceDays     int // project milestones are archived this long after due
	DailyRetainDays  int // 0 keeps daily cards forever
	KeepDays         int // journal preimages are pruned after this many days
	UseLLM           bool
	Dream            bool
	NearDupThreshold float64
	// StaleAfter is how old a temp file or unused lock must be to be removed.
	StaleAfter time.Duration
	// BeforeApply, when set, runs between the plan and its application
	// (tests edit files there).
	BeforeApply func()
	// Dreamer runs auto_dream inside maintain (nil: not configured).
	Dreamer func(ctx context.Context, run *store.Run) (*DreamResult, error)
}

// MaintainAction is one planned change.
type MaintainAction struct {
	Step   string `json:"step"`
	Action string `json:"action"` // archive, or update for a merge
	Path   string `json:"path"`
	To     string `json:"to,omitempty"`
	Keep   string `json:"keep,omitempty"` // the note that survives
	Reason string `json:"reason"`
	Kind   string `json:"kind"` // entry, card, digest, day page
	Status string `json:"status"`
	Error  string `json:"error,omitempty"`
	sha    string
	edit   func([]byte) ([]byte, error)
	why    store.Why // model and prompt of a model-driven change
}

// Action statuses.
const (
	StatusPlanned = "planned"
	StatusDone    = "done"
	StatusPending = "pending" // over the caps: for a later run
	StatusSkipped = "skipped" // changed since the plan, or a write failed earlier
	StatusFailed  = "failed"
)

// StepCount counts one step's work.
type StepCount struct {
	Step    string `json:"step"`
	Found   int    `json:"found"`
	Applied int    `json:"applied"`
	Pending int    `json:"pending"`
	Skipped int    `json:"skipped"`
	Failed  int    `json:"failed"`
}

// Housekeeping reports the index and workspace upkeep.
type Housekeeping struct {
	Added       int      `json:"index_added"`
	Modified    int      `json:"index_modified"`
	Deleted     int      `json:"index_deleted"`
	IntegrityOK bool     `json:"integrity_ok"`
	Integrity   []string `json:"integrity_problems,omitempty"`
	Rebuilt     bool     `json:"rebuilt"`
	Optimized   bool     `json:"optimized"`
	StaleLocks  []string `json:"stale_locks"`
	TempFiles   []string `json:"temp_files"`
	DayPages    []string `json:"day_pages_refreshed"`
	// MemoryIndex is MEMORY.md when its entry list was (or, dry, would
	// be) rewritten: entries archived, or edited by hand.
	MemoryIndex   string             `json:"memory_index_refreshed,omitempty"`
	OrphanImages  []string           `json:"orphaned_session_images"`
	JournalPruned *store.PruneResult `json:"journal_pruned,omitempty"`
	ReviewDue     []string           `json:"review_due"`
	InvalidDates  []string           `json:"invalid_dates"`
}

// MaintainResult is what a maintain run did (or, dry, would do).
type MaintainResult struct {
	Run          string           `json:"run,omitempty"`
	DryRun       bool             `json:"dry_run"`
	Trigger      string           `json:"trigger"`
	Started      time.Time        `json:"started"`
	Finished     time.Time        `json:"finished"`
	Caps         Caps             `json:"caps"`
	Steps        []StepCount      `json:"steps"`
	Actions      []MaintainAction `json:"actions"`
	Housekeeping Housekeeping     `json:"housekeeping"`
	Dream        *DreamResult     `json:"dream,omitempty"`
	Errors       []string         `json:"errors"`
}

// Caps are the limits a run applied.
type Caps struct {
	MaxChanges int `json:"max_changes"`
	Entries    int `json:"entries"`
	Cards      int `json:"cards"`
	Digest     int `json:"digest"`
}

// maintainItem is a note maintain looks at. Cards are only compared by
// body, so their headers are not parsed (10,000 YAML parses are most of a
// run's time).
type maintainItem struct {
	path  string
	kind  string // entry, card, digest
	date  string // cards: the day
	fm    *store.Frontmatter
	fmErr error
	body  string // entries and digest nodes
	key   string // the normalised body (cards: its hash)
	sha   string
}

// Maintain tidies the workspace: deterministic steps that archive (never
// delete) duplicates, superseded and expired notes within caps, index
// upkeep, and, with a model, near-duplicate review and auto_dream. Every
// change goes through one journal run, so `reme undo RUN` reverses it.
// Only one maintain runs at a time per workspace.
func Maintain(ctx context.Context, env *Env, ix MaintainIndex, opt MaintainOptions) (*MaintainResult, error) {
	log := env.logger()
	lock, ok, err := env.WS.TryLock("maintain")
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, ErrAlreadyRunning
	}
	defer lock.Unlock()
	if opt.MaxChanges <= 0 {
		opt.MaxChanges = 20
	}
	if opt.MaxPercent <= 0 {
		opt.MaxPercent = 10
	}
	if opt.StaleAfter <= 0 {
		opt.StaleAfter = time.Hour
	}
	res := &MaintainResult{DryRun: opt.DryRun, Trigger: opt.Trigger, Started: env.now().UTC(), Errors: []string{}}
	hk := &res.Housekeeping
	hk.StaleLocks, hk.TempFiles, hk.DayPages, hk.OrphanImages, hk.ReviewDue, hk.InvalidDates = []string{}, []string{}, []string{}, []string{}, []string{}, []string{}
	fail := func(what string, err error) {
		res.Errors = append(res.Errors, fmt.Sprintf("%s: %v", what, err))
		log.Warn("maintain", "step", what, "error", err)
	}
	phase := time.Now()
	timed := func(what string) {
		log.Debug("maintain", "phase", what, "elapsed", time.Since(phase).Round(time.Millisecond))
		phase = time.Now()
	}

	// 1. The index must describe the files before anything is applied.
	// Its integrity check (SQLite's work) runs while the notes are read
	// (file work) for the plan.
	type checked struct {
		problems []string
		err      error
	}
	check := make(chan checked, 1)
	go func() {
		p, err := ix.IntegrityCheck(ctx)
		check <- checked{p, err}
	}()
	items, loadErr := loadMaintainItems(env.WS)
	timed("read notes")
	if c := <-check; c.err != nil {
		fail("integrity check", c.err)
	} else {
		hk.IntegrityOK, hk.Integrity = len(c.problems) == 0, c.problems
		if len(c.problems) > 0 && !opt.DryRun {
			log.Warn("index is damaged; rebuilding from the files", "problems", len(c.problems))
			if err := ix.Rebuild(ctx); err != nil {
				fail("rebuild index", err)
			} else {
				hk.Rebuilt = true
			}
		}
	}
	timed("integrity check")
	if loadErr != nil {
		return nil, loadErr
	}
	if !opt.DryRun {
		if hk.Added, hk.Modified, hk.Deleted, err = ix.Reconcile(ctx); err != nil {
			fail("reconcile index", err)
		}
		timed("reconcile")
	}

	// 2. Plan.
	today := env.Today()
	actions := planMaintain(env.WS, items, today, opt, hk)
	counts := map[string]int{}
	for _, it := range items {
		counts[it.kind]++
	}
	res.Caps = Caps{MaxChanges: opt.MaxChanges, Entries: capOf(counts["entry"], opt.MaxPercent),
		Cards: capOf(counts["card"], opt.MaxPercent), Digest: capOf(counts["digest"], opt.MaxPercent)}
	applyCaps(actions, res.Caps)
	timed("plan")

	var run *store.Run
	if !opt.DryRun {
		run, err = ix.Journal().Begin(store.RunInfo{Command: "maintain", Trigger: opt.Trigger})
		if err != nil {
			return nil, fmt.Errorf("journal maintain: %w", err)
		}
		res.Run = run.ID
		if err := run.Fault("planned"); err != nil {
			run.End(err)
			return nil, err
		}
	}
	if opt.BeforeApply != nil {
		opt.BeforeApply()
	}

	// 3. Apply within the caps; a file edited since the plan is skipped,
	// and the first failed write stops the run: nothing further changes.
	var stop error
	if !opt.DryRun {
		stop = ix.Locked(ctx, func() error { return applyMaintain(ctx, env, ix, run, actions) })
		if stop != nil {
			fail("apply", stop)
		}
	}

	timed("apply")

	// 4. With a model: near-duplicates and milestones for review, auto_dream.
	if stop == nil && opt.UseLLM && env.Model != nil {
		more, err := reviewWithModel(ctx, env, ix, run, items, actions, today, opt, res.Caps)
		if err != nil {
			fail("model review", err)
			stop = err
		}
		actions = append(actions, more...)
	}
	if stop == nil && opt.Dream && opt.Dreamer != nil && !opt.DryRun {
		d, err := opt.Dreamer(ctx, run)
		res.Dream = d
		if err != nil && run.Err() != nil {
			stop = err
		}
		if err != nil {
			fail("auto_dream", err)
		}
	}

	// 5. Housekeeping.
	if stop == nil {
		housekeep(ctx, env, ix, run, opt, hk, fail, timed)
	}

	res.Actions = actions
	res.Steps = countSteps(actions, opt.UseLLM && env.Model != nil)
	if res.Actions == nil {
		res.Actions = []MaintainAction{}
	}
	res.Finished = env.now().UTC()
	if run != nil {
		var runErr error
		switch {
		case run.Err() != nil:
			runErr = run.Err()
		case stop != nil:
			runErr = stop
		case len(res.Errors) > 0:
			runErr = errors.New(strings.Join(res.Errors, "; "))
		}
		if err := run.End(runErr); err != nil {
			fail("journal", err)
		}
		if err := writeMaintainStatus(env.WS, res); err != nil {
			fail("status", err)
		}
	}
	if stop == nil && run != nil {
		stop = run.Err()
	}
	if stop != nil {
		return res, fmt.Errorf("maintain stopped at the first failed write: %w", stop)
	}
	return res, nil
}

func capOf(n, percent int) int {
	c := n * percent / 100
	if c < 1 && n > 0 {
		c = 1
	}
	return c
}

// applyCaps marks planned actions past the caps as pending, in plan order.
func applyCaps(actions []MaintainAction, c Caps) {
	used := map[string]int{}
	total := 0
	for i := range actions {
		a := &actions[i]
		if a.Status != StatusPlanned {
			continue
		}
		limit := c.Digest
		switch a.Kind {
		case "entry":
			limit = c.Entries
		case "card", "day page":
			limit = c.Cards
		}
		if total >= c.MaxChanges || used[a.Kind] >= limit {
			a.Status = StatusPending
			continue
		}
		used[a.Kind]++
		total++
	}
}

// loadMaintainItems reads every entry, card and digest node, cards on
// parallel workers.
func loadMaintainItems(ws *store.Workspace) ([]*maintainItem, error) {
	var items []*maintainItem
	for _, tree := range []struct{ dir, kind string }{{EntriesDir, "entry"}, {store.DigestDir, "digest"}} {
		files, err := listMarkdown(ws, tree.dir)
		if err != nil {
			return nil, err
		}
		for _, f := range files {
			raw, err := os.ReadFile(ws.Abs(f))
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) {
					continue
				}
				return nil, fmt.Errorf("read %s: %w", f, err)
			}
			n := store.ParseNote(f, raw)
			body := n.Content()
			items = append(items, &maintainItem{path: f, kind: tree.kind, fm: n.FM, fmErr: n.FMErr, body: body, key: normalizeBody(body), sha: store.Sum(raw)})
		}
	}
	days, err := os.ReadDir(ws.Abs(store.DailyDir))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("list daily: %w", err)
	}
	var cards []*maintainItem
	for _, d := range days {
		if !d.IsDir() || !store.IsDate(d.Name()) {
			continue
		}
		notes, err := os.ReadDir(ws.Abs(store.DayDir(d.Name())))
		if err != nil {
			return nil, fmt.Errorf("list %s: %w", store.DayDir(d.Name()), err)
		}
		for _, n := range notes {
			name := n.Name()
			if n.Type().IsRegular() && strings.HasSuffix(name, ".md") && !strings.HasPrefix(name, ".") {
				cards = append(cards, &maintainItem{path: store.DayDir(d.Name()) + "/" + name, kind: "card", date: d.Name()})
			}
		}
	}
	var wg sync.WaitGroup
	errs := make([]error, len(cards))
	workers := runtime.GOMAXPROCS(0)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := w; i < len(cards); i += workers {
				c := cards[i]
				raw, err := os.ReadFile(ws.Abs(c.path))
				if err != nil {
					if !errors.Is(err, fs.ErrNotExist) {
						errs[i] = fmt.Errorf("read %s: %w", c.path, err)
					}
					continue
				}
				text, _ := store.DecodeText(raw)
				_, body, _, _ := store.SplitFrontmatter(text)
				c.key = bodyKey(body)
				c.fm, c.sha = store.NewFrontmatter(), store.Sum(raw)
			}
		}(w)
	}
	wg.Wait()
	for i, c := range cards {
		if errs[i] != nil {
			return nil, errs[i]
		}
		if c.sha != "" {
			items = append(items, c)
		}
	}
	return items, nil
}

// listMarkdown lists the notes under a folder, sorted; dot files and
// symlinks are left out.
func listMarkdown(ws *store.Workspace, dir string) ([]string, error) {
	var out []string
	err := walkFiles(ws, dir, func(rel string, d fs.DirEntry) error {
		if strings.HasSuffix(rel, ".md") {
			out = append(out, rel)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", dir, err)
	}
	sort.Strings(out)
	return out, nil
}

// walkFiles calls fn with the workspace path of every regular file under
// dir, leaving out dot files and folders; a missing dir has no files.
func walkFiles(ws *store.Workspace, dir string, fn func(rel string, d fs.DirEntry) error) error {
	root := ws.Abs(dir)
	return filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if strings.HasPrefix(d.Name(), ".") && p != root {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		rel, err := filepath.Rel(ws.Root, p)
		if err != nil {
			return err
		}
		return fn(filepath.ToSlash(rel), d)
	})
}

// bodyKey hashes the normalised body without building it: for the ten
// thousand cards that are only compared, never shown. "" for an empty body.
func bodyKey(body string) string {
	h := sha256.New()
	var buf [4096]byte
	n, space, any := 0, false, false
	for _, r := range body {
		if unicode.IsSpace(r) {
			space = any
			continue
		}
		if space {
			buf[n] = ' '
			n++
			space = false
		}
		any = true
		n += utf8.EncodeRune(buf[n:], unicode.ToLower(r))
		if n > len(buf)-8 {
			h.Write(buf[:n])
			n = 0
		}
	}
	if !any {
		return ""
	}
	h.Write(buf[:n])
	return hex.EncodeToString(h.Sum(nil))
}

// normalizeBody is what "the same body" means: case, spacing and line
// breaks do not count.
func normalizeBody(s string) string {
	return strings.ToLower(strings.Join(strings.Fields(s), " "))
}

// entryDate reads a date key; bad values are reported and ignored.
func itemDate(it *maintainItem, key string, hk *Housekeeping) (string, bool) {
	v := strings.TrimSpace(it.fm.String(key))
	if v == "" {
		return "", false
	}
	d, err := store.NormalizeDate(v)
	if err != nil {
		hk.InvalidDates = append(hk.InvalidDates, fmt.Sprintf("%s: %s %q is not a date", it.path, key, v))
		return "", false
	}
	return d, true
}

// newer orders entries: updated, then created (ISO dates and timestamps
// sort as text), then path.
func newer(a, b *maintainItem) bool {
	for _, k := range []string{"updated", "created"} {
		x, y := strings.TrimSpace(a.fm.String(k)), strings.TrimSpace(b.fm.String(k))
		if x != y {
			return x > y
		}
	}
	return a.path > b.path
}

// planMaintain lists every archive the deterministic steps call for, in
// step order; a note is planned at most once.
func planMaintain(ws *store.Workspace, items []*maintainItem, today string, opt MaintainOptions, hk *Housekeeping) []MaintainAction {
	var actions []MaintainAction
	planned := map[string]bool{}
	plan := func(step string, it *maintainItem, keep, reason string) {
		if planned[it.path] {
			return
		}
		planned[it.path] = true
		a := MaintainAction{Step: step, Action: store.ActionArchive, Path: it.path, Keep: keep, Reason: reason,
			Kind: it.kind, Status: StatusPlanned, sha: it.sha}
		a.edit = archiveEdit(today, it.path, keep, reason)
		actions = append(actions, a)
	}
	var entries, cards, digest []*maintainItem
	for _, it := range items {
		switch it.kind {
		case "entry":
			entries = append(entries, it)
		case "card":
			cards = append(cards, it)
		case "digest":
			digest = append(digest, it)
		}
	}
	// exact duplicates among entries: keep the oldest
	for _, group := range groupBy(entries, func(it *maintainItem) string { return it.key }) {
		keep := group[0]
		for _, it := range group[1:] {
			if newer(keep, it) {
				keep = it
			}
		}
		for _, it := range group {
			if it != keep {
				plan(StepDuplicateEntries, it, keep.path, "same text as "+keep.path)
			}
		}
	}
	// exact duplicates among one day's cards: keep the first by name
	for _, group := range groupBy(cards, func(it *maintainItem) string {
		if it.key == "" {
			return ""
		}
		return it.date + "\x00" + it.key
	}) {
		for _, it := range group[1:] {
			plan(StepDuplicateCards, it, group[0].path, "same text as "+group[0].path)
		}
	}
	// same-name entries: keep the newest
	for _, group := range groupBy(entries, func(it *maintainItem) string {
		return strings.ToLower(strings.TrimSpace(it.fm.String("name")))
	}) {
		var live []*maintainItem
		for _, it := range group {
			if !planned[it.path] {
				live = append(live, it)
			}
		}
		if len(live) < 2 {
			continue
		}
		keep := live[0]
		for _, it := range live[1:] {
			if newer(it, keep) {
				keep = it
			}
		}
		for _, it := range live {
			if it != keep {
				plan(StepSameNameEntries, it, keep.path, "an older entry named "+strings.TrimSpace(it.fm.String("name"))+"; superseded by "+keep.path)
			}
		}
	}
	for _, it := range entries {
		if d, ok := itemDate(it, "expires", hk); ok && d < today {
			plan(StepExpiredEntries, it, "", "expired on "+d)
		}
	}
	grace := opt.DueGraceDays
	for _, it := range entries {
		if strings.TrimSpace(it.fm.String("type")) != "project" {
			continue
		}
		if d, ok := itemDate(it, "due", hk); ok && addDays(d, grace) < today {
			plan(StepStaleMilestones, it, "", fmt.Sprintf("milestone due %s, more than %d day(s) ago", d, grace))
		}
	}
	for _, it := range digest {
		if it.fm.String("durability") == "evergreen" || it.fm.String("evergreen") == "true" {
			continue
		}
		if d, ok := itemDate(it, "until", hk); ok && d < today {
			plan(StepExpiredDigest, it, "", "valid until "+d)
		}
		if d, ok := itemDate(it, "review_after", hk); ok && d < today && !planned[it.path] {
			hk.ReviewDue = append(hk.ReviewDue, it.path+" (review after "+d+")")
		}
	}
	if opt.DailyRetainDays > 0 {
		cutoff := addDays(today, -opt.DailyRetainDays)
		for _, it := range cards {
			if it.date < cutoff {
				plan(StepDailyRetention, it, "", fmt.Sprintf("daily card older than %d day(s)", opt.DailyRetainDays))
			}
		}
	}
	for i := range actions {
		actions[i].To = archivePath(ws, actions[i].Path, actions[:i])
	}
	return actions
}

func addDays(date string, n int) string {
	t, err := time.Parse(time.DateOnly, date)
	if err != nil {
		return date
	}
	return t.AddDate(0, 0, n).Format(time.DateOnly)
}

// groupBy groups items with the same non-empty key (groups of two or more,
// in order of first appearance, members in path order).
func groupBy(items []*maintainItem, key func(*maintainItem) string) [][]*maintainItem {
	by := map[string][]*maintainItem{}
	var keys []string
	for _, it := range items {
		k := key(it)
		if k == "" {
			continue
		}
		if _, ok := by[k]; !ok {
			keys = append(keys, k)
		}
		by[k] = append(by[k], it)
	}
	var out [][]*maintainItem
	for _, k := range keys {
		if len(by[k]) > 1 {
			out = append(out, by[k])
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i][0].path < out[j][0].path })
	return out
}

// archivePath is where a note goes: archive/<its path>, with -2, -3 …
// before the extension when taken.
func archivePath(ws *store.Workspace, rel string, earlier []MaintainAction) string {
	base := store.ArchiveDir + "/" + rel
	ext := path.Ext(base)
	stem := strings.TrimSuffix(base, ext)
	taken := func(p string) bool {
		for _, a := range earlier {
			if a.To == p {
				return true
			}
		}
		return ws.Exists(p)
	}
	p := base
	for i := 2; taken(p); i++ {
		p = fmt.Sprintf("%s-%d%s", stem, i, ext)
	}
	return p
}

// archiveEdit marks a note maintain archives: when, from where, why, and a
// link to the note that supersedes it.
func archiveEdit(today, from, keep, reason string) func([]byte) ([]byte, error) {
	return archiveMark("reme maintain", today, from, keep, reason)
}

// archiveMark marks an archived note: by what, when, from where, why, and
// a link to the note that supersedes it. Frontmatter that does not parse
// is left alone; the note is the truth.
func archiveMark(by, today, from, keep, reason string) func([]byte) ([]byte, error) {
	return func(raw []byte) ([]byte, error) {
		n := store.ParseNote(from, raw)
		if n.FMErr == nil {
			for _, kv := range [][2]string{{"archived", today}, {"archived_from", from}, {"archive_reason", reason}} {
				if err := n.FM.Set(kv[0], kv[1]); err != nil {
					return nil, err
				}
			}
			if !n.HasFM {
				n.HasFM = true
				n.Body = "\n" + n.Body
			}
		}
		note := fmt.Sprintf("> Archived by %s on %s: %s.", by, today, reason)
		if keep != "" {
			note = fmt.Sprintf("> Archived by %s on %s: superseded by [[%s]] (%s).", by, today, keep, reason)
		}
		body := strings.TrimRight(n.Body, "\n")
		if strings.TrimSpace(body) != "" {
			body += "\n\n"
		}
		n.Body = body + note + "\n"
		return n.Bytes()
	}
}

// applyMaintain archives the planned actions through run; the caller
// holds the writer lock. The first failed write (the file, the journal or
// the index) stops it: the actions after it are skipped and the error is
// returned.
func applyMaintain(ctx context.Context, env *Env, ix MaintainIndex, run *store.Run, actions []MaintainAction) error {
	// One scan, so that every archive's inbound links are known without
	// scanning again: nothing else writes while the lock is held.
	if _, _, _, err := ix.Reconcile(ctx); err != nil {
		return err
	}
	var stop error
	for i := range actions {
		a := &actions[i]
		if a.Status != StatusPlanned {
			continue
		}
		if stop != nil {
			a.Status, a.Error = StatusSkipped, "an earlier write failed"
			continue
		}
		if err := ctx.Err(); err != nil {
			stop = err
			a.Status, a.Error = StatusSkipped, err.Error()
			continue
		}
		raw, err := os.ReadFile(env.WS.Abs(a.Path))
		if err != nil || store.Sum(raw) != a.sha {
			a.Status, a.Error = StatusSkipped, "changed since the plan"
			if err != nil {
				a.Error = "gone since the plan"
			}
			continue
		}
		if a.Keep != "" && !env.WS.Exists(a.Keep) {
			a.Status, a.Error = StatusSkipped, a.Keep+" is gone"
			continue
		}
		why := a.why
		why.Reason = a.Step + ": " + a.Reason
		if err := ix.Archive(ctx, run, a.Path, a.To, a.edit, why); err != nil {
			a.Status, a.Error = StatusFailed, err.Error()
			stop = err
			continue
		}
		a.Status = StatusDone
	}
	return stop
}

func countSteps(actions []MaintainAction, withModel bool) []StepCount {
	steps := append([]string{}, deterministicSteps...)
	if withModel {
		steps = append(steps, StepNearDuplicates, StepModelMilestones)
	}
	by := map[string]*StepCount{}
	var out []StepCount
	for _, s := range steps {
		out = append(out, StepCount{Step: s})
	}
	for i := range out {
		by[out[i].Step] = &out[i]
	}
	for _, a := range actions {
		c := by[a.Step]
		if c == nil {
			continue
		}
		c.Found++
		switch a.Status {
		case StatusDone:
			c.Applied++
		case StatusPending:
			c.Pending++
		case StatusSkipped:
			c.Skipped++
		case StatusFailed:
			c.Failed++
		}
	}
	return out
}

// housekeep keeps the index and the workspace tidy.
func housekeep(ctx context.Context, env *Env, ix MaintainIndex, run *store.Run, opt MaintainOptions, hk *Housekeeping, fail func(string, error), timed func(string)) {
	dry := opt.DryRun
	// File times are the wall clock's, whatever clock the run reports in.
	cutoff := time.Now().Add(-opt.StaleAfter)
	var err error
	if hk.TempFiles, err = env.WS.StaleTempFiles(cutoff, !dry); err != nil {
		fail("temp files", err)
	}
	if hk.StaleLocks, err = env.WS.StaleLocks(cutoff, !dry); err != nil {
		fail("stale locks", err)
	}
	if hk.OrphanImages, err = orphanImages(env.WS); err != nil {
		fail("session images", err)
	}
	timed("temp files, locks, images")
	if dry {
		dates, err := dayPageDates(env.WS)
		if err != nil {
			fail("day pages", err)
		}
		for _, date := range dates {
			if dayPageFresh(env.WS, date) {
				continue
			}
			r, err := env.WS.PreviewDayIndex(date)
			if err != nil {
				fail("day pages", err)
				continue
			}
			if r.Changed {
				hk.DayPages = append(hk.DayPages, r.Path)
			}
		}
		if r, err := env.WS.PreviewMemoryIndex(env.Memory.IndexBounds); err != nil {
			fail("MEMORY.md", err)
		} else if r.Changed {
			hk.MemoryIndex = r.Path
		}
	} else {
		err := ix.Locked(ctx, func() error {
			dates, err := dayPageDates(env.WS)
			if err != nil {
				return err
			}
			var touched []string
			for _, date := range dates {
				if dayPageFresh(env.WS, date) {
					continue
				}
				r, err := run.RefreshDayIndex(date)
				if err != nil {
					return err
				}
				if r.Changed {
					hk.DayPages = append(hk.DayPages, r.Path)
					touched = append(touched, r.Path)
				}
			}
			return ix.UpdatePaths(ctx, touched...)
		})
		if err != nil {
			fail("day pages", err)
		}
		timed("day pages")
		err = ix.Locked(ctx, func() error {
			r, err := run.RefreshMemoryIndex(env.Memory.IndexBounds)
			if err != nil || !r.Changed {
				return err
			}
			hk.MemoryIndex = r.Path
			return ix.UpdatePaths(ctx, r.Path)
		})
		if err != nil {
			fail("MEMORY.md", err)
		}
		if err := ix.Optimize(ctx); err != nil {
			fail("optimize index", err)
		} else {
			hk.Optimized = true
		}
		timed("optimize")
	}
	keep := opt.KeepDays
	if keep <= 0 {
		keep = 90
	}
	if hk.JournalPruned, err = ix.Journal().Prune(env.now().AddDate(0, 0, -keep), dry); err != nil {
		fail("journal prune", err)
	}
	timed("journal prune")
}

// dayPageDates lists the days that have a card folder or a day page.
func dayPageDates(ws *store.Workspace) ([]string, error) {
	ents, err := os.ReadDir(ws.Abs(store.DailyDir))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list daily: %w", err)
	}
	seen := map[string]bool{}
	var out []string
	for _, e := range ents {
		date := strings.TrimSuffix(e.Name(), ".md")
		if store.IsDate(date) && !seen[date] {
			seen[date] = true
			out = append(out, date)
		}
	}
	sort.Strings(out)
	return out, nil
}

// dayPageFresh reports whether a day page was written after its folder
// and every card in it last changed: then rendering it again would give
// the same bytes, and the day's cards need not be parsed.
func dayPageFresh(ws *store.Workspace, date string) bool {
	page, err := os.Stat(ws.Abs(store.DayIndexPath(date)))
	if err != nil {
		return false
	}
	dir := ws.Abs(store.DayDir(date))
	di, err := os.Stat(dir)
	if err != nil {
		return false // no folder: the page may need to say so
	}
	if !page.ModTime().After(di.ModTime()) {
		return false
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), ".md") {
			continue
		}
		info, err := e.Info()
		if err != nil || !page.ModTime().After(info.ModTime()) {
			return false
		}
	}
	return true
}

// orphanImages lists session image folders whose conversation is gone.
func orphanImages(ws *store.Workspace) ([]string, error) {
	dir := store.SessionDir + "/images"
	ents, err := os.ReadDir(ws.Abs(dir))
	if errors.Is(err, fs.ErrNotExist) {
		return []string{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", dir, err)
	}
	out := []string{}
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		sid := e.Name()
		if ws.Exists(store.DialogPath(sid)) || ws.Exists(store.SessionDir+"/claude_code/"+sid+".jsonl") {
			continue
		}
		out = append(out, dir+"/"+sid+"/")
	}
	return out, nil
}

// MaintainStatusPath and MaintainHistoryPath are seed 003's audit files.
const (
	MaintainStatusPath  = "maintain/status.json"
	MaintainHistoryPath = "maintain/history.jsonl"
)

// maintainRecord is one run in status.json and history.jsonl.
type maintainRecord struct {
	Run      string      `json:"run"`
	Trigger  string      `json:"trigger"`
	Started  time.Time   `json:"started"`
	Finished time.Time   `json:"finished"`
	Steps    []StepCount `json:"steps"`
	Applied  int         `json:"applied"`
	Pending  int         `json:"pending"`
	Errors   []string    `json:"errors"`
}

func writeMaintainStatus(ws *store.Workspace, res *MaintainResult) error {
	rec := maintainRecord{Run: res.Run, Trigger: res.Trigger, Started: res.Started, Finished: res.Finished, Steps: res.Steps, Errors: res.Errors}
	for _, s := range res.Steps {
		rec.Applied += s.Applied
		rec.Pending += s.Pending
	}
	b, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return err
	}
	if err := store.WriteFileAbs(ws.MetadataPath(MaintainStatusPath), append(b, '\n')); err != nil {
		return err
	}
	line, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(ws.MetadataPath(MaintainHistoryPath), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("maintain history: %w", err)
	}
	defer f.Close()
	if _, err := f.Write(append(line, '\n')); err != nil {
		return fmt.Errorf("maintain history: %w", err)
	}
	return f.Sync()
}
