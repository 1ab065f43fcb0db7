package llm

import (
	"context"
	"fmt"
	"math"
	"strings"
	"sync"
)

// InputType says what texts are embedded for. Retrieval models place a
// document and a question about it close together only when each is
// embedded as what it is.
type InputType string

// The input types of Embed.
const (
	// InputDocument is text to be found: chunks of notes.
	InputDocument InputType = "document"
	// InputQuery is a search question.
	InputQuery InputType = "query"
)

// Embedder turns texts into vectors for semantic search. Implementations
// are safe for concurrent use.
type Embedder interface {
	// Embed returns one vector per text, in the order of texts, each of
	// unit length (L2-normalised, so that a dot product is the cosine
	// similarity) and all of one length. Texts are sent in batches within
	// the provider's limits, one batch at a time; any failure fails the
	// whole call and returns no vectors. An empty text or an unknown input
	// type is an ErrInvalidRequest, checked before any request. Errors are
	// the chat clients' (ErrTimeout, ErrRateLimited, ... after retries).
	Embed(ctx context.Context, texts []string, input InputType) ([][]float32, error)
	// Dimensions is the length of the vectors: the configured dimension,
	// else the model's known one, else 0 until a first Embed has told.
	Dimensions() int
	// Model names the embedding model. Vectors of different models (or of
	// one model at different dimensions) must never be compared.
	Model() string
}

// Ranked is one document of a Rerank answer.
type Ranked struct {
	// Index is the document's position in the docs given to Rerank.
	Index int `json:"index"`
	// Score is the relevance, from 0 (unrelated) to 1.
	Score float64 `json:"score"`
}

// Reranker orders documents by their relevance to a query, reading both
// together, which ranks better than comparing vectors. Implementations are
// safe for concurrent use.
type Reranker interface {
	// Rerank returns the topN most relevant documents (all of them when
	// topN <= 0 or exceeds len(docs)), most relevant first. No documents
	// means no request and no result.
	Rerank(ctx context.Context, query string, docs []string, topN int) ([]Ranked, error)
	// Model names the rerank model.
	Model() string
}

// EmbedConfig configures an Embedder: Config.Model is the embedding model.
type EmbedConfig struct {
	Config
	// Dimensions asks for vectors of this length, where the model lets one
	// choose (Cohere embed-v4.0: 256, 512, 1024 or 1536; OpenAI
	// text-embedding-3-*: up to their size). 0 keeps the model's own.
	Dimensions int
	// BatchSize is the most texts sent in one request; 0 means 96, the
	// Cohere limit, which OpenAI-compatible servers accept as well.
	BatchSize int
}

const defaultEmbedBatch = 96

// embedBase holds what the embedders share: input checks, batching,
// normalisation and the dimension they have seen.
type embedBase struct {
	model     string
	batchSize int

	mu   sync.Mutex
	dims int
}

func newEmbedBase(cfg EmbedConfig, model string, knownDims int) (*embedBase, error) {
	if cfg.Dimensions < 0 || cfg.BatchSize < 0 {
		return nil, fmt.Errorf("%w: negative dimensions or batch size", ErrInvalidConfig)
	}
	b := &embedBase{model: model, batchSize: cfg.BatchSize, dims: knownDims}
	if cfg.Dimensions > 0 {
		b.dims = cfg.Dimensions
	}
	if b.batchSize == 0 {
		b.batchSize = defaultEmbedBatch
	}
	return b, nil
}

func (b *embedBase) Model() string { return b.model }

func (b *embedBase) Dimensions() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.dims
}

// embed checks the input, then calls batch for each slice of texts and
// checks and normalises what comes back.
func (b *embedBase) embed(ctx context.Context, op string, texts []string, input InputType,
	batch func(ctx context.Context, texts []string) ([][]float64, error)) ([][]float32, error) {
	if input != InputDocument && input != InputQuery {
		return nil, fmt.Errorf("%s: %w: unknown input type %q", op, ErrInvalidRequest, input)
	}
	for i, t := range texts {
		if strings.TrimSpace(t) == "" {
			return nil, fmt.Errorf("%s: %w: text %d is empty", op, ErrInvalidRequest, i)
		}
	}
	out := make([][]float32, 0, len(texts))
	for start := 0; start < len(texts); start += b.batchSize {
		part := texts[start:min(start+b.batchSize, len(texts))]
		vecs, err := batch(ctx, part)
		if err != nil {
			return nil, err
		}
		if len(vecs) != len(part) {
			return nil, fmt.Errorf("%s: %w: %d vectors for %d texts", op, ErrBadResponse, len(vecs), len(part))
		}
		for i, v := range vecs {
			nv, err := b.normalize(v)
			if err != nil {
				return nil, fmt.Errorf("%s: %w: text %d: %v", op, ErrBadResponse, start+i, err)
			}
			out = append(out, nv)
		}
	}
	return out, nil
}

// normalize checks a vector's length against the dimension seen so far
// (learning it from the first vector) and scales it to unit length.
func (b *embedBase) normalize(v []float64) ([]float32, error) {
	if len(v) == 0 {
		return nil, fmt.Errorf("empty vector")
	}
	b.mu.Lock()
	if b.dims == 0 {
		b.dims = len(v)
	}
	dims := b.dims
	b.mu.Unlock()
	if len(v) != dims {
		return nil, fmt.Errorf("vector of %d dimensions, want %d", len(v), dims)
	}
	var sum float64
	for _, x := range v {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, fmt.Errorf("vector holds %v", x)
		}
		sum += x * x
	}
	if sum == 0 {
		return nil, fmt.Errorf("zero vector")
	}
	out := make([]float32, len(v))
	norm := math.Sqrt(sum)
	for i, x := range v {
		out[i] = float32(x / norm)
	}
	return out, nil
}
