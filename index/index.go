// Package index is the SQLite mirror of a workspace: notes, wikilinks, tags
// and full-text chunks. It is a pure function of the files: every command
// reconciles it with the disk before reading, and it can always be rebuilt.
package index

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/reme-dev/reme/store"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

var (
	// ErrSchema is returned when the schema text has no version.
	ErrSchema = errors.New("schema.sql has no PRAGMA user_version")
	// ErrEmptyQuery is returned for a query with nothing to search.
	ErrEmptyQuery = errors.New("query cannot be empty")
	// ErrReadOnly refuses a change to a workspace this process cannot write.
	ErrReadOnly = errors.New("workspace is read-only")
	// ErrBadType is returned for a search type that does not exist.
	ErrBadType = errors.New("unknown note type")
)

// ArchiveDir holds what maintain retired: indexed, but searched only when
// asked (SearchOptions.Archived).
const ArchiveDir = store.ArchiveDir

// DefaultMaxFileBytes is the size above which a note is skipped (ReMe's
// DEFAULT_MAX_FILE_BYTES).
const DefaultMaxFileBytes = 20 << 20

// DefaultRoots are what the index mirrors: daily cards, digest nodes, the
// long-term entries and profile, what maintain archived, and MEMORY.md.
var DefaultRoots = []string{store.DailyDir, store.DigestDir, store.MemoryDir, ArchiveDir, store.MemoryIndexPath}

// Options configure an index.
type Options struct {
	Logger *slog.Logger
	// Roots are the note folders and single notes indexed; default
	// DefaultRoots.
	Roots        []string
	MaxFileBytes int64
	Workers      int
	// FrequentTerms is the number of chunks from which a word is kept in
	// the frequent-terms table (default DefaultFrequentTerms).
	FrequentTerms int
	// TrustWatcher lets Sync skip the scan when a running `reme watch`
	// vouches that the index is in step (see ServeWatch).
	TrustWatcher bool
	// Embedder and Reranker, when set, make searches hybrid (see
	// vectors.go); without them search is keyword only.
	Embedder Embedder
	Reranker Reranker
	// Progress, when set, receives every sync's progress (a first sync of a
	// large workspace takes seconds).
	Progress Progress
	// Fault, when set, is called at each step of a journaled run; returning
	// an error stops the run there as if the process had been killed.
	// Tests only.
	Fault func(step string) error
	// Now is the clock of journal lines (default time.Now).
	Now func() time.Time
	// Trigger is what started this command (cli, hook, cron, watch, mcp);
	// the journal records it with every run.
	Trigger string
}

// Index is an open index.db.
type Index struct {
	db      *sql.DB
	ws      *store.Workspace
	log     *slog.Logger
	opt     Options
	path    string
	version int
	schema  string
	// The writer lock is re-entrant within this process so that a move can
	// hold it across file writes and the index update. An Index is used by
	// one goroutine at a time.
	lockDepth int
	lock      *store.Lock
	// readOnly says why the workspace cannot be written. The index is then
	// read where it is, or, when the files differ from it, from a private
	// copy (in the folder private) that syncs bring up to date; nothing in
	// the workspace is changed.
	readOnly error
	private  string
	journal  *store.Journal
}

var versionRE = regexp.MustCompile(`(?m)^PRAGMA user_version\s*=\s*(\d+)\s*;`)

// SchemaVersion reads the version from the schema text.
func SchemaVersion(schema string) (int, error) {
	m := versionRE.FindStringSubmatch(schema)
	if m == nil {
		return 0, ErrSchema
	}
	return strconv.Atoi(m[1])
}

