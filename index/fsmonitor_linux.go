//go:build linux

package index

import (
	"fmt"

	"github.com/reme-dev/reme/store"
	"golang.org/x/sys/unix"
)

// Local file systems whose changes all pass through this kernel, so that
// inotify sees them. Network and FUSE file systems can change behind its
// back (another machine, a daemon); on them searches keep scanning.
var localFS = map[int64]string{
	0xEF53:     "ext4",
	0x58465342: "xfs",
	0x9123683E: "btrfs",
	0x01021994: "tmpfs",
	0xF2F52010: "f2fs",
	0x2FC12FC1: "zfs",
	0x794C7630: "overlayfs",
	0x52654973: "reiserfs",
	0x3153464A: "jfs",
	0xCA451A4E: "bcachefs",
}

// trustedFS names the workspace's file system, or says why its events
// cannot be trusted.
func trustedFS(root string) (string, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(root, &st); err != nil {
		return "", fmt.Errorf("%w: %v", ErrWatchUnsupported, err)
	}
	name, ok := localFS[int64(st.Type)]
	if !ok {
		return "", fmt.Errorf("%w: file system type %#x is not known to report every change", ErrWatchUnsupported, st.Type)
	}
	return name, nil
}

// socketName is an abstract socket: no file to clean up after a crash, and
// no limit from the length of the workspace path.
func socketName(_ *store.Workspace, id string) (string, error) {
	return fmt.Sprintf("@reme-watch-%s-%d", id, unix.Getpid()), nil
}
