package index

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"sort"
	"strings"
	"sync"
	"testing"
)

// fakeEmbedder is a hashed bag of words: texts that share words point the
// same way. synonyms gives different words one meaning, as a real model
// would ("postgres" is a database).
type fakeEmbedder struct {
	model    string
	synonyms map[string]string
	err      error
	mu       sync.Mutex
	texts    int // document texts embedded so far
	queries  int
}

func (f *fakeEmbedder) Model() string { return f.model }

func (f *fakeEmbedder) Embed(_ context.Context, texts []string, query bool) ([][]float32, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != nil {
		return nil, f.err
	}
	if query {
		f.queries++
	} else {
		f.texts += len(texts)
	}
	out := make([][]float32, len(texts))
	for i, t := range texts {
		v := make([]float32, 64)
		for _, w := range tokenStrings(t) {
			if s, ok := f.synonyms[w]; ok {
				w = s
			}
			h := fnv.New32a()
			h.Write([]byte(w))
			v[h.Sum32()%64]++
		}
		out[i] = v
	}
	return out, nil
}

type fakeReranker struct {
	scores func(docs []string) []float64
	err    error
}

func (f fakeReranker) Rerank(_ context.Context, _ string, docs []string) ([]float64, error) {
	if f.err != nil {
		return nil, f.err
	}
	return f.scores(docs), nil
}

func TestQuantizedCosine(t *testing.T) {
	a := []float32{1, 2, 3, -4}
	b := []float32{2, 4, 6, -8}
	c := []float32{-1, -2, -3, 4}
	if got := cosine(quantize(a), quantize(b)); math.Abs(got-1) > 0.01 {
		t.Errorf("parallel: %v", got)
	}
	if got := cosine(quantize(a), quantize(c)); math.Abs(got+1) > 0.01 {
		t.Errorf("opposite: %v", got)
	}
	if got := cosine(quantize([]float32{1, 0}), quantize([]float32{0, 1})); math.Abs(got) > 0.01 {
		t.Errorf("orthogonal: %v", got)
	}
	if got := cosine(quantize([]float32{0, 0}), quantize([]float32{1, 1})); got != 0 {
		t.Errorf("zero: %v", got)
	}
}

func TestSignBitsHamming(t *testing.T) {
	a := quantize([]float32{1, -1, 1, -1, 1, -1, 1, -1, 1, 1})
	b := quantize([]float32{1, -1, 1, -1, 1, -1, 1, -1, -1, -1})
	if got := signBits(a); len(got) != 2 || got[0] != 0b01010101 || got[1] != 0b11 {
		t.Errorf("bits %08b", got)
	}
	if d := hamming(signBits(a), signBits(b)); d != 2 {
		t.Errorf("hamming %d", d)
	}
	long := make([]float32, 1536)
	for i := range long {
		long[i] = float32(i%7) - 3
	}
	if d := hamming(signBits(quantize(long)), signBits(quantize(long))); d != 0 {
		t.Errorf("self distance %d", d)
	}
}

func hybridFiles() map[string]string {
	return map[string]string{
		"daily/2026-06-20/db.md":     card("storage-choice", "what we store data in", "## Outcome\nAfter the bake-off we went with Postgres.\nBackups run nightly.\n"),
		"daily/2026-06-21/cache.md":  card("cache", "speed", "## Notes\nRedis keeps sessions for an hour.\n"),
		"daily/2026-06-22/login.md":  card("login", "auth", "## Decision\nWe pick OIDC for login.\n"),
		"daily/2026-06-23/other.md":  card("garden", "plants", "Tomatoes and basil.\n"),
		"daily/2026-06-23/header.md": "---\nname: sql-notes\ndescription: The database schema lives in migrations.\n---\n",
	}
}

func TestHybridSearch(t *testing.T) {
	ws := newWorkspace(t, hybridFiles())
	emb := &fakeEmbedder{model: "fake-64", synonyms: map[string]string{"postgr": "databas", "went": "pick", "choos": "pick"}}
	ix := openIndex(t, ws, Options{Embedder: emb})
	mustSync(t, ix)

	// Before any embedding pass: keyword results and a warning.
	res := searchResp(t, ix, SearchOptions{Query: "which database did we pick?", Context: 0})
	if len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], "no note has an embedding") {
		t.Errorf("warnings %v", res.Warnings)
	}
	if res.Counts.Hybrid {
		t.Error("hybrid without vectors")
	}

	n, err := ix.EmbedPending(ctx, nil)
	if err != nil || n != 5 || emb.texts != 5 {
		t.Fatalf("embedded %d (%d texts): %v", n, emb.texts, err)
	}
	// The words of the question are not in the note; its meaning is.
	res = searchResp(t, ix, SearchOptions{Query: "which database did we pick?", Context: 0})
	if len(res.Warnings) != 0 || !res.Counts.Hybrid || res.Counts.Vector == 0 {
		t.Fatalf("response %+v", res)
	}
	var db *Result
	for i := range res.Results {
		if res.Results[i].Path == "daily/2026-06-20/db.md" {
			db = &res.Results[i]
		}
	}
	if db == nil || db.Scores.Vector == nil || db.Match != "vector" || db.Text != "After the bake-off we went with Postgres.\nBackups run nightly." {
		t.Fatalf("the Postgres note: %+v in %v", db, paths(res.Results))
	}
	for _, r := range res.Results {
		if r.Scores.Vector != nil && *r.Scores.Vector > *db.Scores.Vector {
			t.Errorf("%s is closer in meaning than the Postgres note", r.Path)
		}
	}
	// A result both branches found carries both scores; the score is the fusion.
	for _, r := range res.Results {
		if r.Scores.Keyword != nil && r.Scores.Vector != nil {
			if r.Score >= 1 || r.Score <= 0 || r.Scores.Score != r.Score {
				t.Errorf("fused score %+v", r.Scores)
			}
		}
	}
	// --min-score compares with the fused score.
	if got := searchResp(t, ix, SearchOptions{Query: "which database did we pick?", MinScore: 0.5}); len(got.Results) != 0 {
		t.Errorf("min score kept %v", paths(got.Results))
	}

	// Nothing new: no call. One note edited: only it.
	if n, _ := ix.EmbedPending(ctx, nil); n != 0 || emb.texts != 5 {
		t.Errorf("second pass embedded %d", n)
	}
	writeFile(t, ws, "daily/2026-06-21/cache.md", card("cache", "speed", "## Notes\nRedis keeps sessions for a day.\n"))
	mustSync(t, ix)
	if n, _ := ix.EmbedPending(ctx, nil); n != 1 || emb.texts != 6 {
		t.Errorf("after an edit embedded %d (%d texts)", n, emb.texts)
	}
	// A rebuild keeps the vectors; a moved note keeps its own.
	if _, err := ix.Rebuild(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if n, _ := ix.EmbedPending(ctx, nil); n != 0 || emb.texts != 6 {
		t.Errorf("after a rebuild embedded %d", n)
	}
	var stored int
	ix.db.QueryRow(`SELECT count(*) FROM chunk_vectors`).Scan(&stored)
	if stored != 5 {
		t.Errorf("%d vectors stored, want 5 (the old text's dropped)", stored)
	}
	// Another model: everything again, the old vectors dropped.
	ix.Close()
	emb2 := &fakeEmbedder{model: "fake-64-v2"}
	ix2 := openIndex(t, ws, Options{Embedder: emb2})
	if n, _ := ix2.EmbedPending(ctx, nil); n != 5 {
		t.Errorf("new model embedded %d", n)
	}
	ix2.db.QueryRow(`SELECT count(*) FROM chunk_vectors`).Scan(&stored)
	if stored != 5 {
		t.Errorf("%d vectors stored after the model change", stored)
	}
}