// Open opens (creating or rebuilding as needed) metadata/index.db. It
// finishes any move a crash interrupted. It does not sync; callers that read
// call Sync first.
func Open(ctx context.Context, ws *store.Workspace, schema string, opt Options) (*Index, error) {
	version, err := SchemaVersion(schema)
	if err != nil {
		return nil, err
	}
	if opt.Logger == nil {
		opt.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if len(opt.Roots) == 0 {
		opt.Roots = DefaultRoots
	}
	if opt.MaxFileBytes <= 0 {
		opt.MaxFileBytes = DefaultMaxFileBytes
	}
	if opt.FrequentTerms <= 0 {
		opt.FrequentTerms = DefaultFrequentTerms
	}
	if opt.Workers <= 0 {
		opt.Workers = runtime.GOMAXPROCS(0)
	}
	ix := &Index{ws: ws, log: opt.Logger, opt: opt, path: ws.MetadataPath("index.db"), version: version, schema: schema}
	ix.journal = store.NewJournal(ws, store.JournalOptions{Now: opt.Now, Log: opt.Logger, Fault: opt.Fault})
	if cause := readOnlyCause([]string{ws.MetadataPath(), ws.Root}, ix.path); cause != nil {
		if err := ix.openReadOnly(ctx, cause); err != nil {
			ix.Close()
			return nil, err
		}
		return ix, nil
	}
	if err := os.MkdirAll(ws.MetadataPath(), 0o755); err != nil {
		return nil, fmt.Errorf("create metadata folder: %w", err)
	}
	if err := ix.open(ctx); err != nil {
		if !isCorrupt(err) {
			return nil, err
		}
		// The file is not a usable database: it is derived state, so start over.
		ix.log.Warn("index is corrupt; rebuilding from the files", "path", ix.path, "err", err)
		ix.Close()
		for _, suffix := range []string{"", "-wal", "-shm"} {
			if err := os.Remove(ix.path + suffix); err != nil && !errors.Is(err, os.ErrNotExist) {
				return nil, fmt.Errorf("remove corrupt index: %w", err)
			}
		}
		if err := ix.open(ctx); err != nil {
			return nil, err
		}
	}
	ix.recover(ctx)
	return ix, nil
}

// openReadOnly opens the index of a workspace that cannot be written: the
// workspace's own index, read-only, while it matches the files; otherwise a
// private copy of it, which the next sync updates from the files.
func (ix *Index) openReadOnly(ctx context.Context, cause error) error {
	ix.readOnly = cause
	ix.log.Info("workspace is read-only: its index is read as it is, and brought up to date in a private copy if the files changed", "cause", cause)
	if _, err := os.Stat(ix.legacyJournalPath()); err == nil {
		ix.log.Warn("a move was interrupted; it is finished by the next command run where the workspace can be written", "journal", ix.legacyJournalPath())
	}
	if open, _ := os.ReadDir(ix.ws.MetadataPath(store.JournalDir, "open")); len(open) > 0 {
		ix.log.Warn("a run may have been interrupted; it is settled by the next command run where the workspace can be written")
	}
	if ix.openExisting(ctx) {
		cached, err := ix.loadScanCache(ctx)
		if err == nil {
			var disk map[string]*dirListing
			if disk, err = scanTree(ctx, ix.ws.Root, ix.opt.Roots, ix.opt.Workers); err == nil {
				var changes []change
				if changes, err = diffListings(disk, cached); err == nil && len(changes) == 0 {
					return nil
				}
			}
		}
		if err != nil {
			ix.log.Debug("read-only index", "err", err)
		}
	}
	return ix.usePrivate(ctx)
}

// openExisting opens index.db read-only if it is there and has this
// schema. Without a writable -shm file a WAL database opens only as
// immutable, which is safe here: nothing can write it.
func (ix *Index) openExisting(ctx context.Context) bool {
	if _, err := os.Stat(ix.path); err != nil {
		return false
	}
	for _, mode := range []string{"mode=ro", "mode=ro&immutable=1"} {
		db, err := sql.Open("sqlite", "file:"+escapeDSN(ix.path)+"?"+mode+"&_pragma=busy_timeout(10000)&_pragma=foreign_keys(1)")
		if err != nil {
			continue
		}
		var v, n int
		if err := db.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err == nil && v == ix.version &&
			db.QueryRowContext(ctx, "SELECT count(*) FROM scan_dirs").Scan(&n) == nil {
			db.SetMaxOpenConns(2)
			ix.db = db
			return true
		}
		db.Close()
	}
	return false
}

// usePrivate moves the index of a read-only workspace to a private
// temporary copy (empty if the workspace's cannot be read), which syncs
// can write.
func (ix *Index) usePrivate(ctx context.Context) error {
	dir, err := os.MkdirTemp("", "reme-index-")
	if err != nil {
		return fmt.Errorf("%w (%v), and no private copy of its index can be made: %v", ErrReadOnly, ix.readOnly, err)
	}
	dst := filepath.Join(dir, "index.db")
	if ix.db != nil {
		if _, err := ix.db.ExecContext(ctx, "VACUUM INTO ?", dst); err != nil {
			ix.log.Debug("copy the read-only index", "err", err)
			os.Remove(dst)
		}
		ix.db.Close()
		ix.db = nil
	}
	ix.private, ix.path = dir, dst
	if err := ix.open(ctx); err != nil {
		return fmt.Errorf("private copy of the index: %w", err)
	}
	return nil
}

// refuseReadOnly is the error for a change to a read-only workspace.
func (ix *Index) refuseReadOnly() error {
	if ix.readOnly == nil {
		return nil
	}
	return fmt.Errorf("%w: %v", ErrReadOnly, ix.readOnly)
}

func escapeDSN(path string) string {
	return strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(path)
}

func dsn(path string) string {
	return "file:" + escapeDSN(path) + "?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)" +
		"&_pragma=foreign_keys(1)&_txlock=immediate"
}

func (ix *Index) open(ctx context.Context) error {
	db, err := sql.Open("sqlite", dsn(ix.path))
	if err != nil {
		return fmt.Errorf("open index %s: %w", ix.path, err)
	}
	// Two connections: a search can read while the freshness check of the
	// same command writes (WAL lets them run side by side). Code inside a
	// write transaction reads through the transaction only.
	db.SetMaxOpenConns(2)
	ix.db = db
	var v int
	// A connection's first statements (WAL mode, the version) can meet
	// another process creating or recovering the file, which SQLite reports
	// as busy without waiting: retry as the busy timeout would.
	for wait := time.Now().Add(10 * time.Second); ; {
		err = db.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v)
		if err == nil || !isBusy(err) || time.Now().After(wait) || ctx.Err() != nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		return fmt.Errorf("open index %s: %w", ix.path, err)
	}
	if v == ix.version {
		// A truncated file can still report its version: counting its
		// pages finds a file shorter than its header says (one read, where
		// a query of a table would read all of it).
		var n int
		if err := db.QueryRowContext(ctx, "PRAGMA page_count").Scan(&n); err == nil {
			return nil
		} else if isCorrupt(err) {
			return err
		}
	}
	return ix.create(ctx)
}

