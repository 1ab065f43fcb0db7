package index

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/reme-dev/reme/store"
)

// ErrNoValidTags is returned when every --tag value normalises to nothing.
var ErrNoValidTags = errors.New("tags contained no valid values")

const maxNeighbors = 10

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
	// Context is the number of lines shown around the hits (the command
	// line's default is DefaultContext); MaxLines the longest window (0:
	// DefaultMaxLines).
	Context  int
	MaxLines int
	Full     bool // return the whole section around the hits
	Links    bool // include links to and from each result's note
	// Now and Location place relative dates of the question ("yesterday",
	// "上周"); Literal turns that understanding off.
	Now      time.Time
	Location *time.Location
	Literal  bool
	Archived bool // include notes under archive/ (left out by default)
	// Types narrows the search to store.SearchTypes (entry types, entry,
	// profile, memory_index, card, digest); none searches every note but
	// MEMORY.md, whose lines repeat the entries.
	Types []string
}

// Neighbor is a linked note in a result's link expansion.
type Neighbor struct {
	Path        string   `json:"path"`
	Name        string   `json:"name,omitempty"`
	Description string   `json:"description,omitempty"`
	Indexed     bool     `json:"indexed"`
	Anchors     []string `json:"anchors,omitempty"`
}

// Scores are a result's scores as ReMe reports them: score is what results
// are ranked by; keyword is BM25, vector the cosine similarity, present
// when that branch found the result.
type Scores struct {
	Score   float64  `json:"score"`
	Keyword *float64 `json:"keyword,omitempty"`
	Vector  *float64 `json:"vector,omitempty"`
	Rerank  *float64 `json:"rerank,omitempty"`
}

// Result is one window of lines.
type Result struct {
	ID          string         `json:"id"`
	Path        string         `json:"path"`
	StartLine   int            `json:"start_line"`
	EndLine     int            `json:"end_line"`
	Score       float64        `json:"score"`
	Scores      Scores         `json:"scores"`
	Match       string         `json:"match"` // phrase, all, any, prefix, date, or vector (found by meaning only)
	Text        string         `json:"text"`
	Metadata    map[string]any `json:"metadata"`
	Name        string         `json:"name"`
	Description string         `json:"description"`
	Date        string         `json:"date"`
	Kind        string         `json:"kind,omitempty"` // card, digest, entry, profile, memory_index
	Type        string         `json:"type,omitempty"` // an entry's type
	Tags        []string       `json:"tags"`
	Breadcrumb  []string       `json:"breadcrumb"`
	Outlinks    []Neighbor     `json:"outlinks,omitempty"`
	Inlinks     []Neighbor     `json:"inlinks,omitempty"`

	chunkID int64
	noteID  int64
	rung    int
	fused   bool // ranked by hybrid fusion (or rerank): score alone orders it
}

// Counts are ReMe's branch hit counts, before --min-score and the limit.
type Counts struct {
	Vector   int  `json:"vector"`
	Keyword  int  `json:"keyword"`
	Returned int  `json:"returned"`
	Hybrid   bool `json:"hybrid"`
}

// Links are a note's neighbours in link_expansion.
type Links struct {
	Outlinks []Neighbor `json:"outlinks"`
	Inlinks  []Neighbor `json:"inlinks"`
}

// SearchResponse is a search's answer.
type SearchResponse struct {
	Results []Result `json:"results"`
	// Match is the best rung any result reached: phrase, all, any, prefix
	// (or date for a question that only named a date); empty when nothing
	// matched.
	Match string `json:"match"`
	// Message explains an empty answer, or what was relaxed to find one.
	Message string `json:"message,omitempty"`
	// Dates is the span of days the question named, used as a filter.
	Dates         *DateRange       `json:"dates,omitempty"`
	Counts        Counts           `json:"counts"`
	Warnings      []string         `json:"warnings,omitempty"`
	LinkExpansion map[string]Links `json:"link_expansion,omitempty"`

	generation int64 // of the index the answer was read from
}

