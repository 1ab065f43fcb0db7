package store

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
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
	f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open lock %s: %w", name, err)
	}
	delay := time.Millisecond
	for {
		ok, err := tryLock(f)
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", name, err)
		}
		if ok {
			return &Lock{f: f, name: name}, nil
		}
		select {
		case <-ctx.Done():
			f.Close()
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
	f, err := os.OpenFile(filepath.Join(dir, name+".lock"), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, false, fmt.Errorf("open lock %s: %w", name, err)
	}
	got, err := tryLock(f)
	if err != nil || !got {
		f.Close()
		if err != nil {
			return nil, false, fmt.Errorf("lock %s: %w", name, err)
		}
		return nil, false, nil
	}
	return &Lock{f: f, name: name}, true, nil
}
