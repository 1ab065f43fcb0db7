package index

import (
	"context"
	"database/sql"
	"fmt"
	"sort"
	"strings"

	"github.com/reme-dev/reme/store"
)

// writer holds the prepared statements of one write transaction.
type writer struct {
	tx      *sql.Tx
	stmts   map[string]*sql.Stmt
	terms   *termTracker
	indexes []string // dropped for a rebuild, to create again at its end
	// nextChunk is the next free chunk id of each id range (notes, memory
	// notes), read when first needed
	nextChunk [2]int64
	// ids are the note ids a rebuild hands out before it reads the notes,
	// so that a link can hold the id of a note stored after it
	ids map[string]int64
	// inserted are the notes stored by a sync, by path; stored the same
	// for a rebuild, by id (a rebuild stores every note: no map that large)
	inserted map[string]int64
	stored   []bool
}

var writerSQL = map[string]string{
	"note": `INSERT INTO notes(id, path, dir, name, description, date, size, mtime, sha256,
		frontmatter_error, session_id, source_conversation, source_resource, day_index, skipped, kind, type)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
	"link": `INSERT INTO links(note_id, target_id, target, anchor, alias, embed, line, written, markdown, field, name, status, candidates)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
	"noteID":       `SELECT id FROM notes WHERE path = ?`,
	"linksToID":    `UPDATE links SET target_id = ?, target = NULL WHERE target = ?`,
	"linksToPath":  `UPDATE links SET target_id = NULL, target = ? WHERE target_id = ?`,
	"noteName":     `INSERT INTO note_names(note_id, name) VALUES (?, ?)`,
	"tag":          `INSERT OR IGNORE INTO tags(tag, note_id, pos, source) VALUES (?, ?, ?, ?)`,
	"chunk":        `INSERT INTO chunks(id, note_id, start_line, end_line, tokens, text_hash) VALUES (?, ?, ?, ?, ?, ?)`,
	"fts":          `INSERT INTO chunk_fts(rowid, name, description, body) VALUES (?, ?, ?, ?)`,
	"lookup":       `SELECT id, sha256, size, mtime FROM notes WHERE path = ?`,
	"touch":        `UPDATE notes SET size = ?, mtime = ? WHERE id = ?`,
	"noteChunks":   `SELECT min(id), max(id), count(*), coalesce(sum(tokens), 0) FROM chunks WHERE note_id = ?`,
	"ftsDel":       `DELETE FROM chunk_fts WHERE rowid BETWEEN ? AND ?`,
	"termsOf":      `SELECT terms FROM chunk_terms WHERE id BETWEEN ? AND ?`,
	"termsGet":     `SELECT terms FROM chunk_terms WHERE id = ?`,
	"termsPut":     `INSERT OR REPLACE INTO chunk_terms(id, terms) VALUES (?, ?)`,
	"termsDel":     `DELETE FROM chunk_terms WHERE id BETWEEN ? AND ?`,
	"ftsFirst":     `SELECT rowid, bm25(chunk_fts, 4, 2, 1) FROM chunk_fts WHERE chunk_fts MATCH ? ORDER BY rowid LIMIT ?`,
	"ftsCount":     `SELECT count(*) FROM chunk_fts WHERE chunk_fts MATCH ?`,
	"ftsCountUpTo": `SELECT count(*) FROM (SELECT rowid FROM chunk_fts WHERE chunk_fts MATCH ? LIMIT ?)`,
	"ftsScore":     `SELECT rowid, bm25(chunk_fts, 4, 2, 1) FROM chunk_fts WHERE chunk_fts MATCH ?`,
	"freqPut":      `INSERT OR REPLACE INTO frequent_terms(term, id, df, top) VALUES (?, ?, ?, ?)`,
	"freqDel":      `DELETE FROM frequent_terms WHERE term = ?`,
	"noteDel":      `DELETE FROM notes WHERE id = ?`,
	"dirFiles":     `SELECT path, size, mtime FROM notes WHERE dir = ? ORDER BY path`,
	"dirPut":       `INSERT OR REPLACE INTO scan_dirs(dir, files) VALUES (?, ?)`,
	"dirDel":       `DELETE FROM scan_dirs WHERE dir = ?`,
}

func newWriter(ctx context.Context, tx *sql.Tx, frequent int, full bool) (*writer, error) {
	w := &writer{tx: tx, stmts: map[string]*sql.Stmt{}, inserted: map[string]int64{}}
	if full {
		if err := w.clear(ctx); err != nil {
			return nil, err
		}
		if err := w.dropIndexes(ctx); err != nil {
			return nil, err
		}
	}
	t, err := newTermTracker(ctx, w, frequent, full)
	if err != nil {
		w.close()
		return nil, err
	}
	w.terms = t
	return w, nil
}

