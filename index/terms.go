package index

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"sort"
)

// Scoring is BM25 as ReMe computes it, with ReMe's idf, which never floors
// a word found in most notes to zero: idf = ln(1 + (N - df + 0.5)/(df + 0.5)),
// over chunks (markdown sections), with a note's name and description
// weighted above its body (a hit in the name counts 4 times, in the
// description twice) and the length of a chunk its tokens in all three.
const (
	bm25K1            = 1.2 // FTS5's value, so that its bm25() and reme's agree
	bm25B             = 0.75
	weightName        = 4
	weightDescription = 2
	weightBody        = 1
)

// idf is ReMe's inverse document frequency.
func idf(n, df int) float64 {
	if df < 0 {
		df = 0
	}
	return math.Log(1 + (float64(n)-float64(df)+0.5)/(float64(df)+0.5))
}

// tfPart is BM25's saturating term-frequency factor for weighted frequency
// f in a chunk of length d.
func tfPart(f float64, d, avgdl float64) float64 {
	if f <= 0 {
		return 0
	}
	if avgdl <= 0 {
		avgdl = 1
	}
	return f * (bm25K1 + 1) / (f + bm25K1*(1-bm25B+bm25B*d/avgdl))
}

// termFreq is a distinct token of a chunk and its weighted frequency.
type termFreq struct {
	term string
	f    uint32
}

// tokenizeChunks turns a note's chunks into index rows. Every chunk carries
// the note's name and description, so that a hit on them counts in each.
func tokenizeChunks(name, desc string, chunks []Chunk) []chunkData {
	if len(chunks) == 0 {
		return nil
	}
	tk := tokenizers.Get().(*tokenizer)
	defer tokenizers.Put(tk)
	nameText, nName := tk.ftsText(nil, name)
	descText, nDesc := tk.ftsText(nil, desc)
	out := make([]chunkData, len(chunks))
	var buf []byte
	for i, c := range chunks {
		tk.countStart()
		tk.countText(nameText, weightName)
		tk.countText(descText, weightDescription)
		buf = buf[:0]
		nBody := 0
		tk.each(linkWords(c.Text), func(tok []byte, _, _ bool) {
			if nBody > 0 {
				buf = append(buf, ' ')
			}
			buf = append(buf, tok...)
			nBody++
			tk.count(tok, weightBody)
		})
		out[i] = chunkData{Chunk: c, name: string(nameText), desc: string(descText), body: string(buf),
			tokens: nName + nDesc + nBody, terms: append([]termFreq(nil), tk.counted...)}
	}
	return out
}

// A tokenizer counts the tokens of a chunk with one map lookup each: every
// token string it has seen has a slot saying where, in the chunk being
// counted, its frequency is kept (when the slot's generation is current).
type countSlot struct {
	term string
	gen  uint32
	at   int
}

func (tk *tokenizer) countStart() {
	tk.gen++
	tk.counted = tk.counted[:0]
	if len(tk.slots) >= 1<<15 {
		clear(tk.slots) // bounded memory; a chunk's own tokens always fit
	}
}

func (tk *tokenizer) count(tok []byte, f uint32) {
	sl := tk.slots[string(tok)]
	if sl == nil {
		sl = &countSlot{term: string(tok)}
		if tk.slots == nil {
			tk.slots = map[string]*countSlot{}
		}
		tk.slots[sl.term] = sl
	}
	if sl.gen != tk.gen {
		sl.gen, sl.at = tk.gen, len(tk.counted)
		tk.counted = append(tk.counted, termFreq{sl.term, 0})
	}
	tk.counted[sl.at].f += f
}

// countText counts the space-separated tokens of text.
func (tk *tokenizer) countText(text []byte, f uint32) {
	for len(text) > 0 {
		i := bytes.IndexByte(text, ' ')
		if i < 0 {
			i = len(text)
		}
		if i > 0 {
			tk.count(text[:i], f)
		}
		if i == len(text) {
			break
		}
		text = text[i+1:]
	}
}

// Frequent terms. A query word found in thousands of chunks cannot be
// ranked by visiting all of them within a search's time budget. Words found
// in at least FrequentTerms chunks are therefore kept in a table with their
// exact document frequency and their best chunks ("champion lists"): the
// topListLen chunks where the word weighs most. A search takes the
// candidates of such words from these lists and everything else from FTS5,
// then scores the best candidates exactly from the files.

// DefaultFrequentTerms is the document frequency from which a word is kept
// in the frequent-terms table.
const DefaultFrequentTerms = 512

// topListLen is the length of a frequent word's list of best chunks.
const topListLen = 128

