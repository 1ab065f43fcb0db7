package store

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

func noTempFiles(t *testing.T, root string) {
	t.Helper()
	for _, p := range listTree(t, root) {
		if strings.HasPrefix(filepath.Base(p), TempPrefix) {
			t.Errorf("temp file left behind: %s", p)
		}
	}
}

func TestWriteFile(t *testing.T) {
	w := newWorkspace(t)
	if err := w.WriteFile("digest/a/b/c/new.md", []byte("hello")); err != nil {
		t.Fatal(err)
	}
	if got := readRaw(t, w, "digest/a/b/c/new.md"); got != "hello" {
		t.Fatalf("content = %q", got)
	}
	fi, err := os.Stat(w.Abs("digest/a/b/c/new.md"))
	if err != nil {
		t.Fatal(err)
	}
	if runtime.GOOS != "windows" && fi.Mode().Perm()&0o600 != 0o600 {
		t.Fatalf("new file mode %v", fi.Mode())
	}
	// Overwrite replaces the content entirely (shorter data, no leftovers).
	if err := w.WriteFile("digest/a/b/c/new.md", []byte("hi")); err != nil {
		t.Fatal(err)
	}
	if got := readRaw(t, w, "digest/a/b/c/new.md"); got != "hi" {
		t.Fatalf("content = %q", got)
	}
	// Empty data is a valid (empty) file.
	if err := w.WriteFile("digest/empty.md", nil); err != nil {
		t.Fatal(err)
	}
	if got := readRaw(t, w, "digest/empty.md"); got != "" {
		t.Fatalf("content = %q", got)
	}
	noTempFiles(t, w.Root)
}

func TestWriteFileKeepsPermissions(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("POSIX permissions")
	}
	w := newWorkspace(t)
	for _, perm := range []os.FileMode{0o600, 0o640, 0o664, 0o666, 0o755} {
		t.Run(perm.String(), func(t *testing.T) {
			rel := fmt.Sprintf("digest/perm-%o.md", perm)
			p := w.Abs(rel)
			if err := os.WriteFile(p, []byte("old"), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(p, perm); err != nil { // not subject to umask
				t.Fatal(err)
			}
			if err := w.WriteFile(rel, []byte("new")); err != nil {
				t.Fatal(err)
			}
			fi, err := os.Stat(p)
			if err != nil {
				t.Fatal(err)
			}
			if fi.Mode().Perm() != perm {
				t.Fatalf("mode after write = %v, want %v", fi.Mode().Perm(), perm)
			}
			if got := readRaw(t, w, rel); got != "new" {
				t.Fatalf("content = %q", got)
			}
		})
	}
	noTempFiles(t, w.Root)
}

func TestWriteFileErrors(t *testing.T) {
	w := newWorkspace(t)
	for _, p := range []string{"", "../x.md", "/etc/x.md", "digest/CON.md", "digest/a:b.md", "~/x.md"} {
		if err := w.WriteFile(p, []byte("x")); err == nil {
			t.Errorf("WriteFile(%q) succeeded", p)
		}
	}
	// A directory in the way is refused, not replaced.
	if err := os.MkdirAll(w.Abs("digest/dir.md/child"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := w.WriteFile("digest/dir.md", []byte("x")); err == nil {
		t.Fatal("WriteFile over a directory succeeded")
	}
	if fi, err := os.Stat(w.Abs("digest/dir.md/child")); err != nil || !fi.IsDir() {
		t.Fatalf("directory damaged: %v", err)
	}
	// A file where a parent folder should be.
	writeRaw(t, w, "digest/file", "x")
	if err := w.WriteFile("digest/file/child.md", []byte("x")); err == nil {
		t.Fatal("WriteFile below a file succeeded")
	}
	noTempFiles(t, w.Root)
}

func TestWriteFileAbs(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "metadata", "journal", "move.json")
	if err := WriteFileAbs(p, []byte("{}")); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(p); err != nil || string(b) != "{}" {
		t.Fatalf("read back %q, %v", b, err)
	}
	noTempFiles(t, dir)
}

func TestWriteFileConcurrent(t *testing.T) {
	w := newWorkspace(t)
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for i := 0; i < 16; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			errs <- w.WriteFile("digest/race.md", []byte(strings.Repeat(fmt.Sprint(i%10), 1000)))
		}(i)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	got := readRaw(t, w, "digest/race.md")
	if len(got) != 1000 || strings.Count(got, got[:1]) != 1000 {
		t.Fatalf("torn write: %q...", got[:20])
	}
	noTempFiles(t, w.Root)
}