// create drops whatever is there and applies the schema, under the writer
// lock so that two processes do not both do it.
func (ix *Index) create(ctx context.Context) error {
	unlock, err := ix.acquire(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	var v int
	if err := ix.db.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
		return fmt.Errorf("open index: %w", err)
	}
	if v == ix.version {
		return nil // another process created it meanwhile
	}
	// Pages freed by FTS5 merges and deletions go back to the file system
	// (PRAGMA incremental_vacuum after large writes). The mode can only be
	// chosen before the first table exists; an older file is converted below.
	if _, err := ix.db.ExecContext(ctx, "PRAGMA auto_vacuum = INCREMENTAL"); err != nil {
		return fmt.Errorf("create index: %w", err)
	}
	tx, err := ix.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("create index: %w", err)
	}
	defer tx.Rollback()
	rows, err := tx.QueryContext(ctx, `SELECT type, name FROM sqlite_master
		WHERE type IN ('table','view') AND name NOT LIKE 'sqlite_%' AND sql IS NOT NULL
		ORDER BY sql LIKE 'CREATE VIRTUAL%' DESC`)
	if err != nil {
		return fmt.Errorf("create index: %w", err)
	}
	var drops []string
	for rows.Next() {
		var typ, name string
		if err := rows.Scan(&typ, &name); err != nil {
			rows.Close()
			return fmt.Errorf("create index: %w", err)
		}
		drops = append(drops, fmt.Sprintf("DROP %s IF EXISTS %q", strings.ToUpper(typ), name))
	}
	rows.Close()
	for _, d := range drops {
		if _, err := tx.ExecContext(ctx, d); err != nil {
			return fmt.Errorf("drop old index table: %w", err)
		}
	}
	if _, err := tx.ExecContext(ctx, ix.schema); err != nil {
		return fmt.Errorf("apply schema: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("create index: %w", err)
	}
	// An index made before auto_vacuum was set keeps its free pages forever;
	// converting it costs little now that its tables are empty.
	var av int
	if err := ix.db.QueryRowContext(ctx, "PRAGMA auto_vacuum").Scan(&av); err == nil && av != 2 {
		if _, err := ix.db.ExecContext(ctx, "VACUUM"); err != nil {
			return fmt.Errorf("create index: %w", err)
		}
	}
	if v != 0 {
		ix.log.Info("index schema changed; rebuilding from the files", "from", v, "to", ix.version)
	}
	return nil
}

