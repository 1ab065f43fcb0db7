package store

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

// Day index markers (ReMe compatible).
const (
	DayIndexStart = "<!-- notes:auto -->"
	DayIndexEnd   = "<!-- /notes:auto -->"
)

// hiddenDayIndexKeys are provenance keys kept out of the day index lines.
var hiddenDayIndexKeys = map[string]bool{"schema_version": true, "session_id": true, "source_conversation": true}

// DailyNote is one card directly under daily/<date>/.
type DailyNote struct {
	Path  string
	FM    *Frontmatter
	FMErr error
}

// Fields returns the frontmatter as a map with the note's path added, the
// shape ReMe's daily_list returns.
func (d DailyNote) Fields() map[string]any {
	m := d.FM.Map()
	m["path"] = d.Path
	return m
}

// DailyNotes lists the direct child *.md files of daily/<date>/ sorted by
// path, with their frontmatter. Subfolders and symlinks are ignored; a
// missing folder is an empty list.
func (w *Workspace) DailyNotes(date string) ([]DailyNote, error) {
	if _, err := ParseDate(date); err != nil {
		return nil, err
	}
	// A day folder (or daily/ itself) that is a symlink out of the
	// workspace is refused, not listed: its files are not the workspace's.
	dir, err := w.Rel(DayDir(date))
	if err != nil {
		return nil, err
	}
	ents, err := os.ReadDir(w.Abs(dir))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, fmt.Errorf("list %s: %w", dir, err)
	}
	var out []DailyNote
	for _, e := range ents {
		name := e.Name()
		if !e.Type().IsRegular() || !strings.HasSuffix(name, ".md") || strings.HasPrefix(name, ".") {
			continue
		}
		rel := dir + "/" + name
		n, err := w.ReadNote(rel)
		if err != nil {
			if errors.Is(err, ErrNotFound) {
				continue // removed while listing
			}
			return nil, err
		}
		out = append(out, DailyNote{Path: rel, FM: n.FM, FMErr: n.FMErr})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, nil
}

// DayIndexResult reports a refresh of daily/<date>.md.
type DayIndexResult struct {
	Date    string           `json:"date"`
	Path    string           `json:"path"`
	Notes   []map[string]any `json:"notes"`
	Created bool             `json:"created"`
	Changed bool             `json:"changed"`
}

// RefreshDayIndex rewrites the auto block of daily/<date>.md from the day's
// cards. Text outside the markers is kept verbatim. Nothing is created for a
// day with no cards and no index page.
func (w *Workspace) RefreshDayIndex(date string) (*DayIndexResult, error) {
	return w.refreshDayIndex(date, w.WriteFile)
}

// PreviewDayIndex reports what RefreshDayIndex would do without writing.
func (w *Workspace) PreviewDayIndex(date string) (*DayIndexResult, error) {
	return w.refreshDayIndex(date, func(string, []byte) error { return nil })
}

// refreshDayIndex renders the page and hands the bytes to write (the
// workspace, or a journaled run).
func (w *Workspace) refreshDayIndex(date string, write func(rel string, data []byte) error) (*DayIndexResult, error) {
	notes, err := w.DailyNotes(date)
	if err != nil {
		return nil, err
	}
	rel, err := w.Rel(DayIndexPath(date))
	if err != nil {
		return nil, err
	}
	res := &DayIndexResult{Date: date, Path: rel, Notes: []map[string]any{}}
	for _, n := range notes {
		res.Notes = append(res.Notes, n.Fields())
	}
	page, raw, exists, err := w.openPage(rel, len(notes) > 0, "")
	if err != nil {
		return nil, err
	}
	if page == nil {
		return res, nil
	}
	fm := page.FM
	if fm.String("name") == "" {
		if err := fm.Set("name", date); err != nil {
			return nil, err
		}
	}
	desc := "No notes today."
	if len(notes) > 0 {
		desc = fmt.Sprintf("%d note(s) today.", len(notes))
	}
	if fm.String("description") != desc {
		if err := fm.Set("description", desc); err != nil {
			return nil, err
		}
	}
	page.HasFM = true
	page.Body = replaceAutoBlock(page.Body, RenderDayIndexBlock(notes))
	out, err := page.Bytes()
	if err != nil {
		return nil, err
	}
	if exists && string(out) == string(raw) {
		return res, nil
	}
	if err := write(rel, out); err != nil {
		return nil, err
	}
	res.Created, res.Changed = !exists, true
	return res, nil
}

