//go:build linux

package store

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/rjeczalik/notify"
)

// When the reader falls behind by more events than the kernel keeps, the
// kernel drops events and says so once (IN_Q_OVERFLOW); the watch must
// report it, where notify stays silent.
func TestInotifyReportsKernelOverflow(t *testing.T) {
	b, err := os.ReadFile("/proc/sys/fs/inotify/max_queued_events")
	if err != nil {
		t.Skipf("no inotify limits here: %v", err)
	}
	var max int
	fmt.Sscan(string(b), &max)
	if max <= 0 || max > 1<<17 {
		t.Skipf("max_queued_events is %d", max)
	}
	root := t.TempDir()
	dir := filepath.Join(root, "daily", "2026-01-01")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	c := make(chan notify.EventInfo) // nobody reads yet: the reader blocks
	watch, stop := watchBackend(root, c, slog.New(slog.DiscardHandler))
	if err := watch(); err != nil {
		t.Fatal(err)
	}
	defer stop()
	// Two events a file (create, modify), and half as many again: the
	// reader has already pulled a buffer of events off the queue before it
	// blocks on the channel.
	for i := 0; i < max/2+max/4; i++ {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("n%06d.md", i)), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.After(30 * time.Second)
	for n := 0; ; n++ {
		select {
		case ei := <-c:
			if ei.Path() == root {
				return // the overflow, after the events the kernel kept
			}
		case <-deadline:
			t.Fatalf("no overflow reported after %d events", n)
		}
	}
}

// A folder renamed away no longer reports under its old name, and its new
// name is watched.
func TestInotifyFollowsRenamedFolders(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "daily", "a", "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	c := make(chan notify.EventInfo, 64)
	watch, stop := watchBackend(root, c, slog.New(slog.DiscardHandler))
	if err := watch(); err != nil {
		t.Fatal(err)
	}
	defer stop()
	if err := os.Rename(filepath.Join(root, "daily", "a"), filepath.Join(root, "daily", "b")); err != nil {
		t.Fatal(err)
	}
	deadline := time.After(10 * time.Second)
	for moved := false; !moved; {
		select {
		case ei := <-c:
			moved = ei.Path() == filepath.Join(root, "daily", "b")
		case <-deadline:
			t.Fatal("no event for the renamed folder")
		}
	}
	if err := os.WriteFile(filepath.Join(root, "daily", "b", "sub", "x.md"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(root, "daily", "b", "sub", "x.md")
	for {
		select {
		case ei := <-c:
			if ei.Path() == want {
				return
			}
			if ei.Path() == filepath.Join(root, "daily", "a", "sub", "x.md") {
				t.Fatalf("event under the old name: %v", ei.Path())
			}
		case <-deadline:
			t.Fatal("no event for the file in the renamed folder")
		}
	}
}

// Starting a watch that finds no watch left for a folder reports the
// overflow without blocking: a renewed watch starts on the one goroutine
// that empties the channel.
func TestInotifyStartDoesNotBlockOnAFullChannel(t *testing.T) {
	c := make(chan notify.EventInfo, 1)
	c <- inotifyEvent{notify.Write, "x"}
	w := &inotifyWatch{root: t.TempDir(), c: c, done: make(chan struct{})}
	returned := make(chan struct{})
	go func() {
		w.overflowNoWait()
		close(returned)
	}()
	select {
	case <-returned:
	case <-time.After(5 * time.Second):
		close(w.done)
		t.Fatal("the start of a watch blocked on a full channel")
	}
}
