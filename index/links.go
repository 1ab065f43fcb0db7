package index

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/reme-dev/reme/store"
)

// linkRow is a link of a note as the index stores it.
type linkRow struct {
	store.Link
	field string // frontmatter key; "" in the body
	res   store.Resolution
}

// querier is a database or a transaction: what linkFiles reads through
// (the write transaction during a sync), and a search's snapshot.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// linkFiles answers store.LinkFiles: notes from the index, other files
// from the disk, with the notes a transaction is adding or removing laid
// over the table (which is half-updated while the transaction runs).
type linkFiles struct {
	ctx     context.Context
	ix      *Index
	q       querier
	useDB   bool             // false during a rebuild: the table is being refilled
	added   map[string]int64 // the order of each add, from 1: a rebuild's note ids
	removed map[string]bool
	byName  map[string][]string // added notes by LinkName
	named   map[string][]string // answers so far
	onDisk  map[string]bool
	others  map[string][]string // files that are not notes, by LinkName: one walk, on first need
	// files that are not notes, laid over the disk: a move or delete
	// planned but not done yet, or done already
	otherAdded, otherGone map[string]bool
	err                   error
}

func (ix *Index) newLinkFiles(ctx context.Context, q querier, useDB bool) *linkFiles {
	return &linkFiles{ctx: ctx, ix: ix, q: q, useDB: useDB, added: map[string]int64{}, removed: map[string]bool{},
		byName: map[string][]string{}, named: map[string][]string{}, onDisk: map[string]bool{}}
}

// add and remove lay a note change over the table.
func (f *linkFiles) add(rel string) {
	delete(f.removed, rel)
	if f.added[rel] == 0 {
		f.added[rel] = int64(len(f.added) + 1)
		n := store.LinkName(rel)
		f.byName[n] = append(f.byName[n], rel)
		delete(f.named, n)
	}
}

func (f *linkFiles) remove(rel string) {
	f.removed[rel] = true
	delete(f.named, store.LinkName(rel))
}

// pretend lays any file (note or not) over the index and the disk:
// present or gone.
func (f *linkFiles) pretend(rel string, present bool) {
	if f.isNote(rel) {
		if present {
			f.add(rel)
		} else {
			f.remove(rel)
		}
		return
	}
	if f.otherAdded == nil {
		f.otherAdded, f.otherGone = map[string]bool{}, map[string]bool{}
	}
	f.onDisk[rel] = present
	f.otherAdded[rel], f.otherGone[rel] = present, !present
	delete(f.named, store.LinkName(rel))
	if f.others != nil {
		f.others = nil // walk again with the change laid over
	}
}

func (f *linkFiles) isNote(rel string) bool { return store.IsNotePath(rel, f.ix.opt.Roots) }

func (f *linkFiles) Exists(rel string) bool {
	if f.added[rel] != 0 {
		return true
	}
	if f.isNote(rel) {
		switch {
		case f.removed[rel]:
			return false
		case !f.useDB:
			return false
		}
		var one int
		err := f.q.QueryRowContext(f.ctx, `SELECT 1 FROM notes WHERE path = ?`, rel).Scan(&one)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			f.fail(err)
		}
		return err == nil
	}
	if v, ok := f.onDisk[rel]; ok {
		return v
	}
	if f.others != nil || !f.useDB {
		// the workspace was listed (or a rebuild lists it anyway): no stat
		ok := contains(f.otherFiles()[store.LinkName(rel)], rel)
		f.onDisk[rel] = ok
		return ok
	}
	ok := f.listable(rel)
	f.onDisk[rel] = ok
	return ok
}

// listable reports a file the workspace listing (otherFiles) would hold:
// a regular file outside metadata/ and hidden folders, reached through
// no symlink, so that a rebuild (which lists) and a sync (which looks)
// agree.
func (f *linkFiles) listable(rel string) bool {
	parts := strings.Split(rel, "/")
	if parts[0] == store.MetadataDir {
		return false
	}
	cur := f.ix.ws.Root
	for i, part := range parts {
		if strings.HasPrefix(part, ".") {
			return false
		}
		cur = filepath.Join(cur, part)
		fi, err := os.Lstat(cur)
		if err != nil || fi.Mode()&os.ModeSymlink != 0 {
			return false
		}
		if i == len(parts)-1 {
			return fi.Mode().IsRegular()
		}
	}
	return false
}

func (f *linkFiles) Named(name string) []string {
	if v, ok := f.named[name]; ok {
		return v
	}
	// files that are not notes count too: attachments, resources, MEMORY.md
	out := append(f.namedNotes(name), f.otherFiles()[name]...)
	sort.Strings(out)
	f.named[name] = out
	return out
}

