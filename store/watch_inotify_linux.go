//go:build linux

package store

import (
	"bytes"
	"errors"
	"io/fs"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"unsafe"

	"github.com/rjeczalik/notify"
	"golang.org/x/sys/unix"
)

// On Linux the watch reads inotify itself rather than through notify,
// because notify drops the kernel's queue-overflow event (IN_Q_OVERFLOW)
// without a word: after more than fs.inotify.max_queued_events changes
// arrive while the reader is behind, the kernel discards events and only
// that flag tells. Here it becomes an event on the workspace root, which
// the watcher turns into Overflow, as it does when a watch cannot be added
// (fs.inotify.max_user_watches). Events are sent with blocking sends: a
// slow consumer makes the kernel queue grow, and overflow, not vanish.

const inotifyMask = unix.IN_CREATE | unix.IN_MOVED_TO | unix.IN_DELETE | unix.IN_DELETE_SELF |
	unix.IN_MODIFY | unix.IN_MOVED_FROM | unix.IN_MOVE_SELF | unix.IN_ONLYDIR | unix.IN_DONT_FOLLOW | unix.IN_EXCL_UNLINK

// inotifyEvent is an event in notify's form, so that the watcher loop is
// the same on every system.
type inotifyEvent struct {
	ev   notify.Event
	path string
}

func (e inotifyEvent) Event() notify.Event { return e.ev }
func (e inotifyEvent) Path() string        { return e.path }
func (e inotifyEvent) Sys() any            { return nil }

type inotifyWatch struct {
	root string // canonical absolute root
	c    chan<- notify.EventInfo
	log  *slog.Logger

	mu    sync.Mutex
	fd    int
	wake  [2]int         // pipe that ends the reader
	dirs  map[int]string // watch descriptor → absolute folder
	wds   map[string]int // and back
	done  chan struct{}
	stopF sync.Once
}

// watchBackend returns the watch and stop functions of the Linux backend.
func watchBackend(root string, c chan notify.EventInfo, log *slog.Logger) (watch func() error, stop func()) {
	var cur *inotifyWatch
	watch = func() error {
		w, err := startInotify(root, c, log)
		if err != nil {
			return err
		}
		cur = w
		return nil
	}
	stop = func() {
		if cur != nil {
			cur.close()
			cur = nil
		}
	}
	return watch, stop
}

func startInotify(root string, c chan<- notify.EventInfo, log *slog.Logger) (*inotifyWatch, error) {
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		return nil, &fs.PathError{Op: "inotify_init", Path: root, Err: err}
	}
	w := &inotifyWatch{root: root, c: c, log: log, fd: fd, dirs: map[int]string{}, wds: map[string]int{}, done: make(chan struct{})}
	if err := unix.Pipe2(w.wake[:], unix.O_CLOEXEC|unix.O_NONBLOCK); err != nil {
		unix.Close(fd)
		return nil, &fs.PathError{Op: "pipe", Path: root, Err: err}
	}
	if err := w.addTree(root, w.overflowNoWait); err != nil {
		w.release()
		return nil, err
	}
	go w.read()
	return w, nil
}

// addTree watches dir and every folder below it (symlinks are not
// followed). A folder that cannot be watched, for lack of watch
// descriptors, means events will be missed: that is reported as overflow.
func (w *inotifyWatch) addTree(dir string, missed func()) error {
	var firstErr error
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // gone, or unreadable: nothing to watch
		}
		if !d.IsDir() {
			return nil
		}
		if p != w.root {
			if rel := filepath.ToSlash(strings.TrimPrefix(p, w.root+string(filepath.Separator))); watchSkipped(rel) {
				return filepath.SkipDir
			}
		}
		if err := w.add(p); err != nil {
			switch {
			case p == w.root:
				firstErr = &fs.PathError{Op: "inotify_add_watch", Path: p, Err: err}
				return filepath.SkipAll
			case errors.Is(err, unix.ENOSPC) || errors.Is(err, unix.ENOMEM):
				w.log.Warn("watch: no watch left for a folder (fs.inotify.max_user_watches); events there are missed", "folder", p, "err", err)
				missed()
				return filepath.SkipAll
			}
		}
		return nil
	})
	return firstErr
}

// watchSkipped reports folders whose events never matter: dot folders and
// metadata/ except the cookie folder.
func watchSkipped(rel string) bool {
	if rel == MetadataDir || rel == WatchCookieDir {
		return false
	}
	return watchIgnored(rel)
}

func (w *inotifyWatch) add(dir string) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.fd < 0 {
		return nil
	}
	wd, err := unix.InotifyAddWatch(w.fd, dir, inotifyMask)
	if err != nil {
		return err
	}
	w.dirs[wd] = dir
	w.wds[dir] = wd
	return nil
}

