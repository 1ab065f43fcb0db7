package store

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/rjeczalik/notify"
)

// Watch defaults.
const (
	DefaultWatchDebounce = 300 * time.Millisecond
	DefaultWatchMaxDelay = 2 * time.Second
	DefaultWatchBuffer   = 4096
)

// maxGone bounds the memory of directories that may have been renamed away
// (see watcher.gone); when it is full the watch is renewed instead.
const maxGone = 4096

// WatchOptions configure Watch.
type WatchOptions struct {
	Debounce time.Duration // quiet period before a batch is emitted; default 300ms
	MaxDelay time.Duration // a batch is emitted at the latest this long after its first event, even if events keep coming; default 2s
	Buffer   int           // notify channel size; default 4096
	Logger   *slog.Logger
}

// WatchBatch is a set of workspace-relative paths that may have changed.
// Events are only hints: the consumer decides from the state on disk what
// happened (a path that exists was added or modified, a missing path was
// deleted together with everything the consumer knew below it).
type WatchBatch struct {
	Paths    []string // sorted, unique, POSIX, workspace-relative; files only (a new directory is expanded into the files inside it)
	Overflow bool     // events may have been lost: the consumer must reconcile everything
	// Cookies are the names of files created under WatchCookieDir since the
	// last batch. A cookie is a barrier: its batch holds every change made
	// before the cookie was written, and is sent at once, without waiting
	// for the quiet period. A process that wants to know the watcher has
	// caught up writes one and waits for the consumer to handle it.
	Cookies []string
}

// WatchCookieDir holds the cookie files of WatchBatch.Cookies.
const WatchCookieDir = MetadataDir + "/watch"

// WatchCookiePrefix starts every cookie file name.
const WatchCookiePrefix = "cookie-"

// cookieName returns the cookie file name of a workspace-relative path.
func cookieName(rel string) (string, bool) {
	name, ok := strings.CutPrefix(rel, WatchCookieDir+"/"+WatchCookiePrefix)
	if !ok || name == "" || strings.Contains(name, "/") {
		return "", false
	}
	return WatchCookiePrefix + name, true
}

// Watch watches the workspace recursively and sends coalesced batches until
// ctx ends, then closes the channel and stops the watch. It returns an error
// if the watch cannot be set up.
//
// Events under metadata/, dot files and dot folders (which includes reme's
// temp files, TempPrefix) and names ending in "~" are ignored. Symlinks are
// never followed. The first batch does not carry Overflow: changes made
// before Watch returns are not reported, so the consumer reconciles once
// itself after calling Watch. Overflow is also set when the watch had to be
// renewed (after a folder was renamed away and another one created in its
// place, which the underlying watcher would otherwise miss).
//
// A watch is only an optimisation: correctness must never depend on it.
// On Linux, where reme reads inotify itself (watch_inotify_linux.go), events
// the kernel dropped (queue overflow) and folders it refused to watch (watch
// limit) are reported as Overflow; elsewhere the notify library does not
// report them.
func (w *Workspace) Watch(ctx context.Context, opt WatchOptions) (<-chan WatchBatch, error) {
	if opt.Debounce <= 0 {
		opt.Debounce = DefaultWatchDebounce
	}
	if opt.MaxDelay <= 0 {
		opt.MaxDelay = DefaultWatchMaxDelay
	}
	if opt.Buffer <= 0 {
		opt.Buffer = DefaultWatchBuffer
	}
	log := opt.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("watch %s: %w", w.Root, err)
	}
	// notify reports canonical paths; compare like with like.
	root, err := filepath.EvalSymlinks(w.Root)
	if err != nil {
		return nil, fmt.Errorf("watch %s: %w", w.Root, err)
	}
	if fi, err := os.Stat(root); err != nil {
		return nil, fmt.Errorf("watch %s: %w", w.Root, err)
	} else if !fi.IsDir() {
		return nil, fmt.Errorf("watch %s: not a folder", w.Root)
	}
	// notify sends without blocking and silently drops events when c is
	// full; run receives continuously and treats a full channel as overflow.
	c := make(chan notify.EventInfo, opt.Buffer)
	watch, stop := watchBackend(root, c, log)
	wt := &watcher{
		root:  root,
		opt:   opt,
		log:   log,
		c:     c,
		out:   make(chan WatchBatch),
		watch: watch,
		stop:  stop,
		gone:  map[string]struct{}{},
	}
	if err := wt.watch(); err != nil {
		wt.stop()
		return nil, fmt.Errorf("watch %s: %w", w.Root, err)
	}
	go wt.run(ctx)
	return wt.out, nil
}

