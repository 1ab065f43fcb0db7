package store

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

const testDate = "2026-05-18"

func writeCard(t *testing.T, w *Workspace, name, content string) {
	t.Helper()
	writeRaw(t, w, DayDir(testDate)+"/"+name, content)
}

func readRaw(t *testing.T, w *Workspace, rel string) string {
	t.Helper()
	b, err := os.ReadFile(w.Abs(rel))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestRefreshDayIndex(t *testing.T) {
	w := newWorkspace(t)
	writeCard(t, w, "login-flow.md", "---\n"+
		"session_id: s1\n"+
		"source_conversation: \"[[session/dialog/s1.jsonl]]\"\n"+
		"description: |\n  How the login\n  flow works\n"+
		"name: login-flow\n"+
		"kind: preference\n"+
		"schema_version: 2\n"+
		"empty:\n"+
		"blank: \"\"\n"+
		"memory_tags: [auth, login]\n"+
		"confidence: observed\n"+
		"---\n\nbody\n")
	writeCard(t, w, "alpha.md", "---\nname: alpha\ndescription: First card\n---\n\nbody [[x.md]]\n")
	writeCard(t, w, "plain.md", "no frontmatter here\n")
	writeCard(t, w, ".hidden.md", "---\nname: hidden\n---\n")
	writeCard(t, w, "notes.txt", "not markdown\n")
	writeCard(t, w, "sub/deep.md", "---\nname: deep\n---\n")
	writeCard(t, w, ".reme-tmp-abc", "temp")

	res, err := w.RefreshDayIndex(testDate)
	if err != nil {
		t.Fatal(err)
	}
	want := "---\n" +
		"name: \"2026-05-18\"\n" +
		"description: 3 note(s) today.\n" +
		"---\n" +
		"\n" +
		"<!-- notes:auto -->\n" +
		"- [[daily/2026-05-18/alpha.md]] name: alpha description: First card\n" +
		"- [[daily/2026-05-18/login-flow.md]] name: login-flow description: How the login flow works kind: preference memory_tags: [auth, login] confidence: observed\n" +
		"- [[daily/2026-05-18/plain.md]]\n" +
		"<!-- /notes:auto -->\n"
	got := readRaw(t, w, DayIndexPath(testDate))
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("day index (-want +got):\n%s", diff)
	}
	if !res.Created || !res.Changed || res.Date != testDate || res.Path != "daily/2026-05-18.md" || len(res.Notes) != 3 {
		t.Fatalf("result = %+v", res)
	}
	if res.Notes[0]["path"] != "daily/2026-05-18/alpha.md" || res.Notes[0]["name"] != "alpha" {
		t.Fatalf("notes[0] = %v", res.Notes[0])
	}
	if res.Notes[1]["session_id"] != "s1" || res.Notes[1]["schema_version"] != int64(2) {
		t.Fatalf("notes[1] keeps provenance keys: %v", res.Notes[1])
	}
	// The name is a string for every YAML reader.
	page, err := w.ReadNote(DayIndexPath(testDate))
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := page.FM.Value("name").(string); !ok || v != testDate {
		t.Fatalf("name = %#v", page.FM.Value("name"))
	}
	// The links of the page point at the cards.
	var targets []string
	for _, l := range ParseLinks(page.Body, page.BodyLine) {
		targets = append(targets, l.Target)
	}
	if diff := cmp.Diff([]string{"daily/2026-05-18/alpha.md", "daily/2026-05-18/login-flow.md", "daily/2026-05-18/plain.md"}, targets); diff != "" {
		t.Fatalf("links: %s", diff)
	}

	// Second run: nothing changes, the file is not rewritten.
	old := time.Now().Add(-time.Hour).Truncate(time.Second)
	if err := os.Chtimes(w.Abs(DayIndexPath(testDate)), old, old); err != nil {
		t.Fatal(err)
	}
	res, err = w.RefreshDayIndex(testDate)
	if err != nil {
		t.Fatal(err)
	}
	if res.Created || res.Changed || len(res.Notes) != 3 {
		t.Fatalf("second run = %+v", res)
	}
	fi, err := os.Stat(w.Abs(DayIndexPath(testDate)))
	if err != nil {
		t.Fatal(err)
	}
	if !fi.ModTime().Equal(old) {
		t.Fatalf("unchanged index rewritten: mtime %v, want %v", fi.ModTime(), old)
	}

	// Removing cards updates the count; removing the last one leaves (none).
	for _, n := range []string{"alpha.md", "plain.md"} {
		if err := w.Remove(DayDir(testDate) + "/" + n); err != nil {
			t.Fatal(err)
		}
	}
	if res, err = w.RefreshDayIndex(testDate); err != nil || !res.Changed || res.Created {
		t.Fatalf("after remove: %+v, %v", res, err)
	}
	if got := readRaw(t, w, DayIndexPath(testDate)); !strings.Contains(got, "description: 1 note(s) today.\n") {
		t.Fatalf("after remove:\n%s", got)
	}
	if err := w.Remove(DayDir(testDate) + "/login-flow.md"); err != nil {
		t.Fatal(err)
	}
	if res, err = w.RefreshDayIndex(testDate); err != nil || !res.Changed || len(res.Notes) != 0 {
		t.Fatalf("after last remove: %+v, %v", res, err)
	}
	want = "---\nname: \"2026-05-18\"\ndescription: No notes today.\n---\n\n<!-- notes:auto -->\n(none)\n<!-- /notes:auto -->\n"
	if diff := cmp.Diff(want, readRaw(t, w, DayIndexPath(testDate))); diff != "" {
		t.Fatalf("empty day (-want +got):\n%s", diff)
	}
}