func TestRemove(t *testing.T) {
	w := newWorkspace(t)
	writeRaw(t, w, "digest/a.md", "x")
	if !w.Exists("digest/a.md") {
		t.Fatal("Exists = false")
	}
	if err := w.Remove("digest/a.md"); err != nil {
		t.Fatal(err)
	}
	if w.Exists("digest/a.md") {
		t.Fatal("file still exists")
	}
	if err := w.Remove("digest/a.md"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Remove(missing) = %v, want ErrNotFound", err)
	}
	if err := w.Remove("../outside.md"); !errors.Is(err, ErrOutsideWorkspace) {
		t.Fatalf("Remove(../outside.md) = %v", err)
	}
}

func TestLockExcludes(t *testing.T) {
	w := newWorkspace(t)
	ctx := context.Background()
	l1, err := w.Lock(ctx, "session-abc")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(w.MetadataPath("locks", "session-abc.lock")); err != nil {
		t.Fatalf("lock file: %v", err)
	}
	var released sync.WaitGroup
	released.Add(1)
	var mu sync.Mutex
	unlocked := false
	got := make(chan error, 1)
	go func() {
		l2, err := w.Lock(ctx, "session-abc")
		if err != nil {
			got <- err
			return
		}
		mu.Lock()
		ok := unlocked
		mu.Unlock()
		if !ok {
			got <- errors.New("second Lock acquired while the first was held")
		} else {
			got <- nil
		}
		_ = l2.Unlock()
	}()
	// Another name is independent.
	other, err := w.Lock(ctx, "session-xyz")
	if err != nil {
		t.Fatal(err)
	}
	if err := other.Unlock(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-got:
		t.Fatalf("second Lock returned while held: %v", err)
	case <-time.After(100 * time.Millisecond):
	}
	mu.Lock()
	unlocked = true
	mu.Unlock()
	if err := l1.Unlock(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-got:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("second Lock did not acquire after Unlock")
	}
	// Unlock twice (and on nil) is fine.
	if err := l1.Unlock(); err != nil {
		t.Fatalf("second Unlock = %v", err)
	}
	var nilLock *Lock
	if err := nilLock.Unlock(); err != nil {
		t.Fatalf("nil Unlock = %v", err)
	}
}

func TestLockContextCancel(t *testing.T) {
	w := newWorkspace(t)
	l1, err := w.Lock(context.Background(), "busy")
	if err != nil {
		t.Fatal(err)
	}
	defer l1.Unlock()

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		l, err := w.Lock(ctx, "busy")
		if err == nil {
			_ = l.Unlock()
		}
		done <- err
	}()
	time.Sleep(30 * time.Millisecond) // most likely waiting by now; correct either way
	cancel()
	// A Lock that ignored the cancel would wait for ever: the test would
	// hang and fail at go test's timeout, whatever the machine's speed.
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Lock after cancel = %v, want context.Canceled", err)
	}

	dctx, dcancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer dcancel()
	if _, err := w.Lock(dctx, "busy"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Lock with deadline = %v", err)
	}
	// A free lock is taken even with a live context, and the lock still works afterwards.
	if err := l1.Unlock(); err != nil {
		t.Fatal(err)
	}
	l3, err := w.Lock(context.Background(), "busy")
	if err != nil {
		t.Fatal(err)
	}
	_ = l3.Unlock()
}