// Flags of a pending path: the kinds of event seen for it in the batch.
const (
	seenRemove uint8 = 1 << iota
	seenRename
)

type watcher struct {
	root  string // canonical absolute workspace root
	opt   WatchOptions
	log   *slog.Logger
	c     chan notify.EventInfo
	out   chan WatchBatch
	watch func() error // registers the recursive watch on c
	stop  func()       // unregisters every watch on c
	// gone holds paths renamed away that were missing when their batch
	// was flushed: possibly folders that notify still keeps in its tree. A
	// folder created again at such a path would not be watched (notify
	// v0.9.3 finds its stale node and adds no inotify watch), so seeing one
	// renews the watch.
	gone map[string]struct{}
	// flushed, when set (by tests), is called in the loop each time a
	// batch is made ready, merged or not.
	flushed func()
}

func (wt *watcher) run(ctx context.Context) {
	defer close(wt.out)
	defer wt.stop()

	var (
		pending     = map[string]uint8{}
		overflow    bool      // of the pending batch
		cookies     []string  // of the pending batch
		first, last time.Time // first and last event of the pending batch
		timerOn     bool
		ready       *WatchBatch // flushed, waiting for the consumer
	)
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()

	note := func(now time.Time) {
		if !timerOn {
			first = now
			timer.Reset(wt.opt.Debounce)
			timerOn = true
		}
		last = now
	}
	receive := func(ei notify.EventInfo) {
		// A send that found c full was dropped, and c stays full until
		// this receive; so a drop is always noticed here (and sometimes
		// a channel that merely filled up, which is the safe side).
		if len(wt.c) >= cap(wt.c)-1 && !overflow {
			wt.log.Warn("watch: event buffer full, events may be lost", "buffer", cap(wt.c))
			overflow = true
			note(time.Now())
		}
		rel, ok := wt.rel(ei.Path())
		if name, isCookie := cookieName(rel); ok && isCookie {
			if ei.Event()&(notify.Remove|notify.Rename) == 0 && !slices.Contains(cookies, name) {
				cookies = append(cookies, name)
			}
			return
		}
		switch {
		case !ok:
			wt.log.Debug("watch: event outside the workspace", "path", ei.Path())
			return
		case rel == ".":
			if ei.Event()&(notify.Remove|notify.Rename) != 0 {
				wt.log.Error("watch: workspace folder removed or moved", "root", wt.root, "event", ei.Event())
			}
			overflow = true
			note(time.Now())
			return
		case watchIgnored(rel):
			return
		}
		f := pending[rel]
		switch ei.Event() {
		case notify.Remove:
			f |= seenRemove
		case notify.Rename:
			f |= seenRename
		}
		pending[rel] = f
		note(time.Now())
	}

	for {
		if ctx.Err() != nil {
			return
		}
		var out chan<- WatchBatch
		var b WatchBatch
		if ready != nil {
			out, b = wt.out, *ready
		}
		select {
		case <-ctx.Done():
			return
		case ei := <-wt.c:
			receive(ei)
			for n := len(wt.c); n > 0; n-- { // drain what is queued
				receive(<-wt.c)
			}
			if len(cookies) > 0 {
				// A cookie is a barrier: flush now, without the quiet period.
				if timerOn {
					timer.Stop()
					timerOn = false
				}
				ready = wt.flush(pending, overflow, cookies, ready)
				pending, overflow, cookies = map[string]uint8{}, false, nil
			}
		case now := <-timer.C:
			timerOn = false
			due := last.Add(wt.opt.Debounce)
			if limit := first.Add(wt.opt.MaxDelay); limit.Before(due) {
				due = limit
			}
			if now.Before(due) {
				timer.Reset(due.Sub(now))
				timerOn = true
				continue
			}
			ready = wt.flush(pending, overflow, nil, ready)
			pending, overflow = map[string]uint8{}, false
		case out <- b:
			ready = nil
		}
	}
}