// Search runs a search on the index as it is. The caller syncs first.
func (ix *Index) Search(ctx context.Context, opt SearchOptions) (*SearchResponse, error) {
	if strings.TrimSpace(opt.Query) == "" {
		return nil, ErrEmptyQuery
	}
	if opt.Limit <= 0 {
		opt.Limit = 5
	}
	if opt.Context < 0 {
		opt.Context = 0
	}
	if opt.MaxLines <= 0 {
		opt.MaxLines = DefaultMaxLines
	}
	if opt.MaxLines < 2*opt.Context+1 {
		opt.MaxLines = 2*opt.Context + 1
	}
	if opt.Now.IsZero() {
		opt.Now = time.Now()
	}
	if opt.Location != nil {
		opt.Now = opt.Now.In(opt.Location)
	}
	var tags []string
	if len(opt.Tags) > 0 {
		tags = store.NormalizeTags(opt.Tags, 0)
		if len(tags) == 0 {
			return nil, ErrNoValidTags
		}
	}
	if _, _, err := typeCondition(opt.Types); err != nil {
		return nil, err
	}
	tx, err := ix.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, fmt.Errorf("search: %w", err)
	}
	defer tx.Rollback()
	var gen int64
	if err := tx.QueryRowContext(ctx, `SELECT generation FROM fts_stats WHERE id = 1`).Scan(&gen); err != nil {
		return nil, fmt.Errorf("search: %w", err)
	}
	// Archived notes are left out unless asked for; the filter costs
	// nothing when there are none.
	noArchive := false
	if !opt.Archived {
		if noArchive, err = hasArchived(ctx, tx); err != nil {
			return nil, err
		}
	}
	s := &searcher{ix: ix, q: tx, opt: opt, tags: tags, noArchive: noArchive, noMemoryIndex: len(opt.Types) == 0}
	resp, err := s.run(ctx)
	if err == nil && len(resp.Results) == 0 && resp.Dates != nil {
		// Nothing on the days the question named: maybe the date words
		// were meant as words ("周日", "Sunday brunch").
		opt.Literal = true
		lit, lerr := (&searcher{ix: ix, q: tx, opt: opt, tags: tags, noArchive: noArchive, noMemoryIndex: len(opt.Types) == 0}).run(ctx)
		if lerr != nil {
			return nil, lerr
		}
		if len(lit.Results) > 0 {
			lit.Message = fmt.Sprintf("Nothing dated %s matches; these results take %q as words.", resp.Dates.span(), resp.Dates.Text)
			resp = lit
		}
	}
	if resp != nil {
		resp.generation = gen
	}
	return resp, err
}

// generation counts the write transactions of the index.
func (ix *Index) generation(ctx context.Context) (int64, error) {
	var gen int64
	err := ix.db.QueryRowContext(ctx, `SELECT generation FROM fts_stats WHERE id = 1`).Scan(&gen)
	return gen, err
}

type searcher struct {
	ix    *Index
	q     querier // one read transaction: every query sees the same index
	opt   SearchOptions
	tags  []string
	st    stats
	dates *DateRange // understood from the question
	// noArchive leaves out notes under archive/, and noMemoryIndex
	// MEMORY.md: a condition of the filter when one is active, else
	// candidates are dropped as read.
	noArchive     bool
	noMemoryIndex bool
}

func (s *searcher) run(ctx context.Context) (*SearchResponse, error) {
	resp := &SearchResponse{Results: []Result{}}
	text := s.opt.Query
	if !s.opt.Literal && s.opt.StartDate == "" && s.opt.EndDate == "" {
		text, s.dates = understandDates(text, s.opt.Now)
		resp.Dates = s.dates
	}
	q := ParseQuery(text)
	var err error
	if s.st, err = readStats(ctx, s.q); err != nil {
		return nil, err
	}
	if s.st.chunks == 0 {
		resp.Message = "The index is empty: there are no notes under " + orList(s.ix.opt.Roots, "/") + "."
		return resp, nil
	}
	if len(q.Terms) == 0 {
		if s.dates != nil {
			return s.dateOnly(ctx, resp)
		}
		if len(q.Stops) > 0 {
			resp.Message = fmt.Sprintf("The query has only common words (%s), which are not searched.", strings.Join(uniq(q.Stops), ", "))
		} else {
			resp.Message = "The query has no words to search for."
		}
		return resp, nil
	}
	terms, err := s.resolve(ctx, q.Terms)
	if err != nil {
		return nil, err
	}
	found := false
	for _, t := range terms {
		if t.df > 0 {
			found = true
		}
	}
	prefix := false
	if !found {
		// The ladder's last rung: the words as prefixes.
		if pt := prefixTerms(q); len(pt) > 0 {
			if terms, err = s.resolve(ctx, pt); err != nil {
				return nil, err
			}
			for _, t := range terms {
				if t.df > 0 {
					found, prefix = true, true
				}
			}
		}
	}
	if !found {
		if s.dates != nil {
			// "what happened yesterday": the words are nowhere, the date is.
			return s.dateOnly(ctx, resp)
		}
		var words []string
		for _, t := range q.Terms {
			words = append(words, t.Text)
		}
		resp.Message = fmt.Sprintf("No note contains any of: %s.", strings.Join(uniq(words), ", "))
		return resp, nil
	}
	var live []scoredTerm
	for _, t := range terms {
		if t.df > 0 {
			live = append(live, t)
		}
	}
	sc := &scoring{terms: live, excluded: q.Excluded, phrase: q.Phrase, n: int(s.st.chunks), avgdl: s.st.avgdl(),
		context: s.opt.Context, maxLines: s.opt.MaxLines, full: s.opt.Full, prefix: prefix, missing: len(live) < len(terms)}
	filter := s.filter(s.dates)
	results, err := s.keyword(ctx, sc, filter)
	if err != nil {
		return nil, err
	}
	if len(results) == 0 && s.dates != nil {
		// The date the question named has nothing: say so, and look everywhere.
		if results, err = s.keyword(ctx, sc, s.filter(nil)); err != nil {
			return nil, err
		}
		if len(results) > 0 {
			resp.Message = fmt.Sprintf("Nothing from %s matches; these are matches from any date.", s.dates.span())
		}
	}
	resp.Counts.Keyword = len(results)
	if s.ix.opt.Embedder != nil {
		if results, err = s.hybrid(ctx, resp, sc, filter, results); err != nil {
			return nil, err
		}
		sortResults(results)
		results = s.rerank(ctx, resp, results)
	}
	results = s.finish(results)
	if len(results) == 0 {
		resp.Message = s.explain(ctx, sc, q, filter, resp.Counts.Keyword)
		return resp, nil
	}
	resp.Results = results
	resp.Counts.Returned = len(results)
	resp.Match = results[0].Match
	for _, r := range results {
		if r.rung > rungByName(resp.Match) {
			resp.Match = r.Match
		}
	}
	if err := s.decorate(ctx, resp); err != nil {
		return nil, err
	}
	return resp, nil
}

