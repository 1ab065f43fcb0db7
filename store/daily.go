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
// path, with their frontmatter. Subfolders are ignored; a missing folder is
// an empty list.
func (w *Workspace) DailyNotes(date string) ([]DailyNote, error) {
	if _, err := ParseDate(date); err != nil {
		return nil, err
	}
	dir := DayDir(date)
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
	rel := DayIndexPath(date)
	res := &DayIndexResult{Date: date, Path: rel, Notes: []map[string]any{}}
	for _, n := range notes {
		res.Notes = append(res.Notes, n.Fields())
	}
	raw, err := os.ReadFile(w.Abs(rel))
	exists := err == nil
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("read %s: %w", rel, err)
	}
	if !exists && len(notes) == 0 {
		return res, nil
	}
	var page *Note
	if exists {
		page = ParseNote(rel, raw)
	} else {
		page = NewNote(rel, nil, "")
	}
	if page.FMErr != nil {
		return nil, fmt.Errorf("%s: %w", rel, page.FMErr)
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

// replaceAutoBlock swaps the marked block in body, or appends it.
func replaceAutoBlock(body, block string) string {
	start := strings.Index(body, DayIndexStart)
	if start >= 0 {
		if end := strings.Index(body[start:], DayIndexEnd); end >= 0 {
			end += start
			// The start marker nearest the end marker opens the block: an
			// earlier stray start marker (say, one whose end marker a user
			// deleted, after which the block was appended) is user text.
			start = strings.LastIndex(body[:end], DayIndexStart)
			return body[:start] + block + body[end+len(DayIndexEnd):]
		}
	}
	trimmed := strings.TrimRight(body, "\n")
	if strings.TrimSpace(trimmed) == "" {
		return "\n" + block + "\n"
	}
	return trimmed + "\n\n" + block + "\n"
}

// RenderDayIndexBlock renders the auto block (markers included, no final
// newline).
func RenderDayIndexBlock(notes []DailyNote) string {
	var b strings.Builder
	b.WriteString(DayIndexStart)
	b.WriteByte('\n')
	if len(notes) == 0 {
		b.WriteString("(none)\n")
	}
	for _, n := range notes {
		b.WriteString("- [[")
		b.WriteString(n.Path)
		b.WriteString("]]")
		for _, kv := range orderedFields(n.FM, hiddenDayIndexKeys) {
			b.WriteString(" " + kv[0] + ": " + kv[1])
		}
		b.WriteByte('\n')
	}
	b.WriteString(DayIndexEnd)
	return b.String()
}

// orderedFields lists name, description, then the other keys in file order,
// as flattened one-line strings, skipping hidden keys and empty values.
func orderedFields(fm *Frontmatter, hidden map[string]bool) [][2]string {
	keys := []string{"name", "description"}
	for _, k := range fm.Keys() {
		if k != "name" && k != "description" {
			keys = append(keys, k)
		}
	}
	var out [][2]string
	seen := map[string]bool{}
	for _, k := range keys {
		if hidden[k] || seen[k] {
			continue
		}
		seen[k] = true
		v := FlatValue(fm.node(k))
		if v == "" {
			continue
		}
		out = append(out, [2]string{k, v})
	}
	return out
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
	for _, kv := range orderedFields(n.FM, nil) {
		b.WriteString(" " + kv[0] + ": " + kv[1])
	}
	return b.String()
}
