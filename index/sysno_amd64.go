//go:build linux

package index

import "golang.org/x/sys/unix"

const sysFstatat = unix.SYS_NEWFSTATAT
