//go:build !unix

package store

// Writable reports whether dir can be written to. Elsewhere the first
// write says so.
func Writable(dir string) error { return nil }

// LowOnSpace reports whether the file system holding dir is nearly full;
// elsewhere it cannot tell.
func LowOnSpace(dir string, min int64) bool { return false }
