package index

import (
	"bytes"
	"cmp"
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"sort"
	"strings"
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

func readStats(ctx context.Context, q querier) (stats, error) {
	var s stats
	if err := q.QueryRowContext(ctx, `SELECT chunks, tokens FROM fts_stats WHERE id = 1`).Scan(&s.chunks, &s.tokens); err != nil {
		return s, fmt.Errorf("read index statistics: %w", err)
	}
	return s, nil
}

// freqTerm is a row of the frequent-terms table in memory.
type freqTerm struct {
	id  int64
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

// encodeIDs writes ascending ids (all at least 1) as uvarint gaps, or as a
// bitmap after a zero byte when that is shorter.
func encodeIDs(buf []byte, ids []int64) []byte {
	if len(ids) == 0 {
		return buf
	}
	start := len(buf)
	var last int64
	for _, id := range ids {
		buf = binary.AppendUvarint(buf, uint64(id-last))
		last = id
	}
	if bitmap := 1 + int((last+7)/8); bitmap < len(buf)-start {
		buf = append(buf[:start], make([]byte, bitmap)...)
		for _, id := range ids {
			buf[start+1+int((id-1)/8)] |= 1 << ((id - 1) % 8)
		}
	}
	return buf
}

// decodeIDs reads what encodeIDs wrote, appending to ids.
func decodeIDs(ids []int64, b []byte) ([]int64, error) {
	if len(b) > 0 && b[0] == 0 {
		for i, x := range b[1:] {
			for x != 0 {
				k := bits.TrailingZeros8(x)
				ids = append(ids, int64(i*8+k+1))
				x &^= 1 << k
			}
		}
		return ids, nil
	}
	var last int64
	for len(b) > 0 {
		d, k := binary.Uvarint(b)
		if k <= 0 || d == 0 {
			return nil, errors.New("corrupt chunk-terms list")
		}
		last += int64(d)
		ids = append(ids, last)
		b = b[k:]
	}
	return ids, nil
}

// idRange is the ids of one removed note's chunks.
type idRange struct{ lo, hi int64 }

// termTracker keeps the frequent-terms table, the chunks' lists of the
// frequent words they hold and the statistics exact while a write
// transaction inserts and deletes chunks.
type termTracker struct {
	w         *writer
	threshold int
	full      bool // a rebuild: everything is counted in memory
	st        stats
	nextTerm  int64
	ids       []int64 // scratch

	// incremental
	loaded  bool
	freq    map[string]*freqTerm
	byID    map[int64]string
	changed map[string]bool
	pending map[string]bool // non-frequent words of inserted chunks
	deleted []idRange

	// rebuild: chunks are counted on a goroutine of their own
	acc          map[string]int32 // word → its place in accs
	accs         []termAcc
	accIn        chan accChunk
	accDone      chan struct{}
	skip         int32 // a word's first postings, which a rebuild does not keep
	first, last  int64 // the chunk ids a rebuild wrote
	rebuiltLists int   // chunks given a list (tests)
}

// termAcc is a word's count while a rebuild runs, and past its first skip
// chunks (most words never get there) its best chunks and postings, which
// make its frequent-terms row should it turn out frequent. FTS5 gives back
// the first chunks of the few words that do.
type termAcc struct {
	df   int32
	more *termMore
}

type termMore struct {
	top candHeap
	p   postings
}

// postings are the chunks holding a word after its first skip ones, as
// uvarint gaps: once the word turns out frequent, they make the chunks'
// lists.
type postings struct {
	last int64
	b    []byte
}

type accChunk struct {
	id    int64
	avgdl float64
	c     *chunkData
}

func newTermTracker(ctx context.Context, w *writer, threshold int, full bool) (*termTracker, error) {
	t := &termTracker{w: w, threshold: threshold, full: full}
	if full {
		t.nextTerm = 1
		t.skip = int32(threshold / 4)
		t.acc = map[string]int32{}
		t.accIn = make(chan accChunk, 256)
		t.accDone = make(chan struct{})
		go func() {
			defer close(t.accDone)
			for a := range t.accIn {
				for _, tf := range a.c.terms {
					i, ok := t.acc[tf.term]
					if !ok {
						i = int32(len(t.accs))
						t.accs = append(t.accs, termAcc{})
						t.acc[tf.term] = i
					}
					ta := &t.accs[i]
					ta.df++
					if ta.df <= t.skip {
						continue
					}
					if ta.more == nil {
						ta.more = &termMore{}
					}
					ta.more.top.offer(topEntry{id: a.id, q: quantImpact(tfPart(float64(tf.f), float64(a.c.tokens), a.avgdl))})
					p := &ta.more.p
					p.b = binary.AppendUvarint(p.b, uint64(a.id-p.last))
					p.last = a.id
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
	t.byID = map[int64]string{}
	t.changed = map[string]bool{}
	t.pending = map[string]bool{}
	if err := t.w.tx.QueryRowContext(ctx, `SELECT next_term FROM fts_stats WHERE id = 1`).Scan(&t.nextTerm); err != nil {
		return fmt.Errorf("read index statistics: %w", err)
	}
	rows, err := t.w.tx.QueryContext(ctx, `SELECT term, id, df, top FROM frequent_terms`)
	if err != nil {
		return fmt.Errorf("read frequent terms: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var term string
		var ft freqTerm
		var blob []byte
		if err := rows.Scan(&term, &ft.id, &ft.df, &blob); err != nil {
			return fmt.Errorf("read frequent terms: %w", err)
		}
		if ft.top, err = decodeTop(blob); err != nil {
			return fmt.Errorf("frequent term %q: %w", term, err)
		}
		t.freq[term] = &ft
		t.byID[ft.id] = term
	}
	return rows.Err()
}

// inserted records a chunk just written with id.
func (t *termTracker) inserted(ctx context.Context, id int64, c *chunkData) error {
	t.st.chunks++
	t.st.tokens += int64(c.tokens)
	avgdl := t.st.avgdl()
	if t.full {
		if t.first == 0 {
			t.first = id
		}
		t.last = id
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
	ids := t.ids[:0]
	for _, tf := range c.terms {
		ft := t.freq[tf.term]
		if ft == nil {
			t.pending[tf.term] = true
			continue
		}
		ft.df++
		ft.top = insertTop(ft.top, topEntry{id: id, q: quantImpact(tfPart(float64(tf.f), float64(c.tokens), avgdl))})
		t.changed[tf.term] = true
		ids = append(ids, ft.id)
	}
	t.ids = ids
	if len(ids) == 0 {
		return nil
	}
	slices.Sort(ids)
	if _, err := t.w.exec(ctx, "termsPut", id, encodeIDs(nil, ids)); err != nil {
		return fmt.Errorf("frequent terms of chunk %d: %w", id, err)
	}
	return nil
}

// deleting is called before the chunks [lo, hi] of one note (with tokens
// tokens in all) are removed: their lists say which frequent words lose
// them.
func (t *termTracker) deleting(ctx context.Context, lo, hi int64, n int, tokens int64) error {
	t.st.chunks -= int64(n)
	t.st.tokens -= tokens
	if t.full || n == 0 {
		return nil
	}
	if err := t.load(ctx); err != nil {
		return err
	}
	t.deleted = append(t.deleted, idRange{lo, hi})
	rows, err := t.w.query(ctx, "termsOf", lo, hi)
	if err != nil {
		return fmt.Errorf("frequent terms of chunks %d-%d: %w", lo, hi, err)
	}
	defer rows.Close()
	for rows.Next() {
		var blob []byte
		if err := rows.Scan(&blob); err != nil {
			return fmt.Errorf("frequent terms of chunks %d-%d: %w", lo, hi, err)
		}
		if t.ids, err = decodeIDs(t.ids[:0], blob); err != nil {
			return fmt.Errorf("frequent terms of chunks %d-%d: %w", lo, hi, err)
		}
		for _, tid := range t.ids {
			if term, ok := t.byID[tid]; ok {
				t.freq[term].df--
				t.changed[term] = true
			}
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("frequent terms of chunks %d-%d: %w", lo, hi, err)
	}
	rows.Close()
	if _, err := t.w.exec(ctx, "termsDel", lo, hi); err != nil {
		return fmt.Errorf("frequent terms of chunks %d-%d: %w", lo, hi, err)
	}
	return nil
}

// finish writes the statistics, the frequent-terms table and (after a
// rebuild) the chunks' lists.
func (t *termTracker) finish(ctx context.Context) error {
	if t.full {
		if err := t.finishRebuild(ctx); err != nil {
			return err
		}
	} else if t.loaded {
		if err := t.finishChanges(ctx); err != nil {
			return err
		}
	}
	if _, err := t.w.tx.ExecContext(ctx, `UPDATE fts_stats SET chunks = ?, tokens = ?, generation = generation + 1`+
		`, next_term = max(next_term, ?) WHERE id = 1`, t.st.chunks, t.st.tokens, t.nextTerm); err != nil {
		return fmt.Errorf("write index statistics: %w", err)
	}
	return nil
}

func (t *termTracker) finishChanges(ctx context.Context) error {
	// The lists drop the removed chunks.
	if len(t.deleted) > 0 {
		slices.SortFunc(t.deleted, func(a, b idRange) int { return cmp.Compare(a.lo, b.lo) })
		gone := func(id int64) bool {
			i := sort.Search(len(t.deleted), func(i int) bool { return t.deleted[i].hi >= id })
			return i < len(t.deleted) && t.deleted[i].lo <= id
		}
		for term, ft := range t.freq {
			kept := ft.top[:0]
			for _, e := range ft.top {
				if gone(e.id) {
					t.changed[term] = true
				} else {
					kept = append(kept, e)
				}
			}
			ft.top = kept
		}
	}
	// Words of the new chunks that may have become frequent.
	pending := make([]string, 0, len(t.pending))
	for term := range t.pending {
		if t.freq[term] == nil {
			pending = append(pending, term)
		}
	}
	sort.Strings(pending)
	for _, term := range pending {
		var n int
		if err := t.w.queryRow(ctx, "ftsCountUpTo", []any{ftsPhrase(term), t.threshold}, &n); err != nil {
			return fmt.Errorf("count term %q: %w", term, err)
		}
		if n < t.threshold {
			continue
		}
		ft, holders, err := t.build(ctx, term)
		if err != nil {
			return err
		}
		ft.id = t.nextTerm
		t.nextTerm++
		if err := t.addToLists(ctx, ft.id, holders); err != nil {
			return fmt.Errorf("frequent term %q: %w", term, err)
		}
		t.freq[term] = ft
		t.changed[term] = true
	}
	changed := make([]string, 0, len(t.changed))
	for term := range t.changed {
		changed = append(changed, term)
	}
	sort.Strings(changed)
	for _, term := range changed {
		ft := t.freq[term]
		if ft.df < t.threshold {
			// Its id stays in the chunks' lists, ignored: ids are not reused.
			if _, err := t.w.exec(ctx, "freqDel", term); err != nil {
				return fmt.Errorf("drop frequent term %q: %w", term, err)
			}
			continue
		}
		if len(ft.top) < topListLen/2 && ft.df > len(ft.top) {
			// Deletions emptied the list: take it again from FTS5.
			nft, _, err := t.build(ctx, term)
			if err != nil {
				return err
			}
			ft.top = nft.top
		}
		if _, err := t.w.exec(ctx, "freqPut", term, ft.id, ft.df, encodeTop(ft.top)); err != nil {
			return fmt.Errorf("write frequent term %q: %w", term, err)
		}
	}
	return nil
}

// addToLists adds a word that has just become frequent to the lists of the
// chunks holding it (ascending). Its id is above every id in them.
func (t *termTracker) addToLists(ctx context.Context, tid int64, holders []int64) error {
	var ids []int64
	for _, cid := range holders {
		var blob []byte
		err := t.w.queryRow(ctx, "termsGet", []any{cid}, &blob)
		if err != nil && err != sql.ErrNoRows {
			return err
		}
		if ids, err = decodeIDs(ids[:0], blob); err != nil {
			return err
		}
		ids = append(ids, tid)
		if _, err := t.w.exec(ctx, "termsPut", cid, encodeIDs(blob[:0], ids)); err != nil {
			return err
		}
	}
	return nil
}

// finishRebuild writes what a rebuild counted: the frequent words (ids in
// order of frequency, the most frequent first) and every chunk's list.
func (t *termTracker) finishRebuild(ctx context.Context) error {
	t.close()
	type freqAcc struct {
		term string
		a    *termAcc
	}
	var terms []freqAcc
	for term, i := range t.acc {
		a := &t.accs[i]
		if int(a.df) >= t.threshold {
			terms = append(terms, freqAcc{term, a})
		}
	}
	slices.SortFunc(terms, func(x, y freqAcc) int {
		if x.a.df != y.a.df {
			return int(y.a.df - x.a.df)
		}
		return strings.Compare(x.term, y.term)
	})
	curs := make([]postingCursor, len(terms))
	for i, f := range terms {
		c := &curs[i]
		more := f.a.more
		if more == nil {
			more = &termMore{}
		}
		c.post = more.p.b
		if t.skip > 0 {
			// The first chunks, which the count did not keep, with FTS5's
			// weight of the word in each (bm25 divided by its idf).
			fidf := ftsIDF(int(t.st.chunks), int(f.a.df))
			rows, err := t.w.query(ctx, "ftsFirst", ftsPhrase(f.term), t.skip)
			if err != nil {
				return fmt.Errorf("frequent term %q: %w", f.term, err)
			}
			for rows.Next() {
				var cid int64
				var score float64
				if err := rows.Scan(&cid, &score); err != nil {
					rows.Close()
					return fmt.Errorf("frequent term %q: %w", f.term, err)
				}
				c.head = append(c.head, cid)
				more.top.offer(topEntry{id: cid, q: quantImpact(-score / fidf)})
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return fmt.Errorf("frequent term %q: %w", f.term, err)
			}
		}
		if _, err := t.w.exec(ctx, "freqPut", f.term, int64(i+1), f.a.df, encodeTop(more.top.sorted())); err != nil {
			return fmt.Errorf("write frequent term %q: %w", f.term, err)
		}
		c.next()
	}
	t.nextTerm = int64(len(terms) + 1)
	t.acc, t.accs = nil, nil
	// Invert the postings a block of chunks at a time.
	const block = 4096
	lists := make([][]int64, block)
	var buf []byte
	for lo := t.first; t.first > 0 && lo <= t.last; {
		for i := range lists {
			lists[i] = lists[i][:0]
		}
		for i := range curs {
			c := &curs[i]
			for c.cur >= lo && c.cur < lo+block {
				lists[c.cur-lo] = append(lists[c.cur-lo], int64(i+1))
				c.next()
			}
			if c.err != nil {
				return fmt.Errorf("frequent term %q: %w", terms[i].term, c.err)
			}
		}
		for i, l := range lists {
			if len(l) == 0 {
				continue
			}
			buf = encodeIDs(buf[:0], l)
			if _, err := t.w.exec(ctx, "termsPut", lo+int64(i), buf); err != nil {
				return fmt.Errorf("frequent terms of chunk %d: %w", lo+int64(i), err)
			}
			t.rebuiltLists++
		}
		// The next block starts at the next chunk a word is in: chunk ids
		// come in ranges (memory notes' are numbered apart), and the gap
		// between them holds nothing to invert.
		next := int64(-1)
		for i := range curs {
			if c := curs[i].cur; c >= 0 && (next < 0 || c < next) {
				next = c
			}
		}
		if next < 0 {
			break
		}
		lo = max(lo+block, next)
	}
	return nil
}

// postingCursor walks a frequent word's chunks in ascending order: the
// first ones from FTS5, then the rest as counted. cur is -1 at the end.
type postingCursor struct {
	head []int64
	post []byte
	last int64
	cur  int64
	err  error
}

func (c *postingCursor) next() {
	if len(c.head) > 0 {
		c.cur, c.head = c.head[0], c.head[1:]
		return
	}
	if len(c.post) == 0 {
		c.cur = -1
		return
	}
	d, k := binary.Uvarint(c.post)
	if k <= 0 {
		c.cur, c.err = -1, errors.New("corrupt postings")
		return
	}
	c.last += int64(d)
	c.cur, c.post = c.last, c.post[k:]
}

// build computes a frequent word's row from FTS5: every chunk holding it
// (returned in ascending order), with bm25() giving the word's weight
// (bm25 divided by FTS5's idf is the same tf part reme computes).
func (t *termTracker) build(ctx context.Context, term string) (*freqTerm, []int64, error) {
	rows, err := t.w.query(ctx, "ftsScore", ftsPhrase(term))
	if err != nil {
		return nil, nil, fmt.Errorf("frequent term %q: %w", term, err)
	}
	defer rows.Close()
	var ids []int64
	var scores []float64
	for rows.Next() {
		var id int64
		var score float64
		if err := rows.Scan(&id, &score); err != nil {
			return nil, nil, fmt.Errorf("frequent term %q: %w", term, err)
		}
		ids = append(ids, id)
		scores = append(scores, score)
	}
	if err := rows.Err(); err != nil {
		return nil, nil, fmt.Errorf("frequent term %q: %w", term, err)
	}
	ft := &freqTerm{df: len(ids)}
	fidf := ftsIDF(int(t.st.chunks), ft.df)
	h := &candHeap{}
	for i, id := range ids {
		h.offer(topEntry{id: id, q: quantImpact(-scores[i] / fidf)})
	}
	ft.top = h.sorted()
	return ft, ids, nil
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
