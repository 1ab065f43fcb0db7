package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/reme-dev/reme/jobs"
)

// TestMaintainKilledAtEveryStep kills `reme maintain` (SIGKILL) at each of
// its journaled steps in turn; the next command must roll the run back so
// that the workspace is exactly as before, mark it in the journal, and a
// new maintain must then do exactly what an uninterrupted one does.
func TestMaintainKilledAtEveryStep(t *testing.T) {
	if testing.Short() {
		t.Skip("starts many processes")
	}
	ref := t.TempDir()
	maintainWorkspace(t, ref)
	before := mustTreeSums(t, ref)
	if out, err := remeCmd(ref, nil, "maintain").CombinedOutput(); err != nil {
		t.Fatalf("maintain: %v\n%s", err, out)
	}
	want := mustTreeSums(t, ref)
	if want == before {
		t.Fatal("the reference maintain changed nothing")
	}
	killed := 0
	for n := 1; n < 200; n++ {
		root := t.TempDir()
		maintainWorkspace(t, root)
		out, err := remeCmd(root, []string{fmt.Sprintf("REME_CRASH_AT=#%d", n)}, "maintain").CombinedOutput()
		var ee *exec.ExitError
		if err == nil {
			break // ran past its last step
		}
		if !errors.As(err, &ee) || ee.ProcessState.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
			t.Fatalf("step %d: maintain failed instead of being killed: %v\n%s", n, err, out)
		}
		killed++
		// the next command, whatever it is, settles the run
		if out, err := remeCmd(root, nil, "history").CombinedOutput(); err != nil {
			t.Fatalf("step %d: the next command failed: %v\n%s", n, err, out)
		} else if !strings.Contains(string(out), "rolled_back") && !strings.Contains(string(out), "No changes journaled") {
			t.Errorf("step %d: the journal does not say the run was rolled back:\n%s", n, out)
		}
		if got := mustTreeSums(t, root); got != before {
			t.Errorf("step %d: workspace after recovery differs from before the run:\n%s", n, cmp.Diff(before, got))
		}
		if openRuns(t, root) != 0 {
			t.Errorf("step %d: a run is still open", n)
		}
		if out, err := remeCmd(root, nil, "maintain").CombinedOutput(); err != nil {
			t.Fatalf("step %d: maintain after recovery: %v\n%s", n, err, out)
		}
		if got := mustTreeSums(t, root); got != want {
			t.Errorf("step %d: maintain after recovery differs from an uninterrupted one:\n%s", n, cmp.Diff(want, got))
		}
	}
	if killed < 10 {
		t.Fatalf("only %d steps were tried", killed)
	}
}

// mountTmpfs mounts a small tmpfs (root on Linux only).
func mountTmpfs(t *testing.T, size string) string {
	t.Helper()
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size="+size); err != nil {
		t.Skipf("cannot mount a tmpfs here (needs root on Linux): %v", err)
	}
	t.Cleanup(func() { syscall.Unmount(dir, syscall.MNT_DETACH) })
	return dir
}

// TestMaintainOnAFullDisk runs maintain where space runs out part way:
// it stops at the first failed write, journals it, changes nothing further,
// leaves every note either where it was or archived (never both or none),
// and what it did can be undone once there is room again.
func TestMaintainOnAFullDisk(t *testing.T) {
	for _, room := range []int64{8, 40, 100, 160, 260} {
		t.Run(fmt.Sprint(room, "K"), func(t *testing.T) { maintainOnFullDisk(t, room<<10) })
	}
}

