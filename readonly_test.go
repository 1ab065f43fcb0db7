// The read-only cases run the command as another user (unix credentials).

//go:build unix

package main

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestReadOnlyWorkspaceCLI runs reme on a workspace whose folders and
// files have no write permission, as a user that permission bits stop
// (root ignores them: then the commands run as nobody). Reads work; a
// change fails with exit 1 and a message naming the read-only folder.
func TestReadOnlyWorkspaceCLI(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	base, err := os.MkdirTemp("", "reme-ro-")
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(base, 0o755)
	ws := filepath.Join(base, "ws")
	t.Cleanup(func() {
		filepath.WalkDir(base, func(p string, d fs.DirEntry, err error) error {
			if err == nil {
				os.Chmod(p, 0o755)
			}
			return nil
		})
		os.RemoveAll(base)
	})
	if err := copyDir(filepath.Join("testdata", "workspace"), ws); err != nil {
		t.Fatal(err)
	}
	if _, stderr, code := runReme(t, "-w", ws, "reindex"); code != 0 {
		t.Fatalf("reindex: %s", stderr)
	}
	if _, stderr, code := runReme(t, "-w", ws, "memory_write", "--type", "user", "--name", "go-backend", "--content", "Ten years of Go backend."); code != 0 {
		t.Fatalf("memory_write: %s", stderr)
	}
	// a note the index has not seen: found through a private copy
	if err := os.WriteFile(filepath.Join(ws, "digest", "wiki", "zebra.md"), []byte("---\nname: zebra\n---\n\nzebra stripes\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := filepath.WalkDir(ws, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return os.Chmod(p, 0o555)
		}
		return os.Chmod(p, 0o444)
	}); err != nil {
		t.Fatal(err)
	}
	// reme as testscript provides it (this test binary named reme), in a
	// folder another user can read
	src, err := exec.LookPath("reme")
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(base, "bin", "reme")
	if b, err := os.ReadFile(src); err != nil {
		t.Fatal(err)
	} else if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
		t.Fatal(err)
	} else if err := os.WriteFile(bin, b, 0o755); err != nil {
		t.Fatal(err)
	}
	reme := func(args ...string) (string, string, int) {
		cmd := exec.Command(bin, append([]string{"-w", ws}, args...)...)
		if os.Geteuid() == 0 {
			cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		}
		var out, errb strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			t.Skipf("cannot run reme as an unprivileged user (uid 65534): %v", err)
		}
		return out.String(), errb.String(), cmd.ProcessState.ExitCode()
	}
	out, stderr, code := reme("search", "recall@10 dropped")
	if code != 0 || !strings.Contains(out, "daily/2026-06-19/retrieval-regression-investigation.md") {
		if strings.Contains(stderr, "permission denied") && strings.Contains(stderr, bin) {
			t.Skipf("the test binary is not executable by uid 65534: %s", stderr)
		}
		t.Fatalf("search on a read-only workspace: exit %d\n%s%s", code, out, stderr)
	}
	if out, stderr, code := reme("search", "zebra stripes"); code != 0 || !strings.Contains(out, "digest/wiki/zebra.md") {
		t.Errorf("a note added since the last index update is not found: exit %d\n%s%s", code, out, stderr)
	}
	for _, args := range [][]string{{"list_tags"}, {"links", "--ambiguous"}, {"daily_list", "2026-06-19"}, {"read", "daily/2026-06-19/检索回归排查.md"},
		{"context", "--session", "s1", "Go backend"}, {"memory_search", "Go backend"}, {"memory_get", "--name", "go-backend"}, {"status"}} {
		if out, stderr, code := reme(args...); code != 0 || out == "" {
			t.Errorf("%v on a read-only workspace: exit %d\n%s%s", args, code, out, stderr)
		}
	}
	if out, stderr, code := reme("context", "Go backend"); code != 0 || !strings.Contains(out, "Ten years of Go backend.") {
		t.Errorf("context on a read-only workspace: exit %d\n%s%s", code, out, stderr)
	}
	meta := filepath.Join(ws, "metadata")
	for _, args := range [][]string{
		{"move", "daily/2026-06-19/检索回归排查.md", "daily/2026-06-19/x.md"},
		{"delete", "daily/2026-06-19/检索回归排查.md"},
		{"reindex"},
		{"memory_write", "--type", "user", "--name", "frontend", "--content", "New to frontend."},
		{"memory_delete", "--name", "go-backend"},
	} {
		_, stderr, code := reme(args...)
		if code != 1 || !strings.Contains(stderr, "workspace is read-only") || !strings.Contains(stderr, meta) {
			t.Errorf("%v on a read-only workspace: exit %d, stderr %q; want exit 1 naming %s", args, code, stderr, meta)
		}
	}
	if _, err := os.Stat(filepath.Join(ws, "daily", "2026-06-19", "检索回归排查.md")); err != nil {
		t.Errorf("a refused change removed the note: %v", err)
	}
}
