package store

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// newWorkspace returns an initialised workspace in a fresh temp dir.
func newWorkspace(t *testing.T) *Workspace {
	t.Helper()
	w, err := OpenWorkspace(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Init(); err != nil {
		t.Fatal(err)
	}
	return w
}

// writeRaw writes a file below the workspace without going through store.
func writeRaw(t *testing.T, w *Workspace, rel, content string) {
	t.Helper()
	p := filepath.Join(w.Root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// listTree returns every path below root (relative, slash separated).
func listTree(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == root {
			return nil
		}
		r, _ := filepath.Rel(root, p)
		out = append(out, filepath.ToSlash(r))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return out
}

func TestRel(t *testing.T) {
	w := newWorkspace(t)
	root := w.Root
	tests := []struct {
		in      string
		want    string
		wantErr error // nil: success
	}{
		{in: "daily/2026-05-18/x.md", want: "daily/2026-05-18/x.md"},
		{in: "./daily/x.md", want: "daily/x.md"},
		{in: "digest/wiki/登录流程.md", want: "digest/wiki/登录流程.md"},
		{in: "a", want: "a"},
		{in: "a b/c d.md", want: "a b/c d.md"},
		{in: "COM0.md", want: "COM0.md"},
		{in: "CONSOLE", want: "CONSOLE"},
		{in: "..a/b", want: "..a/b"},
		{in: ".hidden/x", want: ".hidden/x"},
		{in: root + "/daily/x.md", want: "daily/x.md"},
		{in: root + "/./daily/x.md", want: "daily/x.md"},
		{in: root + "//daily/x.md", want: "daily/x.md"},
		{in: root + "/digest/../daily/x.md", wantErr: ErrOutsideWorkspace}, // ".." refused even when it stays inside
		{in: root + "/", wantErr: ErrInvalidPath},
		{in: root, wantErr: ErrInvalidPath},
		{in: "/etc/passwd", wantErr: ErrOutsideWorkspace},
		{in: "/", wantErr: ErrOutsideWorkspace},
		{in: root + "/../x.md", wantErr: ErrOutsideWorkspace},
		{in: root + "x/a.md", wantErr: ErrOutsideWorkspace}, // sibling with a common prefix
		{in: filepath.Dir(root), wantErr: ErrOutsideWorkspace},
		{in: "..", wantErr: ErrOutsideWorkspace},
		{in: "../x.md", wantErr: ErrOutsideWorkspace},
		{in: "a/../b.md", wantErr: ErrOutsideWorkspace},
		{in: "a/b/..", wantErr: ErrOutsideWorkspace},
		{in: "./../x", wantErr: ErrOutsideWorkspace},
		{in: "~", wantErr: ErrInvalidPath},
		{in: "~/notes.md", wantErr: ErrInvalidPath},
		{in: "~root/x", wantErr: ErrInvalidPath},
		{in: "", wantErr: ErrInvalidPath},
		{in: "   ", wantErr: ErrInvalidPath},
		{in: ".", wantErr: ErrInvalidPath},
		{in: "./", wantErr: ErrInvalidPath},
		{in: "a/./b", wantErr: ErrInvalidPath},
		{in: "a//b", wantErr: ErrInvalidPath},
		{in: "a/", wantErr: ErrInvalidPath},
		{in: " a/b", wantErr: ErrInvalidPath},
		{in: "a/b ", wantErr: ErrInvalidPath},
		{in: "a /b", wantErr: ErrInvalidPath},
		{in: "a/ b", wantErr: ErrInvalidPath},
		{in: "a\tb", wantErr: ErrInvalidPath},
		{in: "notes./x.md", wantErr: ErrInvalidPath},
		{in: "x.md.", wantErr: ErrInvalidPath},
		{in: `a\b.md`, wantErr: ErrInvalidPath},
		{in: `C:\x.md`, wantErr: ErrInvalidPath},
		{in: "C:/x.md", wantErr: ErrInvalidPath},
		{in: "daily/CON", wantErr: ErrInvalidPath},
		{in: "con.txt", wantErr: ErrInvalidPath},
		{in: "LPT9.md/x", wantErr: ErrInvalidPath},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := w.Rel(tt.in)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("Rel(%q) = %q, %v; want error %v", tt.in, got, err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("Rel(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
			}
		})
	}
}

func TestRelForbiddenCharacters(t *testing.T) {
	w := newWorkspace(t)
	bad := []string{"<", ">", ":", `"`, `\`, "|", "?", "*", "\x00", "\x01", "\x1f", "\x7f", "\u0085", "\n", "\r"}
	for _, c := range bad {
		for _, p := range []string{"a" + c + "b.md", "dir" + c + "x/file.md", "daily/x" + c} {
			if _, err := w.Rel(p); !errors.Is(err, ErrInvalidPath) {
				t.Errorf("Rel(%q) err = %v, want ErrInvalidPath", p, err)
			}
			if strings.Contains(p, "/") {
				continue
			}
			if err := ValidateName(p); err == nil {
				t.Errorf("ValidateName(%q) = nil, want error", p)
			}
		}
	}
}

func TestValidateName(t *testing.T) {
	tests := []struct {
		name string
		ok   bool
	}{
		{"note", true},
		{"note.md", true},
		{"登录流程", true},
		{"a b", true},
		{"a.b.c", true},
		{".hidden", true},
		{"..x", true},
		{"x-y_z", true},
		{"COM0", true},
		{"COM0.md", true},
		{"LPT0", true},
		{"CONSOLE", true},
		{"CONx.md", true},
		{"AUXILIARY", true},
		{"NULL", true},
		{"COM10", true},
		{"session-01HZX", true},
		{"", false},
		{".", false},
		{"..", false},
		{" a", false},
		{"a ", false},
		{"\ta", false},
		{"a\u00a0", false}, // unicode whitespace
		{"a.", false},
		{"a..", false},
		{"CON", false},
		{"con", false},
		{"Con", false},
		{"con.txt", false},
		{"CON.md", false},
		{"con.tar.gz", false},
		{"con .txt", false},
		{"PRN", false},
		{"aux.md", false},
		{"NUL", false},
		{"nul.json", false},
		{"COM1", false},
		{"com5.md", false},
		{"COM9", false},
		{"LPT1", false},
		{"lpt9.md", false},
		{"LPT9.md", false},
		{"a/b", false},
		{`a\b`, false},
		{"a<b", false},
		{"a>b", false},
		{"a:b", false},
		{`a"b`, false},
		{"a|b", false},
		{"a?b", false},
		{"a*b", false},
		{"a\x00b", false},
		{"a\x1bb", false},
		{"a\x7fb", false},
	}
	for _, tt := range tests {
		err := ValidateName(tt.name)
		if (err == nil) != tt.ok {
			t.Errorf("ValidateName(%q) = %v, want ok=%v", tt.name, err, tt.ok)
		}
	}
}

func TestRelCreatesNothing(t *testing.T) {
	w := newWorkspace(t)
	before := listTree(t, w.Root)
	for _, p := range []string{"daily/2026-01-01/new.md", "a/b/c/d.md", "../escape.md", "x/../../y", "CON/x"} {
		_, _ = w.Rel(p)
	}
	if diff := cmp.Diff(before, listTree(t, w.Root)); diff != "" {
		t.Fatalf("Rel changed the workspace (-before +after):\n%s", diff)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(w.Root), "escape.md")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("escape.md exists: %v", err)
	}
}

func TestRelSymlinks(t *testing.T) {
	w := newWorkspace(t)
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "secret.md"), []byte("secret"), 0o644); err != nil {
		t.Fatal(err)
	}
	writeRaw(t, w, "digest/real/a.md", "inside")
	mk := func(target, link string) {
		t.Helper()
		if err := os.Symlink(target, filepath.Join(w.Root, filepath.FromSlash(link))); err != nil {
			t.Skipf("symlinks not supported: %v", err)
		}
	}
	mk(outside, "digest/out")                                   // dir symlink out
	mk(filepath.Join(outside, "secret.md"), "digest/secret.md") // file symlink out
	mk(filepath.Join(w.Root, "digest", "real"), "digest/in")    // dir symlink in (absolute)
	mk("real/a.md", "digest/alias.md")                          // file symlink in (relative)
	mk("../out", "digest/real/chain")                           // inside -> inside link -> outside
	mk(filepath.Join(outside, "missing"), "digest/dangling")    // dangling
	mk("..", "digest/up")                                       // to the workspace root: inside

	tests := []struct {
		in      string
		wantErr error
	}{
		{"digest/out", ErrOutsideWorkspace},
		{"digest/out/secret.md", ErrOutsideWorkspace},
		{"digest/out/new/file.md", ErrOutsideWorkspace},
		{"digest/secret.md", ErrOutsideWorkspace},
		{"digest/real/chain/secret.md", ErrOutsideWorkspace},
		{"digest/dangling", ErrOutsideWorkspace},
		{"digest/in/a.md", nil},
		{"digest/in/new.md", nil},
		{"digest/alias.md", nil},
		{"digest/up/daily", nil},
		{w.Root + "/digest/out/secret.md", ErrOutsideWorkspace},
	}
	for _, tt := range tests {
		got, err := w.Rel(tt.in)
		if tt.wantErr == nil {
			if err != nil {
				t.Errorf("Rel(%q) = %v, want success", tt.in, err)
			}
			continue
		}
		if !errors.Is(err, tt.wantErr) {
			t.Errorf("Rel(%q) = %q, %v; want %v", tt.in, got, err, tt.wantErr)
		}
	}
	// No write may follow an escaping symlink.
	if err := w.WriteFile("digest/out/new.md", []byte("x")); !errors.Is(err, ErrOutsideWorkspace) {
		t.Fatalf("WriteFile through escaping symlink: %v", err)
	}
	if _, err := os.Stat(filepath.Join(outside, "new.md")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("file written outside the workspace: %v", err)
	}
}

