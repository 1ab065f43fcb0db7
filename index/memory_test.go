package index

import (
	"context"
	"errors"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/reme-dev/reme/store"
)

var memoryFiles = map[string]string{
	"daily/2026-06-22/bullets-card.md":   "---\nname: bullets-card\ndescription: Talked about bullet answers.\n---\n\n- bullets in answers\n",
	"daily/2026-06-22.md":                "---\nname: 2026-06-22\n---\n\n<!-- notes:auto -->\n- [[daily/2026-06-22/bullets-card.md]]\n<!-- /notes:auto -->\n",
	"digest/wiki/formatting.md":          "---\nname: formatting\n---\n\nBullet answers are easier to scan.\n",
	"memory/entries/answer-format.md":    "---\ntype: feedback\nname: answer-format\ndescription: Bullet answers.\n---\n\nUse bullet answers.\nWhy: scanning.\nHow to apply: always.\n",
	"memory/entries/go-backend.md":       "---\ntype: User\nname: go-backend\ndescription: Ten years of Go.\n---\n\nGo backend, bullet lover.\n",
	"memory/entries/work/deploy-wiki.md": "---\ntype: reference\nname: deploy-wiki\ndescription: Deploy docs.\n---\n\nBullet list of deploy steps on the wiki.\n",
	"memory/profile.md":                  "---\nname: Dana\n---\n\nPrefers bullet answers.\n",
	"MEMORY.md":                          "# Long-term memory\n\n<!-- memory:auto -->\n- [[memory/entries/answer-format.md|answer-format]] — Bullet answers.\n<!-- /memory:auto -->\n",
	"resource/2026-06-22/bullets.md":     "bullet bullet bullet\n",
	"memory/entries/.hidden-draft.md":    "---\ntype: user\n---\n\nbullet\n",
}

func searchPaths(t *testing.T, ix *Index, types ...string) []string {
	t.Helper()
	res, err := ix.Search(context.Background(), SearchOptions{Query: "bullet", Limit: 20, Types: types})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	var out []string
	for _, r := range res.Results {
		if !seen[r.Path] {
			seen[r.Path] = true
			out = append(out, r.Path)
		}
	}
	sortStrings(out)
	return out
}

func sortStrings(s []string) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

func TestMemoryNotesAreIndexedByKindAndType(t *testing.T) {
	ws := newWorkspace(t, memoryFiles)
	ix := openIndex(t, ws, Options{})
	if _, err := ix.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		types []string
		want  []string
	}{
		{nil, []string{"daily/2026-06-22/bullets-card.md", "digest/wiki/formatting.md", "memory/entries/answer-format.md",
			"memory/entries/go-backend.md", "memory/entries/work/deploy-wiki.md", "memory/profile.md"}},
		{[]string{"feedback"}, []string{"memory/entries/answer-format.md"}},
		{[]string{"user", "reference"}, []string{"memory/entries/go-backend.md", "memory/entries/work/deploy-wiki.md"}},
		{[]string{"entry"}, []string{"memory/entries/answer-format.md", "memory/entries/go-backend.md", "memory/entries/work/deploy-wiki.md"}},
		{[]string{"profile"}, []string{"memory/profile.md"}},
		{[]string{"memory_index"}, []string{"MEMORY.md"}},
		{[]string{"card", "digest"}, []string{"daily/2026-06-22/bullets-card.md", "digest/wiki/formatting.md"}},
	}
	for _, tt := range tests {
		if got := searchPaths(t, ix, tt.types...); !cmp.Equal(got, tt.want) {
			t.Errorf("types %v: %v, want %v", tt.types, got, tt.want)
		}
	}
	if _, err := ix.Search(context.Background(), SearchOptions{Query: "bullet", Types: []string{"opinion"}}); !errors.Is(err, ErrBadType) {
		t.Errorf("unknown type: %v", err)
	}
	// MEMORY.md never crowds out the others: limit 1 still finds a note
	res, err := ix.Search(context.Background(), SearchOptions{Query: "answer format bullet", Limit: 1})
	if err != nil || len(res.Results) != 1 || res.Results[0].Path == store.MemoryIndexPath {
		t.Errorf("limit 1: %+v %v", res, err)
	}
	notes, err := ix.ListNotes(context.Background(), "entry")
	if err != nil || len(notes) != 3 || notes[0] != (NoteInfo{Path: "memory/entries/answer-format.md", Kind: "entry", Type: "feedback", Name: "answer-format", Description: "Bullet answers."}) {
		t.Errorf("list %+v %v", notes, err)
	}
	counts, err := ix.CountKinds(context.Background())
	want := []KindCount{{"card", "", 1}, {"day_page", "", 1}, {"digest", "", 1}, {"entry", "User", 1}, {"entry", "feedback", 1},
		{"entry", "reference", 1}, {"memory_index", "", 1}, {"profile", "", 1}}
	if err != nil || !cmp.Equal(counts, want) {
		t.Errorf("counts %v %v", counts, err)
	}
}

