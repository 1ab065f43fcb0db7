package index

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"os"
	"sort"
	"strings"

	"github.com/reme-dev/reme/store"
)

// Hybrid search. With an embedding model configured, every chunk also has
// a vector (its note's name and description, then its text), stored
// quantised to one signed byte per dimension under the model's name and a
// hash of the text, so that a rebuild or a moved note reuses what was
// computed. A search then ranks chunks by cosine similarity as well and
// fuses both rankings by reciprocal rank (ReMe's weighted RRF), optionally
// reordered by a rerank model. No model, or a model that fails, leaves the
// keyword search as it is, with a warning for the failure.

// Embedder is what the index needs of an embedding model.
type Embedder interface {
	// Embed returns one vector per text, in order, all of one length;
	// query marks a search question rather than a note's text.
	Embed(ctx context.Context, texts []string, query bool) ([][]float32, error)
	// Model names the model (and its dimension): vectors of different
	// models are never compared.
	Model() string
}

// Reranker is what the index needs of a rerank model.
type Reranker interface {
	// Rerank returns the relevance (0 to 1) of each document to query, in
	// the order of docs.
	Rerank(ctx context.Context, query string, docs []string) ([]float64, error)
}

// Hybrid search settings.
const (
	// vectorWeight is ReMe's default weight of the vector ranking in RRF.
	vectorWeight = 0.7
	rrfK         = 60
	// maxEmbedBytes bounds the text sent for one chunk.
	maxEmbedBytes = 8000
	embedBatch    = 64
)

// embedText is what is embedded for a chunk: the note's name and
// description, then the chunk's text.
func embedText(name, desc, text string) string {
	s := name
	if desc != "" {
		s += "\n" + desc
	}
	if text != "" {
		s += "\n\n" + text
	}
	return store.TruncateBytes(s, maxEmbedBytes)
}

// textHash identifies an embedded text whatever chunk holds it.
func textHash(s string) []byte {
	sum := sha256.Sum256([]byte(s))
	return sum[:16]
}

// quantize stores a vector as signed bytes of its unit-length components.
func quantize(v []float32) []byte {
	var norm float64
	for _, x := range v {
		norm += float64(x) * float64(x)
	}
	norm = math.Sqrt(norm)
	if norm == 0 {
		norm = 1
	}
	out := make([]byte, len(v))
	for i, x := range v {
		q := math.Round(float64(x) / norm * 127)
		out[i] = byte(int8(max(-127, min(127, q))))
	}
	return out
}

// signBits packs the sign of each component of a quantised vector.
func signBits(q []byte) []byte {
	out := make([]byte, (len(q)+7)/8)
	for i, b := range q {
		if int8(b) > 0 {
			out[i/8] |= 1 << (i % 8)
		}
	}
	return out
}

// hamming counts the differing bits of two equally long sign vectors.
func hamming(a, b []byte) int {
	n := 0
	i := 0
	for ; i+8 <= len(a); i += 8 {
		n += bits.OnesCount64(binary.LittleEndian.Uint64(a[i:]) ^ binary.LittleEndian.Uint64(b[i:]))
	}
	for ; i < len(a); i++ {
		n += bits.OnesCount8(a[i] ^ b[i])
	}
	return n
}