func TestOpenWorkspace(t *testing.T) {
	if _, err := OpenWorkspace(""); !errors.Is(err, ErrInvalidPath) {
		t.Fatalf("OpenWorkspace(\"\") = %v", err)
	}
	dir := t.TempDir()
	real := filepath.Join(dir, "real")
	if err := os.Mkdir(real, 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(real, link); err != nil {
		t.Skipf("symlinks not supported: %v", err)
	}
	w, err := OpenWorkspace(link)
	if err != nil {
		t.Fatal(err)
	}
	wantRoot, _ := filepath.EvalSymlinks(real)
	if w.Root != wantRoot {
		t.Fatalf("Root = %q, want symlink-free %q", w.Root, wantRoot)
	}
	// A root that does not exist yet is accepted; Init creates the layout.
	w2, err := OpenWorkspace(filepath.Join(dir, "new", "ws"))
	if err != nil {
		t.Fatal(err)
	}
	if err := w2.Init(); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"daily", "digest", "resource", "session/dialog", "metadata"} {
		if fi, err := os.Stat(w2.Abs(d)); err != nil || !fi.IsDir() {
			t.Errorf("Init did not create %s: %v", d, err)
		}
	}
	if got := w2.MetadataPath("index.db"); got != filepath.Join(w2.Root, "metadata", "index.db") {
		t.Errorf("MetadataPath = %q", got)
	}
}

