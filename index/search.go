package index

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/reme-dev/reme/store"
)

// ErrNoValidTags is returned when every --tag value normalises to nothing.
var ErrNoValidTags = errors.New("tags contained no valid values")

// Column weights for bm25: a hit in the name counts most, then the
// description, then the body.
const (
	weightName        = 4.0
	weightDescription = 2.0
	weightBody        = 1.0
	maxNeighbors      = 10
)

// SearchOptions are the search parameters.
type SearchOptions struct {
	Query        string
	Limit        int
	MinScore     float64
	StartDate    string // inclusive YYYY-MM-DD
	EndDate      string
	StrictDate   bool // exclude undated notes (digest) when a date bound is set
	Tags         []string
	PathPrefixes []string
	Archived     bool // include notes under archive/ (left out by default)
}

// Neighbor is a linked note in a result's link expansion.
type Neighbor struct {
	Path        string   `json:"path"`
	Name        string   `json:"name,omitempty"`
	Description string   `json:"description,omitempty"`
	Indexed     bool     `json:"indexed"`
	Anchors     []string `json:"anchors,omitempty"`
}

// Result is one matching chunk.
type Result struct {
	ID          string     `json:"id"`
	Path        string     `json:"path"`
	StartLine   int        `json:"start_line"`
	EndLine     int        `json:"end_line"`
	Score       float64    `json:"score"`
	Snippet     string     `json:"snippet"`
	Text        string     `json:"text"`
	Name        string     `json:"name"`
	Description string     `json:"description"`
	Date        string     `json:"date"`
	Tags        []string   `json:"tags"`
	Outlinks    []Neighbor `json:"outlinks"`
	Inlinks     []Neighbor `json:"inlinks"`
}

