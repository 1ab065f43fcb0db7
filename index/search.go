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
	where := []string{"chunk_fts MATCH ?"}
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
	if len(opt.Tags) > 0 {
		tags := store.NormalizeTags(opt.Tags, 0)
		if len(tags) == 0 {
			return nil, ErrNoValidTags
		}
		ph := make([]string, len(tags))
		for i, t := range tags {
			ph[i] = "?"
			args = append(args, t.Key)
		}
		where = append(where, "n.id IN (SELECT note_id FROM tags WHERE tag IN ("+strings.Join(ph, ",")+"))")
	}
	rank := fmt.Sprintf("bm25(chunk_fts, %g, %g, %g)", weightName, weightDescription, weightBody)
	sqlText := `SELECT c.id, n.id, n.path, c.start_line, c.end_line, c.text, n.name, n.description,
		coalesce(n.date, ''), -` + rank + `
		FROM chunk_fts JOIN chunks c ON c.id = chunk_fts.rowid JOIN notes n ON n.id = c.note_id
		WHERE ` + strings.Join(where, " AND ") + `
		ORDER BY ` + rank + ` LIMIT ?`
	args = append(args, opt.Limit)
	rows, err := ix.db.QueryContext(ctx, sqlText, args...)
	if err != nil {
		return nil, fmt.Errorf("search: %w", err)
	}
	var out []Result
	var noteIDs []int64
	for rows.Next() {
		var r Result
		var cid, nid int64
		if err := rows.Scan(&cid, &nid, &r.Path, &r.StartLine, &r.EndLine, &r.Text, &r.Name, &r.Description, &r.Date, &r.Score); err != nil {
			rows.Close()
			return nil, fmt.Errorf("search: %w", err)
		}
		if opt.MinScore > 0 && r.Score < opt.MinScore {
			continue
		}
		sum := sha256.Sum256([]byte(fmt.Sprintf("%s %d %d %s", r.Path, r.StartLine, r.EndLine, r.Text)))
		r.ID = hex.EncodeToString(sum[:])
		r.Snippet = snippet(r.Text, q.Highlights(), 200)
		out = append(out, r)
		noteIDs = append(noteIDs, nid)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("search: %w", err)
	}
	expanded := map[int64]*expansion{}
	for i := range out {
		e, ok := expanded[noteIDs[i]]
		if !ok {
			if e, err = ix.expand(ctx, noteIDs[i], out[i].Path); err != nil {
				return nil, err
			}
			expanded[noteIDs[i]] = e
		}
		out[i].Tags, out[i].Outlinks, out[i].Inlinks = e.tags, e.out, e.in
	}
	return out, nil
}

func likePrefix(p string) string {
	r := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)
	return r.Replace(p) + "%"
}

type expansion struct {
	tags    []string
	out, in []Neighbor
}

// expand gathers a note's tags and up to maxNeighbors out- and inlinks,
// anchors grouped per neighbour.
func (ix *Index) expand(ctx context.Context, noteID int64, path string) (*expansion, error) {
	e := &expansion{tags: []string{}, out: []Neighbor{}, in: []Neighbor{}}
	rows, err := ix.db.QueryContext(ctx, `SELECT label FROM tags WHERE note_id = ? ORDER BY pos`, noteID)
	if err != nil {
		return nil, fmt.Errorf("link expansion: %w", err)
	}
	for rows.Next() {
		var t string
		if err := rows.Scan(&t); err == nil {
			e.tags = append(e.tags, t)
		}
	}
	rows.Close()
	e.out, err = ix.neighbors(ctx, `SELECT l.target, coalesce(t.name, ''), coalesce(t.description, ''), t.id IS NOT NULL,
		group_concat(l.anchor, char(31)), min(l.rowid)
		FROM links l LEFT JOIN notes t ON t.path = l.target
		WHERE l.note_id = ? AND l.target != ?
		GROUP BY l.target ORDER BY min(l.rowid) LIMIT ?`, noteID, path, maxNeighbors)
	if err != nil {
		return nil, err
	}
	e.in, err = ix.neighbors(ctx, `SELECT s.path, s.name, s.description, 1,
		group_concat(l.anchor, char(31)), min(l.rowid)
		FROM links l JOIN notes s ON s.id = l.note_id
		WHERE l.target = ? AND s.id != ?
		GROUP BY s.path ORDER BY s.path LIMIT ?`, path, noteID, maxNeighbors)
	return e, err
}

func (ix *Index) neighbors(ctx context.Context, q string, args ...any) ([]Neighbor, error) {
	rows, err := ix.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("link expansion: %w", err)
	}
	defer rows.Close()
	out := []Neighbor{}
	for rows.Next() {
		var n Neighbor
		var anchors sql.NullString
		var first int64
		if err := rows.Scan(&n.Path, &n.Name, &n.Description, &n.Indexed, &anchors, &first); err != nil {
			return nil, fmt.Errorf("link expansion: %w", err)
		}
		seen := map[string]bool{}
		for _, a := range strings.Split(anchors.String, "\x1f") {
			if a != "" && !seen[a] {
				seen[a] = true
				n.Anchors = append(n.Anchors, a)
			}
		}
		sort.Strings(n.Anchors)
		out = append(out, n)
	}
	return out, rows.Err()
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
