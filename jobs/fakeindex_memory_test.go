package jobs

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/reme-dev/reme/store"
)

// allNotes lists every markdown note the index would hold: cards, digest
// nodes, entries, the profile and MEMORY.md.
func (f *fakeIndex) allNotes() []string {
	out := f.notes()
	filepath.WalkDir(f.ws.Abs(store.MemoryDir), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".md") {
			rel, _ := filepath.Rel(f.ws.Root, p)
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	if f.ws.Exists(store.MemoryIndexPath) {
		out = append(out, store.MemoryIndexPath)
	}
	sort.Strings(out)
	return out
}

var fakeStopWords = store.WordSet("how should what when the and you about know use here this that are is")

func (f *fakeIndex) SyncScope(context.Context, ...string) error { return nil }

func (f *fakeIndex) typed(types []string) []NoteHit {
	var out []NoteHit
	for _, rel := range f.allNotes() {
		n, err := f.ws.ReadNote(rel)
		if err != nil {
			continue
		}
		kind, typ := store.NoteKind(rel), n.FM.String("type")
		ok := len(types) == 0 && kind != store.KindMemoryIndex && kind != store.KindDayPage
		for _, t := range types {
			ok = ok || store.MatchesSearchType(kind, typ, t)
		}
		if ok {
			out = append(out, NoteHit{Path: rel, Type: typ, Name: n.Name(), Description: n.Description(), Text: n.Content()})
		}
	}
	return out
}

// SearchNotes scores notes by the query words (and CJK characters) they
// contain; a stand-in for BM25 that keeps tests independent of ranking.
func (f *fakeIndex) SearchNotes(_ context.Context, q NoteQuery) ([]NoteHit, error) {
	var words []string
	for _, w := range strings.Fields(strings.ToLower(q.Query)) {
		w = strings.Trim(w, ".,?!\"'")
		if fakeStopWords[w] {
			continue
		}
		if len(w) > 2 || strings.IndexFunc(w, store.IsCJK) >= 0 {
			words = append(words, w)
		}
	}
	var out []NoteHit
	for _, h := range f.typed(q.Types) {
		text := strings.ToLower(h.Name + " " + h.Description + " " + h.Text)
		for _, w := range words {
			if strings.Contains(text, w) {
				h.Score++
			}
		}
		if h.Score > 0 {
			out = append(out, h)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Score > out[j].Score })
	if q.Limit > 0 && len(out) > q.Limit {
		out = out[:q.Limit]
	}
	return out, nil
}

func (f *fakeIndex) ListNotes(_ context.Context, types ...string) ([]NoteInfo, error) {
	var out []NoteInfo
	for _, h := range f.typed(types) {
		out = append(out, NoteInfo{Path: h.Path, Type: h.Type, Name: h.Name, Description: h.Description})
	}
	return out, nil
}

// Archive moves through the run, as the index does, without retargeting.
func (f *fakeIndex) Archive(_ context.Context, run *store.Run, src, dst string, edit func([]byte) ([]byte, error), why store.Why) error {
	raw, err := os.ReadFile(f.ws.Abs(src))
	if err != nil {
		return err
	}
	if edit != nil {
		if raw, err = edit(raw); err != nil {
			return err
		}
	}
	f.renames = append(f.renames, [2]string{src, dst})
	return run.Rename(src, dst, raw, store.ActionArchive, false, why)
}
