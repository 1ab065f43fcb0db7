//go:build !linux

package index

import (
	"fmt"
	"runtime"

	"github.com/reme-dev/reme/store"
)

// Only Linux (inotify) is known to deliver events in order with nothing
// dropped silently beyond what reme detects; elsewhere searches scan.
func trustedFS(string) (string, error) {
	return "", fmt.Errorf("%w: not on %s", ErrWatchUnsupported, runtime.GOOS)
}

func socketName(*store.Workspace, string) (string, error) {
	return "", ErrWatchUnsupported
}