// Search runs a keyword search. The caller syncs first.
func (ix *Index) Search(ctx context.Context, opt SearchOptions) ([]Result, error) {
	if strings.TrimSpace(opt.Query) == "" {
		return nil, ErrEmptyQuery
	}
	if opt.Limit <= 0 {
		opt.Limit = 5
	}
	q := ParseQuery(opt.Query)
	match := q.MatchExpr()
	if match == "" {
		return nil, nil // nothing searchable (only punctuation)
	}
	where := []string{"chunk_fts MATCH ?"} // the first condition is always the match
	args := []any{match}
	dateCond := func(op, d string) {
		if opt.StrictDate {
			where = append(where, "n.date "+op+" ?")
		} else {
			where = append(where, "(n.date IS NULL OR n.date "+op+" ?)")
		}
		args = append(args, d)
	}
	if opt.StartDate != "" {
		dateCond(">=", opt.StartDate)
	}
	if opt.EndDate != "" {
		dateCond("<=", opt.EndDate)
	}
	if len(opt.PathPrefixes) > 0 {
		var ors []string
		for _, p := range opt.PathPrefixes {
			ors = append(ors, `n.path LIKE ? ESCAPE '\'`)
			args = append(args, likePrefix(p))
		}
		where = append(where, "("+strings.Join(ors, " OR ")+")")
	}
	if !opt.Archived {
		has, err := ix.hasArchived(ctx)
		if err != nil {
			return nil, err
		}
		if has {
			where = append(where, `n.path NOT LIKE ? ESCAPE '\'`)
			args = append(args, likePrefix(ArchiveDir+"/"))
		}
	}
	if len(opt.Tags) > 0 {
		tags := store.NormalizeTags(opt.Tags, 0)
		if len(tags) == 0 {
			return nil, ErrNoValidTags
		}
		ph := make([]string, len(tags))
		for i, t := range tags {
			ph[i] = "?"
			args = append(args, t)
		}
		where = append(where, "n.id IN (SELECT note_id FROM tags WHERE tag IN ("+strings.Join(ph, ",")+"))")
	}
	// Rank inside FTS5 first and fetch rows only for the winners: joining
	// every match to its chunk text before sorting costs ten times more.
	rank := fmt.Sprintf("bm25(chunk_fts, %g, %g, %g)", weightName, weightDescription, weightBody)
	var top string
	if len(where) == 1 {
		top = `SELECT rowid, -` + rank + ` FROM chunk_fts WHERE chunk_fts MATCH ? ORDER BY ` + rank + ` LIMIT ?`
	} else {
		top = `SELECT f.id, f.score FROM (SELECT rowid AS id, -` + rank + ` AS score FROM chunk_fts WHERE chunk_fts MATCH ?) f
			JOIN chunks c ON c.id = f.id JOIN notes n ON n.id = c.note_id
			WHERE ` + strings.Join(where[1:], " AND ") + ` ORDER BY f.score DESC LIMIT ?`
	}
	args = append(args, opt.Limit)
	rows, err := ix.db.QueryContext(ctx, top, args...)
	if err != nil {
		return nil, fmt.Errorf("search: %w", err)
	}
	var ids []int64
	scores := map[int64]float64{}
	for rows.Next() {
		var id int64
		var score float64
		if err := rows.Scan(&id, &score); err != nil {
			rows.Close()
			return nil, fmt.Errorf("search: %w", err)
		}
		if opt.MinScore > 0 && score < opt.MinScore {
			continue
		}
		ids = append(ids, id)
		scores[id] = score
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("search: %w", err)
	}
	if len(ids) == 0 {
		return nil, nil
	}
	// One query each for the rows, the tags and the links of all results.
	ph := placeholders(len(ids))
	idArgs := make([]any, len(ids))
	for i, id := range ids {
		idArgs[i] = id
	}
	rows, err = ix.db.QueryContext(ctx, `SELECT c.id, n.id, n.path, c.start_line, c.end_line, c.text, n.name, n.description, coalesce(n.date, '')
		FROM chunks c JOIN notes n ON n.id = c.note_id WHERE c.id IN (`+ph+`)`, idArgs...)
	if err != nil {
		return nil, fmt.Errorf("search: %w", err)
	}
	byID := map[int64]*Result{}
	noteOf := map[int64]int64{}
	for rows.Next() {
		var r Result
		var cid, nid int64
		if err := rows.Scan(&cid, &nid, &r.Path, &r.StartLine, &r.EndLine, &r.Text, &r.Name, &r.Description, &r.Date); err != nil {
			rows.Close()
			return nil, fmt.Errorf("search: %w", err)
		}
		byID[cid], noteOf[cid] = &r, nid
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("search: %w", err)
	}
	highlights := q.Highlights()
	out := make([]Result, 0, len(ids))
	notes := map[int64]string{}
	for _, id := range ids {
		r, ok := byID[id]
		if !ok {
			continue // removed by a concurrent writer between the two queries
		}
		r.Score = scores[id]
		sum := sha256.Sum256([]byte(fmt.Sprintf("%s %d %d %s", r.Path, r.StartLine, r.EndLine, r.Text)))
		r.ID = hex.EncodeToString(sum[:])
		r.Snippet = snippet(r.Text, highlights, 200)
		out = append(out, *r)
		notes[noteOf[id]] = r.Path
	}
	exp, err := ix.expand(ctx, notes)
	if err != nil {
		return nil, err
	}
	for i := range out {
		e := exp[out[i].Path]
		out[i].Tags, out[i].Outlinks, out[i].Inlinks = e.tags, e.out, e.in
	}
	return out, nil
}

func placeholders(n int) string {
	return strings.TrimSuffix(strings.Repeat("?,", n), ",")
}

func likePrefix(p string) string {
	r := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)
	return r.Replace(p) + "%"
}

type expansion struct {
	tags    []string
	out, in []Neighbor
}

// expand gathers, for each note (id → path), its tags and up to
// maxNeighbors out- and inlinks with their anchors grouped.
func (ix *Index) expand(ctx context.Context, notes map[int64]string) (map[string]*expansion, error) {
	res := map[string]*expansion{}
	ids := make([]any, 0, len(notes))
	paths := make([]any, 0, len(notes))
	for id, p := range notes {
		ids = append(ids, id)
		paths = append(paths, p)
		res[p] = &expansion{tags: []string{}, out: []Neighbor{}, in: []Neighbor{}}
	}
	if len(ids) == 0 {
		return res, nil
	}
	ph := placeholders(len(ids))
	rows, err := ix.db.QueryContext(ctx, `SELECT note_id, tag FROM tags WHERE note_id IN (`+ph+`) ORDER BY note_id, pos`, ids...)
	if err != nil {
		return nil, fmt.Errorf("link expansion: %w", err)
	}
	for rows.Next() {
		var id int64
		var t string
		if err := rows.Scan(&id, &t); err == nil {
			e := res[notes[id]]
			e.tags = append(e.tags, t)
		}
	}
	rows.Close()
	err = ix.neighbors(ctx, `SELECT l.note_id, '', l.target, coalesce(t.name, ''), coalesce(t.description, ''), t.id IS NOT NULL,
		group_concat(l.anchor, char(31))
		FROM links l LEFT JOIN notes t ON t.path = l.target
		WHERE l.note_id IN (`+ph+`) AND l.field = ''
		GROUP BY l.note_id, l.target ORDER BY l.note_id, min(l.rowid)`, ids, func(id int64, _ string, n Neighbor) {
		if p := notes[id]; n.Path != p && len(res[p].out) < maxNeighbors {
			res[p].out = append(res[p].out, n)
		}
	})
	if err != nil {
		return nil, err
	}
	err = ix.neighbors(ctx, `SELECT 0, l.target, s.path, s.name, s.description, 1, group_concat(l.anchor, char(31))
		FROM links l JOIN notes s ON s.id = l.note_id
		WHERE l.target IN (`+ph+`) AND l.field = ''
		GROUP BY l.target, s.path ORDER BY l.target, s.path`, paths, func(_ int64, target string, n Neighbor) {
		if e := res[target]; e != nil && n.Path != target && len(e.in) < maxNeighbors {
			e.in = append(e.in, n)
		}
	})
	return res, err
}

