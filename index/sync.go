package index

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/reme-dev/reme/store"
)

// FileResult is the outcome for one file of a sync or reindex.
type FileResult struct {
	Path    string `json:"path"`
	Change  string `json:"change"` // added, modified, deleted
	Success bool   `json:"success"`
	Skipped bool   `json:"skipped,omitempty"`
	Reason  string `json:"reason,omitempty"`
	Error   string `json:"error,omitempty"`
}

// SyncReport summarises a sync or a rebuild.
type SyncReport struct {
	Added     int          `json:"added"`
	Modified  int          `json:"modified"`
	Deleted   int          `json:"deleted"`
	Unchanged int          `json:"unchanged"`
	Indexed   int          `json:"indexed"`
	Problems  []FileResult `json:"problems"` // failures and skips
	Files     []FileResult `json:"files"`    // every file, on a rebuild only
	// Vouched is set when a running watcher vouched for the index, so that
	// no scan was needed.
	Vouched bool          `json:"vouched,omitempty"`
	Elapsed time.Duration `json:"-"`
}

// Progress receives (done, total) while a sync applies changes.
type Progress func(done, total int)

// Sync reconciles the index with the files: a size+mtime scan, a hash to
// confirm, then added, modified and deleted notes applied in one
// transaction. Running it again with nothing changed does nothing.
func (ix *Index) Sync(ctx context.Context) (*SyncReport, error) {
	if rep, ok := ix.watcherSync(ctx); ok {
		return rep, nil
	}
	return ix.sync(ctx, false, nil, nil)
}

// SyncScope is Sync for part of the workspace: the notes under the given
// folders (and single notes such as MEMORY.md), each within the indexed
// roots. It costs what those folders hold, not the whole workspace.
func (ix *Index) SyncScope(ctx context.Context, scope ...string) (*SyncReport, error) {
	for _, s := range scope {
		if !ix.inRoots(s) {
			return nil, fmt.Errorf("sync %s: not under the indexed roots (%s)", s, strings.Join(ix.opt.Roots, ", "))
		}
	}
	if len(scope) == 0 {
		return &SyncReport{}, nil
	}
	// the single notes of one folder share a scan-cache row: take them all
	for _, s := range scope {
		for _, r := range ix.opt.Roots {
			if strings.HasSuffix(s, ".md") && strings.HasSuffix(r, ".md") && path.Dir(r) == path.Dir(s) && !contains(scope, r) {
				scope = append(scope, r)
			}
		}
	}
	return ix.sync(ctx, false, nil, scope)
}

// inRoots reports whether a folder or note is one of the roots or under one.
func (ix *Index) inRoots(p string) bool {
	for _, r := range ix.opt.Roots {
		if p == r || (!strings.HasSuffix(r, ".md") && strings.HasPrefix(p, r+"/")) {
			return true
		}
	}
	return false
}

// inScope reports whether a folder of the scan cache belongs to the scope:
// under one of its folders, or the folder of one of its single notes.
func inScope(dir string, scope []string) bool {
	for _, s := range scope {
		if strings.HasSuffix(s, ".md") {
			if path.Dir(s) == dir {
				return true
			}
			continue
		}
		if dir == s || strings.HasPrefix(dir, s+"/") {
			return true
		}
	}
	return false
}

// SyncProgress is Sync with a progress callback.
func (ix *Index) SyncProgress(ctx context.Context, progress Progress) (*SyncReport, error) {
	if rep, ok := ix.watcherSync(ctx); ok {
		return rep, nil
	}
	return ix.sync(ctx, false, progress, nil)
}

// watcherSync is a sync that a running watcher answered (with
// TrustWatcher): nothing to do here.
func (ix *Index) watcherSync(ctx context.Context) (*SyncReport, bool) {
	start := time.Now()
	ok, why := ix.askWatcher(ctx)
	if why != "not asked" && why != "no watcher" {
		ix.log.Info("freshness", "watcher", why, "elapsed", elapsed(start))
	}
	if !ok {
		return nil, false
	}
	return &SyncReport{Vouched: true, Elapsed: time.Since(start)}, true
}

// Rebuild throws the index content away and indexes every note again.
func (ix *Index) Rebuild(ctx context.Context, progress Progress) (*SyncReport, error) {
	if err := ix.refuseReadOnly(); err != nil {
		return nil, err
	}
	return ix.sync(ctx, true, progress, nil)
}

