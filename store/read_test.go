package store

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReadRanges(t *testing.T) {
	w := newWorkspace(t)
	writeRaw(t, w, "digest/five.md", "l1\nl2\nl3\nl4\nl5\n")
	writeRaw(t, w, "digest/nonl.md", "a\nb")
	writeRaw(t, w, "digest/empty.md", "")
	writeRaw(t, w, "digest/blank.md", "\n")
	writeRaw(t, w, "digest/crlf.md", "a\r\nb\r\n")
	tests := []struct {
		path       string
		start, end int
		text       string
		s, e, tot  int
		errSub     string
	}{
		{"digest/five.md", 0, 0, "l1\nl2\nl3\nl4\nl5", 1, 5, 5, ""},
		{"digest/five.md", 1, 1, "l1", 1, 1, 5, ""},
		{"digest/five.md", 2, 4, "l2\nl3\nl4", 2, 4, 5, ""},
		{"digest/five.md", 5, 5, "l5", 5, 5, 5, ""},
		{"digest/five.md", 4, 0, "l4\nl5", 4, 5, 5, ""},
		{"digest/five.md", 0, 2, "l1\nl2", 1, 2, 5, ""},
		{"digest/five.md", 3, 99, "l3\nl4\nl5", 3, 5, 5, ""},
		{"digest/five.md", -3, -1, "l1\nl2\nl3\nl4\nl5", 1, 5, 5, ""},
		{"digest/five.md", 6, 0, "", 0, 0, 0, "start_line 6 exceeds file length (5 lines)"},
		{"digest/five.md", 6, 9, "", 0, 0, 0, "start_line 6 exceeds file length (5 lines)"},
		{"digest/five.md", 99, 0, "", 0, 0, 0, "start_line 99 exceeds file length (5 lines)"},
		{"digest/five.md", 4, 2, "", 0, 0, 0, "start_line (4) > end_line (2)"},
		{"digest/nonl.md", 0, 0, "a\nb", 1, 2, 2, ""},
		{"digest/nonl.md", 2, 2, "b", 2, 2, 2, ""},
		{"digest/empty.md", 0, 0, "", 1, 0, 0, ""},
		{"digest/empty.md", 2, 0, "", 0, 0, 0, "start_line 2 exceeds file length (0 lines)"},
		{"digest/blank.md", 0, 0, "", 1, 1, 1, ""},
		{"digest/crlf.md", 2, 2, "b\r", 2, 2, 2, ""},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s_%d_%d", tt.path, tt.start, tt.end), func(t *testing.T) {
			res, err := w.Read(tt.path, tt.start, tt.end)
			if tt.errSub != "" {
				if err == nil || !strings.Contains(err.Error(), tt.errSub) {
					t.Fatalf("Read = %+v, %v; want error containing %q", res, err, tt.errSub)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if res.Text != tt.text || res.StartLine != tt.s || res.EndLine != tt.e || res.TotalLines != tt.tot || res.Truncated || res.ResolvedPath != "" || res.Path != tt.path {
				t.Fatalf("Read = %+v; want text %q lines %d-%d of %d", res, tt.text, tt.s, tt.e, tt.tot)
			}
		})
	}
}