// forget drops the watches of dir and the folders below it (renamed away:
// their descriptors would report the old paths).
func (w *inotifyWatch) forget(dir string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for p, wd := range w.wds {
		if p == dir || strings.HasPrefix(p, dir+string(filepath.Separator)) {
			if w.fd >= 0 {
				unix.InotifyRmWatch(w.fd, uint32(wd))
			}
			delete(w.wds, p)
			delete(w.dirs, wd)
		}
	}
}

func (w *inotifyWatch) overflow() {
	w.send(inotifyEvent{notify.Write, w.root})
}

// overflowNoWait is overflow for the start of a watch, which runs on the
// watcher loop's own goroutine when the watch is renewed: that loop is the
// only reader of c, so a blocking send could wait for ever. A full channel
// is taken for an overflow by the loop already, so nothing is lost.
func (w *inotifyWatch) overflowNoWait() {
	select {
	case w.c <- inotifyEvent{notify.Write, w.root}:
	default:
	}
}

// send hands an event to the watcher; it gives up only when the watch ends.
func (w *inotifyWatch) send(e inotifyEvent) {
	select {
	case w.c <- e:
	case <-w.done:
	}
}

func (w *inotifyWatch) read() {
	defer w.release()
	buf := make([]byte, 64<<10)
	fds := []unix.PollFd{{Fd: int32(w.fd), Events: unix.POLLIN}, {Fd: int32(w.wake[0]), Events: unix.POLLIN}}
	for {
		if _, err := unix.Poll(fds, -1); err != nil && !errors.Is(err, unix.EINTR) {
			w.log.Error("watch: poll", "err", err)
			w.overflow()
			return
		}
		if fds[1].Revents != 0 {
			return
		}
		for {
			n, err := unix.Read(w.fd, buf)
			if errors.Is(err, unix.EINTR) {
				continue
			}
			if errors.Is(err, unix.EAGAIN) || n <= 0 {
				break
			}
			if err != nil {
				w.log.Error("watch: read", "err", err)
				w.overflow()
				return
			}
			w.handle(buf[:n])
			select {
			case <-w.done:
				return
			default:
			}
		}
	}
}

func (w *inotifyWatch) handle(b []byte) {
	for len(b) >= unix.SizeofInotifyEvent {
		ev := (*unix.InotifyEvent)(unsafe.Pointer(&b[0]))
		size := unix.SizeofInotifyEvent + int(ev.Len)
		if size > len(b) {
			return
		}
		name := string(bytes.TrimRight(b[unix.SizeofInotifyEvent:size], "\x00"))
		mask, wd := ev.Mask, int(ev.Wd)
		b = b[size:]
		if mask&unix.IN_Q_OVERFLOW != 0 {
			w.log.Warn("watch: the kernel dropped events (inotify queue overflow)")
			w.overflow()
			continue
		}
		w.mu.Lock()
		dir, ok := w.dirs[wd]
		if mask&unix.IN_IGNORED != 0 && ok {
			delete(w.dirs, wd)
			if w.wds[dir] == wd {
				delete(w.wds, dir)
			}
		}
		w.mu.Unlock()
		if !ok || mask&unix.IN_IGNORED != 0 {
			continue
		}
		p := dir
		if name != "" {
			p = filepath.Join(dir, name)
		}
		var kind notify.Event
		switch {
		case mask&(unix.IN_DELETE|unix.IN_DELETE_SELF) != 0:
			kind = notify.Remove
		case mask&(unix.IN_MOVED_FROM|unix.IN_MOVE_SELF) != 0:
			kind = notify.Rename
		case mask&(unix.IN_CREATE|unix.IN_MOVED_TO) != 0:
			kind = notify.Create
		default:
			kind = notify.Write
		}
		if mask&unix.IN_ISDIR != 0 && name != "" {
			switch {
			case mask&(unix.IN_CREATE|unix.IN_MOVED_TO) != 0:
				w.addTree(p, w.overflow) // files already inside are found by the watcher's walk
			case mask&unix.IN_MOVED_FROM != 0:
				w.forget(p)
			}
		}
		if mask&(unix.IN_DELETE_SELF|unix.IN_MOVE_SELF) != 0 {
			if dir != w.root {
				continue // reported by the parent folder's event
			}
			p = w.root // the workspace itself was removed or moved
		}
		w.send(inotifyEvent{kind, p})
	}
}

// close ends the watch; events on their way are dropped.
func (w *inotifyWatch) close() {
	w.stopF.Do(func() {
		close(w.done)
		w.mu.Lock()
		if w.wake[1] > 0 {
			unix.Write(w.wake[1], []byte{0})
		}
		w.mu.Unlock()
	})
}

// release frees the descriptors once the reader has stopped.
func (w *inotifyWatch) release() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.fd >= 0 {
		unix.Close(w.fd)
		w.fd = -1
	}
	for i, fd := range w.wake {
		if fd > 0 {
			unix.Close(fd)
			w.wake[i] = -1
		}
	}
}