func (d *DateRange) span() string {
	if d.Start == d.End {
		return d.Start
	}
	return d.Start + " to " + d.End
}

func rungByName(n string) int {
	for k, v := range rungNames {
		if v == n {
			return k
		}
	}
	return -1
}

func uniq(ss []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range ss {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// prefixTerms turns the query's words into prefixes (as typed, unstemmed).
func prefixTerms(q Query) []Term {
	var out []Term
	for _, t := range q.Terms {
		if t.Prefix || t.Quoted || len(t.Tokens) != 1 || store.IsCJK(firstRune(t.Tokens[0])) {
			continue
		}
		w := foldWord(t.Text)
		if len([]rune(w)) < 3 {
			continue
		}
		out = append(out, Term{Text: t.Text + "*", Tokens: []string{w}, Prefix: true})
	}
	return out
}

// resolve finds each term's document frequency: frequent words from their
// table, anything else by counting in FTS5.
func (s *searcher) resolve(ctx context.Context, terms []Term) ([]scoredTerm, error) {
	out := make([]scoredTerm, 0, len(terms))
	for _, t := range terms {
		st := scoredTerm{Term: t}
		if t.frequentCandidate() {
			err := s.q.QueryRowContext(ctx, `SELECT df FROM frequent_terms WHERE term = ?`, t.Tokens[0]).Scan(&st.df)
			if err != nil && !errors.Is(err, sql.ErrNoRows) {
				return nil, fmt.Errorf("search: %w", err)
			}
		}
		if st.df == 0 {
			limit := s.ix.opt.FrequentTerms
			if err := s.q.QueryRowContext(ctx, `SELECT count(*) FROM (SELECT rowid FROM chunk_fts WHERE chunk_fts MATCH ? LIMIT ?)`,
				t.expr(), limit).Scan(&st.df); err != nil {
				return nil, fmt.Errorf("search: %w", err)
			}
			if st.df >= limit {
				if err := s.q.QueryRowContext(ctx, `SELECT count(*) FROM chunk_fts WHERE chunk_fts MATCH ?`, t.expr()).Scan(&st.df); err != nil {
					return nil, fmt.Errorf("search: %w", err)
				}
			}
		} else {
			st.frequent = true
		}
		st.idf = idf(int(s.st.chunks), st.df)
		out = append(out, st)
	}
	return out, nil
}

func (t Term) frequentCandidate() bool { return !t.Prefix && len(t.Tokens) == 1 }

// noteFilter is the SQL condition on notes n of the search's filters.
type noteFilter struct {
	where []string
	args  []any
}

func (f noteFilter) active() bool { return len(f.where) > 0 }

func (f noteFilter) sql() string { return strings.Join(f.where, " AND ") }

func (s *searcher) filter(dates *DateRange) noteFilter {
	var f noteFilter
	start, end, strict := s.opt.StartDate, s.opt.EndDate, s.opt.StrictDate
	if dates != nil {
		// A question about a time wants notes of that time, not undated ones.
		start, end, strict = dates.Start, dates.End, true
	}
	dateCond := func(op, d string) {
		if strict {
			f.where = append(f.where, "n.date "+op+" ?")
		} else {
			f.where = append(f.where, "(n.date IS NULL OR n.date "+op+" ?)")
		}
		f.args = append(f.args, d)
	}
	if start != "" {
		dateCond(">=", start)
	}
	if end != "" {
		dateCond("<=", end)
	}
	if len(s.opt.PathPrefixes) > 0 {
		var ors []string
		for _, p := range s.opt.PathPrefixes {
			ors = append(ors, `n.path LIKE ? ESCAPE '\'`)
			f.args = append(f.args, likePrefix(p))
		}
		f.where = append(f.where, "("+strings.Join(ors, " OR ")+")")
	}
	if len(s.tags) > 0 {
		ph := placeholders(len(s.tags))
		for _, t := range s.tags {
			f.args = append(f.args, t)
		}
		f.where = append(f.where, "n.id IN (SELECT note_id FROM tags WHERE tag IN ("+ph+"))")
	}
	if len(s.opt.Types) > 0 {
		// validated by Search: typeCondition does not fail here
		cond, args, _ := typeCondition(s.opt.Types)
		f.where = append(f.where, cond)
		f.args = append(f.args, args...)
	}
	if s.noArchive && f.active() {
		f.where = append(f.where, `n.path NOT LIKE ? ESCAPE '\'`)
		f.args = append(f.args, likePrefix(ArchiveDir+"/"))
	}
	if s.noMemoryIndex && f.active() {
		f.where = append(f.where, `n.kind != ?`)
		f.args = append(f.args, store.KindMemoryIndex)
	}
	return f
}

// archived reports whether a path is left out: archived, or MEMORY.md.
func (s *searcher) archived(p string) bool {
	return (s.noArchive && strings.HasPrefix(p, ArchiveDir+"/")) || (s.noMemoryIndex && p == store.MemoryIndexPath)
}

// candidates is how many chunks are read and windowed for a search.
func (s *searcher) candidates() int {
	return max(3*s.opt.Limit, 15)
}

// keyword picks candidate chunks and turns them into scored windows.
// Frequent words give the chunks from their lists, the others from FTS5;
// with filters FTS5 ranks every match inside them.
func (s *searcher) keyword(ctx context.Context, sc *scoring, filter noteFilter) ([]Result, error) {
	m := s.candidates()
	first := map[int64]float64{}
	var selective, frequent []scoredTerm
	for _, t := range sc.terms {
		if t.frequent && !filter.active() {
			frequent = append(frequent, t)
		} else {
			selective = append(selective, t)
		}
	}
	if len(selective) > 0 {
		plain := make([]Term, len(selective))
		for i, t := range selective {
			plain[i] = t.Term
		}
		expr := matchExpr(plain, sc.excluded)
		var q string
		args := []any{expr}
		if filter.active() {
			match := "chunk_fts MATCH ?"
			if memoryOnly(s.opt.Types) {
				// memory notes' chunks are numbered apart: FTS5 skips the rest
				match += fmt.Sprintf(" AND rowid >= %d", memoryChunkBase)
			}
			q = `SELECT f.id, f.score FROM (SELECT rowid AS id, -bm25(chunk_fts, 4, 2, 1) AS score FROM chunk_fts WHERE ` + match + `) f
				JOIN chunks c ON c.id = f.id JOIN notes n ON n.id = c.note_id WHERE ` + filter.sql() + ` ORDER BY f.score DESC LIMIT ?`
			args = append(append(args, filter.args...), m)
		} else {
			q = `SELECT rowid, -bm25(chunk_fts, 4, 2, 1) FROM chunk_fts WHERE chunk_fts MATCH ?`
		}
		rows, err := s.q.QueryContext(ctx, q, args...)
		if err != nil {
			return nil, fmt.Errorf("search: %w", err)
		}
		for rows.Next() {
			var id int64
			var score float64
			if err := rows.Scan(&id, &score); err != nil {
				rows.Close()
				return nil, fmt.Errorf("search: %w", err)
			}
			first[id] += score
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("search: %w", err)
		}
	}
	for _, t := range frequent {
		var blob []byte
		if err := s.q.QueryRowContext(ctx, `SELECT top FROM frequent_terms WHERE term = ?`, t.Tokens[0]).Scan(&blob); err != nil {
			if errors.Is(err, sql.ErrNoRows) {
				continue // no longer frequent since resolve: a concurrent writer
			}
			return nil, fmt.Errorf("search: %w", err)
		}
		top, err := decodeTop(blob)
		if err != nil {
			return nil, fmt.Errorf("search: frequent term %q: %w", t.Tokens[0], err)
		}
		for _, e := range top {
			first[e.id] += t.idf * dequantImpact(e.q)
		}
	}
	ids := make([]int64, 0, len(first))
	for id := range first {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool {
		if first[ids[i]] != first[ids[j]] {
			return first[ids[i]] > first[ids[j]]
		}
		return ids[i] > ids[j] // newer chunks first among equals
	})
	if (s.noArchive || s.noMemoryIndex) && !filter.active() {
		// Archived chunks (and MEMORY.md's) leave the ranking before the
		// best m are taken.
		kept := ids[:0]
		for start := 0; start < len(ids) && len(kept) < m; start += m {
			batch := ids[start:min(start+m, len(ids))]
			live, err := s.unarchived(ctx, batch)
			if err != nil {
				return nil, err
			}
			for _, id := range batch {
				if live[id] && len(kept) < m {
					kept = append(kept, id)
				}
			}
		}
		ids = kept
	}
	if len(ids) > m {
		ids = ids[:m]
	}
	return s.windows(ctx, sc, ids)
}

// unarchived tells which of the chunks are outside archive/.
func (s *searcher) unarchived(ctx context.Context, ids []int64) (map[int64]bool, error) {
	args := make([]any, 0, len(ids)+2)
	for _, id := range ids {
		args = append(args, id)
	}
	cond := ""
	if s.noArchive {
		cond += ` AND n.path NOT LIKE ? ESCAPE '\'`
		args = append(args, likePrefix(ArchiveDir+"/"))
	}
	if s.noMemoryIndex {
		cond += ` AND n.kind != ?`
		args = append(args, store.KindMemoryIndex)
	}
	rows, err := s.q.QueryContext(ctx, `SELECT c.id FROM chunks c JOIN notes n ON n.id = c.note_id
		WHERE c.id IN (`+placeholders(len(ids))+`)`+cond, args...)
	if err != nil {
		return nil, fmt.Errorf("search: %w", err)
	}
	defer rows.Close()
	live := map[int64]bool{}
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("search: %w", err)
		}
		live[id] = true
	}
	return live, rows.Err()
}

