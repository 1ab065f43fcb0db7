//go:build !(linux && (amd64 || arm64))

package index

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// readDir lists one folder: notes with their stats, and subfolders.
// Symlinks are never followed (a link could lead out of the workspace).
// scanRoot is the workspace folder the scan reads.
type scanRoot struct{ path string }

func openScanRoot(root string) (scanRoot, error) { return scanRoot{root}, nil }

func (scanRoot) close() {}

func readDir(sr scanRoot, dir string) (*dirListing, []string, error) {
	root := sr.path
	f, err := os.Open(filepath.Join(root, filepath.FromSlash(dir)))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil, nil
		}
		return nil, nil, err
	}
	defer f.Close()
	ents, err := f.ReadDir(-1)
	if err != nil {
		return nil, nil, err
	}
	l := &dirListing{dir: dir}
	var subdirs []string
	var files []fileStat

	for _, e := range ents {
		name := e.Name()
		if strings.HasPrefix(name, ".") {
			continue
		}
		t := e.Type()
		switch {
		case t.IsDir():
			subdirs = append(subdirs, dir+"/"+name)
		case !strings.HasSuffix(name, ".md"):
		case t&fs.ModeSymlink != 0:
			l.skipped = append(l.skipped, skippedFile{dir + "/" + name, "symlink (not followed)"})
		case t.IsRegular():
			fi, err := e.Info()
			if err != nil {
				continue // vanished between listing and stat
			}
			files = append(files, fileStat{name: name, size: fi.Size(), mtime: fi.ModTime().UnixNano()})
		default:
			l.skipped = append(l.skipped, skippedFile{dir + "/" + name, "not a regular file"})
		}
	}
	sort.Slice(files, func(i, j int) bool { return files[i].name < files[j].name })
	l.blob, l.count = encodeListing(files), len(files)
	return l, subdirs, nil
}