func maintainOnFullDisk(t *testing.T, room int64) {
	root := mountTmpfs(t, "4m")
	maintainWorkspace(t, root)
	// notes large enough that the disk fills part way through
	pad := "\n" + strings.Repeat("padding words to take room on the disk\n", 1500)
	for _, p := range []string{"memory/entries/pref.md", "memory/entries/pref-copy.md", "memory/entries/old.md", "memory/entries/trip.md", "daily/2026-06-20/c.md", "daily/2026-06-20/b.md"} {
		f, err := os.OpenFile(filepath.Join(root, p), os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString(pad)
		f.Close()
	}
	if out, err := remeCmd(root, nil, "reindex").CombinedOutput(); err != nil {
		t.Fatalf("reindex: %v\n%s", err, out)
	}
	before := mustTreeSums(t, root)
	filler := filepath.Join(root, "filler")
	f, err := os.Create(filler)
	if err != nil {
		t.Fatal(err)
	}
	var st syscall.Statfs_t
	if err := syscall.Statfs(root, &st); err != nil {
		t.Fatal(err)
	}
	f.Write(make([]byte, int64(st.Bavail)*int64(st.Bsize)-room))
	f.Close()
	cmd := remeCmd(root, nil, "--json", "maintain")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err == nil {
		t.Skipf("everything fitted in %d bytes", room)
	}
	if !strings.Contains(stderr.String(), "no space left on device") && !strings.Contains(stderr.String(), "disk is full") {
		t.Errorf("the error does not say the disk is full:\n%s", stderr.String())
	}
	var res jobs.MaintainResult
	if len(out) > 0 {
		if err := json.Unmarshal(out, &res); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		failed := false
		for _, a := range res.Actions {
			switch {
			case a.Status == jobs.StatusFailed:
				if failed {
					t.Errorf("a second write was tried after the first failed: %+v", a)
				}
				failed = true
			case failed && a.Status != jobs.StatusSkipped && a.Status != jobs.StatusPending:
				t.Errorf("an action after the failure was not skipped: %+v", a)
			}
		}
		if failed && res.Housekeeping.Optimized {
			t.Error("housekeeping ran after the failure")
		}
	}
	os.Remove(filler)
	for p := range maintainFixture {
		_, errSrc := os.Stat(filepath.Join(root, p))
		_, errDst := os.Stat(filepath.Join(root, "archive", p))
		if (errSrc == nil) == (errDst == nil) {
			t.Errorf("%s: present at the source %v and in the archive %v", p, errSrc == nil, errDst == nil)
		}
	}
	hist, err := remeCmd(root, nil, "history").CombinedOutput()
	if err != nil {
		t.Fatalf("history: %v\n%s", err, hist)
	}
	if !strings.Contains(string(hist), " maintain  cli  failed  ") && !strings.Contains(string(hist), "rolled_back") &&
		!strings.Contains(string(hist), "No changes journaled") {
		t.Errorf("the journal does not say what happened:\n%s", hist)
	}
	if strings.Contains(string(hist), " failed  ") && !strings.Contains(string(hist), " failed  0 change(s)") {
		if out, err := remeCmd(root, nil, "undo", "--last").CombinedOutput(); err != nil {
			t.Fatalf("undo: %v\n%s\n%s", err, out, hist)
		}
	}
	if got := mustTreeSums(t, root); got != before {
		t.Errorf("after undo:\n%s", cmp.Diff(before, got))
	}
	if out, err := remeCmd(root, nil, "maintain").CombinedOutput(); err != nil {
		t.Errorf("maintain once there is room: %v\n%s", err, out)
	}
}

func TestMaintainOnAReadOnlyWorkspace(t *testing.T) {
	root := mountTmpfs(t, "8m")
	maintainWorkspace(t, root)
	before := mustTreeSums(t, root)
	if err := syscall.Mount("", root, "", syscall.MS_REMOUNT|syscall.MS_RDONLY, ""); err != nil {
		t.Skipf("cannot remount read-only: %v", err)
	}
	out, err := remeCmd(root, nil, "maintain").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "read-only file system") {
		t.Fatalf("maintain on a read-only workspace: %v\n%s", err, out)
	}
	if got := mustTreeSums(t, root); got != before {
		t.Error("files changed")
	}
}