// namedNotes lists the notes whose LinkName is name.
func (f *linkFiles) namedNotes(name string) []string {
	var out []string
	if f.useDB {
		rows, err := f.q.QueryContext(f.ctx, `SELECT n.path FROM note_names nn JOIN notes n ON n.id = nn.note_id WHERE nn.name = ?`, name)
		if err != nil {
			f.fail(err)
		} else {
			for rows.Next() {
				var p string
				if err := rows.Scan(&p); err != nil {
					f.fail(err)
					break
				}
				if !f.removed[p] && f.added[p] == 0 {
					out = append(out, p)
				}
			}
			rows.Close()
		}
	}
	return append(out, f.byName[name]...)
}

// notesByName answers Named from the notes, and from the other files only
// if the workspace was listed already.
type notesByName struct{ *linkFiles }

func (n notesByName) Named(name string) []string {
	out := n.namedNotes(name)
	if n.others != nil {
		out = append(out, n.others[name]...)
	}
	sort.Strings(out)
	return out
}

// otherFiles walks the workspace once for the files that are not indexed
// notes, skipping metadata/ and hidden folders (.obsidian, .git, .trash).
func (f *linkFiles) otherFiles() map[string][]string {
	if f.others != nil {
		return f.others
	}
	f.others = map[string][]string{}
	root := f.ix.ws.Root
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == root {
				return err
			}
			return nil // a folder that vanished or cannot be read: its files cannot be linked either
		}
		rel, rerr := filepath.Rel(root, p)
		if rerr != nil || rel == "." {
			return nil
		}
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel == store.MetadataDir || strings.HasPrefix(d.Name(), ".") {
				return filepath.SkipDir
			}
			return nil
		}
		if d.Type().IsRegular() && !strings.HasPrefix(d.Name(), ".") && !f.isNote(rel) && !f.otherGone[rel] {
			n := store.LinkName(rel)
			f.others[n] = append(f.others[n], rel)
		}
		return nil
	})
	if err != nil {
		f.ix.log.Debug("list workspace files for links", "err", err)
	}
	for rel, present := range f.otherAdded {
		n := store.LinkName(rel)
		if present && !contains(f.others[n], rel) {
			f.others[n] = append(f.others[n], rel)
		}
	}
	return f.others
}

func (f *linkFiles) fail(err error) {
	if f.err == nil {
		f.err = fmt.Errorf("resolve links: %w", err)
	}
}

// resolve resolves every link of a record. A link that the note held
// before, written the same, and that led to no file, is looked for by name
// among the notes only (and at its path as written, as every link): the
// files that are not notes are taken to be as they were, since listing the
// whole workspace for them would be most of the sync of an edit in a
// large workspace. A rebuild looks everywhere.
func (f *linkFiles) resolve(r *record) {
	missing := f.missingBefore(r.path)
	for i := range r.links {
		var files store.LinkFiles = f
		if missing[linkKey{r.links[i].Target, r.links[i].Markdown}] {
			files = notesByName{f}
		}
		r.links[i].res = store.ResolveLink(r.path, r.links[i].Link, files)
	}
}

// linkKey is a link as written.
type linkKey struct {
	written  string
	markdown bool
}

// missingBefore lists the links, as written, that the stored version of
// the note at rel has and that lead to no file.
func (f *linkFiles) missingBefore(rel string) map[linkKey]bool {
	if !f.useDB {
		return nil
	}
	rows, err := f.q.QueryContext(f.ctx, `SELECT coalesce(l.written, t.path, l.target), l.markdown FROM `+linksFrom+`
		WHERE n.path = ? AND l.status = 'missing'`, rel)
	if err != nil {
		f.fail(err)
		return nil
	}
	defer rows.Close()
	var out map[linkKey]bool
	for rows.Next() {
		var k linkKey
		if err := rows.Scan(&k.written, &k.markdown); err != nil {
			f.fail(err)
			return nil
		}
		if out == nil {
			out = map[linkKey]bool{}
		}
		out[k] = true
	}
	if err := rows.Err(); err != nil {
		f.fail(err)
	}
	return out
}