// stmt is the prepared statement name of writerSQL, prepared on first use:
// most transactions (one note changed) need only a few of them.
func (w *writer) stmt(ctx context.Context, name string) (*sql.Stmt, error) {
	if st := w.stmts[name]; st != nil {
		return st, nil
	}
	st, err := w.tx.PrepareContext(ctx, writerSQL[name])
	if err != nil {
		return nil, fmt.Errorf("prepare index statement %s: %w", name, err)
	}
	w.stmts[name] = st
	return st, nil
}

// exec runs the statement name.
func (w *writer) exec(ctx context.Context, name string, args ...any) (sql.Result, error) {
	st, err := w.stmt(ctx, name)
	if err != nil {
		return nil, err
	}
	return st.ExecContext(ctx, args...)
}

// query runs the statement name for its rows.
func (w *writer) query(ctx context.Context, name string, args ...any) (*sql.Rows, error) {
	st, err := w.stmt(ctx, name)
	if err != nil {
		return nil, err
	}
	return st.QueryContext(ctx, args...)
}

// queryRow runs the statement name for one row and scans it into dest.
func (w *writer) queryRow(ctx context.Context, name string, args []any, dest ...any) error {
	st, err := w.stmt(ctx, name)
	if err != nil {
		return err
	}
	return st.QueryRowContext(ctx, args...).Scan(dest...)
}

// finish writes what the transaction's changes did to the statistics and
// the frequent-terms table.
func (w *writer) finish(ctx context.Context) error { return w.terms.finish(ctx) }

func (w *writer) close() {
	if w.terms != nil {
		w.terms.close()
	}
	for _, st := range w.stmts {
		st.Close()
	}
}

// clear empties every table for a rebuild.
func (w *writer) clear(ctx context.Context) error {
	for _, q := range []string{
		`INSERT INTO chunk_fts(chunk_fts) VALUES('delete-all')`,
		`DELETE FROM links`, `DELETE FROM note_names`, `DELETE FROM tags`, `DELETE FROM chunks`, `DELETE FROM notes`, `DELETE FROM scan_dirs`,
		`DELETE FROM frequent_terms`, `DELETE FROM chunk_terms`, `UPDATE fts_stats SET chunks = 0, tokens = 0, next_term = 1`,
	} {
		if _, err := w.tx.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("clear index: %w", err)
		}
	}
	return nil
}

// dropIndexes takes the secondary indexes away for a rebuild: building
// each at the end from the loaded tables, in order, costs far less than
// keeping it up to date row by row. restoreIndexes puts them back.
func (w *writer) dropIndexes(ctx context.Context) error {
	rows, err := w.tx.QueryContext(ctx, `SELECT name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL ORDER BY name`)
	if err != nil {
		return fmt.Errorf("rebuild: %w", err)
	}
	var names []string
	for rows.Next() {
		var name, q string
		if err := rows.Scan(&name, &q); err != nil {
			rows.Close()
			return fmt.Errorf("rebuild: %w", err)
		}
		names = append(names, name)
		w.indexes = append(w.indexes, q)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("rebuild: %w", err)
	}
	for _, n := range names {
		if _, err := w.tx.ExecContext(ctx, `DROP INDEX "`+strings.ReplaceAll(n, `"`, `""`)+`"`); err != nil {
			return fmt.Errorf("rebuild: %w", err)
		}
	}
	return nil
}

func (w *writer) restoreIndexes(ctx context.Context) error {
	for _, q := range w.indexes {
		if _, err := w.tx.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("rebuild: %w", err)
		}
	}
	w.indexes = nil
	return nil
}

type upsertStatus int

const (
	upsertUnchanged upsertStatus = iota
	upsertTouched                // same bytes, new mtime
	upsertAdded
	upsertModified
)