func TestReadResolvesMarkdown(t *testing.T) {
	w := newWorkspace(t)
	writeRaw(t, w, "digest/wiki/solar.md", "---\nname: solar\n---\nbody\n")
	writeRaw(t, w, "digest/LICENSE", "plain\n")
	writeRaw(t, w, "digest/data.json", "{}\n")

	res, err := w.Read("digest/wiki/solar", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if res.Path != "digest/wiki/solar.md" || res.ResolvedPath != "digest/wiki/solar.md" || res.TotalLines != 4 {
		t.Fatalf("Read(no suffix) = %+v", res)
	}
	res, err = w.Read("digest/wiki/solar.md", 0, 0)
	if err != nil || res.ResolvedPath != "" {
		t.Fatalf("Read(.md) = %+v, %v", res, err)
	}
	if res, err = w.Read("digest/data.json", 0, 0); err != nil || res.Text != "{}" || res.ResolvedPath != "" {
		t.Fatalf("Read(json) = %+v, %v", res, err)
	}
	// LICENSE has no suffix: the .md path is probed, and its absence named.
	_, err = w.Read("digest/LICENSE", 0, 0)
	if !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "digest/LICENSE.md") {
		t.Fatalf("Read(LICENSE) = %v, want not found naming digest/LICENSE.md", err)
	}
	_, err = w.Read("digest/missing", 0, 0)
	if !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "digest/missing.md") {
		t.Fatalf("Read(missing) = %v", err)
	}
	_, err = w.Read("digest/missing.txt", 0, 0)
	if !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "digest/missing.txt") {
		t.Fatalf("Read(missing.txt) = %v", err)
	}
	for _, bad := range []string{"", "../x.md", "/etc/passwd", "~/x"} {
		if _, err := w.Read(bad, 0, 0); err == nil {
			t.Errorf("Read(%q) succeeded", bad)
		}
	}
	// A directory is an error, not a crash.
	if err := os.MkdirAll(w.Abs("digest/dir.md"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Read("digest/dir.md", 0, 0); err == nil {
		t.Fatal("Read(directory) succeeded")
	}
}

func TestReadResolvedSymlinkEscape(t *testing.T) {
	w := newWorkspace(t)
	outside := t.TempDir()
	secret := filepath.Join(outside, "secret.md")
	if err := os.WriteFile(secret, []byte("secret\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, w.Abs("digest/leak.md")); err != nil {
		t.Skipf("no symlinks: %v", err)
	}
	for _, p := range []string{"digest/leak", "digest/leak.md"} {
		res, err := w.Read(p, 0, 0)
		if !errors.Is(err, ErrOutsideWorkspace) {
			t.Errorf("Read(%q) = %+v, %v; want ErrOutsideWorkspace", p, res, err)
		}
	}
}

func TestReadTruncation(t *testing.T) {
	w := newWorkspace(t)
	var b strings.Builder
	lines := 2000
	for i := 1; i <= lines; i++ {
		fmt.Fprintf(&b, "line %04d %s\n", i, strings.Repeat("x", 40)) // 51 bytes per line with "\n"
	}
	writeRaw(t, w, "digest/big.md", b.String())
	res, err := w.Read("digest/big.md", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Truncated || res.TotalLines != lines || res.StartLine != 1 {
		t.Fatalf("res = %+v", res)
	}
	shown, notice, ok := strings.Cut(res.Text, "\n\n"+TruncationMarker+"\n")
	if !ok {
		t.Fatalf("no truncation notice in %q", res.Text[len(res.Text)-400:])
	}
	if len(shown) > MaxReadBytes {
		t.Fatalf("shown %d bytes > %d", len(shown), MaxReadBytes)
	}
	shownLines := strings.Split(shown, "\n")
	last := shownLines[len(shownLines)-1]
	if res.EndLine != len(shownLines) || last != fmt.Sprintf("line %04d %s", res.EndLine, strings.Repeat("x", 40)) {
		t.Fatalf("EndLine %d, %d lines shown, last %q", res.EndLine, len(shownLines), last)
	}
	want := fmt.Sprintf("The output above was truncated. The full content is saved to the file and contains %d lines in total. "+
		"This excerpt starts at line 1 and covers the next %d bytes. If the current content is not enough, call `read` with file=digest/big.md start_line=%d to read more.",
		lines, MaxReadBytes, res.EndLine+1)
	if notice != want {
		t.Fatalf("notice =\n%s\nwant\n%s", notice, want)
	}
	// Following the notice continues exactly where the excerpt stopped.
	next, err := w.Read("digest/big.md", res.EndLine+1, 0)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(next.Text, fmt.Sprintf("line %04d ", res.EndLine+1)) || next.StartLine != res.EndLine+1 {
		t.Fatalf("next read starts %q (%+v)", next.Text[:30], next.StartLine)
	}
	if next.Truncated {
		t.Fatalf("second read truncated: %+v", next.EndLine)
	}
	// A small range of a big file is not truncated.
	res, err = w.Read("digest/big.md", 10, 12)
	if err != nil || res.Truncated || strings.Count(res.Text, "\n") != 2 {
		t.Fatalf("range of big file: %+v, %v", res, err)
	}
}

func TestReadTruncationMultibyte(t *testing.T) {
	w := newWorkspace(t)
	// One long line of 3-byte runes: the cut must not split a rune.
	writeRaw(t, w, "digest/cjk.md", strings.Repeat("登", 30000)+"\nnext\n")
	res, err := w.Read("digest/cjk.md", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	shown, _, _ := strings.Cut(res.Text, "\n\n"+TruncationMarker)
	if !res.Truncated || len(shown) > MaxReadBytes || len(shown)%3 != 0 || strings.ContainsRune(shown, '\uFFFD') {
		t.Fatalf("truncated=%v shown %d bytes", res.Truncated, len(shown))
	}
}

func TestReadSessionDialog(t *testing.T) {
	w := newWorkspace(t)
	jsonl := `{"name":"user","role":"user","created_at":"2026-06-20 10:00:00","content":"hello\nthere"}
{"name":"","role":"assistant","created_at":"2026-06-20 10:00:05","content":[{"type":"text","text":"hi"},{"type":"tool_use","name":"search"},{"type":"image"},{"type":"text","text":"bye"}]}
{"role":"system","content":"sys"}
not json
{"other":"object"}
`
	writeRaw(t, w, "session/dialog/s1.jsonl", jsonl)
	writeRaw(t, w, "digest/raw.jsonl", jsonl)
	res, err := w.Read("session/dialog/s1.jsonl", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	want := "[user @ 2026-06-20 10:00:00] hello there\n" +
		"[assistant @ 2026-06-20 10:00:05] hi [tool search] [image] bye\n" +
		"[system @ ] sys\n" +
		"not json\n" +
		`{"other":"object"}`
	if res.Text != want || res.TotalLines != 5 {
		t.Fatalf("dialog =\n%s\nwant\n%s", res.Text, want)
	}
	res, err = w.Read("session/dialog/s1.jsonl", 2, 2)
	if err != nil || res.Text != "[assistant @ 2026-06-20 10:00:05] hi [tool search] [image] bye" {
		t.Fatalf("line 2 = %q, %v", res.Text, err)
	}
	// Outside session/dialog a JSONL file is plain text.
	res, err = w.Read("digest/raw.jsonl", 1, 1)
	if err != nil || !strings.HasPrefix(res.Text, `{"name":"user"`) {
		t.Fatalf("plain jsonl = %q, %v", res.Text, err)
	}
	// An empty dialog has no lines.
	writeRaw(t, w, "session/dialog/empty.jsonl", "")
	if res, err = w.Read("session/dialog/empty.jsonl", 0, 0); err != nil || res.TotalLines != 0 || res.Text != "" {
		t.Fatalf("empty dialog = %+v, %v", res, err)
	}
}

func TestReadGBK(t *testing.T) {
	w := newWorkspace(t)
	p := w.Abs("digest/gbk.md")
	if err := os.WriteFile(p, gbk(t, "第一行\n登录流程\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := w.Read("digest/gbk.md", 2, 2)
	if err != nil || res.Text != "登录流程" {
		t.Fatalf("Read(gbk) = %+v, %v", res, err)
	}
}

func TestResolveMarkdown(t *testing.T) {
	tests := []struct {
		in, want string
		added    bool
	}{
		{"digest/a", "digest/a.md", true},
		{"daily/2026-05-18", "daily/2026-05-18.md", true},
		{"digest/a.md", "digest/a.md", false},
		{"resource/a.pdf", "resource/a.pdf", false},
		{"digest/v1.2", "digest/v1.2", false},
	}
	for _, tt := range tests {
		got, added := ResolveMarkdown(tt.in)
		if got != tt.want || added != tt.added {
			t.Errorf("ResolveMarkdown(%q) = %q, %v", tt.in, got, added)
		}
	}
}
