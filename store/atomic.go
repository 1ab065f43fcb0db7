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
	"sync"
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
	tmp := tempPath(dir)
	// an existing file's permission bits survive exactly
	werr := writeSynced(tmp, data, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm, keepPerm)
	if werr == nil {
		werr = os.Rename(tmp, dst)
	}
	if werr != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("write %s: %w", dst, werr)
	}
	if err := syncDir(dir); err != nil {
		return err
	}
	sweepOnce(dir)
	return nil
}

// tempPath names a new temp file in dir, where a write goes first.
func tempPath(dir string) string {
	var rnd [6]byte
	_, _ = rand.Read(rnd[:])
	return filepath.Join(dir, TempPrefix+hex.EncodeToString(rnd[:]))
}

// writeSynced writes data to the file p opened with flag and mode perm,
// and fsyncs it. With exact, perm is set as it is (OpenFile's mode is
// filtered by the umask).
func writeSynced(p string, data []byte, flag int, perm fs.FileMode, exact bool) error {
	f, err := os.OpenFile(p, flag, perm)
	if err != nil {
		return err
	}
	var werr error
	if exact {
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
	return werr
}

// TempGrace is how old a temp file must be before it counts as left behind
// by a killed run: no write takes anywhere near this long, so a file this
// old is never one a live process is still writing.
const TempGrace = time.Hour

// swept holds the folders whose stale temp files this process has removed.
var swept sync.Map

// sweepOnce removes stale temp files from a folder reme has just written to,
// once per process: one ReadDir of a folder that is hot in the cache anyway.
// Failures are ignored: the sweep is housekeeping, not part of the write.
func sweepOnce(dir string) {
	if _, done := swept.LoadOrStore(dir, true); !done {
		_, _ = staleTemps(dir, time.Now().Add(-TempGrace), true)
	}
}

// staleTemps lists the regular TempPrefix files directly in dir last
// modified before cutoff, and with remove deletes them. Ages are measured
// against the real clock, not an injected one: they compare with file
// modification times.
func staleTemps(dir string, cutoff time.Time, remove bool) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", dir, err)
	}
	var names []string
	for _, e := range ents {
		if !strings.HasPrefix(e.Name(), TempPrefix) || !e.Type().IsRegular() {
			continue
		}
		fi, err := e.Info()
		if err != nil || !fi.ModTime().Before(cutoff) {
			continue
		}
		if remove {
			p := filepath.Join(dir, e.Name())
			if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return names, fmt.Errorf("remove %s: %w", p, err)
			}
		}
		names = append(names, e.Name())
	}
	return names, nil
}

// appendOrCut appends data to f, opened with O_APPEND and size bytes long,
// and fsyncs. When either fails the file is cut back to size: no partial
// record stays behind, and cutting frees what a partial write took, so it
// works on a full disk too.
func appendOrCut(f *os.File, size int64, data []byte) error {
	_, err := f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if err == nil {
		return nil
	}
	terr := f.Truncate(size)
	if terr == nil {
		terr = f.Sync()
	}
	if terr != nil {
		return fmt.Errorf("%w; cutting back to %d bytes: %v", err, size, terr)
	}
	return err
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
// the indexed folders, or one of the single notes indexed (MEMORY.md).
func IsNotePath(rel string, roots []string) bool {
	if !strings.HasSuffix(rel, ".md") {
		return false
	}
	for _, r := range roots {
		if rel == r && strings.HasSuffix(r, ".md") {
			return true
		}
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
// Writes already remove those of the folders they write to (once per
// process); this finds the rest.
func (w *Workspace) StaleTempFiles(cutoff time.Time, remove bool) ([]string, error) {
	out := []string{}
	err := filepath.WalkDir(w.Root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if !d.IsDir() {
			return nil
		}
		names, err := staleTemps(p, cutoff, remove)
		for _, n := range names {
			rel, _ := filepath.Rel(w.Root, filepath.Join(p, n))
			out = append(out, filepath.ToSlash(rel))
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("find temp files: %w", err)
	}
	return out, nil
}