// cosine of two quantised vectors.
func cosine(a, b []byte) float64 {
	var dot, na, nb int64
	n := len(a)
	i := 0
	for ; i+4 <= n; i += 4 {
		a0, a1, a2, a3 := int64(int8(a[i])), int64(int8(a[i+1])), int64(int8(a[i+2])), int64(int8(a[i+3]))
		b0, b1, b2, b3 := int64(int8(b[i])), int64(int8(b[i+1])), int64(int8(b[i+2])), int64(int8(b[i+3]))
		dot += a0*b0 + a1*b1 + a2*b2 + a3*b3
		na += a0*a0 + a1*a1 + a2*a2 + a3*a3
		nb += b0*b0 + b1*b1 + b2*b2 + b3*b3
	}
	for ; i < n; i++ {
		x, y := int64(int8(a[i])), int64(int8(b[i]))
		dot += x * y
		na += x * x
		nb += y * y
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return float64(dot) / math.Sqrt(float64(na)*float64(nb))
}

// EmbedProgress receives the chunks embedded so far and the number still
// waiting.
type EmbedProgress func(done, pending int)

// EmbedPending computes the vectors the index lacks, a batch at a time:
// texts are read from the files, the model is called with no lock or
// transaction held, and each batch is stored in a short write. Vectors no
// chunk uses any more are dropped at the end. It returns how many chunks
// got a vector.
func (ix *Index) EmbedPending(ctx context.Context, progress EmbedProgress) (int, error) {
	e := ix.opt.Embedder
	if e == nil {
		return 0, nil
	}
	model := e.Model()
	done := 0
	var failedAt int64 // chunks whose text could not be read are skipped for this run
	for {
		var pending int
		if err := ix.db.QueryRowContext(ctx, `SELECT count(*) FROM chunks c LEFT JOIN chunk_vectors v ON v.model = ? AND v.text_hash = c.text_hash
			WHERE v.text_hash IS NULL AND c.id > ?`, model, failedAt).Scan(&pending); err != nil {
			return done, fmt.Errorf("embeddings: %w", err)
		}
		if progress != nil {
			progress(done, pending)
		}
		if pending == 0 {
			break
		}
		batch, last, err := ix.pendingTexts(ctx, model, failedAt, embedBatch)
		if err != nil {
			return done, err
		}
		failedAt = last
		if len(batch) == 0 {
			continue
		}
		texts := make([]string, len(batch))
		for i, b := range batch {
			texts[i] = b.text
		}
		vecs, err := e.Embed(ctx, texts, false)
		if err != nil {
			return done, fmt.Errorf("embeddings (%s): %w", model, err)
		}
		if len(vecs) != len(batch) {
			return done, fmt.Errorf("embeddings (%s): %d vectors for %d texts", model, len(vecs), len(batch))
		}
		err = ix.write(ctx, func(tx *sql.Tx) error {
			for i, b := range batch {
				if len(vecs[i]) == 0 {
					return fmt.Errorf("embeddings (%s): an empty vector", model)
				}
				q := quantize(vecs[i])
				if _, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO chunk_vectors(model, text_hash, vec) VALUES (?, ?, ?)`,
					model, b.hash, q); err != nil {
					return fmt.Errorf("store embeddings: %w", err)
				}
				if _, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO chunk_vector_signs(model, text_hash, bits) VALUES (?, ?, ?)`,
					model, b.hash, signBits(q)); err != nil {
					return fmt.Errorf("store embeddings: %w", err)
				}
			}
			return nil
		})
		if err != nil {
			return done, err
		}
		done += len(batch)
	}
	err := ix.write(ctx, func(tx *sql.Tx) error {
		for _, table := range []string{"chunk_vectors", "chunk_vector_signs"} {
			if _, err := tx.ExecContext(ctx, `DELETE FROM `+table+` WHERE model != ? OR text_hash NOT IN (SELECT text_hash FROM chunks)`, model); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return done, fmt.Errorf("drop unused embeddings: %w", err)
	}
	return done, nil
}

type pendingText struct {
	hash []byte
	text string
}

// pendingTexts reads the texts of up to n chunks without a vector (ids
// above after), one per distinct text. It returns the last chunk id seen.
func (ix *Index) pendingTexts(ctx context.Context, model string, after int64, n int) ([]pendingText, int64, error) {
	rows, err := ix.db.QueryContext(ctx, `SELECT c.id, n.path, n.name, n.description, c.start_line, c.end_line, c.text_hash
		FROM chunks c JOIN notes n ON n.id = c.note_id
		LEFT JOIN chunk_vectors v ON v.model = ? AND v.text_hash = c.text_hash
		WHERE v.text_hash IS NULL AND c.id > ? ORDER BY c.id LIMIT ?`, model, after, n)
	if err != nil {
		return nil, after, fmt.Errorf("embeddings: %w", err)
	}
	type row struct {
		id               int64
		path, name, desc string
		start, end       int
		hash             []byte
	}
	var rs []row
	for rows.Next() {
		var r row
		if err := rows.Scan(&r.id, &r.path, &r.name, &r.desc, &r.start, &r.end, &r.hash); err != nil {
			rows.Close()
			return nil, after, fmt.Errorf("embeddings: %w", err)
		}
		rs = append(rs, r)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, after, fmt.Errorf("embeddings: %w", err)
	}
	last := after
	seen := map[string]bool{}
	var out []pendingText
	chunked := map[string][]Chunk{}
	for _, r := range rs {
		last = r.id
		if seen[string(r.hash)] {
			continue
		}
		cs, ok := chunked[r.path]
		if !ok {
			raw, err := os.ReadFile(ix.ws.Abs(r.path))
			if err != nil {
				continue // gone since the sync: nothing to embed
			}
			nt := store.ParseNote(r.path, raw)
			cs = ChunkMarkdown(nt.Body, nt.BodyLine, maxChunkBytes)
			chunked[r.path] = cs
		}
		text := ""
		for _, c := range cs {
			if c.StartLine == r.start && c.EndLine == r.end {
				text = c.Text
			}
		}
		t := embedText(noteTitle(r.path, r.name), r.desc, text)
		h := textHash(t)
		if string(h) != string(r.hash) {
			continue // the file changed since it was indexed; the next sync re-chunks it
		}
		seen[string(h)] = true
		out = append(out, pendingText{hash: h, text: t})
	}
	return out, last, nil
}

// vectorRank is a chunk of the vector ranking.
type vectorRank struct {
	id    int64
	score float64
}

// vectorSearch ranks the chunks (inside the filter) by cosine similarity
// to the query vector; the best m. A first pass reads only the signs of
// the vectors and keeps the closest by Hamming distance; their full
// vectors are then compared exactly.
func (s *searcher) vectorSearch(ctx context.Context, qv []byte, model string, filter noteFilter, m int) ([]vectorRank, error) {
	var allowed map[string]bool // texts of the chunks inside the filter
	var allowedID map[int64]bool
	if filter.active() {
		allowed, allowedID = map[string]bool{}, map[int64]bool{}
		rows, err := s.q.QueryContext(ctx, `SELECT c.id, c.text_hash FROM chunks c JOIN notes n ON n.id = c.note_id WHERE `+filter.sql(), filter.args...)
		if err != nil {
			return nil, fmt.Errorf("vector search: %w", err)
		}
		for rows.Next() {
			var id int64
			var h []byte
			if err := rows.Scan(&id, &h); err != nil {
				rows.Close()
				return nil, fmt.Errorf("vector search: %w", err)
			}
			allowed[string(h)], allowedID[id] = true, true
		}
		rows.Close()
	}
	qbits := signBits(qv)
	keep := max(4*m, 100)
	cands := &signHeap{max: keep}
	rows, err := s.q.QueryContext(ctx, `SELECT text_hash, bits FROM chunk_vector_signs WHERE model = ?`, model)
	if err != nil {
		return nil, fmt.Errorf("vector search: %w", err)
	}
	var h, b []byte
	for rows.Next() {
		if err := rows.Scan(&h, &b); err != nil {
			rows.Close()
			return nil, fmt.Errorf("vector search: %w", err)
		}
		if len(b) != len(qbits) || (allowed != nil && !allowed[string(h)]) {
			continue // another dimension (made before a configuration change), or filtered out
		}
		cands.offer(h, hamming(qbits, b))
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("vector search: %w", err)
	}
	if len(cands.e) == 0 {
		return nil, nil
	}
	args := []any{model}
	for _, c := range cands.e {
		args = append(args, []byte(c.hash))
	}
	score := map[string]float64{}
	rows, err = s.q.QueryContext(ctx, `SELECT text_hash, vec FROM chunk_vectors WHERE model = ? AND text_hash IN (`+placeholders(len(cands.e))+`)`, args...)
	if err != nil {
		return nil, fmt.Errorf("vector search: %w", err)
	}
	for rows.Next() {
		if err := rows.Scan(&h, &b); err != nil {
			rows.Close()
			return nil, fmt.Errorf("vector search: %w", err)
		}
		if len(b) == len(qv) {
			score[string(h)] = cosine(qv, b)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("vector search: %w", err)
	}
	// the chunks holding those texts
	args = args[1:]
	rows, err = s.q.QueryContext(ctx, `SELECT id, text_hash FROM chunks WHERE text_hash IN (`+placeholders(len(args))+`)`, args...)
	if err != nil {
		return nil, fmt.Errorf("vector search: %w", err)
	}
	var out []vectorRank
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id, &h); err != nil {
			rows.Close()
			return nil, fmt.Errorf("vector search: %w", err)
		}
		if sc, ok := score[string(h)]; ok && (allowedID == nil || allowedID[id]) {
			out = append(out, vectorRank{id, sc})
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("vector search: %w", err)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].score != out[j].score {
			return out[i].score > out[j].score
		}
		return out[i].id > out[j].id
	})
	if len(out) > m {
		out = out[:m]
	}
	return out, nil
}

