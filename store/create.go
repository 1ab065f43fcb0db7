package store

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// CreateFile writes a new workspace file, failing with an error that wraps
// fs.ErrExist when the path is taken: two writers that pick the same name
// never overwrite each other. The content appears whole: it is written to
// a temp file that is then hard-linked to its name (a link cannot replace a
// file). Where the file system has no hard links, the file is created
// exclusively and written in place.
func (w *Workspace) CreateFile(rel string, data []byte) error {
	rel, err := w.Rel(rel)
	if err != nil {
		return err
	}
	dst := w.Abs(rel)
	dir := filepath.Dir(dst)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create folder %s: %w", dir, err)
	}
	tmp := tempPath(dir)
	if err := writeSynced(tmp, data, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644, false); err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("create %s: %w", rel, err)
	}
	lerr := os.Link(tmp, dst)
	_ = os.Remove(tmp)
	switch {
	case lerr == nil:
	case errors.Is(lerr, fs.ErrExist):
		return fmt.Errorf("create %s: %w", rel, fs.ErrExist)
	default:
		// no hard links here: an exclusive create says who won the name
		if err := writeSynced(dst, data, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644, false); err != nil {
			if !errors.Is(err, fs.ErrExist) {
				_ = os.Remove(dst)
			}
			return fmt.Errorf("create %s: %w", rel, err)
		}
	}
	if err := syncDir(dir); err != nil {
		return err
	}
	sweepOnce(dir)
	return nil
}
