package store

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Lock is an advisory lock on a file under metadata/locks, held by this
// process until Unlock (or until the process dies, which releases it).
type Lock struct {
	f    *os.File
	name string
}

// Lock waits until the named lock is free or ctx ends. Waiting polls so that
// Ctrl-C is honoured while another process holds the lock.
func (w *Workspace) Lock(ctx context.Context, name string) (*Lock, error) {
	if err := ValidateName(name); err != nil {
		return nil, fmt.Errorf("lock name: %w", err)
	}
	dir := w.MetadataPath("locks")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create lock folder: %w", err)
	}
	p := filepath.Join(dir, name+".lock")
	delay := time.Millisecond
	for {
		f, ok, err := lockPath(p)
		if err != nil {
			return nil, fmt.Errorf("lock %s: %w", name, err)
		}
		if ok {
			return &Lock{f: f, name: name}, nil
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("wait for lock %s: %w", name, ctx.Err())
		case <-time.After(delay):
		}
		if delay < 50*time.Millisecond {
			delay *= 2
		}
	}
}

// Unlock releases the lock; it is safe to call more than once.
func (l *Lock) Unlock() error {
	if l == nil || l.f == nil {
		return nil
	}
	err := unlockFile(l.f)
	if cerr := l.f.Close(); err == nil {
		err = cerr
	}
	l.f = nil
	if err != nil {
		return fmt.Errorf("unlock %s: %w", l.name, err)
	}
	return nil
}

// TryLock takes the named lock if it is free; ok is false when another
// process holds it.
func (w *Workspace) TryLock(name string) (l *Lock, ok bool, err error) {
	if err := ValidateName(name); err != nil {
		return nil, false, fmt.Errorf("lock name: %w", err)
	}
	dir := w.MetadataPath("locks")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, false, fmt.Errorf("create lock folder: %w", err)
	}
	f, ok, err := lockPath(filepath.Join(dir, name+".lock"))
	if err != nil {
		return nil, false, fmt.Errorf("lock %s: %w", name, err)
	}
	if !ok {
		return nil, false, nil
	}
	return &Lock{f: f, name: name}, true, nil
}

// lockPath opens and tries to lock a lock file. A lock is only good while
// its file is still the one at the path: maintain removes unused lock
// files, and a process that locked a removed file must try again.
func lockPath(p string) (*os.File, bool, error) {
	for {
		f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE, 0o644)
		if err != nil {
			return nil, false, err
		}
		ok, err := tryLock(f)
		if err != nil || !ok {
			f.Close()
			return nil, false, err
		}
		fi, err1 := f.Stat()
		pi, err2 := os.Stat(p)
		if err1 == nil && err2 == nil && os.SameFile(fi, pi) {
			return f, true, nil
		}
		unlockFile(f)
		f.Close()
	}
}

// StaleLocks lists the lock files no process holds that were last used
// before cutoff; with remove it deletes them (holding each while it does,
// so that no one can be using it).
func (w *Workspace) StaleLocks(cutoff time.Time, remove bool) ([]string, error) {
	dir := w.MetadataPath("locks")
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return []string{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list locks: %w", err)
	}
	out := []string{}
	for _, e := range ents {
		if !e.Type().IsRegular() || !strings.HasSuffix(e.Name(), ".lock") {
			continue
		}
		info, err := e.Info()
		if err != nil || !info.ModTime().Before(cutoff) {
			continue
		}
		p := filepath.Join(dir, e.Name())
		f, ok, err := lockPath(p)
		if err != nil || !ok {
			continue // in use
		}
		if remove {
			os.Remove(p)
		}
		unlockFile(f)
		f.Close()
		out = append(out, MetadataDir+"/locks/"+e.Name())
	}
	return out, nil
}
