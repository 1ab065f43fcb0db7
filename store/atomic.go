package store

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"
)

// TempPrefix starts the name of every temporary file reme writes; scans skip
// dot files, so a temp file left by a crash is never indexed.
const TempPrefix = ".reme-tmp-"

// WriteFile atomically replaces a workspace file: temp file in the same
// folder, fsync, rename, fsync of the folder. Missing parent folders are
// created. An existing file keeps its permissions.
func (w *Workspace) WriteFile(rel string, data []byte) error {
	rel, err := w.Rel(rel)
	if err != nil {
		return err
	}
	return writeAtomic(w.Abs(rel), data)
}

// WriteFileAbs atomically writes a file that is not a workspace note, such
// as a journal under metadata/.
func WriteFileAbs(dst string, data []byte) error { return writeAtomic(dst, data) }

func writeAtomic(dst string, data []byte) error {
	dir := filepath.Dir(dst)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create folder %s: %w", dir, err)
	}
	perm := fs.FileMode(0o644)
	keepPerm := false
	if fi, err := os.Stat(dst); err == nil {
		if !fi.Mode().IsRegular() {
			return fmt.Errorf("write %s: not a regular file", dst)
		}
		perm, keepPerm = fi.Mode().Perm(), true
	}
	var rnd [6]byte
	_, _ = rand.Read(rnd[:])
	tmp := filepath.Join(dir, TempPrefix+hex.EncodeToString(rnd[:]))
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return fmt.Errorf("write %s: %w", dst, err)
	}
	var werr error
	if keepPerm {
		// OpenFile's mode is filtered by the umask; the existing file's
		// bits must survive exactly.
		werr = f.Chmod(perm)
	}
	if werr == nil {
		_, werr = f.Write(data)
	}
	if werr == nil {
		werr = f.Sync()
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(tmp, dst)
	}
	if werr != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("write %s: %w", dst, werr)
	}
	return syncDir(dir)
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("sync folder %s: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, os.ErrInvalid) {
		return fmt.Errorf("sync folder %s: %w", dir, err)
	}
	return nil
}

// Remove deletes a workspace file and syncs its folder. A missing file is
// ErrNotFound.
func (w *Workspace) Remove(rel string) error {
	rel, err := w.Rel(rel)
	if err != nil {
		return err
	}
	p := w.Abs(rel)
	if err := os.Remove(p); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("%s: %w", rel, ErrNotFound)
		}
		return fmt.Errorf("remove %s: %w", rel, err)
	}
	return syncDir(filepath.Dir(p))
}

// Exists reports whether a workspace path exists (without following a final
// symlink).
func (w *Workspace) Exists(rel string) bool {
	_, err := os.Lstat(w.Abs(rel))
	return err == nil
}

// IsNotePath reports whether a workspace path is a markdown note in one of
// the indexed folders.
func IsNotePath(rel string, roots []string) bool {
	if !strings.HasSuffix(rel, ".md") {
		return false
	}
	for _, part := range strings.Split(rel, "/") {
		if strings.HasPrefix(part, ".") {
			return false
		}
	}
	top, _, _ := strings.Cut(rel, "/")
	for _, r := range roots {
		if top == r && rel != r {
			return true
		}
	}
	return false
}

// MetadataPath is a path under the workspace's derived-state folder.
func (w *Workspace) MetadataPath(name ...string) string {
	return filepath.Join(append([]string{w.Root, MetadataDir}, name...)...)
}

// JoinRel joins workspace-relative segments with forward slashes.
func JoinRel(parts ...string) string { return path.Join(parts...) }

// StaleTempFiles lists the temporary files that writes killed before
// their rename left anywhere in the workspace, older than cutoff (younger
// ones may belong to a write in progress); with remove it deletes them.
func (w *Workspace) StaleTempFiles(cutoff time.Time, remove bool) ([]string, error) {
	out := []string{}
	err := filepath.WalkDir(w.Root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if !d.Type().IsRegular() || !strings.HasPrefix(d.Name(), TempPrefix) {
			return nil
		}
		info, err := d.Info()
		if err != nil || !info.ModTime().Before(cutoff) {
			return nil
		}
		if remove {
			if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("remove temp file: %w", err)
			}
		}
		rel, _ := filepath.Rel(w.Root, p)
		out = append(out, filepath.ToSlash(rel))
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("find temp files: %w", err)
	}
	return out, nil
}