// signHeap keeps the max texts closest by Hamming distance (the farthest
// kept on top, to be replaced).
type signHeap struct {
	max int
	e   []signCand
}

type signCand struct {
	hash string
	dist int
}

func (h *signHeap) worse(i, j int) bool {
	if h.e[i].dist != h.e[j].dist {
		return h.e[i].dist > h.e[j].dist
	}
	return h.e[i].hash > h.e[j].hash
}

func (h *signHeap) offer(hash []byte, dist int) {
	if len(h.e) < h.max {
		h.e = append(h.e, signCand{string(hash), dist})
		for i := len(h.e) - 1; i > 0; {
			p := (i - 1) / 2
			if !h.worse(i, p) {
				break
			}
			h.e[i], h.e[p] = h.e[p], h.e[i]
			i = p
		}
		return
	}
	if dist > h.e[0].dist || (dist == h.e[0].dist && string(hash) >= h.e[0].hash) {
		return
	}
	h.e[0] = signCand{string(hash), dist}
	for i := 0; ; {
		l, w := 2*i+1, i
		if l < len(h.e) && h.worse(l, w) {
			w = l
		}
		if r := l + 1; r < len(h.e) && h.worse(r, w) {
			w = r
		}
		if w == i {
			return
		}
		h.e[i], h.e[w] = h.e[w], h.e[i]
		i = w
	}
}

