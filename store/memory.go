package store

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"sort"
	"strings"
)

// The long-term layers of an agent's memory (seed 003): a profile edited
// by hand, one file per long-term entry, and MEMORY.md, the generated index
// of the entries. Daily cards are the third layer.
const (
	MemoryDir       = "memory"
	EntriesDir      = "memory/entries"
	ProfilePath     = "memory/profile.md"
	MemoryIndexPath = "MEMORY.md"

	// MemoryIndexStart and MemoryIndexEnd mark the block of MEMORY.md that
	// reme regenerates; text outside them is the user's.
	MemoryIndexStart = "<!-- memory:auto -->"
	MemoryIndexEnd   = "<!-- /memory:auto -->"
)

// EntryTypes are the four kinds of long-term entry, in the order MEMORY.md
// lists them.
var EntryTypes = []string{"user", "feedback", "project", "reference"}

// entryTypeTitles head the groups of MEMORY.md.
var entryTypeTitles = map[string]string{
	"user": "User", "feedback": "Feedback", "project": "Project", "reference": "Reference",
}

// IsEntryType reports whether t is one of EntryTypes.
func IsEntryType(t string) bool {
	_, ok := entryTypeTitles[t]
	return ok
}

// IsEntryPath reports whether rel is a markdown file under memory/entries/.
func IsEntryPath(rel string) bool {
	return strings.HasPrefix(rel, EntriesDir+"/") && strings.HasSuffix(rel, ".md")
}

// EntryInfo is what the index page and lookups need of an entry.
type EntryInfo struct {
	Path        string `json:"path"`
	Type        string `json:"type"`
	Name        string `json:"name"`
	Description string `json:"description"`
	Created     string `json:"created,omitempty"`
	Updated     string `json:"updated,omitempty"`
	Due         string `json:"due,omitempty"`
	Expires     string `json:"expires,omitempty"`
	// FMErr is why the frontmatter does not parse; the entry is listed
	// apart so that a person can repair it.
	FMErr error `json:"-"`
}

// Date is the day the entry was last saved: updated, else created (the
// first ten characters of a timestamp), or "".
func (e EntryInfo) Date() string {
	for _, v := range []string{e.Updated, e.Created} {
		if d, err := NormalizeDate(v); err == nil {
			return d
		}
	}
	return ""
}

