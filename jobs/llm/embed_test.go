package llm_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/reme-dev/reme/jobs/llm"
	"github.com/reme-dev/reme/jobs/llm/llmtest"
)

func newCohereEmbedder(t *testing.T, url string, mod func(*llm.EmbedConfig)) *llm.CohereEmbedder {
	t.Helper()
	cfg := llm.EmbedConfig{Config: llm.Config{APIKey: llmtest.FakeAPIKey, BaseURL: url, Sleep: (&sleepRecorder{}).sleep, Timeout: 5 * time.Second}}
	if mod != nil {
		mod(&cfg)
	}
	e, err := llm.NewCohereEmbedder(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func newOpenAIEmbedder(t *testing.T, url string, mod func(*llm.EmbedConfig)) *llm.OpenAIEmbedder {
	t.Helper()
	cfg := llm.EmbedConfig{Config: llm.Config{APIKey: llmtest.FakeOpenAIKey, BaseURL: url, Model: "nomic-embed-text", Sleep: (&sleepRecorder{}).sleep, Timeout: 5 * time.Second}}
	if mod != nil {
		mod(&cfg)
	}
	e, err := llm.NewOpenAIEmbedder(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// checkVectors compares vectors with what the hashed bag of words gives.
func checkVectors(t *testing.T, texts []string, got [][]float32, dims int) {
	t.Helper()
	if len(got) != len(texts) {
		t.Fatalf("%d vectors for %d texts", len(got), len(texts))
	}
	for i, v := range got {
		want := llmtest.Normalize(llmtest.HashVector(texts[i], dims, nil))
		if len(v) != dims {
			t.Fatalf("vector %d has %d dimensions, want %d", i, len(v), dims)
		}
		var norm float64
		for j := range v {
			norm += float64(v[j]) * float64(v[j])
			if math.Abs(float64(v[j]-want[j])) > 1e-6 {
				t.Fatalf("vector %d differs at %d: %v, want %v", i, j, v[j], want[j])
			}
		}
		if math.Abs(norm-1) > 1e-5 {
			t.Errorf("vector %d has length %v, want 1", i, math.Sqrt(norm))
		}
	}
}

func TestCohereEmbed(t *testing.T) {
	srv := llmtest.NewFakeCohereServer(t)
	e := newCohereEmbedder(t, srv.URL(), nil)
	if e.Dimensions() != 1536 || e.Model() != "embed-v4.0" {
		t.Errorf("Dimensions, Model = %d, %s; want 1536, embed-v4.0", e.Dimensions(), e.Model())
	}
	texts := []string{"We went with Postgres 16 for the ledger.", "登录流程改为 OIDC"}
	got, err := e.Embed(t.Context(), texts, llm.InputDocument)
	if err != nil {
		t.Fatal(err)
	}
	checkVectors(t, texts, got, 1536)
	if _, err := e.Embed(t.Context(), []string{"which database did we pick?"}, llm.InputQuery); err != nil {
		t.Fatal(err)
	}
	reqs := srv.EmbedRequests()
	checkGolden(t, "cohere_embed_documents", reqs[0])
	if !strings.Contains(string(reqs[1]), `"input_type":"search_query"`) {
		t.Errorf("query request = %s", reqs[1])
	}
	if len(srv.Requests()) != 0 {
		t.Error("embeddings went to the chat endpoint")
	}
}

func TestCohereEmbedBatchesAndDimensions(t *testing.T) {
	srv := llmtest.NewFakeCohereServer(t)
	e := newCohereEmbedder(t, srv.URL(), func(cfg *llm.EmbedConfig) { cfg.Dimensions = 256 })
	texts := make([]string, 200)
	for i := range texts {
		texts[i] = fmt.Sprintf("chunk number %d about topic %d", i, i%7)
	}
	got, err := e.Embed(t.Context(), texts, llm.InputDocument)
	if err != nil {
		t.Fatal(err)
	}
	checkVectors(t, texts, got, 256)
	var sizes []int
	for _, r := range srv.EmbedRequests() {
		var req struct {
			Texts           []string `json:"texts"`
			OutputDimension int      `json:"output_dimension"`
		}
		if err := json.Unmarshal(r, &req); err != nil || req.OutputDimension != 256 {
			t.Fatalf("request %s: %v", r, err)
		}
		sizes = append(sizes, len(req.Texts))
	}
	if diff := cmp.Diff([]int{96, 96, 8}, sizes); diff != "" {
		t.Errorf("batch sizes (-want +got):\n%s", diff)
	}
}

func TestEmbedConfigErrors(t *testing.T) {
	cohereCfg := func(model string, dims, batch int) llm.EmbedConfig {
		return llm.EmbedConfig{Config: llm.Config{APIKey: "k", Model: model}, Dimensions: dims, BatchSize: batch}
	}
	for _, cfg := range []llm.EmbedConfig{
		cohereCfg("embed-english-v3.0", 512, 0),
		cohereCfg("", 0, 97),
		cohereCfg("", -1, 0),
	} {
		if _, err := llm.NewCohereEmbedder(cfg); !errors.Is(err, llm.ErrInvalidConfig) {
			t.Errorf("NewCohereEmbedder(%v) error = %v, want ErrInvalidConfig", cfg, err)
		}
	}
	if _, err := llm.NewCohereEmbedder(llm.EmbedConfig{}); !errors.Is(err, llm.ErrNoAPIKey) {
		t.Errorf("no key: %v", err)
	}
	if _, err := llm.NewOpenAIEmbedder(llm.EmbedConfig{Config: llm.Config{BaseURL: "http://127.0.0.1:11434/v1"}}); !errors.Is(err, llm.ErrInvalidConfig) {
		t.Errorf("no model for a local server: %v", err)
	}
	e, err := llm.NewOpenAIEmbedder(llm.EmbedConfig{Config: llm.Config{APIKey: "k"}})
	if err != nil || e.Model() != llm.DefaultOpenAIEmbedModel || e.Dimensions() != 1536 {
		t.Errorf("OpenAI defaults: %v, %v", e, err)
	}
}

func TestEmbedInvalidInput(t *testing.T) {
	srv := llmtest.NewFakeCohereServer(t)
	e := newCohereEmbedder(t, srv.URL(), nil)
	for _, tt := range []struct {
		texts []string
		input llm.InputType
		want  string
	}{
		{[]string{"a", " "}, llm.InputDocument, "text 1 is empty"},
		{[]string{"a"}, "classification", `unknown input type "classification"`},
	} {
		_, err := e.Embed(t.Context(), tt.texts, tt.input)
		if !errors.Is(err, llm.ErrInvalidRequest) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Embed(%q, %s) error = %v, want %q", tt.texts, tt.input, err, tt.want)
		}
	}
	if got, err := e.Embed(t.Context(), nil, llm.InputQuery); err != nil || len(got) != 0 {
		t.Errorf("no texts = %v, %v", got, err)
	}
	if n := len(srv.EmbedRequests()); n != 0 {
		t.Errorf("%d requests for invalid input", n)
	}
}

func TestOpenAIEmbed(t *testing.T) {
	srv := llmtest.NewFakeOpenAIServer(t)
	e := newOpenAIEmbedder(t, srv.URL(), nil)
	if e.Dimensions() != 0 {
		t.Errorf("Dimensions before any call = %d, want 0 (unknown model)", e.Dimensions())
	}
	texts := []string{"We went with Postgres 16 for the ledger.", "Refresh tokens rotate on every use."}
	got, err := e.Embed(t.Context(), texts, llm.InputDocument)
	if err != nil {
		t.Fatal(err)
	}
	checkVectors(t, texts, got, 256)
	if e.Dimensions() != 256 {
		t.Errorf("Dimensions after a call = %d, want 256", e.Dimensions())
	}
	checkGolden(t, "openai_embed", srv.EmbedRequests()[0])

	dims := newOpenAIEmbedder(t, srv.URL(), func(cfg *llm.EmbedConfig) { cfg.Model, cfg.Dimensions = "text-embedding-3-small", 64 })
	got, err = dims.Embed(t.Context(), texts[:1], llm.InputQuery)
	if err != nil {
		t.Fatal(err)
	}
	checkVectors(t, texts[:1], got, 64)
	if last := srv.EmbedRequests()[1]; !strings.Contains(string(last), `"dimensions":64`) {
		t.Errorf("request = %s", last)
	}
}

// TestOpenAIEmbedAnswers covers servers that answer out of order, with the
// wrong count, a changing dimension, or after a rate limit.
func TestOpenAIEmbedAnswers(t *testing.T) {
	vec := func(n int, x float64) []float64 {
		v := make([]float64, n)
		v[0] = x
		v[n-1] = 1
		return v
	}
	answer := func(items ...map[string]any) string {
		b, _ := json.Marshal(map[string]any{"object": "list", "data": items, "model": "m", "usage": map[string]int{"prompt_tokens": 1, "total_tokens": 1}})
		return string(b)
	}
	item := func(i int, v []float64) map[string]any {
		return map[string]any{"object": "embedding", "index": i, "embedding": v}
	}
	tests := []struct {
		name    string
		bodies  []string // one per request; "429" answers Too Many Requests
		texts   []string
		batch   int
		want    [][]float64
		wantErr error
	}{
		{"out of order", []string{answer(item(1, vec(4, 2)), item(0, vec(4, 1)))}, []string{"a", "b"}, 0, [][]float64{vec(4, 1), vec(4, 2)}, nil},
		{"rate limited once", []string{"429", answer(item(0, vec(4, 1)))}, []string{"a"}, 0, [][]float64{vec(4, 1)}, nil},
		{"too few", []string{answer(item(0, vec(4, 1)))}, []string{"a", "b"}, 0, nil, llm.ErrBadResponse},
		{"repeated index", []string{answer(item(0, vec(4, 1)), item(0, vec(4, 1)))}, []string{"a", "b"}, 0, nil, llm.ErrBadResponse},
		{"dimension changes between batches", []string{answer(item(0, vec(4, 1))), answer(item(0, vec(8, 1)))}, []string{"a", "b"}, 1, nil, llm.ErrBadResponse},
		{"base64 float32s", []string{answer(map[string]any{"object": "embedding", "index": 0, "embedding": "AACAPwAAAEA="})}, []string{"a"}, 0, [][]float64{{1, 2}}, nil},
		{"zero vector", []string{answer(item(0, make([]float64, 4)))}, []string{"a"}, 0, nil, llm.ErrBadResponse},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var n atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				i := int(n.Add(1)) - 1
				if i >= len(tt.bodies) {
					t.Errorf("unexpected request %d", i+1)
					w.WriteHeader(500)
					return
				}
				if tt.bodies[i] == "429" {
					w.Header().Set("Retry-After", "2")
					w.WriteHeader(http.StatusTooManyRequests)
					return
				}
				w.Header().Set("Content-Type", "application/json")
				fmt.Fprint(w, tt.bodies[i])
			}))
			defer srv.Close()
			e := newOpenAIEmbedder(t, srv.URL, func(cfg *llm.EmbedConfig) { cfg.BatchSize = tt.batch })
			got, err := e.Embed(t.Context(), tt.texts, llm.InputDocument)
			if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil) != (err == nil) {
				t.Fatalf("error = %v, want %v", err, tt.wantErr)
			}
			if err != nil {
				if got != nil {
					t.Errorf("vectors returned with an error: %v", got)
				}
				return
			}
			for i, w := range tt.want {
				if diff := cmp.Diff(llmtest.Normalize(w), got[i]); diff != "" {
					t.Errorf("vector %d (-want +got):\n%s", i, diff)
				}
			}
		})
	}
}