// candidateChunk is a chunk row with its note.
type candidateChunk struct {
	id, noteID int64
	start, end int
	path       string
	name, desc string
	date       string
	kind, typ  string
}

func (s *searcher) loadChunks(ctx context.Context, ids []int64) ([]candidateChunk, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	rows, err := s.q.QueryContext(ctx, `SELECT c.id, n.id, c.start_line, c.end_line, n.path, n.name, n.description, coalesce(n.date, ''),
		n.kind, coalesce(n.type, '')
		FROM chunks c JOIN notes n ON n.id = c.note_id WHERE c.id IN (`+placeholders(len(ids))+`)`, args...)
	if err != nil {
		return nil, fmt.Errorf("search: %w", err)
	}
	defer rows.Close()
	var out []candidateChunk
	for rows.Next() {
		var c candidateChunk
		if err := rows.Scan(&c.id, &c.noteID, &c.start, &c.end, &c.path, &c.name, &c.desc, &c.date, &c.kind, &c.typ); err != nil {
			return nil, fmt.Errorf("search: %w", err)
		}
		if s.archived(c.path) {
			continue
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// windows reads the candidates' notes and scores their windows.
func (s *searcher) windows(ctx context.Context, sc *scoring, ids []int64) ([]Result, error) {
	chunks, err := s.loadChunks(ctx, ids)
	if err != nil {
		return nil, err
	}
	byNote := map[string][]candidateChunk{}
	var order []string
	for _, c := range chunks {
		if _, ok := byNote[c.path]; !ok {
			order = append(order, c.path)
		}
		byNote[c.path] = append(byNote[c.path], c)
	}
	sort.Strings(order)
	var out []Result
	for _, p := range order {
		cs := byNote[p]
		raw, err := os.ReadFile(s.ix.ws.Abs(p))
		if err != nil {
			// Gone or unreadable since the sync: the next sync will drop it.
			s.ix.log.Debug("search: read result", "path", p, "err", err)
			continue
		}
		body, bodyLine := store.NoteBody(raw)
		c0 := cs[0]
		nt := newNoteText(p, body, bodyLine, noteTitle(p, c0.name), c0.desc)
		for _, c := range cs {
			if c.end < bodyLine {
				// A note with only a header: its name and description matched.
				if r, ok := s.headerResult(sc, nt, c); ok {
					out = append(out, r)
				}
				continue
			}
			for _, w := range sc.chunkWindows(nt, c.start-bodyLine, c.end-bodyLine, c.id) {
				out = append(out, s.result(nt, c, w))
			}
		}
	}
	return out, nil
}

func (s *searcher) headerResult(sc *scoring, nt *noteText, c candidateChunk) (Result, bool) {
	f := make([]float64, len(sc.terms))
	sc.count(plainTokens(nt.nameToks), f, weightName)
	sc.count(plainTokens(nt.descToks), f, weightDescription)
	length := float64(len(nt.nameToks) + len(nt.descToks))
	var score float64
	rung := rungAll
	for k, t := range sc.terms {
		if f[k] == 0 {
			rung = rungAny
			continue
		}
		score += t.idf * tfPart(f[k], length, sc.avgdl)
	}
	if score == 0 {
		return Result{}, false
	}
	if sc.prefix {
		rung = rungPrefix
	}
	return Result{Path: c.path, StartLine: c.start, EndLine: c.end, Score: score, Name: c.name, Description: c.desc,
		Date: c.date, Kind: c.kind, Type: c.typ, chunkID: c.id, noteID: c.noteID, rung: rung}, true
}

func (s *searcher) result(nt *noteText, c candidateChunk, w window) Result {
	r := Result{
		Path: c.path, StartLine: nt.bodyLine + w.from, EndLine: nt.bodyLine + w.to,
		Score: w.score, Name: c.name, Description: c.desc, Date: c.date, Kind: c.kind, Type: c.typ,
		Text: strings.Join(nt.lines[w.from:w.to+1], "\n"), chunkID: c.id, noteID: c.noteID, rung: w.rung,
	}
	for _, h := range nt.crumbs(w.from) {
		r.Breadcrumb = append(r.Breadcrumb, strings.TrimSpace(strings.TrimLeft(nt.lines[h], "# ")))
	}
	return r
}

// finish orders the windows (stricter rungs first, then score), removes
// overlapping and repeated ones, applies --min-score and the limit.
func (s *searcher) finish(rs []Result) []Result {
	sortResults(rs)
	var out []Result
	seenText := map[string]bool{}
	for _, r := range rs {
		if s.opt.MinScore > 0 && r.Score < s.opt.MinScore && r.rung != rungDate {
			continue
		}
		dup := false
		for _, o := range out {
			if o.Path == r.Path && r.StartLine <= o.EndLine && o.StartLine <= r.EndLine {
				dup = true
				break
			}
		}
		key := strings.TrimSpace(r.Text)
		if key != "" && seenText[key] {
			dup = true
		}
		if dup {
			continue
		}
		seenText[key] = true
		r.Score = roundScore(r.Score)
		r.Match = rungNames[r.rung]
		r.ID = resultID(r.Path, r.StartLine, r.EndLine, r.Text)
		r.Metadata = map[string]any{}
		switch {
		case r.fused:
			r.Scores.Score = r.Score
		case r.rung != rungDate:
			k := r.Score
			r.Scores = Scores{Score: r.Score, Keyword: &k}
		}
		out = append(out, r)
		if len(out) == s.opt.Limit {
			break
		}
	}
	return out
}

// sortResults orders windows: stricter rungs first, then score; results of
// a hybrid search by their fused score alone.
func sortResults(rs []Result) {
	sort.SliceStable(rs, func(i, j int) bool {
		a, b := rs[i], rs[j]
		if a.rung != b.rung && !a.fused && !b.fused {
			return a.rung > b.rung
		}
		if a.Score != b.Score {
			return a.Score > b.Score
		}
		if a.Path != b.Path {
			return a.Path < b.Path
		}
		return a.StartLine < b.StartLine
	})
}

// roundScore keeps scores stable in the last digits across platforms.
func roundScore(v float64) float64 { return math.Round(v*1e6) / 1e6 }

// dateOnly answers a question that names a date and nothing else ("what
// happened yesterday"): the notes of those days, newest first.
func (s *searcher) dateOnly(ctx context.Context, resp *SearchResponse) (*SearchResponse, error) {
	f := s.filter(s.dates)
	f.where = append(f.where, "n.date IS NOT NULL", "n.day_index = 0")
	args := append(append([]any{}, f.args...), s.opt.Limit*4)
	rows, err := s.q.QueryContext(ctx, `SELECT min(c.id) FROM chunks c JOIN notes n ON n.id = c.note_id
		WHERE `+f.sql()+` GROUP BY n.id ORDER BY n.date DESC, n.path LIMIT ?`, args...)
	if err != nil {
		return nil, fmt.Errorf("search: %w", err)
	}
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return nil, fmt.Errorf("search: %w", err)
		}
		ids = append(ids, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("search: %w", err)
	}
	var out []Result
	err = s.eachChunkText(ctx, ids, func(nt *noteText, c candidateChunk, lo, hi int) {
		if hi-lo+1 > s.opt.MaxLines {
			hi = lo + s.opt.MaxLines - 1
		}
		var w window
		if lo <= hi {
			w.from, w.to = trimBlank(nt, lo, hi)
		}
		w.rung = rungDate
		r := s.result(nt, c, w)
		if lo > hi {
			r.Text, r.StartLine, r.EndLine = "", c.start, c.end
		}
		out = append(out, r)
	})
	if err != nil {
		return nil, err
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Date != out[j].Date {
			return out[i].Date > out[j].Date
		}
		return out[i].Path < out[j].Path
	})
	resp.Counts.Keyword = len(out)
	out = s.finish(out)
	if len(out) == 0 {
		resp.Message = fmt.Sprintf("No note is dated %s.", s.dates.span())
		return resp, nil
	}
	resp.Results, resp.Match, resp.Counts.Returned = out, "date", len(out)
	return resp, s.decorate(ctx, resp)
}

// explain says why a search found nothing.
func (s *searcher) explain(ctx context.Context, sc *scoring, q Query, filter noteFilter, found int) string {
	var words []string
	for _, t := range sc.terms {
		words = append(words, t.Text)
	}
	list := strings.Join(uniq(words), ", ")
	if found > 0 && s.opt.MinScore > 0 {
		return fmt.Sprintf("%d result(s) matched %s but scored below --min-score %g.", found, list, s.opt.MinScore)
	}
	if filter.active() {
		var n int
		plain := make([]Term, len(sc.terms))
		for i, t := range sc.terms {
			plain[i] = t.Term
		}
		err := s.q.QueryRowContext(ctx, `SELECT count(DISTINCT c.note_id) FROM chunk_fts f JOIN chunks c ON c.id = f.rowid
			WHERE chunk_fts MATCH ?`, matchExpr(plain, q.Excluded)).Scan(&n)
		if err == nil && n > 0 {
			return fmt.Sprintf("%d note(s) contain %s, but the filters (%s) left all of them out.", n, list, s.describeFilters())
		}
	}
	if len(q.Excluded) > 0 {
		var ex []string
		for _, t := range q.Excluded {
			ex = append(ex, "-"+t.Text)
		}
		return fmt.Sprintf("Every note with %s also has an excluded word (%s).", list, strings.Join(ex, " "))
	}
	return fmt.Sprintf("No note contains any of: %s.", list)
}

func (s *searcher) describeFilters() string {
	var parts []string
	if s.opt.StartDate != "" {
		parts = append(parts, "--start-date "+s.opt.StartDate)
	}
	if s.opt.EndDate != "" {
		parts = append(parts, "--end-date "+s.opt.EndDate)
	}
	if s.dates != nil {
		parts = append(parts, fmt.Sprintf("%q: %s", s.dates.Text, s.dates.span()))
	}
	for _, t := range s.opt.Tags {
		parts = append(parts, "--tag "+t)
	}
	for _, p := range s.opt.PathPrefixes {
		parts = append(parts, "--path "+p)
	}
	return strings.Join(parts, ", ")
}

// decorate adds tags to every result, and links with Links.
func (s *searcher) decorate(ctx context.Context, resp *SearchResponse) error {
	notes := map[int64]string{}
	for _, r := range resp.Results {
		notes[r.noteID] = r.Path
	}
	exp, err := expand(ctx, s.q, notes, s.opt.Links)
	if err != nil {
		return err
	}
	if s.opt.Links {
		resp.LinkExpansion = map[string]Links{}
	}
	for i := range resp.Results {
		r := &resp.Results[i]
		e := exp[r.Path]
		r.Tags = e.tags
		if s.opt.Links {
			r.Outlinks, r.Inlinks = e.out, e.in
			resp.LinkExpansion[r.Path] = Links{Outlinks: e.out, Inlinks: e.in}
		}
	}
	return nil
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

// expand gathers, for each note (id → path), its tags and, with links, up
// to maxNeighbors out- and inlinks with their anchors grouped.
func expand(ctx context.Context, q querier, notes map[int64]string, links bool) (map[string]*expansion, error) {
	res := map[string]*expansion{}
	ids := make([]any, 0, len(notes))
	for id, p := range notes {
		ids = append(ids, id)
		res[p] = &expansion{tags: []string{}, out: []Neighbor{}, in: []Neighbor{}}
	}
	if len(ids) == 0 {
		return res, nil
	}
	ph := placeholders(len(ids))
	rows, err := q.QueryContext(ctx, `SELECT note_id, tag FROM tags WHERE note_id IN (`+ph+`) ORDER BY note_id, pos`, ids...)
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
	if !links {
		return res, nil
	}
	err = neighbors(ctx, q, `SELECT l.note_id, '', coalesce(t.path, l.target) target, coalesce(t.name, ''), coalesce(t.description, ''),
		t.id IS NOT NULL, group_concat(l.anchor, char(31))
		FROM links l LEFT JOIN notes t ON t.id = l.target_id
		WHERE l.note_id IN (`+ph+`) AND l.field = ''
		GROUP BY l.note_id, target ORDER BY l.note_id, min(l.rowid)`, ids, func(id int64, _ string, n Neighbor) {
		if p := notes[id]; n.Path != p && len(res[p].out) < maxNeighbors {
			res[p].out = append(res[p].out, n)
		}
	})
	if err != nil {
		return nil, err
	}
	err = neighbors(ctx, q, `SELECT 0, t.path, s.path, s.name, s.description, 1, group_concat(l.anchor, char(31))
		FROM links l JOIN notes t ON t.id = l.target_id JOIN notes s ON s.id = l.note_id
		WHERE l.target_id IN (`+ph+`) AND l.field = ''
		GROUP BY t.path, s.path ORDER BY t.path, s.path`, ids, func(_ int64, target string, n Neighbor) {
		if e := res[target]; e != nil && n.Path != target && len(e.in) < maxNeighbors {
			e.in = append(e.in, n)
		}
	})
	return res, err
}

// neighbors runs a link query whose rows are (note id, target, neighbour
// path, name, description, indexed, anchors).
func neighbors(ctx context.Context, q querier, query string, args []any, add func(id int64, target string, n Neighbor)) error {
	rows, err := q.QueryContext(ctx, query, args...)
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

// MarshalJSON keeps empty lists as [] rather than null.
func (r Result) MarshalJSON() ([]byte, error) {
	type plain Result
	p := plain(r)
	if p.Tags == nil {
		p.Tags = []string{}
	}
	if p.Breadcrumb == nil {
		p.Breadcrumb = []string{}
	}
	if p.Metadata == nil {
		p.Metadata = map[string]any{}
	}
	return json.Marshal(p)
}

// SearchFresh syncs and searches. The query runs on the current snapshot
// while the freshness scan walks the files; when the scan finds nothing to
// apply (the usual case) those results stand, otherwise the search runs
// again on the updated index. Either way the results reflect the files.
func (ix *Index) SearchFresh(ctx context.Context, opt SearchOptions) (*SearchResponse, *SyncReport, error) {
	type answer struct {
		res *SearchResponse
		err error
	}
	early := make(chan answer, 1)
	go func() {
		res, err := ix.Search(ctx, opt)
		early <- answer{res, err}
	}()
	if rep, ok := ix.watcherSync(ctx); ok {
		// The watcher has indexed every change made before it was asked:
		// the early answer stands if nothing was written since it read.
		a := <-early
		if a.err == nil {
			if gen, err := ix.generation(ctx); err == nil && gen == a.res.generation {
				return a.res, rep, nil
			}
		}
		res, err := ix.Search(ctx, opt)
		return res, rep, err
	}
	rep, err := ix.sync(ctx, false, nil, nil)
	a := <-early
	if err != nil {
		return nil, nil, err
	}
	again := rep.Added+rep.Modified+rep.Deleted > 0 || a.err != nil
	if !again {
		// Another process may have indexed changes after the early answer
		// was read and before the scan compared: the scan then finds
		// nothing to do, but the answer is older than the files.
		gen, err := ix.generation(ctx)
		if err != nil {
			return nil, nil, fmt.Errorf("search: %w", err)
		}
		again = gen != a.res.generation
	}
	if again {
		a.res, a.err = ix.Search(ctx, opt)
	}
	return a.res, rep, a.err
}

// orList joins words as "a/, b/ or c/".
func orList(words []string, suffix string) string {
	out := ""
	for i, w := range words {
		switch {
		case i == 0:
		case i == len(words)-1:
			out += " or "
		default:
			out += ", "
		}
		out += w
		if !strings.HasSuffix(w, ".md") { // a folder, not a single note
			out += suffix
		}
	}
	return out
}

// eachChunkText reads the notes of the chunks and calls fn with each
// chunk's note text and its lines there, [lo, hi] (lo > hi for a chunk that
// is only the note's header). Notes gone since the sync are passed over.
func (s *searcher) eachChunkText(ctx context.Context, ids []int64, fn func(nt *noteText, c candidateChunk, lo, hi int)) error {
	chunks, err := s.loadChunks(ctx, ids)
	if err != nil {
		return err
	}
	for _, c := range chunks {
		raw, err := os.ReadFile(s.ix.ws.Abs(c.path))
		if err != nil {
			continue
		}
		body, bodyLine := store.NoteBody(raw)
		nt := newNoteText(c.path, body, bodyLine, noteTitle(c.path, c.name), c.desc)
		fn(nt, c, max(c.start-bodyLine, 0), min(c.end-bodyLine, len(nt.lines)-1))
	}
	return nil
}