// sync reconciles the roots, or only the scope when one is given.
func (ix *Index) sync(ctx context.Context, full bool, progress Progress, scope []string) (*SyncReport, error) {
	start := time.Now()
	if progress == nil {
		progress = ix.opt.Progress
	}
	rep := &SyncReport{}
	var (
		cached   map[string][]byte
		cacheErr error
		wg       sync.WaitGroup
	)
	if !full {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cached, cacheErr = ix.loadScanCache(ctx)
			if scope != nil {
				for dir := range cached {
					if !inScope(dir, scope) {
						delete(cached, dir)
					}
				}
			}
		}()
	}
	roots := ix.opt.Roots
	if scope != nil {
		roots = scope
	}
	disk, err := scanTree(ctx, ix.ws.Root, roots, ix.opt.Workers)
	wg.Wait()
	if err != nil {
		return nil, fmt.Errorf("scan workspace: %w", err)
	}
	if cacheErr != nil {
		return nil, cacheErr
	}
	total := 0
	for _, l := range disk {
		total += l.count
		for _, s := range l.skipped {
			rep.Problems = append(rep.Problems, FileResult{Path: s.path, Change: "added", Success: true, Skipped: true, Reason: s.reason})
		}
	}
	var changes []change
	if full {
		for dir, l := range disk {
			for _, f := range l.files() {
				changes = append(changes, change{path: notePath(dir, f.name), kind: "added", stat: f})
			}
		}
		sort.Slice(changes, func(i, j int) bool { return changes[i].path < changes[j].path })
	} else {
		if changes, err = diffListings(disk, cached); err != nil {
			return nil, err
		}
		if len(cached) == 0 && len(changes) > 0 && scope == nil {
			// An empty index (a first search, a new schema): indexing
			// every note is a rebuild, which counts the words in memory
			// instead of asking FTS5 about each new one. (Not for a scope:
			// a rebuild would drop the rest of the index.)
			full = true
		}
	}
	if len(changes) == 0 && !full {
		rep.Unchanged = total
		rep.Indexed = total
		rep.Elapsed = time.Since(start)
		return rep, nil
	}
	if ix.readOnly != nil && ix.private == "" {
		// Open found the read-only workspace's index current; a search may
		// be reading it right now, so it is not swapped for a copy here.
		ix.log.Warn("workspace is read-only and notes changed while this command ran; results may miss them",
			"changed", len(changes))
		rep.Unchanged = total
		rep.Elapsed = time.Since(start)
		return rep, nil
	}
	write := ix.write
	if full {
		write = ix.writeBulk
	}
	if err := write(ctx, func(tx *sql.Tx) error {
		return ix.apply(ctx, tx, changes, full, rep, progress)
	}); err != nil {
		return nil, err
	}
	if full || len(changes) > 500 {
		// Give the pages that merges and deletions freed back to the file
		// system, then fold the WAL in so that the next process opens fast.
		if err := ix.write(ctx, func(tx *sql.Tx) error {
			_, err := tx.ExecContext(ctx, "PRAGMA incremental_vacuum")
			return err
		}); err != nil {
			return nil, fmt.Errorf("free index pages: %w", err)
		}
		ix.checkpoint(ctx)
	}
	rep.Unchanged = total - rep.Added - rep.Modified
	if rep.Unchanged < 0 {
		rep.Unchanged = 0
	}
	if full {
		rep.Files = append(rep.Files, skippedByScan(rep.Problems)...)
		sort.Slice(rep.Files, func(i, j int) bool { return rep.Files[i].Path < rep.Files[j].Path })
	}
	sort.Slice(rep.Problems, func(i, j int) bool { return rep.Problems[i].Path < rep.Problems[j].Path })
	rep.Elapsed = time.Since(start)
	ix.log.Debug("index sync", "added", rep.Added, "modified", rep.Modified, "deleted", rep.Deleted, "elapsed", elapsed(start))
	return rep, nil
}

// writeBulk is write for a rebuild: on a connection of its own with
// foreign keys off, so that emptying the tables is a truncation rather than
// a check of every row (the rebuild then inserts notes before what refers
// to them).
func (ix *Index) writeBulk(ctx context.Context, fn func(tx *sql.Tx) error) error {
	unlock, err := ix.acquire(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	conn, err := ix.db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("rebuild: %w", err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "PRAGMA foreign_keys = OFF"); err != nil {
		return fmt.Errorf("rebuild: %w", err)
	}
	defer conn.ExecContext(context.WithoutCancel(ctx), "PRAGMA foreign_keys = ON")
	tx, err := conn.BeginTx(ctx, nil)
	return runTx(tx, err, fn)
}

// runTx runs fn in the transaction just begun (or passes on why it could
// not begin) and commits it.
func runTx(tx *sql.Tx, err error, fn func(tx *sql.Tx) error) error {
	if err != nil {
		return fmt.Errorf("begin index transaction: %w", err)
	}
	defer tx.Rollback()
	if err := fn(tx); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit index: %w", err)
	}
	return nil
}

