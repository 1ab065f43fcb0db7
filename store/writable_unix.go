//go:build unix

package store

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// Writable reports whether dir can be written to; on a read-only file
// system the error says so.
func Writable(dir string) error {
	err := unix.Access(dir, unix.W_OK)
	if err == nil || errors.Is(err, os.ErrNotExist) {
		return nil
	}
	return &os.PathError{Op: "write", Path: dir, Err: err}
}

// LowOnSpace reports whether the file system holding dir has less than
// min bytes free for an ordinary user: a failed write there is a full disk.
func LowOnSpace(dir string, min int64) bool {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return false
	}
	return int64(st.Bavail)*int64(st.Bsize) < min
}