func TestLockInvalidName(t *testing.T) {
	w := newWorkspace(t)
	for _, name := range []string{"", "../x", "a/b", "CON", "x."} {
		if l, err := w.Lock(context.Background(), name); err == nil {
			_ = l.Unlock()
			t.Errorf("Lock(%q) succeeded", name)
		}
	}
}

// TestWriteSweepsStaleTemps: temp files a killed run left behind are removed
// by the next write to their folder; a young one (a write in progress in
// another process) is kept.
func TestWriteSweepsStaleTemps(t *testing.T) {
	w := newWorkspace(t)
	old := time.Now().Add(-2 * TempGrace)
	stale := "daily/2026-01-01/" + TempPrefix + "0123456789ab"
	young := "daily/2026-01-01/" + TempPrefix + "ba9876543210"
	otherDir := "digest/" + TempPrefix + "000000000000"
	for _, p := range []string{stale, young, otherDir} {
		writeRaw(t, w, p, "partial")
	}
	for _, p := range []string{stale, otherDir} {
		if err := os.Chtimes(w.Abs(p), old, old); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.WriteFile("daily/2026-01-01/card.md", []byte("x")); err != nil {
		t.Fatal(err)
	}
	if w.Exists(stale) {
		t.Error("stale temp file in the written folder was kept")
	}
	if !w.Exists(young) {
		t.Error("young temp file removed: it may belong to a write in progress")
	}
	if !w.Exists(otherDir) {
		t.Error("a folder the write did not touch was swept (the sweep must stay cheap)")
	}
}

func TestStaleTempFiles(t *testing.T) {
	w := newWorkspace(t)
	old := time.Now().Add(-3 * time.Hour)
	for _, p := range []string{"digest/" + TempPrefix + "a", "metadata/" + TempPrefix + "b", "daily/2026-01-01/" + TempPrefix + "c", TempPrefix + "d", "digest/" + TempPrefix + "young", "digest/keep.md"} {
		writeRaw(t, w, p, "x")
		if !strings.Contains(p, "young") {
			if err := os.Chtimes(w.Abs(p), old, old); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := os.Mkdir(w.Abs("digest/"+TempPrefix+"dir"), 0o755); err != nil {
		t.Fatal(err)
	}
	want := []string{TempPrefix + "d", "daily/2026-01-01/" + TempPrefix + "c", "digest/" + TempPrefix + "a", "metadata/" + TempPrefix + "b"}
	for _, remove := range []bool{false, true} {
		got, err := w.StaleTempFiles(time.Now().Add(-time.Hour), remove)
		if err != nil {
			t.Fatal(err)
		}
		sort.Strings(got)
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Fatalf("StaleTempFiles(remove=%v) = %q, want %q", remove, got, want)
		}
		for _, p := range want {
			if w.Exists(p) == remove {
				t.Errorf("remove=%v: %s exists: %v", remove, p, w.Exists(p))
			}
		}
	}
	for _, p := range []string{"digest/" + TempPrefix + "young", "digest/keep.md", "digest/" + TempPrefix + "dir"} {
		if !w.Exists(p) {
			t.Errorf("%s removed", p)
		}
	}
}

func TestCreateFileNeverOverwrites(t *testing.T) {
	w := newWorkspace(t)
	if err := w.CreateFile("daily/2026-06-20/x.md", []byte("first\n")); err != nil {
		t.Fatal(err)
	}
	err := w.CreateFile("daily/2026-06-20/x.md", []byte("second\n"))
	if !errors.Is(err, fs.ErrExist) {
		t.Fatalf("second create: %v, want fs.ErrExist", err)
	}
	if b, _ := os.ReadFile(w.Abs("daily/2026-06-20/x.md")); string(b) != "first\n" {
		t.Errorf("content %q", b)
	}
	if err := w.CreateFile("../x.md", []byte("x")); err == nil {
		t.Error("a path outside the workspace was created")
	}
	ents, _ := os.ReadDir(w.Abs("daily/2026-06-20"))
	if len(ents) != 1 {
		t.Errorf("temp files left: %v", ents)
	}
}
