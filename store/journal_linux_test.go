package store

import (
	"bytes"
	"errors"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// mountTmpfs mounts a small tmpfs for disk-full and read-only tests.
func mountTmpfs(t *testing.T, size string) string {
	t.Helper()
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size="+size); err != nil {
		t.Skipf("cannot mount a tmpfs here (needs root on Linux): %v", err)
	}
	t.Cleanup(func() { syscall.Unmount(dir, syscall.MNT_DETACH) })
	return dir
}

func TestJournalStopsAtTheFirstFailedWrite(t *testing.T) {
	dir := mountTmpfs(t, "256k")
	ws, _ := OpenWorkspace(dir)
	ws.Init()
	for p, c := range journalFiles {
		ws.WriteFile(p, []byte(c))
	}
	j := newTestJournal(ws, nil)
	r, err := j.Begin(RunInfo{Command: "test"})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.WriteFile("digest/wiki/c.md", []byte("small change\n"), Why{}); err != nil {
		t.Fatal(err)
	}
	big := bytes.Repeat([]byte("x"), 300<<10)
	if err := r.WriteFile("digest/wiki/big.md", big, Why{}); err == nil {
		t.Fatal("a write larger than the disk succeeded")
	}
	afterFail := tree(t, ws)
	if err := r.WriteFile("daily/2026-06-20/a.md", []byte("later\n"), Why{}); !errors.Is(err, ErrRunStopped) {
		t.Errorf("write after a failure: %v", err)
	}
	if diff := cmp.Diff(afterFail, tree(t, ws)); diff != "" {
		t.Errorf("the run changed files after its first failure:\n%s", diff)
	}
	if err := r.End(nil); err != nil {
		t.Fatal(err)
	}
	s, _ := j.FindRun(r.ID)
	if s.Status != StatusFailed || !strings.Contains(s.Error, "digest/wiki/big.md") {
		t.Errorf("status %s %q", s.Status, s.Error)
	}
	// what was done can still be undone
	if _, err := j.Undo(r.ID, false, TriggerCLI); err != nil {
		t.Fatal(err)
	}
	if got := tree(t, ws)["digest/wiki/c.md"]; got != "charlie\n" {
		t.Errorf("c.md %q", got)
	}
	if _, ok := tree(t, ws)["digest/wiki/big.md"]; ok {
		t.Error("a partial big.md was left")
	}
}

func TestJournalReadOnlyWorkspace(t *testing.T) {
	dir := mountTmpfs(t, "1m")
	ws, _ := OpenWorkspace(dir)
	ws.Init()
	for p, c := range journalFiles {
		ws.WriteFile(p, []byte(c))
	}
	if err := syscall.Mount("", dir, "", syscall.MS_REMOUNT|syscall.MS_RDONLY, ""); err != nil {
		t.Skipf("cannot remount read-only: %v", err)
	}
	j := newTestJournal(ws, nil)
	if _, err := j.Begin(RunInfo{Command: "test"}); err == nil || !strings.Contains(err.Error(), "read-only") {
		t.Errorf("begin on a read-only workspace: %v", err)
	}
	if diff := cmp.Diff(journalFiles, tree(t, ws)); diff != "" {
		t.Errorf("files changed:\n%s", diff)
	}
}
