//go:build !linux

package store

import (
	"log/slog"
	"path/filepath"

	"github.com/rjeczalik/notify"
)

// watchBackend watches through notify (FSEvents, kqueue,
// ReadDirectoryChangesW).
func watchBackend(root string, c chan notify.EventInfo, _ *slog.Logger) (watch func() error, stop func()) {
	target := filepath.Join(root, "...") // "dir/..." is notify's recursive form
	return func() error { return notify.Watch(target, c, notify.All) }, func() { notify.Stop(c) }
}