// reresolve resolves again the stored links that notes coming or going
// may change: those by the name of an added or removed note, and those
// that named a removed note exactly. They may now lead elsewhere, or
// nowhere, or become (un)ambiguous.
func (ix *Index) reresolve(ctx context.Context, tx *sql.Tx, f *linkFiles, names, removed []string) error {
	links, err := linksNaming(ctx, tx, names, removed)
	if err != nil {
		return err
	}
	update, err := tx.PrepareContext(ctx, `UPDATE links SET target_id = ?, target = ?, written = ?, status = ?, candidates = ?, name = ? WHERE rowid = ?`)
	if err != nil {
		return fmt.Errorf("resolve links: %w", err)
	}
	defer update.Close()
	lookup, err := tx.PrepareContext(ctx, `SELECT id FROM notes WHERE path = ?`)
	if err != nil {
		return fmt.Errorf("resolve links: %w", err)
	}
	defer lookup.Close()
	for _, li := range links {
		l := linkRow{Link: store.Link{Target: li.Written, Markdown: li.Markdown}}
		l.res = store.ResolveLink(li.From, l.Link, f)
		name := linkName(l)
		if l.res.Path == li.Target && string(l.res.Status) == li.Status && strings.Join(l.res.Candidates, "\n") == strings.Join(li.Candidates, "\n") && (name != nil) == li.named {
			continue
		}
		var targetID, target any = nil, l.res.Path
		if id, ok, err := noteID(ctx, lookup, l.res.Path); err != nil {
			return fmt.Errorf("resolve links: %w", err)
		} else if ok {
			targetID, target = id, nil
		}
		if _, err := update.ExecContext(ctx, targetID, target, writtenColumn(li.Written, l.res.Path), string(l.res.Status),
			strings.Join(l.res.Candidates, "\n"), name, li.id); err != nil {
			return fmt.Errorf("resolve links: %w", err)
		}
	}
	return f.err
}

// leadingTo is the condition on link rows (l) that selects the links
// leading to target, and its argument: links to a note hold its id, and
// only links to other files (or to none) a path.
func leadingTo(ctx context.Context, q querier, target string) (string, any, error) {
	var id int64
	err := q.QueryRowContext(ctx, `SELECT id FROM notes WHERE path = ?`, target).Scan(&id)
	switch {
	case err == nil:
		return `l.target_id = ?`, id, nil
	case errors.Is(err, sql.ErrNoRows):
		return `l.target = ?`, target, nil
	}
	return "", nil, fmt.Errorf("find links to %s: %w", target, err)
}

// linksNaming lists, once each, the stored links by one of names, or whose
// target is one of targets, by note and position.
func linksNaming(ctx context.Context, q querier, names, targets []string) ([]LinkInfo, error) {
	var out []LinkInfo
	seen := map[int64]bool{}
	for _, by := range []struct {
		col  string
		vals []string
	}{{"l.name", names}, {"l.target", targets}, {"l.target_id", targets}} {
		vals := by.vals
		for len(vals) > 0 {
			batch := vals[:min(len(vals), 500)]
			vals = vals[len(batch):]
			args := make([]any, len(batch))
			for i, v := range batch {
				args[i] = v
			}
			in := `(` + placeholders(len(batch)) + `)`
			if by.col == "l.target_id" {
				in = `(SELECT id FROM notes WHERE path IN ` + in + `)`
			}
			rows, err := q.QueryContext(ctx, `SELECT `+linkColumns+` FROM `+linksFrom+` WHERE `+by.col+` IN `+in, args...)
			if err != nil {
				return nil, fmt.Errorf("find links: %w", err)
			}
			found, err := scanLinks(rows)
			if err != nil {
				return nil, err
			}
			for _, li := range found {
				if !seen[li.id] {
					seen[li.id] = true
					out = append(out, li)
				}
			}
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].From != out[j].From {
			return out[i].From < out[j].From
		}
		return out[i].id < out[j].id
	})
	return out, nil
}

// LinkInfo is one link as the index knows it.
type LinkInfo struct {
	From       string   `json:"from"` // the note holding it
	Line       int      `json:"line"`
	Field      string   `json:"field,omitempty"` // frontmatter key, if in the frontmatter
	Written    string   `json:"written"`         // the target as written
	Markdown   bool     `json:"markdown,omitempty"`
	Embed      bool     `json:"embed,omitempty"`
	Anchor     string   `json:"anchor,omitempty"`
	Status     string   `json:"status"` // exact, short, ambiguous, missing
	Target     string   `json:"target"` // the file it leads to (for ambiguous and missing links, the path it names)
	Candidates []string `json:"candidates,omitempty"`
	id         int64
	named      bool // stored with a name (not a link naming its file exactly)
}

// LinkReport lists a note's links both ways, or the workspace's links that
// lead nowhere or to several files.
type LinkReport struct {
	Path     string     `json:"path,omitempty"`
	Outlinks []LinkInfo `json:"outlinks,omitempty"`
	Inlinks  []LinkInfo `json:"inlinks,omitempty"`
	Problems []LinkInfo `json:"problems,omitempty"`
}

// LinkQuery selects a LinkReport.
type LinkQuery struct {
	Path      string // a note: its links both ways; "" for the workspace's problems
	Ambiguous bool   // problems: ambiguous links
	Missing   bool   // problems: links to no file
}

