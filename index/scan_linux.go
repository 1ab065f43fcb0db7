//go:build linux && (amd64 || arm64)

package index

import (
	"bytes"
	"encoding/binary"
	"errors"
	"path/filepath"
	"sort"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// On Linux the freshness scan reads folders with getdents64 and stats each
// note relative to the folder's descriptor, passing the NUL-terminated name
// straight from the getdents buffer. A folder's listing is encoded from
// those bytes without making a string per name: on a 10,000-note workspace
// the scan is most of what a search costs, and this is its floor.

type scanBuf struct {
	dirents []byte
	names   []byte
	entries []scanEntry
}

type scanEntry struct {
	off, n      int32 // name in names
	size, mtime int64
}

var scanBufs = sync.Pool{New: func() any { return &scanBuf{dirents: make([]byte, 32<<10)} }}

// scanRoot is the workspace folder, open: folders are opened relative to it
// so the kernel does not walk the whole absolute path for each one.
type scanRoot struct{ fd int }

func openScanRoot(root string) (scanRoot, error) {
	fd, err := unix.Open(root, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return scanRoot{}, &pathError{root, err}
	}
	return scanRoot{fd}, nil
}

func (sr scanRoot) close() { unix.Close(sr.fd) }

// maxDirent is the largest getdents64 record (a 255-byte name, padded).
const maxDirent = 19 + 256 + 5

// readDir lists one folder: notes with their stats, and subfolders.
// Symlinks are never followed (a link could lead out of the workspace).
func readDir(sr scanRoot, dir string) (*dirListing, []string, error) {
	fd, err := unix.Openat(sr.fd, filepath.FromSlash(dir), unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
	if err != nil {
		if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR) || errors.Is(err, unix.ELOOP) {
			return nil, nil, nil // gone, or a symlink swapped in: not followed
		}
		return nil, nil, &pathError{dir, err}
	}
	defer unix.Close(fd)
	sb := scanBufs.Get().(*scanBuf)
	defer scanBufs.Put(sb)
	sb.names, sb.entries = sb.names[:0], sb.entries[:0]
	buf := sb.dirents
	l := &dirListing{dir: dir}
	var subdirs []string
	var st unix.Stat_t
	for done := false; !done; {
		n, err := unix.Getdents(fd, buf)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return nil, nil, &pathError{dir, err}
		}
		if n <= 0 {
			break
		}
		// The kernel fills the buffer until an entry does not fit or the
		// folder ends; room for a whole entry left over means it ended,
		// which saves a second call per folder.
		done = len(buf)-n >= maxDirent
		for off := 0; off+19 <= n; {
			reclen := int(binary.NativeEndian.Uint16(buf[off+16:]))
			if reclen == 0 || off+reclen > n {
				break
			}
			typ := buf[off+18]
			cname := buf[off+19 : off+reclen] // NUL-terminated, NUL-padded
			off += reclen
			end := bytes.IndexByte(cname, 0)
			if end <= 0 || cname[0] == '.' {
				continue // ., .., dot files and reme's temp files
			}
			raw := cname[:end]
			isMD := len(raw) > 3 && string(raw[len(raw)-3:]) == ".md"
			if typ == unix.DT_UNKNOWN || (typ == unix.DT_LNK && isMD) {
				if fstatat(fd, cname, &st) != nil {
					continue
				}
				typ = modeType(st.Mode)
			}
			switch {
			case typ == unix.DT_DIR:
				subdirs = append(subdirs, dir+"/"+string(raw))
			case !isMD:
			case typ == unix.DT_LNK:
				l.skipped = append(l.skipped, skippedFile{dir + "/" + string(raw), "symlink (not followed)"})
			case typ == unix.DT_REG:
				if fstatat(fd, cname, &st) != nil {
					continue // vanished between listing and stat
				}
				sb.entries = append(sb.entries, scanEntry{off: int32(len(sb.names)), n: int32(len(raw)), size: st.Size, mtime: st.Mtim.Sec*1e9 + st.Mtim.Nsec})
				sb.names = append(sb.names, raw...)
			default:
				l.skipped = append(l.skipped, skippedFile{dir + "/" + string(raw), "not a regular file"})
			}
		}
	}
	names := sb.names
	name := func(e scanEntry) []byte { return names[e.off : e.off+e.n] }
	sort.Slice(sb.entries, func(i, j int) bool { return bytes.Compare(name(sb.entries[i]), name(sb.entries[j])) < 0 })
	blob := make([]byte, 0, len(names)+len(sb.entries)*14)
	for _, e := range sb.entries {
		blob = binary.AppendUvarint(blob, uint64(e.n))
		blob = append(blob, name(e)...)
		blob = binary.AppendVarint(blob, e.size)
		blob = binary.AppendVarint(blob, e.mtime)
	}
	l.blob, l.count = blob, len(sb.entries)
	return l, subdirs, nil
}

// fstatat stats a NUL-terminated name relative to dirfd without copying it.
func fstatat(dirfd int, cname []byte, st *unix.Stat_t) error {
	_, _, e := unix.Syscall6(sysFstatat, uintptr(dirfd), uintptr(unsafe.Pointer(&cname[0])),
		uintptr(unsafe.Pointer(st)), unix.AT_SYMLINK_NOFOLLOW, 0, 0)
	if e != 0 {
		return e
	}
	return nil
}

func modeType(m uint32) uint8 {
	switch m & unix.S_IFMT {
	case unix.S_IFDIR:
		return unix.DT_DIR
	case unix.S_IFREG:
		return unix.DT_REG
	case unix.S_IFLNK:
		return unix.DT_LNK
	}
	return unix.DT_UNKNOWN
}

type pathError struct {
	dir string
	err error
}

func (e *pathError) Error() string { return "read " + e.dir + ": " + e.err.Error() }
func (e *pathError) Unwrap() error { return e.err }
