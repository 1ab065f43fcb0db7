//go:build unix

package index

import (
	"errors"
	"io/fs"
	"os"

	"golang.org/x/sys/unix"
)

// readOnlyCause says why this process cannot write the index: the
// metadata folder (or, when it is missing, the workspace) is on a
// read-only file system or not writable for this user, or index.db itself
// is not writable. It is nil when writing can go ahead.
func readOnlyCause(dirs []string, db string) error {
	for _, d := range dirs {
		err := unix.Access(d, unix.W_OK)
		if errors.Is(err, unix.ENOENT) {
			continue // the next folder up is the one to create it in
		}
		if err != nil {
			return &fs.PathError{Op: "write", Path: d, Err: err}
		}
		break
	}
	if _, err := os.Stat(db); err == nil {
		if err := unix.Access(db, unix.W_OK); err != nil {
			return &fs.PathError{Op: "write", Path: db, Err: err}
		}
	}
	return nil
}