// skippedByScan picks the scan's own skips (symlinks, special files), which
// never reach apply.
func skippedByScan(problems []FileResult) []FileResult {
	var out []FileResult
	for _, p := range problems {
		if p.Skipped && !strings.HasPrefix(p.Reason, "file_too_large") {
			out = append(out, p)
		}
	}
	return out
}

// UpdatePaths re-indexes specific notes right after reme wrote, moved or
// removed them, without a full scan.
func (ix *Index) UpdatePaths(ctx context.Context, paths ...string) error {
	var changes []change
	for _, p := range paths {
		if !store.IsNotePath(p, ix.opt.Roots) {
			continue
		}
		kind := "modified"
		if _, err := os.Lstat(ix.ws.Abs(p)); errors.Is(err, fs.ErrNotExist) {
			kind = "deleted"
		}
		changes = append(changes, change{path: p, kind: kind})
	}
	if len(changes) == 0 {
		return nil
	}
	rep := &SyncReport{}
	if err := ix.write(ctx, func(tx *sql.Tx) error { return ix.apply(ctx, tx, changes, false, rep, nil) }); err != nil {
		return err
	}
	for _, p := range rep.Problems {
		if !p.Success {
			return fmt.Errorf("index %s: %s", p.Path, p.Error)
		}
	}
	return nil
}

// loadScanCache reads the cached listings, still encoded: most folders
// are compared byte for byte and never decoded.
func (ix *Index) loadScanCache(ctx context.Context) (map[string][]byte, error) {
	rows, err := ix.db.QueryContext(ctx, "SELECT dir, files FROM scan_dirs")
	if err != nil {
		return nil, fmt.Errorf("read scan cache: %w", err)
	}
	defer rows.Close()
	out := map[string][]byte{}
	for rows.Next() {
		var dir string
		var blob []byte
		if err := rows.Scan(&dir, &blob); err != nil {
			return nil, fmt.Errorf("read scan cache: %w", err)
		}
		out[dir] = blob
	}
	return out, rows.Err()
}