// flush turns the pending events into a batch, merged into ready when the
// consumer has not taken that one yet.
func (wt *watcher) flush(pending map[string]uint8, overflow bool, cookies []string, ready *WatchBatch) *WatchBatch {
	paths, renew := wt.collect(pending)
	if renew || len(wt.gone) > maxGone {
		wt.renew()
		overflow = true
	}
	if len(paths) == 0 && !overflow && len(cookies) == 0 {
		return ready
	}
	wt.log.Debug("watch: batch", "paths", len(paths), "overflow", overflow, "cookies", len(cookies))
	if ready != nil { // the consumer is behind: merge
		paths = append(paths, ready.Paths...)
		slices.Sort(paths)
		paths = slices.Compact(paths)
		overflow = overflow || ready.Overflow
		cookies = append(append([]string(nil), ready.Cookies...), cookies...)
	}
	if wt.flushed != nil {
		wt.flushed()
	}
	return &WatchBatch{Paths: paths, Overflow: overflow, Cookies: cookies}
}

// renew drops and re-registers the recursive watch so that notify rebuilds
// its tree from the folders on disk. Events between the two are lost, so the
// caller sets Overflow.
func (wt *watcher) renew() {
	wt.log.Info("watch: renewing the watch", "root", wt.root)
	wt.stop()
	if err := wt.watch(); err != nil {
		wt.log.Error("watch: renew", "root", wt.root, "err", err)
	}
	clear(wt.gone)
}

// rel turns an event path into a workspace-relative POSIX path; "." is the
// root itself.
func (wt *watcher) rel(p string) (string, bool) {
	if p == wt.root {
		return ".", true
	}
	r, ok := strings.CutPrefix(p, wt.root+string(filepath.Separator))
	if !ok || r == "" {
		return "", false
	}
	return filepath.ToSlash(r), true
}

// collect resolves the pending paths against the disk: a missing path or a
// file is kept as is, an existing folder is replaced by the files inside it.
// renew reports that a folder now exists where one may have been removed or
// renamed away, which notify may then fail to watch.
func (wt *watcher) collect(pending map[string]uint8) (paths []string, renew bool) {
	set := make(map[string]struct{}, len(pending))
	walked := map[string]bool{}
	for _, rel := range slices.Sorted(maps.Keys(pending)) {
		flags := pending[rel]
		abs := filepath.Join(wt.root, filepath.FromSlash(rel))
		fi, err := os.Lstat(abs)
		if err != nil {
			set[rel] = struct{}{}
			if flags&seenRename != 0 && errors.Is(err, fs.ErrNotExist) {
				wt.gone[rel] = struct{}{}
			}
			continue
		}
		if !fi.IsDir() {
			set[rel] = struct{}{}
			continue
		}
		if flags != 0 || wt.wasGone(rel) {
			renew = true
		}
		if underWalked(rel, walked) {
			continue // its files are in the set already
		}
		walked[rel] = true
		wt.walkFiles(rel, abs, set)
	}
	return slices.Sorted(maps.Keys(set)), renew
}

// wasGone reports whether rel or a folder above it is in wt.gone.
func (wt *watcher) wasGone(rel string) bool {
	for p := rel; p != "." && p != "/" && p != ""; p = path.Dir(p) {
		if _, ok := wt.gone[p]; ok {
			return true
		}
	}
	return false
}

func underWalked(rel string, walked map[string]bool) bool {
	for p := path.Dir(rel); p != "."; p = path.Dir(p) {
		if walked[p] {
			return true
		}
	}
	return false
}

// walkFiles adds every non-ignored non-folder entry below the folder rel.
// WalkDir does not follow symlinks: a symlink is reported as a path, never
// entered.
func (wt *watcher) walkFiles(rel, abs string, set map[string]struct{}) {
	_ = filepath.WalkDir(abs, func(p string, d fs.DirEntry, err error) error {
		if p == abs {
			if err != nil && d == nil { // gone since Lstat
				set[rel] = struct{}{}
			}
			return nil // a folder that cannot be read is left to the reconcile
		}
		if err != nil {
			return nil
		}
		if ignoredName(d.Name()) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			return nil
		}
		sub, rerr := filepath.Rel(abs, p)
		if rerr != nil {
			return nil
		}
		set[rel+"/"+filepath.ToSlash(sub)] = struct{}{}
		return nil
	})
}

// watchIgnored reports whether a workspace-relative path is never watched:
// anything under metadata/, dot files and folders, names ending in "~".
func watchIgnored(rel string) bool {
	if rel == MetadataDir || strings.HasPrefix(rel, MetadataDir+"/") {
		return true
	}
	for part := range strings.SplitSeq(rel, "/") {
		if ignoredName(part) {
			return true
		}
	}
	return false
}

func ignoredName(name string) bool {
	return strings.HasPrefix(name, ".") || strings.HasSuffix(name, "~")
}