// topEntry is one chunk of a frequent word's list with the word's weight in
// it (BM25's tf part, quantised to a byte; it is only used to pick
// candidates, which are then scored exactly).
type topEntry struct {
	id int64
	q  uint8
}

func quantImpact(tp float64) uint8 {
	v := math.Round(tp / (bm25K1 + 1) * 255)
	if v < 1 {
		v = 1
	}
	if v > 255 {
		v = 255
	}
	return uint8(v)
}

func dequantImpact(q uint8) float64 { return float64(q) / 255 * (bm25K1 + 1) }

func topLess(a, b topEntry) bool {
	if a.q != b.q {
		return a.q > b.q
	}
	return a.id < b.id
}

func encodeTop(es []topEntry) []byte {
	buf := make([]byte, 0, len(es)*4)
	for _, e := range es {
		buf = binary.AppendUvarint(buf, uint64(e.id))
		buf = append(buf, e.q)
	}
	return buf
}

func decodeTop(b []byte) ([]topEntry, error) {
	var out []topEntry
	for len(b) > 0 {
		id, k := binary.Uvarint(b)
		if k <= 0 || k >= len(b) {
			return nil, errors.New("corrupt frequent-term list")
		}
		out = append(out, topEntry{id: int64(id), q: b[k]})
		b = b[k+1:]
	}
	return out, nil
}

// stats are the collection figures BM25 needs.
type stats struct {
	chunks int64
	tokens int64
}

func (s stats) avgdl() float64 {
	if s.chunks <= 0 {
		return 1
	}
	return float64(s.tokens) / float64(s.chunks)
}

func readStats(ctx context.Context, q interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}) (stats, error) {
	var s stats
	if err := q.QueryRowContext(ctx, `SELECT chunks, tokens FROM fts_stats WHERE id = 1`).Scan(&s.chunks, &s.tokens); err != nil {
		return s, fmt.Errorf("read index statistics: %w", err)
	}
	return s, nil
}

// freqTerm is a row of the frequent-terms table in memory.
type freqTerm struct {
	df  int
	top []topEntry
}

// insertTop puts e into a list kept sorted best first and at most
// topListLen long.
func insertTop(top []topEntry, e topEntry) []topEntry {
	i := sort.Search(len(top), func(i int) bool { return topLess(e, top[i]) })
	if i >= topListLen {
		return top
	}
	top = append(top, topEntry{})
	copy(top[i+1:], top[i:])
	top[i] = e
	if len(top) > topListLen {
		top = top[:topListLen]
	}
	return top
}

// termTracker keeps the frequent-terms table and the statistics exact while
// a write transaction inserts and deletes chunks.
type termTracker struct {
	w         *writer
	threshold int
	full      bool // a rebuild: everything is counted in memory
	st        stats

	// incremental
	loaded  bool
	freq    map[string]*freqTerm
	changed map[string]bool
	pending map[string]bool // non-frequent words of inserted chunks
	recount bool            // too many deletions to check one by one: recount at the end

	// rebuild: chunks are counted on a goroutine of their own
	acc     map[string]*termAcc
	accIn   chan accChunk
	accDone chan struct{}
}

// termAcc is a word's count and best chunks while a rebuild runs.
type termAcc struct {
	df  int32
	top candHeap
}

type accChunk struct {
	id    int64
	avgdl float64
	c     *chunkData
}

func newTermTracker(ctx context.Context, w *writer, threshold int, full bool) (*termTracker, error) {
	t := &termTracker{w: w, threshold: threshold, full: full}
	if full {
		t.acc = map[string]*termAcc{}
		t.accIn = make(chan accChunk, 256)
		t.accDone = make(chan struct{})
		go func() {
			defer close(t.accDone)
			for a := range t.accIn {
				for _, tf := range a.c.terms {
					ta := t.acc[tf.term]
					if ta == nil {
						ta = &termAcc{}
						t.acc[tf.term] = ta
					}
					ta.df++
					ta.top.offer(topEntry{id: a.id, q: quantImpact(tfPart(float64(tf.f), float64(a.c.tokens), a.avgdl))})
				}
			}
		}()
		return t, nil
	}
	st, err := readStats(ctx, w.tx)
	if err != nil {
		return nil, err
	}
	t.st = st
	return t, nil
}

// close stops the rebuild's counting goroutine (idempotent).
func (t *termTracker) close() {
	if t.accIn != nil {
		close(t.accIn)
		<-t.accDone
		t.accIn = nil
	}
}