func TestCohereRerank(t *testing.T) {
	srv := llmtest.NewFakeCohereServer(t)
	r, err := llm.NewCohereReranker(llm.Config{APIKey: llmtest.FakeAPIKey, BaseURL: srv.URL()})
	if err != nil {
		t.Fatal(err)
	}
	docs := []string{"Lunch menu for Friday.", "We picked Postgres as the database.", "The database backup runs nightly."}
	got, err := r.Rerank(t.Context(), "which database did we pick", docs, 2)
	if err != nil {
		t.Fatal(err)
	}
	want := llmtest.RankByOverlap("which database did we pick", docs, nil)[:2]
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ranking (-want +got):\n%s", diff)
	}
	if got[0].Index != 1 {
		t.Errorf("best = %+v, want document 1", got[0])
	}
	checkGolden(t, "cohere_rerank", srv.EmbedRequests()[0])
	if got, err := r.Rerank(t.Context(), "q", nil, 3); err != nil || got != nil {
		t.Errorf("no documents = %v, %v", got, err)
	}
	if _, err := r.Rerank(t.Context(), "q", make([]string, 1001), 3); !errors.Is(err, llm.ErrInvalidRequest) {
		t.Errorf("1001 documents: %v", err)
	}
	if n := len(srv.EmbedRequests()); n != 1 {
		t.Errorf("%d requests, want 1", n)
	}
}

