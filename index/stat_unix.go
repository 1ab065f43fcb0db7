//go:build unix

package index

import (
	"os"

	"golang.org/x/sys/unix"
)

// statter stats names relative to an open folder (fstatat), which is much
// cheaper than resolving a full path per file.
type statter struct{ fd int }

func newStatter(dir *os.File) statter { return statter{fd: int(dir.Fd())} }

func (s statter) stat(name string) (size, mtime int64, err error) {
	var st unix.Stat_t
	if err := unix.Fstatat(s.fd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return 0, 0, err
	}
	return st.Size, st.Mtim.Sec*1e9 + st.Mtim.Nsec, nil
}