func TestRefreshDayIndexNoCardsNoPage(t *testing.T) {
	w := newWorkspace(t)
	res, err := w.RefreshDayIndex(testDate)
	if err != nil {
		t.Fatal(err)
	}
	if res.Created || res.Changed || len(res.Notes) != 0 || res.Notes == nil {
		t.Fatalf("result = %+v", res)
	}
	if w.Exists(DayIndexPath(testDate)) || w.Exists(DayDir(testDate)) {
		t.Fatal("something was created for an empty day")
	}
	// An empty folder is no different.
	if err := os.MkdirAll(w.Abs(DayDir(testDate)), 0o755); err != nil {
		t.Fatal(err)
	}
	if res, err = w.RefreshDayIndex(testDate); err != nil || res.Changed || w.Exists(DayIndexPath(testDate)) {
		t.Fatalf("empty folder: %+v, %v", res, err)
	}
}

func TestRefreshDayIndexInvalidDate(t *testing.T) {
	w := newWorkspace(t)
	for _, d := range []string{"", "2026-5-18", "2026-02-30", "2026-05-18T10:00:00", "../x", "today"} {
		if _, err := w.RefreshDayIndex(d); !errors.Is(err, ErrInvalidDate) {
			t.Errorf("RefreshDayIndex(%q) = %v, want ErrInvalidDate", d, err)
		}
		if _, err := w.DailyNotes(d); !errors.Is(err, ErrInvalidDate) {
			t.Errorf("DailyNotes(%q) = %v, want ErrInvalidDate", d, err)
		}
	}
}