func TestDateFromPath(t *testing.T) {
	tests := map[string]string{
		"daily/2026-05-18/x.md":        "2026-05-18",
		"daily/2026-05-18.md":          "2026-05-18",
		"daily/2026-05-18":             "2026-05-18",
		"daily/2026-05-18/sub/x.md":    "2026-05-18",
		"resource/2026-06-06/r.pdf":    "2026-06-06",
		"digest/wiki/x.md":             "",
		"daily/2026-13-01/x.md":        "",
		"daily/2026-02-30/x.md":        "",
		"daily/2026-5-18/x.md":         "",
		"daily/x.md":                   "",
		"daily":                        "",
		"":                             "",
		"2026-05-18/x.md":              "",
		"daily/2026-05-18.txt":         "",
		"daily/2026-05-18.md/x.md":     "",
		"daily/2026-05-18T10:00/x.md":  "",
		"resource/2024-02-29/leap.png": "2024-02-29",
		"resource/2023-02-29/x.png":    "",
	}
	for in, want := range tests {
		if got := DateFromPath(in); got != want {
			t.Errorf("DateFromPath(%q) = %q, want %q", in, got, want)
		}
	}
	if DayIndexPath("2026-05-18") != "daily/2026-05-18.md" || DayDir("2026-05-18") != "daily/2026-05-18" {
		t.Errorf("DayIndexPath/DayDir = %q, %q", DayIndexPath("2026-05-18"), DayDir("2026-05-18"))
	}
}

func TestIsNotePath(t *testing.T) {
	roots := []string{DailyDir, DigestDir}
	tests := map[string]bool{
		"daily/2026-05-18/x.md":    true,
		"daily/2026-05-18.md":      true,
		"digest/wiki/x.md":         true,
		"digest/x.txt":             false,
		"resource/2026-06-06/a.md": false,
		"daily/.reme-tmp-abc.md":   false,
		"daily/.obsidian/x.md":     false,
		"daily.md":                 false,
		"notes/daily/x.md":         false,
	}
	for in, want := range tests {
		if got := IsNotePath(in, roots); got != want {
			t.Errorf("IsNotePath(%q) = %v, want %v", in, got, want)
		}
	}
	if got := JoinRel("daily", "2026-05-18", "x.md"); got != "daily/2026-05-18/x.md" {
		t.Errorf("JoinRel = %q", got)
	}
}
