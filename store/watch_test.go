package store

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rjeczalik/notify"
)

const watchWait = 5 * time.Second

// startWatch watches w with a short debounce; the watch ends with the test.
func startWatch(t *testing.T, w *Workspace, opt WatchOptions) <-chan WatchBatch {
	t.Helper()
	if opt.Debounce == 0 {
		opt.Debounce = 50 * time.Millisecond
	}
	if opt.MaxDelay == 0 {
		opt.MaxDelay = time.Second
	}
	ctx, cancel := context.WithCancel(t.Context())
	ch, err := w.Watch(ctx, opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		for range ch { // wait for the close
		}
	})
	return ch
}

// watchRecorder accumulates the batches of a watch.
type watchRecorder struct {
	t       *testing.T
	ch      <-chan WatchBatch
	batches []WatchBatch
	seen    map[string]int // path -> index of the first batch holding it
}

func newRecorder(t *testing.T, ch <-chan WatchBatch) *watchRecorder {
	return &watchRecorder{t: t, ch: ch, seen: map[string]int{}}
}

func (r *watchRecorder) add(b WatchBatch) {
	r.t.Helper()
	if !slices.IsSorted(b.Paths) || len(slices.Compact(slices.Clone(b.Paths))) != len(b.Paths) {
		r.t.Errorf("batch paths not sorted and unique: %q", b.Paths)
	}
	for _, p := range b.Paths {
		if strings.Contains(p, `\`) || strings.HasPrefix(p, "/") || p == "" {
			r.t.Errorf("batch path %q is not workspace-relative POSIX", p)
		}
		if _, ok := r.seen[p]; !ok {
			r.seen[p] = len(r.batches)
		}
	}
	r.batches = append(r.batches, b)
}

// waitFor receives batches until every path in want has been seen.
func (r *watchRecorder) waitFor(want ...string) {
	r.t.Helper()
	deadline := time.After(watchWait)
	for {
		missing := slices.DeleteFunc(slices.Clone(want), func(p string) bool { _, ok := r.seen[p]; return ok })
		if len(missing) == 0 {
			return
		}
		select {
		case b, ok := <-r.ch:
			if !ok {
				r.t.Fatalf("watch channel closed; still missing %q; batches %+v", missing, r.batches)
			}
			r.add(b)
		case <-deadline:
			r.t.Fatalf("no batch with %q within %v; batches %+v", missing, watchWait, r.batches)
		}
	}
}

// waitBatch receives the next batch.
func (r *watchRecorder) waitBatch() WatchBatch {
	r.t.Helper()
	select {
	case b, ok := <-r.ch:
		if !ok {
			r.t.Fatal("watch channel closed")
		}
		r.add(b)
		return b
	case <-time.After(watchWait):
		r.t.Fatalf("no batch within %v", watchWait)
	}
	return WatchBatch{}
}

// all returns every path seen, sorted.
func (r *watchRecorder) all() []string {
	return slices.Sorted(func(yield func(string) bool) {
		for p := range r.seen {
			if !yield(p) {
				return
			}
		}
	})
}

func (r *watchRecorder) noOverflow() {
	r.t.Helper()
	for _, b := range r.batches {
		if b.Overflow {
			r.t.Errorf("unexpected overflow batch %+v", b)
		}
	}
}

func TestWatchWriteInExistingFolder(t *testing.T) {
	w := newWorkspace(t)
	r := newRecorder(t, startWatch(t, w, WatchOptions{}))
	writeRaw(t, w, "digest/topic.md", "hello")
	r.waitFor("digest/topic.md")
	r.noOverflow()
}

func TestWatchAtomicWrite(t *testing.T) {
	w := newWorkspace(t)
	r := newRecorder(t, startWatch(t, w, WatchOptions{}))
	if err := w.WriteFile("daily/2026-06-20/card.md", []byte("x")); err != nil {
		t.Fatal(err)
	}
	r.waitFor("daily/2026-06-20/card.md")
	for _, p := range r.all() {
		if strings.Contains(p, TempPrefix) {
			t.Errorf("temp file reported: %s", p)
		}
	}
}

func TestWatchCoalescesWritesToOnePath(t *testing.T) {
	w := newWorkspace(t)
	r := newRecorder(t, startWatch(t, w, WatchOptions{Debounce: 200 * time.Millisecond}))
	for i := range 20 {
		writeRaw(t, w, "digest/busy.md", strings.Repeat("x", i))
	}
	r.waitFor("digest/busy.md")
	first := r.seen["digest/busy.md"]
	if n := strings.Count(strings.Join(r.batches[first].Paths, "\n")+"\n", "digest/busy.md\n"); n != 1 {
		t.Fatalf("path reported %d times in one batch: %q", n, r.batches[first].Paths)
	}
	// Nothing about busy.md is left for a later batch.
	writeRaw(t, w, "digest/sentinel.md", "s")
	r.waitFor("digest/sentinel.md")
	for _, b := range r.batches[first+1:] {
		if slices.Contains(b.Paths, "digest/busy.md") {
			t.Errorf("busy.md reported again in a later batch: %q", b.Paths)
		}
	}
}

func TestWatchNewNestedFolders(t *testing.T) {
	w := newWorkspace(t)
	r := newRecorder(t, startWatch(t, w, WatchOptions{}))
	// mkdir -p followed at once by a write: inotify cannot watch the new
	// folders in time; the walk of the new folder must find the file.
	var want []string
	for _, top := range []string{"digest/a", "daily/2026-06-21", "newtop"} {
		dir := filepath.Join(w.Root, filepath.FromSlash(top), "b", "c")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "f.md"), []byte("f"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, ".f.md.swp"), []byte("f"), 0o644); err != nil {
			t.Fatal(err)
		}
		want = append(want, top+"/b/c/f.md")
	}
	r.waitFor(want...)
	for _, p := range r.all() {
		if strings.HasSuffix(p, ".swp") {
			t.Errorf("dot file reported: %s", p)
		}
		if fi, err := os.Lstat(w.Abs(p)); err == nil && fi.IsDir() {
			t.Errorf("folder reported instead of its files: %s", p)
		}
	}
	// The new folders are watched from now on.
	writeRaw(t, w, "digest/a/b/c/later.md", "l")
	r.waitFor("digest/a/b/c/later.md")
	r.noOverflow()
}

func TestWatchDeleteFileAndFolder(t *testing.T) {
	w := newWorkspace(t)
	writeRaw(t, w, "digest/gone.md", "x")
	writeRaw(t, w, "digest/old/one.md", "1")
	writeRaw(t, w, "digest/old/deep/two.md", "2")
	r := newRecorder(t, startWatch(t, w, WatchOptions{}))
	if err := os.Remove(w.Abs("digest/gone.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(w.Abs("digest/old")); err != nil {
		t.Fatal(err)
	}
	r.waitFor("digest/gone.md", "digest/old")
	r.noOverflow()
}

func TestWatchRenameFile(t *testing.T) {
	w := newWorkspace(t)
	writeRaw(t, w, "digest/before.md", "x")
	r := newRecorder(t, startWatch(t, w, WatchOptions{}))
	if err := os.Rename(w.Abs("digest/before.md"), w.Abs("digest/after.md")); err != nil {
		t.Fatal(err)
	}
	r.waitFor("digest/before.md", "digest/after.md")
	r.noOverflow()
}

func TestWatchRenameFolder(t *testing.T) {
	w := newWorkspace(t)
	writeRaw(t, w, "digest/a/x.md", "x")
	writeRaw(t, w, "digest/a/sub/y.md", "y")
	r := newRecorder(t, startWatch(t, w, WatchOptions{}))
	if err := os.Rename(w.Abs("digest/a"), w.Abs("digest/b")); err != nil {
		t.Fatal(err)
	}
	// The old folder as is (the consumer drops all it knew below it), the
	// new one expanded into its files.
	r.waitFor("digest/a", "digest/b/x.md", "digest/b/sub/y.md")
	r.noOverflow()
	writeRaw(t, w, "digest/b/sub/z.md", "z")
	r.waitFor("digest/b/sub/z.md")

	// A folder created where one was renamed away: notify v0.9.3 would not
	// watch it (stale node in its tree), so the watch is renewed, with
	// Overflow since events may be lost meanwhile.
	if err := os.Mkdir(w.Abs("digest/a"), 0o755); err != nil {
		t.Fatal(err)
	}
	if b := r.waitBatch(); !b.Overflow {
		t.Fatalf("folder recreated at a renamed-away path: want overflow, got %+v", b)
	}
	writeRaw(t, w, "digest/a/new.md", "n")
	writeRaw(t, w, "digest/b/sub/w.md", "w")
	r.waitFor("digest/a/new.md", "digest/b/sub/w.md")
}

func TestWatchFolderMovedIn(t *testing.T) {
	w := newWorkspace(t)
	outside := t.TempDir()
	elsewhere := t.TempDir()
	if err := os.WriteFile(filepath.Join(elsewhere, "secret.md"), []byte("s"), 0o644); err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(outside, "pack")
	if err := os.MkdirAll(filepath.Join(src, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"one.md", "sub/two.md", ".hidden.md", "sub/backup.md~"} {
		if err := os.WriteFile(filepath.Join(src, filepath.FromSlash(f)), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(elsewhere, filepath.Join(src, "sub", "link")); err != nil {
		t.Fatal(err)
	}
	r := newRecorder(t, startWatch(t, w, WatchOptions{}))
	if err := os.Rename(src, w.Abs("digest/pack")); err != nil {
		t.Skipf("rename across folders: %v", err)
	}
	r.waitFor("digest/pack/one.md", "digest/pack/sub/two.md", "digest/pack/sub/link")
	writeRaw(t, w, "digest/sentinel.md", "s")
	r.waitFor("digest/sentinel.md")
	want := []string{"digest/pack/one.md", "digest/pack/sub/link", "digest/pack/sub/two.md", "digest/sentinel.md"}
	if got := r.all(); !slices.Equal(got, want) {
		t.Fatalf("paths = %q, want %q (no symlink followed, no ignored names)", got, want)
	}
}

func TestWatchSymlinkNotFollowed(t *testing.T) {
	w := newWorkspace(t)
	outside := t.TempDir()
	r := newRecorder(t, startWatch(t, w, WatchOptions{}))
	if err := os.Symlink(outside, w.Abs("digest/link")); err != nil {
		t.Fatal(err)
	}
	r.waitFor("digest/link")
	if err := os.WriteFile(filepath.Join(outside, "out.md"), []byte("o"), 0o644); err != nil {
		t.Fatal(err)
	}
	writeRaw(t, w, "digest/sentinel.md", "s")
	r.waitFor("digest/sentinel.md")
	writeRaw(t, w, "digest/sentinel2.md", "s")
	r.waitFor("digest/sentinel2.md")
	for _, p := range r.all() {
		if strings.HasPrefix(p, "digest/link/") {
			t.Errorf("event through a symlink reported: %s", p)
		}
	}
}

func TestWatchIgnored(t *testing.T) {
	w := newWorkspace(t)
	r := newRecorder(t, startWatch(t, w, WatchOptions{}))
	writeRaw(t, w, "metadata/index.db", "db")
	writeRaw(t, w, "metadata/sub/deep.md", "x")
	writeRaw(t, w, "digest/.note.md.swp", "swap")
	writeRaw(t, w, "digest/note.md~", "backup")
	writeRaw(t, w, ".git/config", "x")
	writeRaw(t, w, "digest/.hidden/inside.md", "x")
	writeRaw(t, w, "digest/"+TempPrefix+"abc", "tmp")
	if err := os.Rename(w.Abs("digest/"+TempPrefix+"abc"), w.Abs("metadata/moved")); err != nil {
		t.Fatal(err)
	}
	writeRaw(t, w, "digest/sentinel.md", "s")
	r.waitFor("digest/sentinel.md")
	// A second round, so that late events of the first had their chance.
	writeRaw(t, w, "metadata/index.db", "db2")
	writeRaw(t, w, "digest/sentinel2.md", "s")
	r.waitFor("digest/sentinel2.md")
	if got, want := r.all(), []string{"digest/sentinel.md", "digest/sentinel2.md"}; !slices.Equal(got, want) {
		t.Fatalf("paths = %q, want %q", got, want)
	}
	r.noOverflow()
}

func TestWatchMaxDelay(t *testing.T) {
	w := newWorkspace(t)
	r := newRecorder(t, startWatch(t, w, WatchOptions{Debounce: 200 * time.Millisecond, MaxDelay: 300 * time.Millisecond}))
	// Writes every 10ms never leave a 200ms quiet period: only MaxDelay
	// can emit a batch while they go on.
	var writing atomic.Bool
	writing.Store(true)
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer writing.Store(false)
		end := time.After(watchWait)
		for i := 0; ; i++ {
			if err := os.WriteFile(w.Abs("digest/stream.md"), []byte(strings.Repeat("x", i%100)), 0o644); err != nil {
				t.Error(err)
				return
			}
			select {
			case <-stop:
				return
			case <-end:
				return
			case <-time.After(10 * time.Millisecond):
			}
		}
	}()
	defer func() { close(stop); <-done }()
	r.waitFor("digest/stream.md")
	if !writing.Load() {
		t.Fatal("first batch came only after the writes stopped: MaxDelay not honoured")
	}
	// And again: batches keep coming during the stream.
	r.waitBatch()
	if !writing.Load() {
		t.Fatal("second batch came only after the writes stopped")
	}
}

func TestWatchCancel(t *testing.T) {
	w := newWorkspace(t)
	// notify starts its inotify goroutines on the first watch of the
	// process and keeps them: warm up before counting.
	warm, cancelWarm := context.WithCancel(t.Context())
	ch, err := w.Watch(warm, WatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cancelWarm()
	for range ch {
	}
	settle := func(limit int) int {
		deadline := time.Now().Add(watchWait)
		n := runtime.NumGoroutine()
		for n > limit && time.Now().Before(deadline) {
			runtime.Gosched()
			time.Sleep(10 * time.Millisecond) // polling, not an assertion
			n = runtime.NumGoroutine()
		}
		return n
	}
	before := runtime.NumGoroutine() // no events yet: nothing transient

	ctx, cancel := context.WithCancel(t.Context())
	ch, err = w.Watch(ctx, WatchOptions{Debounce: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	r := newRecorder(t, ch)
	writeRaw(t, w, "digest/a/b/x.md", "x")
	r.waitFor("digest/a/b/x.md")
	writeRaw(t, w, "digest/y.md", "y") // pending when cancelled
	cancel()
	select {
	case _, ok := <-ch:
		for ok { // at most what was already on its way
			_, ok = <-ch
		}
	case <-time.After(watchWait):
		t.Fatal("channel not closed after cancel")
	}
	const slack = 2
	if n := settle(before + slack); n > before+slack {
		buf := make([]byte, 1<<20)
		t.Fatalf("goroutines: %d before, %d after cancel\n%s", before, n, buf[:runtime.Stack(buf, true)])
	}

	// A cancelled context is refused.
	if _, err := w.Watch(ctx, WatchOptions{}); err == nil {
		t.Fatal("Watch with a cancelled context: no error")
	}
}

func TestWatchMissingRoot(t *testing.T) {
	w, err := OpenWorkspace(filepath.Join(t.TempDir(), "nope"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Watch(t.Context(), WatchOptions{}); err == nil {
		t.Fatal("watch of a missing workspace: no error")
	}
}

// fakeEvent is a notify event for tests that drive the watcher directly.
type fakeEvent struct {
	ev   notify.Event
	path string
}

func (e fakeEvent) Event() notify.Event { return e.ev }
func (e fakeEvent) Path() string        { return e.path }
func (e fakeEvent) Sys() any            { return nil }

// TestWatchOverflow drives the loop with a channel found full, as when
// notify dropped events (it sends without blocking and says nothing).
func TestWatchOverflow(t *testing.T) {
	w := newWorkspace(t)
	writeRaw(t, w, "digest/a.md", "a")
	c := make(chan notify.EventInfo, 4)
	for _, p := range []string{"digest/a.md", "digest/a.md", "metadata/index.db", "digest/b.md"} {
		c <- fakeEvent{notify.Write, w.Abs(p)}
	}
	var stops atomic.Int32
	wt := &watcher{
		root:  w.Root,
		opt:   WatchOptions{Debounce: 10 * time.Millisecond, MaxDelay: time.Second},
		log:   slog.New(slog.DiscardHandler),
		c:     c,
		out:   make(chan WatchBatch),
		watch: func() error { return nil },
		stop:  func() { stops.Add(1) },
		gone:  map[string]struct{}{},
	}
	ctx, cancel := context.WithCancel(t.Context())
	go wt.run(ctx)
	r := newRecorder(t, wt.out)
	b := r.waitBatch()
	if !b.Overflow || !slices.Equal(b.Paths, []string{"digest/a.md", "digest/b.md"}) {
		t.Fatalf("batch = %+v, want overflow with digest/a.md, digest/b.md", b)
	}
	// The next batch, from a channel that is not full, has no overflow.
	c <- fakeEvent{notify.Create, w.Abs("digest/c.md")}
	if b := r.waitBatch(); b.Overflow || !slices.Equal(b.Paths, []string{"digest/c.md"}) {
		t.Fatalf("batch = %+v, want digest/c.md without overflow", b)
	}
	// An event on the workspace folder itself: reconcile everything.
	c <- fakeEvent{notify.Remove, w.Root}
	if b := r.waitBatch(); !b.Overflow {
		t.Fatalf("batch = %+v, want overflow", b)
	}
	cancel()
	for range wt.out {
	}
	if stops.Load() == 0 {
		t.Fatal("notify watch not stopped on cancel")
	}
}

// TestWatchSlowConsumer checks that batches flushed while the consumer is
// not reading are merged into one, not lost or queued.
func TestWatchSlowConsumer(t *testing.T) {
	w := newWorkspace(t)
	c := make(chan notify.EventInfo, 64)
	flushed := make(chan struct{}, 8)
	wt := &watcher{
		root:    w.Root,
		opt:     WatchOptions{Debounce: time.Millisecond, MaxDelay: time.Millisecond},
		log:     slog.New(slog.DiscardHandler),
		c:       c,
		out:     make(chan WatchBatch),
		watch:   func() error { return nil },
		stop:    func() {},
		gone:    map[string]struct{}{},
		flushed: func() { flushed <- struct{}{} },
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer func() {
		cancel()
		for range wt.out {
		}
	}()
	go wt.run(ctx)
	want := []string{"digest/1.md", "digest/2.md", "digest/3.md"}
	for _, p := range want {
		c <- fakeEvent{notify.Write, w.Abs(p)}
		<-flushed // this event's batch is ready; nobody has read
	}
	got := <-wt.out
	if !slices.Equal(got.Paths, want) || got.Overflow {
		t.Fatalf("first batch read = %+v, want the three flushes merged: %q", got, want)
	}
	select {
	case b := <-wt.out:
		t.Fatalf("a second batch %+v: the flushes were queued, not merged", b)
	default:
	}
}
