package llmtest

import (
	"cmp"
	"context"
	"fmt"
	"hash/fnv"
	"math"
	"slices"
	"strings"
	"sync"
	"unicode"

	"github.com/reme-dev/reme/jobs/llm"
)

// stopWords are left out of fake vectors so that shared filler words do
// not make unrelated texts look alike.
var stopWords = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`a an and are as at be by did do does for from had has have he her his how i in is it its
		me my of on or our she so that the their them they this to was we were what when where which who why will with you your`) {
		stopWords[w] = true
	}
}

// Words splits text the way the fake embedder and reranker read it: runs
// of letters and digits, lower-cased, stop words dropped; every Han, kana
// or Hangul character is a word of its own. synonyms maps a word to the
// word it stands for.
func Words(text string, synonyms map[string]string) []string {
	var out []string
	var cur strings.Builder
	flush := func() {
		if cur.Len() == 0 {
			return
		}
		w := cur.String()
		cur.Reset()
		if s, ok := synonyms[w]; ok {
			w = s
		}
		if !stopWords[w] {
			out = append(out, w)
		}
	}
	for _, r := range strings.ToLower(text) {
		switch {
		case unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul):
			flush()
			cur.WriteRune(r)
			flush()
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			cur.WriteRune(r)
		default:
			flush()
		}
	}
	flush()
	return out
}

// HashVector is a deterministic embedding: a hashed bag of words. Each
// word adds ±1 at a position its FNV-1a hash picks, so texts that share
// words point the same way and texts that share none are close to
// orthogonal. A text without words counts as one word of its own. The
// vector is not normalised (clients normalise).
func HashVector(text string, dims int, synonyms map[string]string) []float64 {
	v := make([]float64, dims)
	words := Words(text, synonyms)
	if len(words) == 0 {
		words = []string{"\x00" + strings.ToLower(strings.TrimSpace(text))}
	}
	for _, w := range words {
		h := fnv.New64a()
		h.Write([]byte(w))
		sum := h.Sum64()
		sign := 1.0
		if sum>>63 == 1 {
			sign = -1
		}
		v[sum%uint64(dims)] += sign
	}
	return v
}

// HashEmbedder is a deterministic llm.Embedder for tests: HashVector,
// normalised. Vectors equal those of the fake servers' embed endpoints
// for the same dimension (with no Synonyms). It records every call.
type HashEmbedder struct {
	// Dims is the vector length; 0 means 256.
	Dims int
	// Name is what Model returns; empty means "hash-bow".
	Name string
	// Synonyms maps words onto others, to let a test give two different
	// words one meaning: {"postgres": "database"}.
	Synonyms map[string]string
	// Err, when set, is returned by every Embed: an outage.
	Err error

	mu    sync.Mutex
	calls []EmbedCall
}

// EmbedCall is one recorded Embed call.
type EmbedCall struct {
	Texts []string
	Input llm.InputType
}

var _ llm.Embedder = (*HashEmbedder)(nil)

// Embed implements llm.Embedder.
func (h *HashEmbedder) Embed(ctx context.Context, texts []string, input llm.InputType) ([][]float32, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	h.mu.Lock()
	h.calls = append(h.calls, EmbedCall{Texts: slices.Clone(texts), Input: input})
	h.mu.Unlock()
	if h.Err != nil {
		return nil, h.Err
	}
	if input != llm.InputDocument && input != llm.InputQuery {
		return nil, fmt.Errorf("hash embed: %w: unknown input type %q", llm.ErrInvalidRequest, input)
	}
	out := make([][]float32, len(texts))
	for i, t := range texts {
		if strings.TrimSpace(t) == "" {
			return nil, fmt.Errorf("hash embed: %w: text %d is empty", llm.ErrInvalidRequest, i)
		}
		out[i] = Normalize(HashVector(t, h.Dimensions(), h.Synonyms))
	}
	return out, nil
}

// Dimensions implements llm.Embedder.
func (h *HashEmbedder) Dimensions() int { return cmp.Or(h.Dims, fakeDefaultDims) }

// Model implements llm.Embedder.
func (h *HashEmbedder) Model() string { return cmp.Or(h.Name, "hash-bow") }

// Calls returns every Embed call so far.
func (h *HashEmbedder) Calls() []EmbedCall {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.calls)
}

// Normalize scales v to unit length, as the real embedders do.
func Normalize(v []float64) []float32 {
	var sum float64
	for _, x := range v {
		sum += x * x
	}
	out := make([]float32, len(v))
	if sum == 0 {
		return out
	}
	norm := math.Sqrt(sum)
	for i, x := range v {
		out[i] = float32(x / norm)
	}
	return out
}

// OverlapScore is the fraction of the query's distinct words that doc
// contains: the fake reranker's relevance, from 0 to 1.
func OverlapScore(query, doc string, synonyms map[string]string) float64 {
	q := Words(query, synonyms)
	if len(q) == 0 {
		return 0
	}
	have := map[string]bool{}
	for _, w := range Words(doc, synonyms) {
		have[w] = true
	}
	seen := map[string]bool{}
	hits := 0
	for _, w := range q {
		if seen[w] {
			continue
		}
		seen[w] = true
		if have[w] {
			hits++
		}
	}
	return float64(hits) / float64(len(seen))
}

// RankByOverlap orders docs by OverlapScore, best first, ties by position.
func RankByOverlap(query string, docs []string, synonyms map[string]string) []llm.Ranked {
	out := make([]llm.Ranked, len(docs))
	for i, d := range docs {
		out[i] = llm.Ranked{Index: i, Score: OverlapScore(query, d, synonyms)}
	}
	slices.SortStableFunc(out, func(a, b llm.Ranked) int { return cmp.Compare(b.Score, a.Score) })
	return out
}

// OverlapReranker is a deterministic llm.Reranker for tests: documents
// ranked by OverlapScore, as the fake Cohere server's /v2/rerank does.
type OverlapReranker struct {
	Synonyms map[string]string
	// Err, when set, is returned by every Rerank: an outage.
	Err error
}

var _ llm.Reranker = (*OverlapReranker)(nil)

// Rerank implements llm.Reranker.
func (r *OverlapReranker) Rerank(ctx context.Context, query string, docs []string, topN int) ([]llm.Ranked, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if r.Err != nil {
		return nil, r.Err
	}
	ranked := RankByOverlap(query, docs, r.Synonyms)
	if topN > 0 && topN < len(ranked) {
		ranked = ranked[:topN]
	}
	return ranked, nil
}

// Model implements llm.Reranker.
func (r *OverlapReranker) Model() string { return "overlap" }