// upsert stores a record, replacing an older version of the note. When the
// index already holds the same bytes (another process got there first, or
// the file was only touched) only the stat is refreshed.
func (w *writer) upsert(ctx context.Context, r *record, fresh bool) (upsertStatus, error) {
	status := upsertAdded
	if !fresh {
		var (
			id          int64
			sha         string
			size, mtime int64
		)
		err := w.queryRow(ctx, "lookup", []any{r.path}, &id, &sha, &size, &mtime)
		switch {
		case err == sql.ErrNoRows:
		case err != nil:
			return 0, fmt.Errorf("index %s: %w", r.path, err)
		case sha == r.sha && r.skipReason == "":
			if size == r.size && mtime == r.mtime {
				return upsertUnchanged, nil
			}
			if _, err := w.exec(ctx, "touch", r.size, r.mtime, id); err != nil {
				return 0, fmt.Errorf("index %s: %w", r.path, err)
			}
			return upsertTouched, nil
		default:
			if err := w.deleteID(ctx, id); err != nil {
				return 0, fmt.Errorf("index %s: %w", r.path, err)
			}
			// the same id again: the links to the note hold it
			r.id = id
			status = upsertModified
		}
	}
	if err := w.insert(ctx, r); err != nil {
		return 0, fmt.Errorf("index %s: %w", r.path, err)
	}
	return status, nil
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func (w *writer) insert(ctx context.Context, r *record) error {
	var given any
	if r.id != 0 {
		given = r.id
	} else if id, ok := w.ids[r.path]; ok {
		given = id
	}
	res, err := w.exec(ctx, "note", given, r.path, r.dir, r.name, r.desc, nullable(r.date), r.size, r.mtime, r.sha,
		nullable(r.fmErr), nullable(r.sessionID), nullable(r.sourceConv), nullable(r.sourceRes), r.dayIndex, nullable(r.skipReason),
		r.kind, nullable(r.typ))
	if err != nil {
		return err
	}
	id, err := res.LastInsertId()
	if err != nil {
		return err
	}
	if w.ids != nil {
		if w.stored == nil {
			w.stored = make([]bool, len(w.ids)+1)
		}
		if id < int64(len(w.stored)) {
			w.stored[id] = true
		}
	} else {
		w.inserted[r.path] = id
	}
	if _, err := w.exec(ctx, "noteName", id, store.LinkName(r.path)); err != nil {
		return err
	}
	for _, l := range r.links {
		targetID, target, err := w.linkTarget(ctx, l.res.Path)
		if err != nil {
			return err
		}
		if _, err := w.exec(ctx, "link", id, targetID, target, l.Anchor, l.Alias, l.Embed, l.Line,
			writtenColumn(l.Target, l.res.Path), l.Markdown, l.field, linkName(l), string(l.res.Status), strings.Join(l.res.Candidates, "\n")); err != nil {
			return err
		}
	}
	for i, t := range r.tags {
		if _, err := w.exec(ctx, "tag", t.tag, id, i, t.source); err != nil {
			return err
		}
	}
	for i := range r.chunks {
		c := &r.chunks[i]
		cid, err := w.chunkID(ctx, isMemoryKind(r.kind))
		if err != nil {
			return err
		}
		if _, err := w.exec(ctx, "chunk", cid, id, c.StartLine, c.EndLine, c.tokens, c.textHash); err != nil {
			return err
		}
		if _, err := w.exec(ctx, "fts", cid, c.name, c.desc, c.body); err != nil {
			return err
		}
		if err := w.terms.inserted(ctx, cid, c); err != nil {
			return err
		}
	}
	return nil
}

// chunkID hands out the next chunk id of a note's range: memory notes'
// chunks (entries, the profile, MEMORY.md) have ids from memoryChunkBase
// on, so that a search of long-term memory reads only their part of the
// full-text lists, however many cards there are.
func (w *writer) chunkID(ctx context.Context, memory bool) (int64, error) {
	r, lo, hi := 0, int64(1), int64(memoryChunkBase)
	if memory {
		r, lo, hi = 1, memoryChunkBase, 1<<62
	}
	if w.nextChunk[r] == 0 {
		var top int64
		if err := w.tx.QueryRowContext(ctx, `SELECT coalesce(max(id), ?) FROM chunks WHERE id >= ? AND id < ?`, lo-1, lo, hi).Scan(&top); err != nil {
			return 0, fmt.Errorf("next chunk id: %w", err)
		}
		w.nextChunk[r] = top + 1
	}
	id := w.nextChunk[r]
	w.nextChunk[r]++
	return id, nil
}

// linkTarget is how a link row holds the path it leads to: a note's id
// (target_id), else the path (target).
func (w *writer) linkTarget(ctx context.Context, target string) (any, any, error) {
	if id, ok := w.inserted[target]; ok {
		return id, nil, nil
	}
	if w.ids != nil {
		// a rebuild: every note it will store has its id already
		if id, ok := w.ids[target]; ok {
			return id, nil, nil
		}
		return nil, target, nil
	}
	st, err := w.stmt(ctx, "noteID")
	if err != nil {
		return nil, target, err
	}
	id, ok, err := noteID(ctx, st, target)
	if err != nil || !ok {
		return nil, target, err
	}
	return id, nil, nil
}

// noteID looks a note's id up by path.
func noteID(ctx context.Context, st *sql.Stmt, path string) (int64, bool, error) {
	var id int64
	err := st.QueryRowContext(ctx, path).Scan(&id)
	if err == sql.ErrNoRows {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("look up note %s: %w", path, err)
	}
	return id, true, nil
}

// writtenColumn is what a link row holds as the target written: NULL when
// it is the target.
func writtenColumn(written, target string) any {
	if written == target {
		return nil
	}
	return written
}

// settleLinks keeps the link rows' targets true to the notes stored at the
// end of a transaction: a link stored before the note it leads to (added
// in the same sync) holds its id from now on, and the ids a rebuild handed
// out to notes it could not store go back to paths.
func (w *writer) settleLinks(ctx context.Context) error {
	if w.ids != nil {
		paths := make([]string, 0)
		for p := range w.ids {
			if id := w.ids[p]; id >= int64(len(w.stored)) || !w.stored[id] {
				paths = append(paths, p)
			}
		}
		sort.Strings(paths)
		for _, p := range paths {
			if _, err := w.exec(ctx, "linksToPath", p, w.ids[p]); err != nil {
				return fmt.Errorf("links to %s: %w", p, err)
			}
		}
		return nil
	}
	paths := make([]string, 0, len(w.inserted))
	for p := range w.inserted {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		if _, err := w.exec(ctx, "linksToID", w.inserted[p], p); err != nil {
			return fmt.Errorf("links to %s: %w", p, err)
		}
	}
	return nil
}

// deleteNote removes a note by path; it reports whether it was indexed.
func (w *writer) deleteNote(ctx context.Context, path string) (bool, error) {
	var id int64
	var sha string
	var size, mtime int64
	err := w.queryRow(ctx, "lookup", []any{path}, &id, &sha, &size, &mtime)
	if err == sql.ErrNoRows {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("unindex %s: %w", path, err)
	}
	if err := w.deleteID(ctx, id); err != nil {
		return false, fmt.Errorf("unindex %s: %w", path, err)
	}
	// the links to it lead to its path now, which the sync resolves again
	if _, err := w.exec(ctx, "linksToPath", path, id); err != nil {
		return false, fmt.Errorf("unindex %s: %w", path, err)
	}
	delete(w.inserted, path)
	return true, nil
}

// deleteID removes a note and its chunks. A note's chunks have
// consecutive ids, inserted together.
func (w *writer) deleteID(ctx context.Context, id int64) error {
	var lo, hi sql.NullInt64
	var n int
	var tokens int64
	if err := w.queryRow(ctx, "noteChunks", []any{id}, &lo, &hi, &n, &tokens); err != nil {
		return err
	}
	if n > 0 {
		if hi.Int64-lo.Int64+1 != int64(n) {
			return fmt.Errorf("chunks of note %d are not consecutive", id)
		}
		if err := w.terms.deleting(ctx, lo.Int64, hi.Int64, n, tokens); err != nil {
			return err
		}
		if _, err := w.exec(ctx, "ftsDel", lo.Int64, hi.Int64); err != nil {
			return err
		}
	}
	_, err := w.exec(ctx, "noteDel", id)
	return err
}

// refreshScanDir rewrites one folder's scan-cache row from the notes table.
func (w *writer) refreshScanDir(ctx context.Context, dir string) error {
	rows, err := w.query(ctx, "dirFiles", dir)
	if err != nil {
		return fmt.Errorf("scan cache %s: %w", dir, err)
	}
	var files []fileStat
	for rows.Next() {
		var p string
		var f fileStat
		if err := rows.Scan(&p, &f.size, &f.mtime); err != nil {
			rows.Close()
			return fmt.Errorf("scan cache %s: %w", dir, err)
		}
		f.name = p[strings.LastIndexByte(p, '/')+1:]
		files = append(files, f)
	}
	rows.Close()
	if len(files) == 0 {
		_, err = w.exec(ctx, "dirDel", dir)
	} else {
		_, err = w.exec(ctx, "dirPut", dir, encodeListing(files))
	}
	if err != nil {
		return fmt.Errorf("scan cache %s: %w", dir, err)
	}
	return nil
}

// rebuildScanCache recomputes every folder's row after a rebuild.
func (w *writer) rebuildScanCache(ctx context.Context) error {
	rows, err := w.tx.QueryContext(ctx, `SELECT dir, path, size, mtime FROM notes ORDER BY dir, path`)
	if err != nil {
		return fmt.Errorf("scan cache: %w", err)
	}
	byDir := map[string][]fileStat{}
	var order []string
	for rows.Next() {
		var dir, p string
		var f fileStat
		if err := rows.Scan(&dir, &p, &f.size, &f.mtime); err != nil {
			rows.Close()
			return fmt.Errorf("scan cache: %w", err)
		}
		f.name = p[strings.LastIndexByte(p, '/')+1:]
		if _, ok := byDir[dir]; !ok {
			order = append(order, dir)
		}
		byDir[dir] = append(byDir[dir], f)
	}
	rows.Close()
	if _, err := w.tx.ExecContext(ctx, `DELETE FROM scan_dirs`); err != nil {
		return fmt.Errorf("scan cache: %w", err)
	}
	for _, d := range order {
		if _, err := w.exec(ctx, "dirPut", d, encodeListing(byDir[d])); err != nil {
			return fmt.Errorf("scan cache %s: %w", d, err)
		}
	}
	return nil
}