// openPage reads a page reme maintains between markers (a day index,
// MEMORY.md), or starts one with body when it does not exist and want is
// set; page is nil when it neither exists nor is wanted. A page whose
// frontmatter does not parse is not rewritten.
func (w *Workspace) openPage(rel string, want bool, body string) (page *Note, raw []byte, exists bool, err error) {
	raw, err = os.ReadFile(w.Abs(rel))
	exists = err == nil
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, nil, false, fmt.Errorf("read %s: %w", rel, err)
	}
	switch {
	case exists:
		page = ParseNote(rel, raw)
	case want:
		page = NewNote(rel, nil, body)
	default:
		return nil, nil, false, nil
	}
	if page.FMErr != nil {
		return nil, nil, false, fmt.Errorf("%s: %w", rel, page.FMErr)
	}
	return page, raw, exists, nil
}

// replaceAutoBlock swaps the day index block in body, or appends it.
func replaceAutoBlock(body, block string) string {
	return replaceBlock(body, block, DayIndexStart, DayIndexEnd)
}

// replaceBlock swaps the block between the start and end markers in body,
// or appends it.
func replaceBlock(body, block, startMarker, endMarker string) string {
	start := strings.Index(body, startMarker)
	if start >= 0 {
		if end := strings.Index(body[start:], endMarker); end >= 0 {
			end += start
			// The start marker nearest the end marker opens the block: an
			// earlier stray start marker (say, one whose end marker a user
			// deleted, after which the block was appended) is user text.
			start = strings.LastIndex(body[:end], startMarker)
			return body[:start] + block + body[end+len(endMarker):]
		}
	}
	trimmed := strings.TrimRight(body, "\n")
	if strings.TrimSpace(trimmed) == "" {
		return "\n" + block + "\n"
	}
	return trimmed + "\n\n" + block + "\n"
}

// Bounds on what one card contributes to a day index line (and a
// daily_list line): a card with a hostile header (thousands of keys, huge
// values) must not make the page huge or hold the index writer lock for
// long. Typical cards have a dozen short keys.
const (
	maxLineKeys  = 64
	maxLineBytes = 8 << 10
)

// RenderDayIndexBlock renders the auto block (markers included, no final
// newline). Marker text inside a card's path or header is escaped, so that
// the block always ends at its own end marker.
func RenderDayIndexBlock(notes []DailyNote) string {
	var b strings.Builder
	b.WriteString(DayIndexStart)
	b.WriteByte('\n')
	if len(notes) == 0 {
		b.WriteString("(none)\n")
	}
	var line strings.Builder
	for _, n := range notes {
		line.Reset()
		line.WriteString("- [[")
		line.WriteString(n.Path)
		line.WriteString("]]")
		writeFields(&line, n.FM, hiddenDayIndexKeys)
		b.WriteString(escapeMarkers(line.String()))
		b.WriteByte('\n')
	}
	b.WriteString(DayIndexEnd)
	return b.String()
}

// commentOpen starts both markers (and any HTML comment, which would hide
// the rest of the page in a markdown viewer).
const commentOpen = "<!--"

// escapeMarkers writes "<!--" as "<\!--", which markdown shows as "<!--"
// but which no marker search (or comment) matches.
func escapeMarkers(s string) string {
	if !strings.Contains(s, commentOpen) {
		return s
	}
	return strings.ReplaceAll(s, commentOpen, `<\!--`)
}