// linkColumns are a LinkInfo's, read from linksFrom: a link to a note
// holds the note's id, and the target as written only where it differs.
const linkColumns = `n.path, l.line, l.field, coalesce(l.written, t.path, l.target), l.markdown, l.embed, l.anchor, l.status,
	coalesce(t.path, l.target), l.candidates, l.rowid, l.name IS NOT NULL`

const linksFrom = `links l JOIN notes n ON n.id = l.note_id LEFT JOIN notes t ON t.id = l.target_id`

func scanLinks(rows *sql.Rows) ([]LinkInfo, error) {
	defer rows.Close()
	var out []LinkInfo
	for rows.Next() {
		var li LinkInfo
		var cands string
		if err := rows.Scan(&li.From, &li.Line, &li.Field, &li.Written, &li.Markdown, &li.Embed, &li.Anchor, &li.Status, &li.Target, &cands, &li.id, &li.named); err != nil {
			return nil, fmt.Errorf("list links: %w", err)
		}
		if cands != "" {
			li.Candidates = strings.Split(cands, "\n")
		}
		out = append(out, li)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list links: %w", err)
	}
	return out, nil
}

// Links answers a LinkQuery. The caller syncs first.
func (ix *Index) Links(ctx context.Context, q LinkQuery) (*LinkReport, error) {
	rep := &LinkReport{Path: q.Path}
	if q.Path != "" {
		rows, err := ix.db.QueryContext(ctx, `SELECT `+linkColumns+` FROM `+linksFrom+`
			WHERE n.path = ? ORDER BY l.line, l.rowid`, q.Path)
		if err != nil {
			return nil, fmt.Errorf("list links: %w", err)
		}
		if rep.Outlinks, err = scanLinks(rows); err != nil {
			return nil, err
		}
		to, arg, err := leadingTo(ctx, ix.db, q.Path)
		if err != nil {
			return nil, err
		}
		rows, err = ix.db.QueryContext(ctx, `SELECT `+linkColumns+` FROM `+linksFrom+`
			WHERE l.status IN ('exact', 'short') AND `+to+` ORDER BY n.path, l.line, l.rowid`, arg)
		if err != nil {
			return nil, fmt.Errorf("list links: %w", err)
		}
		in, err := scanLinks(rows)
		if err != nil {
			return nil, err
		}
		// and the ambiguous links that may mean it
		amb, err := ix.ambiguousFor(ctx, []string{q.Path})
		if err != nil {
			return nil, err
		}
		rep.Inlinks = append(in, amb...)
		return rep, nil
	}
	var statuses []any
	if q.Ambiguous || !q.Missing {
		statuses = append(statuses, string(store.LinkAmbiguous))
	}
	if q.Missing || !q.Ambiguous {
		statuses = append(statuses, string(store.LinkMissing))
	}
	rows, err := ix.db.QueryContext(ctx, `SELECT `+linkColumns+` FROM `+linksFrom+`
		WHERE l.status IN (`+placeholders(len(statuses))+`) ORDER BY n.path, l.line, l.rowid`, statuses...)
	if err != nil {
		return nil, fmt.Errorf("list links: %w", err)
	}
	rep.Problems, err = scanLinks(rows)
	return rep, err
}

// ambiguousFor lists the ambiguous links that may mean one of paths.
func (ix *Index) ambiguousFor(ctx context.Context, paths []string) ([]LinkInfo, error) {
	want := map[string]bool{}
	var names []any
	for _, p := range paths {
		want[p] = true
		names = append(names, store.LinkName(p))
	}
	rows, err := ix.db.QueryContext(ctx, `SELECT `+linkColumns+` FROM `+linksFrom+`
		WHERE l.status = 'ambiguous' AND l.name IN (`+placeholders(len(names))+`) ORDER BY n.path, l.line, l.rowid`, names...)
	if err != nil {
		return nil, fmt.Errorf("list links: %w", err)
	}
	all, err := scanLinks(rows)
	if err != nil {
		return nil, err
	}
	var out []LinkInfo
	for _, li := range all {
		for _, c := range li.Candidates {
			if want[c] {
				out = append(out, li)
				break
			}
		}
	}
	return out, nil
}

// sortedUnique sorts xs and drops repeats.
func sortedUnique(xs []string) []string {
	slices.Sort(xs)
	return slices.Compact(xs)
}

// within reports whether p is dir or under it.
func within(p, dir string) bool { return p == dir || strings.HasPrefix(p, dir+"/") }

// linkName is the name a stored link is looked up by when notes come and
// go; NULL for a link that names its file exactly (most of ReMe's), which
// only that file's removal can change and which is found by its target.
func linkName(l linkRow) any {
	if l.res.AsWritten {
		return nil
	}
	return store.LinkName(strings.TrimSpace(l.Target))
}