func TestCohereRerankBadAnswers(t *testing.T) {
	for name, body := range map[string]string{
		"index out of range": `{"results":[{"index":5,"relevance_score":0.9}]}`,
		"repeated index":     `{"results":[{"index":0,"relevance_score":0.9},{"index":0,"relevance_score":0.1}]}`,
		"more than asked":    `{"results":[{"index":0,"relevance_score":0.9},{"index":1,"relevance_score":0.5},{"index":0,"relevance_score":0.1}]}`,
		"no results":         `{"id":"x"}`,
	} {
		t.Run(name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				fmt.Fprint(w, body)
			}))
			defer srv.Close()
			r, _ := llm.NewCohereReranker(llm.Config{APIKey: "k", BaseURL: srv.URL})
			if _, err := r.Rerank(t.Context(), "q", []string{"a", "b"}, 2); !errors.Is(err, llm.ErrBadResponse) {
				t.Errorf("error = %v, want ErrBadResponse", err)
			}
		})
	}
}

// TestEmbedTimeout: embeddings time out and retry like chat.
func TestEmbedTimeout(t *testing.T) {
	done := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-done:
		}
	}))
	defer srv.Close()
	defer close(done)
	rec := &sleepRecorder{}
	e := newCohereEmbedder(t, srv.URL, func(cfg *llm.EmbedConfig) { cfg.Timeout, cfg.MaxRetries, cfg.Sleep = 30*time.Millisecond, 1, rec.sleep })
	_, err := e.Embed(t.Context(), []string{"a"}, llm.InputDocument)
	if !errors.Is(err, llm.ErrTimeout) || !strings.Contains(err.Error(), "after 2 attempts") {
		t.Errorf("error = %v, want ErrTimeout after 2 attempts", err)
	}
	if len(rec.got()) != 1 {
		t.Errorf("slept %v, want once", rec.got())
	}
}
