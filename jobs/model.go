package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"sort"
	"strings"
	"time"

	"github.com/reme-dev/reme/jobs/llm"
	"github.com/reme-dev/reme/store"
)

// model is the client every job calls the model through. Before anything
// leaves the machine, every text of the request is masked
// (store.RedactSecrets): the system prompt, every message's text parts
// (conversations, tool results, image sources), the tool calls echoed back
// and their plans; image bytes are not text and go as they are. Each call
// is logged at Info level with its duration (so that -v shows where the
// time goes), and after a call fails in a way that a retry within the same
// run cannot fix (the key was refused, the server kept failing or timing
// out after the client's own retries, the connection failed) the model is
// down: every later call of this run fails at once with ErrModelDown
// instead of waiting for the same failure again. nil without a model.
func (e *Env) model() llm.Client {
	if e.Model == nil {
		return nil
	}
	return guardedModel{e}
}

// ModelDown returns why the model was marked down in this run, or nil.
func (e *Env) ModelDown() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.down
}

// ResetModel starts a new run for the model: a long-running process (watch)
// calls it before each batch, so that a model that came back is used again.
func (e *Env) ResetModel() {
	e.mu.Lock()
	e.down = nil
	e.mu.Unlock()
}

func (e *Env) markModelDown(err error) {
	e.mu.Lock()
	if e.down == nil {
		e.down = err
	}
	e.mu.Unlock()
}

type guardedModel struct{ env *Env }

func (g guardedModel) Chat(ctx context.Context, req llm.Request) (*llm.Response, error) {
	if down := g.env.ModelDown(); down != nil {
		return nil, fmt.Errorf("%w (an earlier call failed: %v)", ErrModelDown, down)
	}
	log := g.env.logger()
	req, masked := maskRequest(req)
	if len(masked) > 0 {
		log.InfoContext(ctx, "secrets masked before the model call", "kinds", strings.Join(masked, ","))
	}
	start := time.Now()
	resp, err := g.env.Model.Chat(ctx, req)
	took := time.Since(start).Round(time.Millisecond)
	if err != nil {
		dead := modelIsDead(ctx, err)
		if dead {
			g.env.markModelDown(err)
		}
		log.InfoContext(ctx, "model call", "model", req.Model, "duration", took, "tools", len(req.Tools), "error", err, "model_down", dead)
		return nil, err
	}
	log.InfoContext(ctx, "model call", "model", req.Model, "duration", took, "tools", len(req.Tools),
		"finish_reason", resp.FinishReason, "input_tokens", resp.Usage.InputTokens, "output_tokens", resp.Usage.OutputTokens)
	return resp, nil
}

// modelIsDead tells a failure that will repeat for the rest of the run from
// one about this request (a bad request, an unreadable answer) or the
// caller giving up (ctx ended).
func modelIsDead(ctx context.Context, err error) bool {
	if ctx.Err() != nil {
		return false
	}
	for _, kind := range []error{llm.ErrUnauthorized, llm.ErrServer, llm.ErrTimeout, llm.ErrRateLimited, llm.ErrNoToolCalls, context.DeadlineExceeded} {
		if errors.Is(err, kind) {
			return true
		}
	}
	var netErr net.Error
	var opErr *net.OpError
	return errors.As(err, &netErr) || errors.As(err, &opErr)
}

// maskRequest returns req with the secrets in its texts masked, and the
// kinds masked. The caller's messages are not changed: an agent's history
// stays as it was, and is masked again on each call.
func maskRequest(req llm.Request) (llm.Request, []string) {
	var kinds []string
	text := func(s string) string {
		red, found := store.RedactSecrets(s)
		for _, f := range found {
			kinds = append(kinds, f.Kind)
		}
		return red
	}
	msgs := make([]llm.Message, len(req.Messages))
	for i, m := range req.Messages {
		if len(m.Parts) > 0 {
			parts := make([]llm.Part, len(m.Parts))
			for j, p := range m.Parts {
				if p.Text != "" {
					p.Text = text(p.Text)
				}
				parts[j] = p
			}
			m.Parts = parts
		}
		if len(m.ToolCalls) > 0 {
			calls := make([]llm.ToolCall, len(m.ToolCalls))
			for j, tc := range m.ToolCalls {
				red, found := store.RedactJSONStrings(tc.Arguments)
				if len(found) == 0 && len(tc.Arguments) > 0 && !json.Valid(tc.Arguments) {
					// arguments that are not JSON are sent back as text
					red = json.RawMessage(text(string(tc.Arguments)))
				}
				for _, f := range found {
					kinds = append(kinds, f.Kind)
				}
				tc.Arguments = red
				calls[j] = tc
			}
			m.ToolCalls = calls
		}
		m.ToolPlan = text(m.ToolPlan)
		msgs[i] = m
	}
	req.Messages = msgs
	return req, kinds
}

// MaskEmbedder is e with the secrets in every text masked before it is
// sent (the notes' chunks, a search's question), as chat requests are.
func MaskEmbedder(e llm.Embedder) llm.Embedder {
	if e == nil {
		return nil
	}
	return maskedEmbedder{e}
}

type maskedEmbedder struct{ llm.Embedder }

func (m maskedEmbedder) Embed(ctx context.Context, texts []string, input llm.InputType) ([][]float32, error) {
	return m.Embedder.Embed(ctx, maskTexts(texts), input)
}

// MaskReranker is r with the secrets in the question and the documents
// masked before they are sent; the answer refers to documents by position,
// so it needs no change.
func MaskReranker(r llm.Reranker) llm.Reranker {
	if r == nil {
		return nil
	}
	return maskedReranker{r}
}

type maskedReranker struct{ llm.Reranker }

func (m maskedReranker) Rerank(ctx context.Context, query string, docs []string, topN int) ([]llm.Ranked, error) {
	q, _ := store.RedactSecrets(query)
	return m.Reranker.Rerank(ctx, q, maskTexts(docs), topN)
}

func maskTexts(texts []string) []string {
	out := make([]string, len(texts))
	for i, t := range texts {
		out[i], _ = store.RedactSecrets(t)
	}
	return out
}

// maskMessages is msgs with the secrets in their content masked, for the
// extractive distiller: it names what it writes after salient words, and
// would otherwise name a card after the pieces of a token (push-ghp-…).
func maskMessages(msgs []store.Message) []store.Message {
	out := make([]store.Message, len(msgs))
	for i, m := range msgs {
		out[i] = store.RedactMessage(m)
	}
	return out
}

// provenanceKeys are the frontmatter keys whose values the system sets to
// point at a card's sources (paths, ids, hashes): they are never masked, or
// they would no longer lead there.
var provenanceKeys = func() []string {
	var keys []string
	for k := range ownedKeys {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}()

// maskSecrets masks the secrets in a note about to be written (a card, an
// entry, a digest node): its body, its frontmatter values but provenance.
// It is called by every writer of such notes, after the last change to
// the note and before its bytes are rendered.
func (e *Env) maskSecrets(n *store.Note, path string) {
	if kinds := store.RedactNote(n, provenanceKeys...); len(kinds) > 0 {
		e.logger().Info("secrets masked before writing", "path", path, "kinds", strings.Join(kinds, ","))
	}
}