// apply writes changes inside tx. Files are read and parsed by parallel
// workers while this goroutine inserts.
func (ix *Index) apply(ctx context.Context, tx *sql.Tx, changes []change, full bool, rep *SyncReport, progress Progress) error {
	if full {
		// A rebuild touches every page: give it a large cache. Everyday
		// commands keep SQLite's small default, which starts faster.
		if _, err := tx.ExecContext(ctx, "PRAGMA cache_size = -32000"); err != nil {
			return fmt.Errorf("rebuild: %w", err)
		}
		// FTS5 writes a segment each time its in-memory table reaches
		// hashsize (1 MB by default), and merges them later: a larger one
		// for the rebuild means far fewer segments to merge.
		if _, err := tx.ExecContext(ctx, `INSERT INTO chunk_fts(chunk_fts, rank) VALUES('hashsize', 16*1024*1024)`); err != nil {
			return fmt.Errorf("rebuild: %w", err)
		}
	}
	w, err := newWriter(ctx, tx, ix.opt.FrequentTerms, full)
	if err != nil {
		return err
	}
	defer w.close()
	dirs := map[string]bool{}
	var reads []change
	// Links are resolved against the notes as they will be when this
	// transaction commits; notes that appear or go change where the links
	// that name them lead.
	files := ix.newLinkFiles(ctx, tx, !full)
	var renamed, removed []string
	for _, c := range changes {
		dirs[path.Dir(c.path)] = true
		if c.kind == "deleted" {
			files.remove(c.path)
			existed, err := w.deleteNote(ctx, c.path)
			if err != nil {
				return err
			}
			if existed {
				rep.Deleted++
				renamed = append(renamed, store.LinkName(c.path))
				removed = append(removed, c.path)
			}
			continue
		}
		files.add(c.path)
		reads = append(reads, c)
	}
	if full {
		// every note to store, numbered in the order laid over
		w.ids = files.added
	}
	type result struct {
		i   int // in reads
		c   change
		rec *record
		err error
	}
	// Notes are stored in the order of reads, so that a rebuild's ids
	// ascend (SQLite appends those fastest, to full pages), with at most
	// readAhead of them read and not stored yet.
	const readAhead = 128
	window := make(chan struct{}, readAhead)
	jobs := make(chan int)
	results := make(chan result, 64)
	var wg sync.WaitGroup
	for i := 0; i < ix.opt.Workers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				rec, err := ix.readRecord(reads[i].path)
				results <- result{i, reads[i], rec, err}
			}
		}()
	}
	go func() {
		defer close(jobs)
		for i := range reads {
			select {
			case window <- struct{}{}:
			case <-ctx.Done():
				return
			}
			select {
			case jobs <- i:
			case <-ctx.Done():
				return
			}
		}
	}()
	go func() { wg.Wait(); close(results) }()

	done := 0
	var firstErr error
	pending := map[int]result{}
	for got := range results {
		pending[got.i] = got
		for {
			r, ok := pending[done]
			if !ok {
				break
			}
			delete(pending, done)
			<-window
			done++
			if progress != nil {
				progress(done, len(reads))
			}
			if firstErr != nil {
				continue // drain
			}
			kind := r.c.kind
			if r.err != nil {
				if errors.Is(r.err, fs.ErrNotExist) {
					// Vanished since the scan: make sure no stale row survives.
					files.remove(r.c.path)
					renamed = append(renamed, store.LinkName(r.c.path))
					removed = append(removed, r.c.path)
					if _, err := w.deleteNote(ctx, r.c.path); err != nil {
						firstErr = err
					}
					continue
				}
				msg := r.err.Error()
				var pe *fs.PathError
				if errors.As(r.err, &pe) {
					msg = pe.Err.Error()
				}
				fr := FileResult{Path: r.c.path, Change: kind, Error: msg}
				rep.Problems = append(rep.Problems, fr)
				if full {
					rep.Files = append(rep.Files, fr)
				}
				continue
			}
			files.resolve(r.rec)
			status, err := w.upsert(ctx, r.rec, full)
			if err != nil {
				firstErr = err
				continue
			}
			switch status {
			case upsertAdded:
				rep.Added++
				renamed = append(renamed, store.LinkName(r.c.path))
			case upsertModified:
				rep.Modified++
			}
			fr := FileResult{Path: r.c.path, Change: kind, Success: true}
			if r.rec.skipReason != "" {
				fr.Skipped, fr.Reason = true, r.rec.skipReason
				rep.Problems = append(rep.Problems, fr)
			}
			if full {
				rep.Files = append(rep.Files, fr)
			}
		}
	}
	if firstErr == nil {
		firstErr = ctx.Err()
	}
	if firstErr == nil {
		firstErr = files.err
	}
	if firstErr != nil {
		return firstErr
	}
	if !full {
		if err := w.settleLinks(ctx); err != nil {
			return err
		}
	}
	if !full && len(renamed) > 0 {
		// a rebuild resolved every link against the final set already
		if err := ix.reresolve(ctx, tx, ix.newLinkFiles(ctx, tx, true), sortedUnique(renamed), removed); err != nil {
			return err
		}
	}
	if err := w.finish(ctx); err != nil {
		return err
	}
	if full {
		if err := w.restoreIndexes(ctx); err != nil {
			return err
		}
		if err := w.settleLinks(ctx); err != nil {
			return err
		}
		if err := w.rebuildScanCache(ctx); err != nil {
			return err
		}
	} else {
		names := make([]string, 0, len(dirs))
		for d := range dirs {
			names = append(names, d)
		}
		sort.Strings(names)
		for _, d := range names {
			if err := w.refreshScanDir(ctx, d); err != nil {
				return err
			}
		}
	}
	if full {
		var n int
		if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM notes WHERE skipped IS NULL").Scan(&n); err == nil {
			rep.Indexed = n
		}
		// One merged full-text segment answers queries a little faster;
		// merging costs about a tenth of the rebuild.
		if _, err := tx.ExecContext(ctx, `INSERT INTO chunk_fts(chunk_fts) VALUES('optimize')`); err != nil {
			return fmt.Errorf("rebuild: %w", err)
		}
		if _, err := tx.ExecContext(ctx, "PRAGMA cache_size = -2000"); err != nil {
			return fmt.Errorf("rebuild: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO chunk_fts(chunk_fts, rank) VALUES('hashsize', 1024*1024)`); err != nil {
			return fmt.Errorf("rebuild: %w", err)
		}
	}
	return nil
}
