package index

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"
)

// fileStat is what the freshness check compares: size and mtime.
type fileStat struct {
	name  string // base name
	size  int64
	mtime int64 // UnixNano
}

// dirListing is the indexable notes directly inside one folder, kept
// encoded (sorted by name) as the scan cache stores it: an unchanged folder
// is compared byte for byte and its names never become strings.
type dirListing struct {
	dir     string // workspace-relative, e.g. daily/2026-06-20
	blob    []byte
	count   int
	skipped []skippedFile
}

// files decodes the listing.
func (l *dirListing) files() []fileStat {
	fs, _ := decodeListing(l.blob)
	return fs
}

type skippedFile struct {
	path   string
	reason string
}

// scanTree lists every markdown note under the roots with its size and
// mtime. Folders are read in parallel; stats use the folder's descriptor so
// that the kernel does not walk the whole path again for every file.
func scanTree(ctx context.Context, root string, roots []string, workers int) (map[string]*dirListing, error) {
	if workers < 1 {
		workers = 1
	}
	out := map[string]*dirListing{}
	var (
		mu       sync.Mutex
		firstErr error
		pending  sync.WaitGroup
	)
	sr, err := openScanRoot(root)
	if err != nil {
		return nil, err
	}
	defer sr.close()
	queue := make(chan string, 1024)
	var enqueue func(dir string)
	enqueue = func(dir string) {
		pending.Add(1)
		select {
		case queue <- dir:
		default:
			// queue full: scan this one on a new goroutine rather than block a worker
			go func() { queue <- dir }()
		}
	}
	worker := func() {
		for dir := range queue {
			if ctx.Err() == nil {
				l, subdirs, err := readDir(sr, dir)
				mu.Lock()
				if err != nil && firstErr == nil {
					firstErr = err
				}
				if l != nil && (l.count > 0 || len(l.skipped) > 0) {
					out[dir] = l
				}
				mu.Unlock()
				for _, s := range subdirs {
					enqueue(s)
				}
			}
			pending.Done()
		}
	}
	files := map[string][]fileStat{} // single notes given as roots, by folder
	for _, r := range roots {
		fi, err := os.Lstat(filepath.Join(root, r))
		switch {
		case err != nil:
			continue // a missing root is simply empty
		case fi.Mode().IsRegular() && strings.HasSuffix(r, ".md"):
			d := path.Dir(r)
			files[d] = append(files[d], fileStat{name: path.Base(r), size: fi.Size(), mtime: fi.ModTime().UnixNano()})
		case fi.IsDir():
			enqueue(r)
		}
	}
	for i := 0; i < workers; i++ {
		go worker()
	}
	pending.Wait()
	close(queue)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	for d, fs := range files {
		sort.Slice(fs, func(i, j int) bool { return fs[i].name < fs[j].name })
		out[d] = &dirListing{dir: d, blob: encodeListing(fs), count: len(fs)}
	}
	return out, firstErr
}

// The scan cache stores, per folder, the stats of the notes the index
// holds, so that the freshness check reads a few hundred rows instead of
// one row per note.

func encodeListing(files []fileStat) []byte {
	buf := make([]byte, 0, len(files)*48)
	for _, f := range files {
		buf = binary.AppendUvarint(buf, uint64(len(f.name)))
		buf = append(buf, f.name...)
		buf = binary.AppendVarint(buf, f.size)
		buf = binary.AppendVarint(buf, f.mtime)
	}
	return buf
}

func decodeListing(b []byte) ([]fileStat, error) {
	var out []fileStat
	for len(b) > 0 {
		n, k := binary.Uvarint(b)
		if k <= 0 || uint64(len(b)-k) < n {
			return nil, errors.New("corrupt scan cache")
		}
		b = b[k:]
		f := fileStat{name: string(b[:n])}
		b = b[n:]
		var k2, k3 int
		f.size, k2 = binary.Varint(b)
		if k2 <= 0 {
			return nil, errors.New("corrupt scan cache")
		}
		b = b[k2:]
		f.mtime, k3 = binary.Varint(b)
		if k3 <= 0 {
			return nil, errors.New("corrupt scan cache")
		}
		b = b[k3:]
		out = append(out, f)
	}
	return out, nil
}

// change is one difference between the files and the index.
type change struct {
	path string
	kind string // added, modified, deleted
	stat fileStat
}

// diffListings compares the disk against the cache (encoded listings keyed
// by folder). A folder whose encoded listing is byte-identical has not
// changed; only the others are decoded and merged name by name (both sides
// are sorted).
func diffListings(disk map[string]*dirListing, cached map[string][]byte) ([]change, error) {
	var out []change
	for dir, l := range disk {
		old, ok := cached[dir]
		if ok && bytes.Equal(l.blob, old) {
			continue
		}
		files := l.files()
		var prev []fileStat
		if ok {
			var err error
			if prev, err = decodeListing(old); err != nil {
				return nil, fmt.Errorf("scan cache %s: %w", dir, err)
			}
		}
		i, j := 0, 0
		for i < len(files) || j < len(prev) {
			switch {
			case j >= len(prev) || (i < len(files) && files[i].name < prev[j].name):
				f := files[i]
				out = append(out, change{path: notePath(dir, f.name), kind: "added", stat: f})
				i++
			case i >= len(files) || prev[j].name < files[i].name:
				out = append(out, change{path: notePath(dir, prev[j].name), kind: "deleted"})
				j++
			default:
				f := files[i]
				if f.size != prev[j].size || f.mtime != prev[j].mtime {
					out = append(out, change{path: notePath(dir, f.name), kind: "modified", stat: f})
				}
				i++
				j++
			}
		}
	}
	for dir, blob := range cached {
		if _, ok := disk[dir]; ok {
			continue
		}
		files, err := decodeListing(blob)
		if err != nil {
			return nil, fmt.Errorf("scan cache %s: %w", dir, err)
		}
		for _, f := range files {
			out = append(out, change{path: notePath(dir, f.name), kind: "deleted"})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].path < out[j].path })
	return out, nil
}

// notePath joins a scanned folder and a file name; the workspace root's
// single notes (MEMORY.md) are listed under ".".
func notePath(dir, name string) string {
	if dir == "." {
		return name
	}
	return dir + "/" + name
}