// errNoVectors says the index has no vector of the model yet.
var errNoVectors = errors.New("no note has an embedding yet (run reme reindex)")

// hybrid fuses the keyword windows with the vector ranking of chunks.
// Windows of a chunk share its vector rank; a chunk the keyword search did
// not find gives its top lines as a window.
func (s *searcher) hybrid(ctx context.Context, resp *SearchResponse, sc *scoring, filter noteFilter, keyword []Result) ([]Result, error) {
	e := s.ix.opt.Embedder
	qvs, err := e.Embed(ctx, []string{s.opt.Query}, true)
	if err == nil && (len(qvs) != 1 || len(qvs[0]) == 0) {
		err = fmt.Errorf("%d vectors for one query", len(qvs))
	}
	if err != nil {
		resp.Warnings = append(resp.Warnings, fmt.Sprintf("the embedding model failed (%v); these are keyword results only", err))
		return keyword, nil
	}
	ranks, err := s.vectorSearch(ctx, quantize(qvs[0]), e.Model(), filter, s.candidates())
	if err != nil {
		return nil, err
	}
	if len(ranks) == 0 {
		resp.Warnings = append(resp.Warnings, errNoVectors.Error())
		return keyword, nil
	}
	resp.Counts.Vector = len(ranks)
	// keyword order, as the keyword search would rank it
	keyword = append([]Result(nil), keyword...)
	sortResults(keyword)
	byChunk := map[int64][]int{}
	for i, r := range keyword {
		byChunk[r.chunkID] = append(byChunk[r.chunkID], i)
	}
	vrank := map[int64]int{}
	vscore := map[int64]float64{}
	var missing []int64
	for i, r := range ranks {
		vrank[r.id], vscore[r.id] = i+1, r.score
		if _, ok := byChunk[r.id]; !ok {
			missing = append(missing, r.id)
		}
	}
	// Chunks only the vectors found: their top lines.
	extra, err := s.topWindows(ctx, sc, missing)
	if err != nil {
		return nil, err
	}
	all := append(keyword, extra...)
	resp.Counts.Hybrid = len(keyword) > 0
	for i := range all {
		r := &all[i]
		var fused float64
		if i < len(keyword) {
			k := r.Score
			r.Scores.Keyword = &k
			fused += (1 - vectorWeight) / float64(rrfK+i+1)
		}
		if vr, ok := vrank[r.chunkID]; ok {
			v := roundScore(vscore[r.chunkID])
			r.Scores.Vector = &v
			fused += vectorWeight / float64(rrfK+vr)
		}
		if resp.Counts.Hybrid {
			r.Score = fused
		} else {
			r.Score = vscore[r.chunkID] // one branch: its own score, as ReMe
		}
		r.fused = true
	}
	return all, nil
}