// load reads the frequent-terms table (once, when a change needs it).
func (t *termTracker) load(ctx context.Context) error {
	if t.loaded || t.full {
		return nil
	}
	t.loaded = true
	t.freq = map[string]*freqTerm{}
	t.changed = map[string]bool{}
	t.pending = map[string]bool{}
	rows, err := t.w.tx.QueryContext(ctx, `SELECT term, df, top FROM frequent_terms`)
	if err != nil {
		return fmt.Errorf("read frequent terms: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var term string
		var ft freqTerm
		var blob []byte
		if err := rows.Scan(&term, &ft.df, &blob); err != nil {
			return fmt.Errorf("read frequent terms: %w", err)
		}
		if ft.top, err = decodeTop(blob); err != nil {
			return fmt.Errorf("frequent term %q: %w", term, err)
		}
		t.freq[term] = &ft
	}
	return rows.Err()
}

// expectDeletes is told up front how many notes may be removed, so that a
// large batch recounts the frequent words once instead of checking every
// removed chunk against every frequent word.
func (t *termTracker) expectDeletes(ctx context.Context, notes int) error {
	if t.full || notes == 0 {
		return nil
	}
	if err := t.load(ctx); err != nil {
		return err
	}
	if notes*len(t.freq) > 20000 {
		t.recount = true
	}
	return nil
}

// inserted records a chunk just written with id.
func (t *termTracker) inserted(ctx context.Context, id int64, c *chunkData) error {
	t.st.chunks++
	t.st.tokens += int64(c.tokens)
	avgdl := t.st.avgdl()
	if t.full {
		select {
		case t.accIn <- accChunk{id: id, avgdl: avgdl, c: c}:
		case <-ctx.Done():
			return ctx.Err()
		}
		return nil
	}
	if err := t.load(ctx); err != nil {
		return err
	}
	for _, tf := range c.terms {
		ft := t.freq[tf.term]
		if ft == nil {
			t.pending[tf.term] = true
			continue
		}
		ft.df++
		ft.top = insertTop(ft.top, topEntry{id: id, q: quantImpact(tfPart(float64(tf.f), float64(c.tokens), avgdl))})
		t.changed[tf.term] = true
	}
	return nil
}

// deleting is called before the chunks [lo, hi] of one note (with tokens
// tokens in all) leave FTS5, while the frequent words can still be checked
// against them.
func (t *termTracker) deleting(ctx context.Context, lo, hi int64, n int, tokens int64) error {
	t.st.chunks -= int64(n)
	t.st.tokens -= tokens
	if t.full || n == 0 {
		return nil
	}
	if err := t.load(ctx); err != nil {
		return err
	}
	for term, ft := range t.freq {
		// the lists drop the removed chunks either way
		kept := ft.top[:0]
		for _, e := range ft.top {
			if e.id < lo || e.id > hi {
				kept = append(kept, e)
			} else {
				t.changed[term] = true
			}
		}
		ft.top = kept
	}
	if t.recount {
		return nil
	}
	// Which frequent words the chunks hold, asked of FTS5 in one statement
	// (the loop over the words runs inside SQLite).
	rows, err := t.w.stmts["freqIn"].QueryContext(ctx, lo, hi)
	if err != nil {
		return fmt.Errorf("frequent terms of chunks %d-%d: %w", lo, hi, err)
	}
	defer rows.Close()
	for rows.Next() {
		var term string
		var n int
		if err := rows.Scan(&term, &n); err != nil {
			return fmt.Errorf("frequent terms of chunks %d-%d: %w", lo, hi, err)
		}
		if ft := t.freq[term]; ft != nil {
			ft.df -= n
			t.changed[term] = true
		}
	}
	return rows.Err()
}

// finish writes the statistics and the frequent-terms table.
func (t *termTracker) finish(ctx context.Context) error {
	tx := t.w.tx
	if _, err := tx.ExecContext(ctx, `UPDATE fts_stats SET chunks = ?, tokens = ?, generation = generation + 1 WHERE id = 1`, t.st.chunks, t.st.tokens); err != nil {
		return fmt.Errorf("write index statistics: %w", err)
	}
	put := t.w.stmts["freqPut"]
	if t.full {
		t.close()
		terms := make([]string, 0)
		for term, a := range t.acc {
			if int(a.df) >= t.threshold {
				terms = append(terms, term)
			}
		}
		sort.Strings(terms)
		for _, term := range terms {
			a := t.acc[term]
			if _, err := put.ExecContext(ctx, term, a.df, encodeTop(a.top.sorted())); err != nil {
				return fmt.Errorf("write frequent term %q: %w", term, err)
			}
		}
		return nil
	}
	if !t.loaded {
		return nil
	}
	if t.recount {
		for term, ft := range t.freq {
			if err := t.w.stmts["ftsCount"].QueryRowContext(ctx, ftsPhrase(term)).Scan(&ft.df); err != nil {
				return fmt.Errorf("count frequent term %q: %w", term, err)
			}
			t.changed[term] = true
		}
	}
	// Words of the new chunks that may have become frequent.
	pending := make([]string, 0, len(t.pending))
	for term := range t.pending {
		pending = append(pending, term)
	}
	sort.Strings(pending)
	for _, term := range pending {
		var n int
		if err := t.w.stmts["ftsCountUpTo"].QueryRowContext(ctx, ftsPhrase(term), t.threshold).Scan(&n); err != nil {
			return fmt.Errorf("count term %q: %w", term, err)
		}
		if n < t.threshold {
			continue
		}
		ft, err := t.build(ctx, term)
		if err != nil {
			return err
		}
		t.freq[term] = ft
		t.changed[term] = true
	}
	del := t.w.stmts["freqDel"]
	changed := make([]string, 0, len(t.changed))
	for term := range t.changed {
		changed = append(changed, term)
	}
	sort.Strings(changed)
	for _, term := range changed {
		ft := t.freq[term]
		if ft.df < t.threshold {
			if _, err := del.ExecContext(ctx, term); err != nil {
				return fmt.Errorf("drop frequent term %q: %w", term, err)
			}
			continue
		}
		if len(ft.top) < topListLen/2 && ft.df > len(ft.top) {
			// Deletions emptied the list: take it again from FTS5.
			nft, err := t.build(ctx, term)
			if err != nil {
				return err
			}
			ft = nft
		}
		if _, err := put.ExecContext(ctx, term, ft.df, encodeTop(ft.top)); err != nil {
			return fmt.Errorf("write frequent term %q: %w", term, err)
		}
	}
	return nil
}

// build computes a frequent word's row from FTS5: every chunk holding it,
// with bm25() giving the word's weight (bm25 divided by FTS5's idf is the
// same tf part reme computes).
func (t *termTracker) build(ctx context.Context, term string) (*freqTerm, error) {
	rows, err := t.w.stmts["ftsScore"].QueryContext(ctx, ftsPhrase(term))
	if err != nil {
		return nil, fmt.Errorf("frequent term %q: %w", term, err)
	}
	defer rows.Close()
	var scored []struct {
		id    int64
		score float64
	}
	for rows.Next() {
		var s struct {
			id    int64
			score float64
		}
		if err := rows.Scan(&s.id, &s.score); err != nil {
			return nil, fmt.Errorf("frequent term %q: %w", term, err)
		}
		scored = append(scored, s)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("frequent term %q: %w", term, err)
	}
	ft := &freqTerm{df: len(scored)}
	fidf := ftsIDF(int(t.st.chunks), ft.df)
	h := &candHeap{}
	for _, s := range scored {
		h.offer(topEntry{id: s.id, q: quantImpact(-s.score / fidf)})
	}
	ft.top = h.sorted()
	return ft, nil
}

// ftsIDF is FTS5's idf, floored as FTS5 floors it.
func ftsIDF(n, df int) float64 {
	v := math.Log((float64(n) - float64(df) + 0.5) / (float64(df) + 0.5))
	if v <= 0 {
		v = 1e-6
	}
	return v
}

// ftsPhrase quotes one token for a MATCH expression.
func ftsPhrase(tok string) string { return `"` + tok + `"` }

// candHeap keeps the best topListLen entries offered to it.
type candHeap struct{ e []topEntry }

func (h *candHeap) offer(e topEntry) {
	if len(h.e) < topListLen {
		h.e = append(h.e, e)
		h.up(len(h.e) - 1)
		return
	}
	// h.e[0] is the worst kept entry
	if !topLess(e, h.e[0]) {
		return
	}
	h.e[0] = e
	h.down(0)
}

// The heap is ordered worst first: parent is worse than (or equal to) children.
func (h *candHeap) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !topLess(h.e[p], h.e[i]) {
			break
		}
		h.e[p], h.e[i] = h.e[i], h.e[p]
		i = p
	}
}

func (h *candHeap) down(i int) {
	n := len(h.e)
	for {
		l, worst := 2*i+1, i
		if l < n && topLess(h.e[worst], h.e[l]) {
			worst = l
		}
		if r := l + 1; r < n && topLess(h.e[worst], h.e[r]) {
			worst = r
		}
		if worst == i {
			return
		}
		h.e[i], h.e[worst] = h.e[worst], h.e[i]
		i = worst
	}
}

func (h *candHeap) sorted() []topEntry {
	out := append([]topEntry(nil), h.e...)
	sort.Slice(out, func(i, j int) bool { return topLess(out[i], out[j]) })
	return out
}