func TestSyncScopeReadsOnlyItsRoots(t *testing.T) {
	ws := newWorkspace(t, memoryFiles)
	ix := openIndex(t, ws, Options{})
	ctx := context.Background()
	if _, err := ix.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	// changes inside and outside the scope
	writeFile(t, ws, "memory/entries/new.md", "---\ntype: user\nname: new\n---\n\nzebra\n")
	writeFile(t, ws, "daily/2026-06-22/zebra-card.md", "---\nname: zebra-card\n---\n\nzebra\n")
	if err := os.Remove(ws.Abs("memory/entries/go-backend.md")); err != nil {
		t.Fatal(err)
	}
	writeFile(t, ws, store.MemoryIndexPath, "# Long-term memory\n\nzebra index\n")
	rep, err := ix.SyncScope(ctx, store.MemoryDir)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Added != 1 || rep.Deleted != 1 || rep.Modified != 0 {
		t.Errorf("scoped sync %+v", rep)
	}
	find := func(types ...string) []string {
		res, err := ix.Search(ctx, SearchOptions{Query: "zebra", Limit: 10, Types: types})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, r := range res.Results {
			out = append(out, r.Path)
		}
		sortStrings(out)
		return out
	}
	if got := find("entry", "card", "memory_index"); !cmp.Equal(got, []string{"memory/entries/new.md"}) {
		t.Errorf("after a scoped sync: %v", got)
	}
	if _, err := ix.SyncScope(ctx, store.MemoryIndexPath); err != nil {
		t.Fatal(err)
	}
	if got := find("memory_index"); !cmp.Equal(got, []string{store.MemoryIndexPath}) {
		t.Errorf("MEMORY.md after its scoped sync: %v", got)
	}
	// the rest is picked up by a full sync, nothing twice
	rep, err = ix.Sync(ctx)
	if err != nil || rep.Added != 1 || rep.Deleted != 0 || rep.Modified != 0 {
		t.Errorf("full sync after scoped ones: %+v %v", rep, err)
	}
	if _, err := ix.SyncScope(ctx, "resource"); err == nil {
		t.Error("a scope outside the roots was accepted")
	}
	if !store.IsNotePath(store.MemoryIndexPath, DefaultRoots) || store.IsNotePath("README.md", DefaultRoots) {
		t.Error("IsNotePath and single-note roots")
	}
}

// TestMemoryChunksAreNumberedApart: memory notes' chunks take ids from
// memoryChunkBase, cards' below it, through rebuilds and updates alike, so
// that a search of memory reads only its part of the full-text lists.
func TestMemoryChunksAreNumberedApart(t *testing.T) {
	ws := newWorkspace(t, memoryFiles)
	ix := openIndex(t, ws, Options{})
	ctx := context.Background()
	check := func(when string) {
		t.Helper()
		rows, err := ix.db.QueryContext(ctx, `SELECT n.kind, c.id FROM chunks c JOIN notes n ON n.id = c.note_id`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		for rows.Next() {
			var kind string
			var id int64
			if err := rows.Scan(&kind, &id); err != nil {
				t.Fatal(err)
			}
			if isMemoryKind(kind) != (id >= memoryChunkBase) {
				t.Errorf("%s: a %s chunk has id %d", when, kind, id)
			}
		}
	}
	if _, err := ix.Rebuild(ctx, nil); err != nil {
		t.Fatal(err)
	}
	check("rebuild")
	writeFile(t, ws, "daily/2026-06-23/later.md", "---\nname: later\n---\n\nbullet later\n")
	writeFile(t, ws, "memory/entries/later.md", "---\ntype: user\nname: later\n---\n\nbullet later\n")
	if _, err := ix.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	check("sync")
	if got := searchPaths(t, ix, "user"); !cmp.Equal(got, []string{"memory/entries/go-backend.md", "memory/entries/later.md"}) {
		t.Errorf("user entries: %v", got)
	}
	if got := searchPaths(t, ix, "card"); !cmp.Equal(got, []string{"daily/2026-06-22/bullets-card.md", "daily/2026-06-23/later.md"}) {
		t.Errorf("cards: %v", got)
	}
}

// TestSyncScopeKeepsTheRest: the first scoped sync of folders the index
// has never seen adds their notes and leaves the rest of the index alone
// (an empty scope is not an empty index to rebuild).
func TestSyncScopeKeepsTheRest(t *testing.T) {
	ws := newWorkspace(t, map[string]string{"daily/2026-06-22/zebra-card.md": "---\nname: zebra-card\n---\n\nzebra crossing\n"})
	ix := openIndex(t, ws, Options{})
	ctx := context.Background()
	if _, err := ix.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	writeFile(t, ws, "memory/entries/zebra.md", "---\ntype: user\nname: zebra\n---\n\nzebra stripes\n")
	if _, err := ix.SyncScope(ctx, store.MemoryDir); err != nil {
		t.Fatal(err)
	}
	res, err := ix.Search(ctx, SearchOptions{Query: "zebra", Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range res.Results {
		got = append(got, r.Path)
	}
	sortStrings(got)
	if !cmp.Equal(got, []string{"daily/2026-06-22/zebra-card.md", "memory/entries/zebra.md"}) {
		t.Errorf("after a first scoped sync: %v", got)
	}
}