// ListEntries reads every entry under memory/entries/ (subfolders
// included; hidden and temporary files skipped), sorted by path. A missing
// folder is an empty list.
func (w *Workspace) ListEntries() ([]EntryInfo, error) {
	var out []EntryInfo
	err := fs.WalkDir(os.DirFS(w.Root), EntriesDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if strings.HasPrefix(d.Name(), ".") && p != EntriesDir {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() || !strings.HasSuffix(p, ".md") {
			return nil
		}
		n, err := w.ReadNote(p)
		if errors.Is(err, ErrNotFound) {
			return nil // removed while listing
		}
		if err != nil {
			return err
		}
		out = append(out, EntryInfoOf(n))
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", EntriesDir, err)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, nil
}

// EntryInfoOf reads an entry note's keys.
func EntryInfoOf(n *Note) EntryInfo {
	fm := n.FM
	return EntryInfo{
		Path: n.Path, FMErr: n.FMErr,
		Type: strings.TrimSpace(fm.String("type")), Name: strings.TrimSpace(fm.String("name")),
		Description: fm.String("description"),
		Created:     fm.String("created"), Updated: fm.String("updated"),
		Due: fm.String("due"), Expires: fm.String("expires"),
	}
}

// MemoryIndexBounds bound MEMORY.md as a whole (the user's text included);
// zero values take the defaults (200 lines, 25 KB).
type MemoryIndexBounds struct {
	MaxLines int
	MaxBytes int
}

// Default MEMORY.md bounds.
const (
	DefaultMemoryIndexLines = 200
	DefaultMemoryIndexBytes = 25 << 10
)

func (b MemoryIndexBounds) orDefault() MemoryIndexBounds {
	if b.MaxLines <= 0 {
		b.MaxLines = DefaultMemoryIndexLines
	}
	if b.MaxBytes <= 0 {
		b.MaxBytes = DefaultMemoryIndexBytes
	}
	return b
}

// MemoryIndexResult reports a refresh of MEMORY.md.
type MemoryIndexResult struct {
	Path    string `json:"path"`
	Entries int    `json:"entries"`
	Listed  int    `json:"listed"`
	// Omitted entries did not fit within the bounds; the page says so.
	Omitted  int      `json:"omitted"`
	Bounds   string   `json:"bounds"`
	Created  bool     `json:"created"`
	Changed  bool     `json:"changed"`
	Bytes    int      `json:"bytes"`
	Lines    int      `json:"lines"`
	Unlisted []string `json:"-"` // paths left out, for the status report
}

// RefreshMemoryIndex rewrites the block of MEMORY.md between the markers
// from the entries on disk; text outside the markers is kept. No page is
// created while there are no entries.
func (w *Workspace) RefreshMemoryIndex(bounds MemoryIndexBounds) (*MemoryIndexResult, error) {
	entries, err := w.ListEntries()
	if err != nil {
		return nil, err
	}
	return w.WriteMemoryIndex(entries, bounds, w.WriteFile)
}

// PreviewMemoryIndex reports what RefreshMemoryIndex would write, without
// writing.
func (w *Workspace) PreviewMemoryIndex(bounds MemoryIndexBounds) (*MemoryIndexResult, error) {
	entries, err := w.ListEntries()
	if err != nil {
		return nil, err
	}
	return w.WriteMemoryIndex(entries, bounds, func(string, []byte) error { return nil })
}

// WriteMemoryIndex renders MEMORY.md from entries and hands the bytes to
// write (the workspace, or a journaled run) when they changed.
func (w *Workspace) WriteMemoryIndex(entries []EntryInfo, bounds MemoryIndexBounds, write func(rel string, data []byte) error) (*MemoryIndexResult, error) {
	bounds = bounds.orDefault()
	rel := MemoryIndexPath
	res := &MemoryIndexResult{Path: rel, Entries: len(entries),
		Bounds: fmt.Sprintf("%d lines / %d bytes", bounds.MaxLines, bounds.MaxBytes)}
	page, raw, exists, err := w.openPage(rel, len(entries) > 0, "# Long-term memory")
	if err != nil {
		return nil, err
	}
	if page == nil {
		return res, nil
	}
	// What the user wrote outside the block counts against the bounds:
	// measure the page around an empty block.
	empty := MemoryIndexStart + "\n" + MemoryIndexEnd
	body := page.Body
	page.Body = replaceBlock(body, empty, MemoryIndexStart, MemoryIndexEnd)
	shell, err := page.Text()
	if err != nil {
		return nil, err
	}
	block, listed, unlisted := renderMemoryIndexBlock(entries,
		bounds.MaxLines-strings.Count(shell, "\n"), bounds.MaxBytes-len(shell), bounds)
	page.Body = replaceBlock(body, block, MemoryIndexStart, MemoryIndexEnd)
	res.Listed, res.Omitted, res.Unlisted = listed, len(entries)-listed, unlisted
	out, err := page.Bytes()
	if err != nil {
		return nil, err
	}
	res.Bytes, res.Lines = len(out), strings.Count(string(out), "\n")
	if exists && string(out) == string(raw) {
		return res, nil
	}
	if err := write(rel, out); err != nil {
		return nil, err
	}
	res.Created, res.Changed = !exists, true
	return res, nil
}

// maxIndexDescriptionRunes keeps one entry to one readable line.
const maxIndexDescriptionRunes = 200

// MemoryIndexLine is the line MEMORY.md gives an entry.
func MemoryIndexLine(e EntryInfo) string {
	stem := strings.TrimSuffix(path.Base(e.Path), ".md")
	line := "- [[" + e.Path + "|" + stem + "]]"
	if e.FMErr != nil {
		return line + " — the frontmatter does not parse; repair it by hand"
	}
	if d := strings.Join(strings.Fields(e.Description), " "); d != "" {
		line += " — " + TruncateRunes(d, maxIndexDescriptionRunes, "…")
	}
	if e.Due != "" {
		line += " (due " + strings.TrimSpace(e.Due) + ")"
	}
	if e.Expires != "" {
		line += " (expires " + strings.TrimSpace(e.Expires) + ")"
	}
	// a marker in an entry's text would end the block early
	return escapeMarkers(line)
}

// renderMemoryIndexBlock lists the entries grouped by type (newest first
// within a group) in at most maxLines more lines and maxBytes more bytes
// than an empty block. Entries that do not fit are counted on a last line
// that says so; nothing is cut silently.
func renderMemoryIndexBlock(entries []EntryInfo, maxLines, maxBytes int, bounds MemoryIndexBounds) (block string, listed int, unlisted []string) {
	groups := map[string][]EntryInfo{}
	for _, e := range entries {
		g := e.Type
		switch {
		case e.FMErr != nil:
			g = "unreadable"
		case !IsEntryType(g):
			g = "other"
		}
		groups[g] = append(groups[g], e)
	}
	order := append(append([]string{}, EntryTypes...), "other", "unreadable")
	titles := map[string]string{"other": "Other", "unreadable": "Unreadable"}
	for k, v := range entryTypeTitles {
		titles[k] = v
	}
	notice := func(n int) string {
		return fmt.Sprintf("(%d more entr%s not listed: MEMORY.md is bounded to %d lines / %d bytes by memory.index_max_lines and memory.index_max_bytes; every entry is under %s/)\n",
			n, plural(n, "y is", "ies are"), bounds.MaxLines, bounds.MaxBytes, EntriesDir)
	}
	// room for the notice, with the blank line before it
	reserveBytes, reserveLines := len(notice(len(entries)))+1, 2
	var b strings.Builder
	lines := 0
	full := false
	for _, g := range order {
		list := groups[g]
		if len(list) == 0 {
			continue
		}
		sort.SliceStable(list, func(i, j int) bool {
			di, dj := list[i].Date(), list[j].Date()
			if di != dj {
				return di > dj
			}
			return list[i].Path < list[j].Path
		})
		header := "## " + titles[g] + "\n\n"
		if b.Len() > 0 {
			header = "\n" + header
		}
		wroteHeader := false
		for i, e := range list {
			add := MemoryIndexLine(e) + "\n"
			if !wroteHeader {
				add = header + add
			}
			last := listed+len(unlisted) == len(entries)-1
			rb, rl := reserveBytes, reserveLines
			if last && !full {
				rb, rl = 0, 0 // nothing left to report
			}
			if full || lines+strings.Count(add, "\n")+rl > maxLines || b.Len()+len(add)+rb > maxBytes {
				full = true
				for _, rest := range list[i:] {
					unlisted = append(unlisted, rest.Path)
				}
				break
			}
			b.WriteString(add)
			lines += strings.Count(add, "\n")
			wroteHeader = true
			listed++
		}
	}
	if len(entries) == 0 {
		b.WriteString("(no entries yet)\n")
	}
	if n := len(unlisted); n > 0 {
		if b.Len() > 0 {
			b.WriteString("\n")
		}
		b.WriteString(notice(n))
	}
	return MemoryIndexStart + "\n" + b.String() + MemoryIndexEnd, listed, unlisted
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// Kinds of note, from their path.
const (
	KindCard        = "card"
	KindDayPage     = "day_page"
	KindDigest      = "digest"
	KindEntry       = "entry"
	KindProfile     = "profile"
	KindMemoryIndex = "memory_index"
)

// NoteKind says what a workspace note is from its path: a daily card, a
// day page, a digest node, a long-term entry, the profile, MEMORY.md, or
// "" for anything else.
func NoteKind(rel string) string {
	switch {
	case rel == MemoryIndexPath:
		return KindMemoryIndex
	case rel == ProfilePath:
		return KindProfile
	case IsEntryPath(rel):
		return KindEntry
	case strings.HasPrefix(rel, DigestDir+"/"):
		return KindDigest
	case strings.HasPrefix(rel, DailyDir+"/"):
		if DateFromPath(rel) != "" && strings.Count(rel, "/") == 1 {
			return KindDayPage
		}
		return KindCard
	}
	return ""
}

// SearchTypes are what a search can be narrowed to: one of the four entry
// types, any entry, the profile, MEMORY.md, daily cards, digest nodes.
var SearchTypes = []string{"user", "feedback", "project", "reference", KindEntry, KindProfile, KindMemoryIndex, KindCard, KindDigest}

// IsSearchType reports whether t is one of SearchTypes.
func IsSearchType(t string) bool {
	for _, x := range SearchTypes {
		if x == t {
			return true
		}
	}
	return false
}

// MatchesSearchType reports whether a note of this kind, with this
// frontmatter type, is of search type t.
func MatchesSearchType(kind, fmType, t string) bool {
	if IsEntryType(t) {
		return kind == KindEntry && strings.EqualFold(strings.TrimSpace(fmType), t)
	}
	return kind == t
}
