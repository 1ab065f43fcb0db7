package llm

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	cohere "github.com/cohere-ai/cohere-go/v2"
	coherev2 "github.com/cohere-ai/cohere-go/v2/v2"
)

const (
	// DefaultCohereEmbedModel is Cohere's multilingual embedding model.
	DefaultCohereEmbedModel = "embed-v4.0"
	// DefaultCohereRerankModel is Cohere's multilingual rerank model.
	DefaultCohereRerankModel = "rerank-v3.5"
	// maxRerankDocs is Cohere's recommended ceiling for one rerank request.
	maxRerankDocs = 1000
)

// cohereEmbedDims are the output sizes of Cohere's embedding models; only
// embed-v4 and later let a request choose one.
var cohereEmbedDims = map[string]int{
	"embed-v4.0":                    1536,
	"embed-english-v3.0":            1024,
	"embed-multilingual-v3.0":       1024,
	"embed-english-light-v3.0":      384,
	"embed-multilingual-light-v3.0": 384,
}

// CohereEmbedder is an Embedder for Cohere's /v2/embed.
type CohereEmbedder struct {
	*transport
	*embedBase
	sdk *coherev2.Client
	// outputDim is sent only to models that take it.
	outputDim *int
}

var _ Embedder = (*CohereEmbedder)(nil)

// NewCohereEmbedder returns an Embedder for Cohere; the model defaults to
// embed-v4.0. It makes no request.
func NewCohereEmbedder(cfg EmbedConfig) (*CohereEmbedder, error) {
	t, sdk, err := newCohereTransport(cfg.Config)
	if err != nil {
		return nil, err
	}
	model := cfg.Model
	if model == "" {
		model = DefaultCohereEmbedModel
	}
	base, err := newEmbedBase(cfg, model, cohereEmbedDims[model])
	if err != nil {
		return nil, err
	}
	if base.batchSize > defaultEmbedBatch {
		return nil, fmt.Errorf("%w: Cohere embeds at most %d texts per request, not %d", ErrInvalidConfig, defaultEmbedBatch, base.batchSize)
	}
	e := &CohereEmbedder{transport: t, embedBase: base, sdk: sdk}
	if cfg.Dimensions > 0 {
		if !strings.HasPrefix(model, "embed-v") || strings.HasPrefix(model, "embed-v3") {
			return nil, fmt.Errorf("%w: %s has a fixed output dimension", ErrInvalidConfig, model)
		}
		d := cfg.Dimensions
		e.outputDim = &d
	}
	return e, nil
}

// String describes the embedder without its secrets.
func (e *CohereEmbedder) String() string { return "cohere embedder " + e.model + " at " + e.shown }

// Embed implements Embedder.
func (e *CohereEmbedder) Embed(ctx context.Context, texts []string, input InputType) ([][]float32, error) {
	inputType := cohere.EmbedInputTypeSearchDocument
	if input == InputQuery {
		inputType = cohere.EmbedInputTypeSearchQuery
	}
	return e.embed(ctx, "cohere embed", texts, input, func(ctx context.Context, batch []string) ([][]float64, error) {
		req := &cohere.V2EmbedRequest{
			Texts:           batch,
			Model:           e.model,
			InputType:       inputType,
			EmbeddingTypes:  []cohere.EmbeddingType{cohere.EmbeddingTypeFloat},
			OutputDimension: e.outputDim,
			// Chunks longer than the model reads lose their end, rather
			// than failing the batch.
			Truncate: cohere.V2EmbedRequestTruncateEnd.Ptr(),
		}
		var vecs [][]float64
		err := e.do(ctx, "cohere embed", e.model, func(ctx context.Context, doer *recordingDoer) error {
			resp, err := e.sdk.Embed(ctx, req, e.cohereCall(doer)...)
			if err != nil {
				return err
			}
			if resp == nil || resp.Embeddings == nil || resp.Embeddings.Float == nil {
				return &APIError{kind: ErrBadResponse, Message: "response has no float embeddings"}
			}
			vecs = resp.Embeddings.Float
			return nil
		})
		return vecs, err
	})
}

// CohereReranker is a Reranker for Cohere's /v2/rerank.
type CohereReranker struct {
	*transport
	sdk   *coherev2.Client
	model string
}

var _ Reranker = (*CohereReranker)(nil)

// NewCohereReranker returns a Reranker for Cohere; Config.Model defaults to
// rerank-v3.5. It makes no request.
func NewCohereReranker(cfg Config) (*CohereReranker, error) {
	t, sdk, err := newCohereTransport(cfg)
	if err != nil {
		return nil, err
	}
	model := cfg.Model
	if model == "" {
		model = DefaultCohereRerankModel
	}
	return &CohereReranker{transport: t, sdk: sdk, model: model}, nil
}

// String describes the reranker without its secrets.
func (r *CohereReranker) String() string { return "cohere reranker " + r.model + " at " + r.shown }

// Model implements Reranker.
func (r *CohereReranker) Model() string { return r.model }

// Rerank implements Reranker.
func (r *CohereReranker) Rerank(ctx context.Context, query string, docs []string, topN int) ([]Ranked, error) {
	const op = "cohere rerank"
	if strings.TrimSpace(query) == "" {
		return nil, fmt.Errorf("%s: %w: empty query", op, ErrInvalidRequest)
	}
	if len(docs) > maxRerankDocs {
		return nil, fmt.Errorf("%s: %w: %d documents, at most %d", op, ErrInvalidRequest, len(docs), maxRerankDocs)
	}
	if len(docs) == 0 {
		return nil, nil
	}
	if topN <= 0 || topN > len(docs) {
		topN = len(docs)
	}
	req := &cohere.V2RerankRequest{Model: r.model, Query: query, Documents: docs, TopN: &topN}
	var out []Ranked
	err := r.do(ctx, op, r.model, func(ctx context.Context, doer *recordingDoer) error {
		resp, err := r.sdk.Rerank(ctx, req, r.cohereCall(doer)...)
		if err != nil {
			return err
		}
		out, err = rankedFrom(resp, len(docs), topN)
		if err != nil {
			return &APIError{kind: ErrBadResponse, Message: err.Error()}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// rankedFrom checks a rerank answer: indexes in range, each at most once,
// no more than asked for; it is sorted best first whatever the server did.
func rankedFrom(resp *cohere.V2RerankResponse, ndocs, topN int) ([]Ranked, error) {
	if resp == nil || resp.Results == nil {
		return nil, errors.New("response has no results")
	}
	if len(resp.Results) > topN {
		return nil, fmt.Errorf("%d results, asked for %d", len(resp.Results), topN)
	}
	seen := make(map[int]bool, len(resp.Results))
	out := make([]Ranked, 0, len(resp.Results))
	for _, res := range resp.Results {
		if res == nil || res.Index < 0 || res.Index >= ndocs || seen[res.Index] {
			return nil, errors.New("result with a missing, repeated or out-of-range index")
		}
		seen[res.Index] = true
		out = append(out, Ranked{Index: res.Index, Score: res.RelevanceScore})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Score > out[j].Score })
	return out, nil
}