// topWindows makes, for chunks without a keyword hit, a window of their
// first lines.
func (s *searcher) topWindows(ctx context.Context, sc *scoring, ids []int64) ([]Result, error) {
	var out []Result
	err := s.eachChunkText(ctx, ids, func(nt *noteText, c candidateChunk, lo, hi int) {
		if lo > hi {
			out = append(out, Result{Path: c.path, StartLine: c.start, EndLine: c.end, Name: c.name, Description: c.desc,
				Date: c.date, chunkID: c.id, noteID: c.noteID, rung: rungVector})
			return
		}
		// No line matched a word: show the start of the chunk's text (past
		// its heading, which the breadcrumb names), a few lines at least.
		from := lo
		for from < hi && (nt.heading[from] > 0 || strings.TrimSpace(nt.lines[from]) == "") {
			from++
		}
		to := min(hi, from+max(2*sc.context, 2))
		if sc.full {
			from, to = lo, hi
		}
		from, to = trimBlank(nt, from, to)
		out = append(out, s.result(nt, c, window{from: from, to: to, rung: rungVector}))
	})
	return out, err
}

// rerank reorders the best results with the rerank model; a failure is a
// warning and leaves the order as it was.
func (s *searcher) rerank(ctx context.Context, resp *SearchResponse, rs []Result) []Result {
	rr := s.ix.opt.Reranker
	if rr == nil || len(rs) == 0 {
		return rs
	}
	n := min(len(rs), max(3*s.opt.Limit, 20))
	docs := make([]string, n)
	for i, r := range rs[:n] {
		docs[i] = embedText(r.Name, r.Description, r.Text)
	}
	scores, err := rr.Rerank(ctx, s.opt.Query, docs)
	if err == nil && len(scores) != n {
		err = fmt.Errorf("%d scores for %d documents", len(scores), n)
	}
	if err != nil {
		resp.Warnings = append(resp.Warnings, fmt.Sprintf("the rerank model failed (%v); results are not reranked", err))
		return rs
	}
	head := append([]Result(nil), rs[:n]...)
	for i := range head {
		v := roundScore(scores[i])
		head[i].Scores.Rerank = &v
		head[i].Score = scores[i]
	}
	sort.SliceStable(head, func(i, j int) bool { return head[i].Score > head[j].Score })
	return append(head, rs[n:]...)
}
