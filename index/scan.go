package index

import (
	"context"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"sync"
)

// fileStat is what the freshness check compares: size and mtime.
type fileStat struct {
	name  string // base name
	size  int64
	mtime int64 // UnixNano
}

// dirListing is the indexable notes directly inside one folder.
type dirListing struct {
	dir     string // workspace-relative, e.g. daily/2026-06-20
	files   []fileStat
	skipped []skippedFile
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
				l, subdirs, err := readDir(root, dir)
				mu.Lock()
				if err != nil && firstErr == nil {
					firstErr = err
				}
				if l != nil && (len(l.files) > 0 || len(l.skipped) > 0) {
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
	for _, r := range roots {
		fi, err := os.Lstat(filepath.Join(root, r))
		if err != nil || !fi.IsDir() {
			continue // a missing root is simply empty
		}
		enqueue(r)
	}
	for i := 0; i < workers; i++ {
		go worker()
	}
	pending.Wait()
	close(queue)
	if err := ctx.Err(); err != nil {
		return nil, err
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

// diffListings compares the disk against the cache. Both maps are keyed by
// folder.
func diffListings(disk map[string]*dirListing, cached map[string][]fileStat) []change {
	var out []change
	for dir, l := range disk {
		old := map[string]fileStat{}
		for _, f := range cached[dir] {
			old[f.name] = f
		}
		for _, f := range l.files {
			p := dir + "/" + f.name
			o, ok := old[f.name]
			switch {
			case !ok:
				out = append(out, change{path: p, kind: "added", stat: f})
			case o.size != f.size || o.mtime != f.mtime:
				out = append(out, change{path: p, kind: "modified", stat: f})
			}
			delete(old, f.name)
		}
		for name := range old {
			out = append(out, change{path: dir + "/" + name, kind: "deleted"})
		}
	}
	for dir, files := range cached {
		if _, ok := disk[dir]; ok {
			continue
		}
		for _, f := range files {
			out = append(out, change{path: dir + "/" + f.name, kind: "deleted"})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].path < out[j].path })
	return out
}