// writeFields appends " key: value" for name, description, then the other
// keys in file order, flattened to one line, skipping hidden keys and empty
// values. It is linear in the header's size and stops after maxLineKeys
// keys or maxLineBytes bytes with a note of what was left out.
func writeFields(b *strings.Builder, fm *Frontmatter, hidden map[string]bool) {
	c := fm.mapping().Content
	// Key node indexes in rendering order; a key repeated in a broken
	// header is shown once.
	order := make([]int, 0, min(len(c)/2, maxLineKeys+2))
	for _, first := range []string{"name", "description"} {
		for i := 0; i+1 < len(c); i += 2 {
			if c[i].Value == first {
				order = append(order, i)
				break
			}
		}
	}
	limit := b.Len() + maxLineBytes
	budget := newExpandBudget() // one alias budget for the whole card
	seen := make(map[string]bool, len(order))
	shown := 0
	next := 0 // next pair to look at after the leading keys
	for k := 0; ; k++ {
		var i int
		switch {
		case k < len(order):
			i = order[k]
		case next+1 < len(c):
			i, next = next, next+2
			if v := c[i].Value; v == "name" || v == "description" {
				continue
			}
		default:
			return
		}
		key := c[i].Value
		if hidden[key] || seen[key] {
			continue
		}
		seen[key] = true
		v := flatValue(c[i+1], budget, false)
		if v == "" {
			continue
		}
		if shown == maxLineKeys || b.Len()+len(key)+len(v)+3 > limit {
			left := keysFrom(c, next, hidden)
			if k < len(order) {
				left += len(order) - k - 1 // leading keys not reached
			}
			if room := limit - b.Len() - len(key) - 3; shown < maxLineKeys && room > 64 {
				b.WriteString(" " + key + ": " + TruncateBytes(v, room) + " …")
			} else {
				left++
			}
			if left > 0 {
				fmt.Fprintf(b, " (+%d more key(s) not shown)", left)
			}
			return
		}
		b.WriteString(" " + key + ": " + v)
		shown++
	}
}

// keysFrom counts the keys from pair index from on that follow name and
// description in a line and are not hidden.
func keysFrom(c []*yaml.Node, from int, hidden map[string]bool) int {
	n := 0
	for i := from; i+1 < len(c); i += 2 {
		if v := c[i].Value; !hidden[v] && v != "name" && v != "description" {
			n++
		}
	}
	return n
}

// FlatValue renders a YAML value on one line: scalars as written (newlines
// become spaces), lists as `[a, b]`, mappings as `{k: v}`. Alias expansion
// is bounded like Map's, so a "billion laughs" header stays small.
func FlatValue(n *yaml.Node) string {
	return flatValue(n, newExpandBudget(), false)
}

func flatValue(n *yaml.Node, budget *expandBudget, viaAlias bool) string {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && i < 100; i++ {
		n, viaAlias = n.Alias, true
	}
	if n == nil || !budget.spend(n, viaAlias) {
		return ""
	}
	switch n.Kind {
	case yaml.ScalarNode:
		if n.ShortTag() == "!!null" {
			return ""
		}
		return strings.Join(strings.Fields(n.Value), " ")
	case yaml.SequenceNode:
		if len(n.Content) == 0 {
			return ""
		}
		parts := make([]string, 0, len(n.Content))
		for _, c := range n.Content {
			parts = append(parts, flatValue(c, budget, viaAlias))
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case yaml.MappingNode:
		if len(n.Content) == 0 {
			return ""
		}
		parts := make([]string, 0, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			parts = append(parts, n.Content[i].Value+": "+flatValue(n.Content[i+1], budget, viaAlias))
		}
		return "{" + strings.Join(parts, ", ") + "}"
	}
	return ""
}

// DailyListLine renders one daily_list row: path, name, description, then
// every other key (provenance included).
func DailyListLine(n DailyNote) string {
	var b strings.Builder
	b.WriteString("- path: " + n.Path)
	writeFields(&b, n.FM, nil)
	return b.String()
}