func isBusy(err error) bool {
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() & 0xff {
		case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED:
			return true
		}
	}
	return false
}

func isCorrupt(err error) bool {
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() & 0xff {
		case sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB:
			return true
		}
	}
	return false
}

// Close closes the database (and drops a private copy).
func (ix *Index) Close() error {
	var err error
	if ix.db != nil {
		err = ix.db.Close()
		ix.db = nil
	}
	if ix.private != "" {
		os.RemoveAll(ix.private)
		ix.private = ""
	}
	return err
}

// ReadOnly reports why the workspace cannot be written (nil when it can).
func (ix *Index) ReadOnly() error { return ix.readOnly }

// Journal is the workspace's change journal.
func (ix *Index) Journal() *store.Journal { return ix.journal }

func (ix *Index) journalNow() time.Time {
	if ix.opt.Now != nil {
		return ix.opt.Now()
	}
	return time.Now()
}

// Workspace is the indexed workspace.
func (ix *Index) Workspace() *store.Workspace { return ix.ws }

// write runs fn in a write transaction while holding the workspace writer
// lock, so concurrent reme processes queue up instead of failing with
// "database is locked".
func (ix *Index) write(ctx context.Context, fn func(tx *sql.Tx) error) error {
	unlock, err := ix.acquire(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	tx, err := ix.db.BeginTx(ctx, nil)
	return runTx(tx, err, fn)
}

// acquire takes the workspace writer lock (re-entrant in this process).
// A private copy of a read-only workspace's index needs none.
func (ix *Index) acquire(ctx context.Context) (func(), error) {
	if ix.readOnly != nil {
		return func() {}, nil
	}
	if ix.lockDepth == 0 {
		l, err := ix.ws.Lock(ctx, "index")
		if err != nil {
			return nil, err
		}
		ix.lock = l
	}
	ix.lockDepth++
	return func() {
		ix.lockDepth--
		if ix.lockDepth == 0 {
			ix.lock.Unlock()
			ix.lock = nil
		}
	}, nil
}

// Locked runs fn while holding the workspace writer lock, so that a job's
// file writes and the index updates that follow them are not interleaved
// with another reme process's. fn must not wait on a model.
func (ix *Index) Locked(ctx context.Context, fn func() error) error {
	if err := ix.refuseReadOnly(); err != nil {
		return err
	}
	unlock, err := ix.acquire(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	return fn()
}

// checkpoint folds the WAL back into the database after a large write so
// that the next process opens it quickly. Readers may keep it from
// finishing; that is fine.
func (ix *Index) checkpoint(ctx context.Context) {
	if _, err := ix.db.ExecContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
		ix.log.Debug("wal checkpoint", "err", err)
	}
}

func elapsed(t time.Time) string { return time.Since(t).Round(time.Millisecond).String() }