// neighbors runs a link query whose rows are (note id, target, neighbour
// path, name, description, indexed, anchors).
func (ix *Index) neighbors(ctx context.Context, q string, args []any, add func(id int64, target string, n Neighbor)) error {
	rows, err := ix.db.QueryContext(ctx, q, args...)
	if err != nil {
		return fmt.Errorf("link expansion: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var n Neighbor
		var id int64
		var target string
		var anchors sql.NullString
		if err := rows.Scan(&id, &target, &n.Path, &n.Name, &n.Description, &n.Indexed, &anchors); err != nil {
			return fmt.Errorf("link expansion: %w", err)
		}
		seen := map[string]bool{}
		for _, a := range strings.Split(anchors.String, "\x1f") {
			if a != "" && !seen[a] {
				seen[a] = true
				n.Anchors = append(n.Anchors, a)
			}
		}
		sort.Strings(n.Anchors)
		add(id, target, n)
	}
	return rows.Err()
}

// snippet returns about width characters of text around the first
// highlight, whitespace collapsed.
func snippet(text string, highlights []string, width int) string {
	flat := strings.Join(strings.FieldsFunc(text, unicode.IsSpace), " ")
	lower := strings.ToLower(flat)
	src := flat
	if len(lower) != len(flat) {
		src = lower
	}
	at := -1
	for _, h := range highlights {
		if i := strings.Index(lower, strings.ToLower(h)); i >= 0 && (at < 0 || i < at) {
			at = i
		}
	}
	if utf8.RuneCountInString(src) <= width {
		return src
	}
	if at < 0 {
		at = 0
	}
	start := at - width/3
	if start < 0 {
		start = 0
	}
	for start > 0 && !utf8.RuneStart(src[start]) {
		start--
	}
	end := start
	for n := 0; end < len(src) && n < width; n++ {
		_, sz := utf8.DecodeRuneInString(src[end:])
		end += sz
	}
	s := src[start:end]
	if start > 0 {
		s = "…" + s
	}
	if end < len(src) {
		s += "…"
	}
	return s
}

// MarshalJSON keeps empty lists as [] rather than null.
func (r Result) MarshalJSON() ([]byte, error) {
	type plain Result
	p := plain(r)
	if p.Tags == nil {
		p.Tags = []string{}
	}
	if p.Outlinks == nil {
		p.Outlinks = []Neighbor{}
	}
	if p.Inlinks == nil {
		p.Inlinks = []Neighbor{}
	}
	return json.Marshal(p)
}

// SearchFresh syncs and searches. The query runs on the current snapshot
// while the freshness scan walks the files; when the scan finds nothing to
// apply (the usual case) those results stand, otherwise the search runs
// again on the updated index. Either way the results reflect the files.
func (ix *Index) SearchFresh(ctx context.Context, opt SearchOptions) ([]Result, *SyncReport, error) {
	type answer struct {
		res []Result
		err error
	}
	early := make(chan answer, 1)
	go func() {
		res, err := ix.Search(ctx, opt)
		early <- answer{res, err}
	}()
	rep, err := ix.Sync(ctx)
	a := <-early
	if err != nil {
		return nil, nil, err
	}
	if rep.Added+rep.Modified+rep.Deleted > 0 || a.err != nil {
		a.res, a.err = ix.Search(ctx, opt)
	}
	return a.res, rep, a.err
}