func TestRefreshDayIndexPreservesUserText(t *testing.T) {
	card := "---\nname: a\ndescription: A\n---\n"
	block := "<!-- notes:auto -->\n- [[daily/2026-05-18/a.md]] name: a description: A\n<!-- /notes:auto -->"
	tests := []struct {
		name, page, want string
	}{
		{
			name: "text around the markers",
			page: "---\nname: My day   # custom name\ndescription: old\nmood: good\n---\n\n# Notes of the day\n\nbefore  \n<!-- notes:auto -->\nstale\n<!-- /notes:auto -->\n\nafter *text*\n",
			want: "---\nname: My day   # custom name\ndescription: 1 note(s) today.\nmood: good\n---\n\n# Notes of the day\n\nbefore  \n" + block + "\n\nafter *text*\n",
		},
		{
			name: "markers missing",
			page: "---\nname: d\ndescription: x\n---\n\nmy own notes\n\n\n",
			want: "---\nname: d\ndescription: 1 note(s) today.\n---\n\nmy own notes\n\n" + block + "\n",
		},
		{
			name: "no frontmatter, markers missing",
			page: "my own notes\n",
			want: "---\nname: \"2026-05-18\"\ndescription: 1 note(s) today.\n---\n\nmy own notes\n\n" + block + "\n",
		},
		{
			name: "empty page",
			page: "",
			want: "---\nname: \"2026-05-18\"\ndescription: 1 note(s) today.\n---\n\n" + block + "\n",
		},
		{
			name: "markers without surrounding newlines",
			page: "---\nname: d\ndescription: 1 note(s) today.\n---\nx<!-- notes:auto -->old<!-- /notes:auto -->y",
			want: "---\nname: d\ndescription: 1 note(s) today.\n---\nx" + block + "y",
		},
		{
			name: "end marker missing",
			page: "---\nname: d\ndescription: x\n---\n\nintro\n<!-- notes:auto -->\nkeep me\n",
			want: "---\nname: d\ndescription: 1 note(s) today.\n---\n\nintro\n<!-- notes:auto -->\nkeep me\n\n" + block + "\n",
		},
		{
			name: "stray end marker before the block",
			page: "---\nname: d\ndescription: x\n---\n\n<!-- /notes:auto -->\nkeep\n<!-- notes:auto -->\nold\n<!-- /notes:auto -->\n",
			want: "---\nname: d\ndescription: 1 note(s) today.\n---\n\n<!-- /notes:auto -->\nkeep\n" + block + "\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorkspace(t)
			writeCard(t, w, "a.md", card)
			writeRaw(t, w, DayIndexPath(testDate), tt.page)
			res, err := w.RefreshDayIndex(testDate)
			if err != nil {
				t.Fatal(err)
			}
			if res.Created || !res.Changed {
				t.Fatalf("result = %+v", res)
			}
			if diff := cmp.Diff(tt.want, readRaw(t, w, DayIndexPath(testDate))); diff != "" {
				t.Fatalf("(-want +got):\n%s", diff)
			}
			// Idempotent.
			res, err = w.RefreshDayIndex(testDate)
			if err != nil || res.Changed {
				t.Fatalf("second run: %+v, %v", res, err)
			}
			if diff := cmp.Diff(tt.want, readRaw(t, w, DayIndexPath(testDate))); diff != "" {
				t.Fatalf("second run (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRefreshDayIndexBrokenPage(t *testing.T) {
	w := newWorkspace(t)
	writeCard(t, w, "a.md", "---\nname: a\n---\n")
	page := "---\nname: [broken\n---\n\ntext\n"
	writeRaw(t, w, DayIndexPath(testDate), page)
	if _, err := w.RefreshDayIndex(testDate); !errors.Is(err, ErrFrontmatter) {
		t.Fatalf("err = %v, want ErrFrontmatter", err)
	}
	if got := readRaw(t, w, DayIndexPath(testDate)); got != page {
		t.Fatalf("broken page modified: %q", got)
	}
}

func TestDailyNotesAndListLine(t *testing.T) {
	w := newWorkspace(t)
	if notes, err := w.DailyNotes(testDate); err != nil || len(notes) != 0 {
		t.Fatalf("missing folder: %v, %v", notes, err)
	}
	writeCard(t, w, "b.md", "---\ndescription: \"line one\\nline two\"\nname: b\nsession_id: s2\nsource_conversation: \"[[session/dialog/s2.jsonl]]\"\nlist: []\nmap: {k: v, n: [1, 2]}\nnull_val: ~\n---\n")
	writeCard(t, w, "a.md", "---\nname: [broken\n---\n")
	writeCard(t, w, "c.MD", "---\nname: upper\n---\n")
	if err := os.Symlink(w.Abs(DayDir(testDate)+"/b.md"), w.Abs(DayDir(testDate)+"/link.md")); err != nil {
		t.Logf("no symlinks: %v", err)
	}
	notes, err := w.DailyNotes(testDate)
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, n := range notes {
		paths = append(paths, n.Path)
	}
	if diff := cmp.Diff([]string{"daily/2026-05-18/a.md", "daily/2026-05-18/b.md"}, paths); diff != "" {
		t.Fatalf("paths (-want +got):\n%s", diff)
	}
	if notes[0].FMErr == nil || notes[0].FM.Len() != 0 {
		t.Fatalf("broken card: err=%v len=%d", notes[0].FMErr, notes[0].FM.Len())
	}
	if got := DailyListLine(notes[0]); got != "- path: daily/2026-05-18/a.md" {
		t.Fatalf("DailyListLine(broken) = %q", got)
	}
	want := "- path: daily/2026-05-18/b.md name: b description: line one line two session_id: s2 source_conversation: [[session/dialog/s2.jsonl]] map: {k: v, n: [1, 2]}"
	if got := DailyListLine(notes[1]); got != want {
		t.Fatalf("DailyListLine =\n %q\nwant\n %q", got, want)
	}
	block := RenderDayIndexBlock(notes)
	wantBlock := "<!-- notes:auto -->\n- [[daily/2026-05-18/a.md]]\n- [[daily/2026-05-18/b.md]] name: b description: line one line two map: {k: v, n: [1, 2]}\n<!-- /notes:auto -->"
	if block != wantBlock {
		t.Fatalf("RenderDayIndexBlock =\n%s\nwant\n%s", block, wantBlock)
	}
	if got := RenderDayIndexBlock(nil); got != "<!-- notes:auto -->\n(none)\n<!-- /notes:auto -->" {
		t.Fatalf("empty block = %q", got)
	}
	fields := notes[1].Fields()
	if fields["path"] != "daily/2026-05-18/b.md" || fields["session_id"] != "s2" || fields["null_val"] != nil {
		t.Fatalf("Fields = %v", fields)
	}
	// The dialog link is a string with brackets, not a nested list.
	if fields["source_conversation"] != "[[session/dialog/s2.jsonl]]" {
		t.Fatalf("source_conversation = %#v", fields["source_conversation"])
	}
}

// TestRefreshDayIndexHostileMarkers: marker text in a card's header must not
// end (or restart) the auto block, or the page grows on every refresh.
func TestRefreshDayIndexHostileMarkers(t *testing.T) {
	w := newWorkspace(t)
	writeCard(t, w, "a.md", "---\nname: a\ndescription: \"ends here <!-- /notes:auto --> and goes on\"\n---\n")
	writeCard(t, w, "b.md", "---\nname: \"<!-- notes:auto -->\"\n\"<!-- /notes:auto -->\": key too\nnote: <!-- a comment\n---\n")
	writeRaw(t, w, DayIndexPath(testDate), "---\nname: x\n---\n\nmy text\n")
	var first string
	for i := range 4 {
		if _, err := w.RefreshDayIndex(testDate); err != nil {
			t.Fatal(err)
		}
		got := readRaw(t, w, DayIndexPath(testDate))
		if i == 0 {
			first = got
		} else if got != first {
			t.Fatalf("refresh %d changed the page:\n%s\nfirst:\n%s", i, got, first)
		}
	}
	if n := strings.Count(first, DayIndexStart); n != 1 {
		t.Errorf("%d start markers:\n%s", n, first)
	}
	if n := strings.Count(first, DayIndexEnd); n != 1 {
		t.Errorf("%d end markers:\n%s", n, first)
	}
	for _, want := range []string{
		"my text\n",
		`- [[daily/2026-05-18/a.md]] name: a description: ends here <\!-- /notes:auto --> and goes on` + "\n",
		`- [[daily/2026-05-18/b.md]] name: <\!-- notes:auto --> <\!-- /notes:auto -->: key too note: <\!-- a comment` + "\n" + DayIndexEnd,
	} {
		if !strings.Contains(first, want) {
			t.Errorf("page lacks %q:\n%s", want, first)
		}
	}
}

// TestDayIndexLineBounds: a card with a huge header gets one bounded line
// that says what it left out.
func TestDayIndexLineBounds(t *testing.T) {
	var b strings.Builder
	b.WriteString("name: big\n")
	for i := range 1000 {
		fmt.Fprintf(&b, "k%04d: v\n", i)
	}
	b.WriteString("session_id: s\n")
	fm, err := ParseFrontmatter(b.String())
	if err != nil {
		t.Fatal(err)
	}
	line := RenderDayIndexBlock([]DailyNote{{Path: "daily/2026-05-18/big.md", FM: fm}})
	if !strings.Contains(line, " name: big k0000: v k0001: v") || !strings.Contains(line, " k0062: v (+937 more key(s) not shown)\n") {
		t.Errorf("line = %.300q … %q", line, line[max(0, len(line)-120):])
	}
	// A long value is cut at a character boundary.
	fm, err = ParseFrontmatter("name: long\ndescription: " + strings.Repeat("登录", 5000) + "\nafter: x\n")
	if err != nil {
		t.Fatal(err)
	}
	got := DailyListLine(DailyNote{Path: "daily/2026-05-18/long.md", FM: fm})
	if len(got) > maxLineBytes+200 || !utf8.ValidString(got) || !strings.HasSuffix(got, "… (+1 more key(s) not shown)") {
		t.Errorf("line of %d bytes ends %q", len(got), got[max(0, len(got)-80):])
	}
	// A card within the bounds gets no note.
	fm, _ = ParseFrontmatter("name: small\ndescription: d\n")
	if got := DailyListLine(DailyNote{Path: "p.md", FM: fm}); got != "- path: p.md name: small description: d" {
		t.Errorf("small = %q", got)
	}
}

// TestDailyNotesRefusesSymlinkOut: a day folder that is a symlink out of
// the workspace is neither listed nor indexed.
func TestDailyNotesRefusesSymlinkOut(t *testing.T) {
	w := newWorkspace(t)
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "secret.md"), []byte("---\nname: secret\n---\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(w.Abs(DailyDir), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, w.Abs(DayDir(testDate))); err != nil {
		t.Skipf("no symlinks: %v", err)
	}
	if notes, err := w.DailyNotes(testDate); !errors.Is(err, ErrOutsideWorkspace) {
		t.Fatalf("DailyNotes = %v, %v; want ErrOutsideWorkspace", notes, err)
	}
	if res, err := w.RefreshDayIndex(testDate); !errors.Is(err, ErrOutsideWorkspace) {
		t.Fatalf("RefreshDayIndex = %+v, %v; want ErrOutsideWorkspace", res, err)
	}
	if w.Exists(DayIndexPath(testDate)) {
		t.Fatal("day page written from files outside the workspace")
	}
	// A page that is a symlink out is not read or written either.
	if err := os.Remove(w.Abs(DayDir(testDate))); err != nil {
		t.Fatal(err)
	}
	page := filepath.Join(outside, "page.md")
	if err := os.WriteFile(page, []byte("outside\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(page, w.Abs(DayIndexPath(testDate))); err != nil {
		t.Fatal(err)
	}
	writeCard(t, w, "a.md", "---\nname: a\n---\n")
	if _, err := w.RefreshDayIndex(testDate); !errors.Is(err, ErrOutsideWorkspace) {
		t.Fatalf("RefreshDayIndex through a symlinked page = %v", err)
	}
	if b, _ := os.ReadFile(page); string(b) != "outside\n" {
		t.Fatalf("file outside changed: %q", b)
	}
}

// BenchmarkDayIndexManyKeys renders one card with many keys: linear, and
// bounded by maxLineKeys.
func BenchmarkDayIndexManyKeys(b *testing.B) {
	for _, n := range []int{1_000, 10_000, 100_000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			var sb strings.Builder
			for i := range n {
				fmt.Fprintf(&sb, "k%06d: v\n", i)
			}
			fm, err := ParseFrontmatter(sb.String())
			if err != nil {
				b.Fatal(err)
			}
			notes := []DailyNote{{Path: "daily/2026-05-18/big.md", FM: fm}}
			for b.Loop() {
				_ = RenderDayIndexBlock(notes)
			}
		})
	}
}
