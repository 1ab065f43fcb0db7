//go:build !unix

package index

import (
	"os"
	"path/filepath"
)

type statter struct{ dir string }

func newStatter(dir *os.File) statter { return statter{dir: dir.Name()} }

func (s statter) stat(name string) (size, mtime int64, err error) {
	fi, err := os.Lstat(filepath.Join(s.dir, name))
	if err != nil {
		return 0, 0, err
	}
	return fi.Size(), fi.ModTime().UnixNano(), nil
}
