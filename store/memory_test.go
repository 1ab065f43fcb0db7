package store

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeEntry(t *testing.T, ws *Workspace, name, typ, desc, updated string) {
	t.Helper()
	text := fmt.Sprintf("---\ntype: %s\nname: %s\ndescription: %s\ncreated: 2026-01-01\nupdated: %s\n---\n\nbody of %s\n", typ, name, desc, updated, name)
	p := ws.Abs(EntriesDir + "/" + name + ".md")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestMemoryIndexGroupsByTypeAndKeepsUserText(t *testing.T) {
	ws := newWorkspace(t)
	if res, err := ws.RefreshMemoryIndex(MemoryIndexBounds{}); err != nil || res.Changed || ws.Exists(MemoryIndexPath) {
		t.Fatalf("no entries must create no page: %+v %v", res, err)
	}
	writeEntry(t, ws, "answer-format", "feedback", "Bullet answers, not long paragraphs.", "2026-06-20")
	writeEntry(t, ws, "go-backend", "user", "Ten years of Go backend;\n new to frontend.", "2026-06-01")
	writeEntry(t, ws, "q2-launch", "project", "Q2 launch", "2026-05-01")
	if err := os.WriteFile(ws.Abs(EntriesDir+"/broken.md"), []byte("---\ntype: [user\n---\nx\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(ws.Abs(EntriesDir+"/q2-launch.md"), []byte("---\ntype: project\nname: q2-launch\ndescription: Q2 launch\ndue: 2026-06-30\nupdated: 2026-05-01\n---\nx\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := ws.RefreshMemoryIndex(MemoryIndexBounds{})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Created || res.Entries != 4 || res.Listed != 4 || res.Omitted != 0 {
		t.Fatalf("result %+v", res)
	}
	got, _ := os.ReadFile(ws.Abs(MemoryIndexPath))
	for _, want := range []string{
		"## User\n\n- [[memory/entries/go-backend.md|go-backend]] — Ten years of Go backend; new to frontend.\n\n## Feedback\n\n- [[memory/entries/answer-format.md|answer-format]] — Bullet answers, not long paragraphs.\n",
		"- [[memory/entries/q2-launch.md|q2-launch]] — Q2 launch (due 2026-06-30)\n",
		"## Unreadable\n\n- [[memory/entries/broken.md|broken]] — the frontmatter does not parse; repair it by hand\n",
	} {
		if !strings.Contains(string(got), want) {
			t.Errorf("MEMORY.md lacks %q:\n%s", want, got)
		}
	}
	// the user's text outside the markers is kept, the block is replaced
	page := strings.Replace(string(got), "# Long-term memory", "# Mine\n\nMy own words.", 1) + "\nAfter the block.\n"
	if err := os.WriteFile(ws.Abs(MemoryIndexPath), []byte(page), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(ws.Abs(EntriesDir + "/q2-launch.md")); err != nil {
		t.Fatal(err)
	}
	if _, err := ws.RefreshMemoryIndex(MemoryIndexBounds{}); err != nil {
		t.Fatal(err)
	}
	got, _ = os.ReadFile(ws.Abs(MemoryIndexPath))
	if !strings.Contains(string(got), "My own words.") || !strings.Contains(string(got), "After the block.") || strings.Contains(string(got), "q2-launch") {
		t.Errorf("after removal:\n%s", got)
	}
	// unchanged entries rewrite nothing
	if res, err := ws.RefreshMemoryIndex(MemoryIndexBounds{}); err != nil || res.Changed {
		t.Errorf("second refresh changed the page: %+v %v", res, err)
	}
}

func TestMemoryIndexBoundsAreNeverExceededAndSaySo(t *testing.T) {
	ws := newWorkspace(t)
	for i := 0; i < 300; i++ {
		writeEntry(t, ws, fmt.Sprintf("entry-%03d", i), EntryTypes[i%4], strings.Repeat("word ", 10+i%7), fmt.Sprintf("2026-01-%02d", 1+i%28))
	}
	for _, b := range []MemoryIndexBounds{{}, {MaxLines: 40}, {MaxBytes: 3000}, {MaxLines: 12, MaxBytes: 100000}, {MaxLines: 9, MaxBytes: 700}} {
		res, err := ws.RefreshMemoryIndex(b)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := os.ReadFile(ws.Abs(MemoryIndexPath))
		bb := b.orDefault()
		lines := strings.Count(string(got), "\n")
		if len(got) > bb.MaxBytes || lines > bb.MaxLines {
			t.Errorf("bounds %+v: page has %d bytes, %d lines", bb, len(got), lines)
		}
		if res.Omitted == 0 || res.Listed+res.Omitted != 300 || len(res.Unlisted) != res.Omitted {
			t.Errorf("bounds %+v: result %+v", bb, res)
		}
		if want := fmt.Sprintf("(%d more entries are not listed: MEMORY.md is bounded to %d lines / %d bytes", res.Omitted, bb.MaxLines, bb.MaxBytes); !strings.Contains(string(got), want) {
			t.Errorf("bounds %+v: no notice %q in\n%s", bb, want, got)
		}
		if n := strings.Count(string(got), "- [["); n != res.Listed {
			t.Errorf("bounds %+v: %d lines listed, result says %d", bb, n, res.Listed)
		}
	}
}

// An entry whose text holds the block's markers must not end the block
// early: the page would grow by a copy of the old block on every refresh.
func TestMemoryIndexEntryWithMarkersStaysOneBlock(t *testing.T) {
	ws := newWorkspace(t)
	writeEntry(t, ws, "markers", "reference", "x "+MemoryIndexEnd+" y "+MemoryIndexStart+" z", "2026-06-20")
	if _, err := ws.RefreshMemoryIndex(MemoryIndexBounds{}); err != nil {
		t.Fatal(err)
	}
	first, _ := os.ReadFile(ws.Abs(MemoryIndexPath))
	for i := 0; i < 2; i++ {
		if res, err := ws.RefreshMemoryIndex(MemoryIndexBounds{}); err != nil || res.Changed {
			t.Fatalf("refresh %d changed the page: %+v %v", i+2, res, err)
		}
	}
	if n := strings.Count(string(first), MemoryIndexEnd); n != 1 {
		t.Errorf("%d end markers:\n%s", n, first)
	}
}