// A model outage never fails a search: keyword results and a warning.
func TestHybridOutage(t *testing.T) {
	ws := newWorkspace(t, hybridFiles())
	emb := &fakeEmbedder{model: "fake-64"}
	ix := openIndex(t, ws, Options{Embedder: emb, Reranker: fakeReranker{err: errors.New("503 service unavailable")}})
	mustSync(t, ix)
	if _, err := ix.EmbedPending(ctx, nil); err != nil {
		t.Fatal(err)
	}
	emb.err = errors.New("connection refused")
	res := searchResp(t, ix, SearchOptions{Query: "Redis sessions"})
	if len(res.Results) == 0 || res.Results[0].Path != "daily/2026-06-21/cache.md" {
		t.Fatalf("results %v", paths(res.Results))
	}
	if len(res.Warnings) != 2 || !strings.Contains(res.Warnings[0], "connection refused") || !strings.Contains(res.Warnings[1], "503") {
		t.Errorf("warnings %q", res.Warnings)
	}
	if res.Results[0].Scores.Keyword == nil || res.Results[0].Scores.Vector != nil {
		t.Errorf("scores %+v", res.Results[0].Scores)
	}
	writeFile(t, ws, "daily/2026-06-21/cache.md", card("cache", "speed", "## Notes\nRedis keeps sessions for a day.\n"))
	mustSync(t, ix)
	if _, err := ix.EmbedPending(ctx, nil); err == nil || !strings.Contains(err.Error(), "connection refused") {
		t.Errorf("embedding during an outage: %v", err)
	}
	if res := searchResp(t, ix, SearchOptions{Query: "Redis sessions day"}); len(res.Results) == 0 || len(res.Warnings) == 0 {
		t.Errorf("search during an outage: %+v", res)
	}
}

func TestRerank(t *testing.T) {
	ws := newWorkspace(t, hybridFiles())
	emb := &fakeEmbedder{model: "fake-64"}
	// a reranker that prefers texts about gardens
	rr := fakeReranker{scores: func(docs []string) []float64 {
		out := make([]float64, len(docs))
		for i, d := range docs {
			if strings.Contains(d, "Tomatoes") {
				out[i] = 0.9
			} else {
				out[i] = 0.1
			}
		}
		return out
	}}
	ix := openIndex(t, ws, Options{Embedder: emb, Reranker: rr})
	mustSync(t, ix)
	if _, err := ix.EmbedPending(ctx, nil); err != nil {
		t.Fatal(err)
	}
	res := searchResp(t, ix, SearchOptions{Query: "garden notes about login", Context: 0})
	if len(res.Results) < 2 || res.Results[0].Path != "daily/2026-06-23/other.md" || res.Results[0].Scores.Rerank == nil || res.Results[0].Score != 0.9 {
		t.Errorf("reranked %+v", res.Results)
	}
}

func TestSignHeapKeepsTheClosest(t *testing.T) {
	h := &signHeap{max: 10}
	var all []signCand
	for i := 0; i < 500; i++ {
		d := (i * 7919) % 97
		hash := []byte{byte(i), byte(i >> 8)}
		h.offer(hash, d)
		all = append(all, signCand{string(hash), d})
	}
	sort.Slice(all, func(i, j int) bool {
		if all[i].dist != all[j].dist {
			return all[i].dist < all[j].dist
		}
		return all[i].hash < all[j].hash
	})
	got := append([]signCand(nil), h.e...)
	sort.Slice(got, func(i, j int) bool {
		if got[i].dist != got[j].dist {
			return got[i].dist < got[j].dist
		}
		return got[i].hash < got[j].hash
	})
	if fmt.Sprint(got) != fmt.Sprint(all[:10]) {
		t.Errorf("kept %v, want %v", got, all[:10])
	}
}
