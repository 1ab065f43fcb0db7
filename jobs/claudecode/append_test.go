package claudecode

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reme-dev/reme/store"
)

// TestAppendIncremental: a Stop reads only what the
// transcript gained; whenever the files are not as the last call left them
// (a transcript rewritten, a copy edited, a crash before the state was
// saved), the whole transcript is compared again and nothing is copied twice
// or lost.
func TestAppendIncremental(t *testing.T) {
	ws, err := store.OpenWorkspace(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := ws.Init(); err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(strings.TrimSpace(string(claudeReadFixture(t))), "\n")
	withUUID := func(ls []string) int {
		n := 0
		for _, l := range ls {
			if e, ok := parseLine([]byte(strings.TrimSpace(l)), false); ok && e.UUID != "" {
				n++
			}
		}
		return n
	}
	tr := filepath.Join(t.TempDir(), "t.jsonl")
	write := func(s string) {
		t.Helper()
		if err := os.WriteFile(tr, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	appendTo := func(s string) {
		t.Helper()
		f, err := os.OpenFile(tr, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.WriteString(s); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	copyPath := ws.Abs(CopyPath(claudeFixtureSID))
	check := func(step string, wantNew, wantTotal int, wantWhole bool) {
		t.Helper()
		ap, err := Append(ws, claudeFixtureSID, tr, 0)
		if err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		if ap.New != wantNew || ap.Whole != wantWhole {
			t.Fatalf("%s: new %d whole %v; want %d, %v", step, ap.New, ap.Whole, wantNew, wantWhole)
		}
		var entries []Entry
		b, err := os.ReadFile(copyPath)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range bytes.Split(b, []byte("\n")) {
			if len(l) == 0 {
				continue
			}
			e, ok := parseLine(l, false)
			if !ok {
				t.Fatalf("%s: the copy holds a line that is not an entry: %.80s", step, l)
			}
			entries = append(entries, e)
		}
		seen := map[string]bool{}
		for _, e := range entries {
			if seen[e.UUID] {
				t.Fatalf("%s: entry %s copied twice", step, e.UUID)
			}
			seen[e.UUID] = true
		}
		if len(entries) != wantTotal {
			t.Fatalf("%s: the copy holds %d entries, want %d", step, len(entries), wantTotal)
		}
	}

	half := len(lines) / 2
	write(strings.Join(lines[:half], ""))
	check("first Stop", withUUID(lines[:half]), withUUID(lines[:half]), true)

	// Claude Code is writing the next line: the half line waits.
	next := lines[half]
	appendTo(next[:len(next)/2])
	check("half a line", 0, withUUID(lines[:half]), false)
	appendTo(next[len(next)/2:])
	check("the line completed", withUUID(lines[half:half+1]), withUUID(lines[:half+1]), false)

	// A crash after the append, before the state was saved: the state
	// still says the old copy size.
	state := importStatePath(ws, claudeFixtureSID)
	before, err := os.ReadFile(state)
	if err != nil {
		t.Fatal(err)
	}
	appendTo(strings.Join(lines[half+1:half+3], ""))
	check("two more", withUUID(lines[half+1:half+3]), withUUID(lines[:half+3]), false)
	if err := os.WriteFile(state, before, 0o644); err != nil {
		t.Fatal(err)
	}
	check("state from before the crash", 0, withUUID(lines[:half+3]), true)

	// The transcript is rewritten whole (same entries, new bytes first).
	write("\n" + strings.Join(lines[:half+3], ""))
	check("rewritten", 0, withUUID(lines[:half+3]), true)

	// An entry appears before what was read (a transcript rebuilt by a
	// resume): it is found.
	inserted := strings.Replace(lines[0], `"uuid":"`, `"uuid":"feed`, 1)
	if inserted == lines[0] {
		inserted = strings.Replace(lines[2], `"uuid":"`, `"uuid":"feed`, 1)
	}
	write(inserted + strings.Join(lines[:half+3], ""))
	check("inserted before the offset", 1, withUUID(lines[:half+3])+1, true)
	lines = append([]string{inserted}, lines...)
	half++

	// The copy is edited by hand (its last entry removed): it comes back.
	b, err := os.ReadFile(copyPath)
	if err != nil {
		t.Fatal(err)
	}
	cut := bytes.LastIndexByte(b[:len(b)-1], '\n')
	if err := os.WriteFile(copyPath, b[:cut+1], 0o644); err != nil {
		t.Fatal(err)
	}
	check("copy edited", 1, withUUID(lines[:half+3]), true)

	// The rest, then nothing new.
	appendTo(strings.Join(lines[half+3:], ""))
	check("the rest", withUUID(lines[half+3:]), withUUID(lines), false)
	// Its last line has no newline yet: the offset is not trusted until it has.
	check("nothing new", 0, withUUID(lines), true)
	appendTo("\n")
	check("the newline", 0, withUUID(lines), true)
	check("nothing new, read from the offset", 0, withUUID(lines), false)
}

// TestReadCopyUpToSize: a run reads the copy as its save left it, even when
// a later save has appended since (it reads without the save lock).
func TestReadCopyUpToSize(t *testing.T) {
	ws, err := store.OpenWorkspace(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := ws.Init(); err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(strings.TrimSpace(string(claudeReadFixture(t))), "\n")
	tr := filepath.Join(t.TempDir(), "t.jsonl")
	if err := os.WriteFile(tr, []byte(strings.Join(lines[:10], "")), 0o644); err != nil {
		t.Fatal(err)
	}
	first, err := Append(ws, claudeFixtureSID, tr, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(tr, []byte(strings.Join(lines, "")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	second, err := Append(ws, claudeFixtureSID, tr, 0)
	if err != nil || second.New == 0 || second.Size <= first.Size {
		t.Fatalf("second append: %+v, %v", second, err)
	}
	early, err := ReadCopy(ws, claudeFixtureSID, first.Size)
	if err != nil {
		t.Fatal(err)
	}
	all, err := ReadCopy(ws, claudeFixtureSID, second.Size)
	if err != nil {
		t.Fatal(err)
	}
	if len(early.Entries) != first.New || len(all.Entries) != first.New+second.New {
		t.Fatalf("read %d and %d entries; want %d and %d", len(early.Entries), len(all.Entries), first.New, first.New+second.New)
	}
}
