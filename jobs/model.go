package jobs

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/reme-dev/reme/jobs/llm"
)

// model is the client every job calls the model through. Each call is
// logged at Info level with its duration (so that -v shows where the time
// goes), and after a call fails in a way that a retry within the same run
// cannot fix (the key was refused, the server kept failing or timing out
// after the client's own retries, the connection failed) the model is down:
// every later call of this run fails at once with ErrModelDown instead of
// waiting for the same failure again. nil without a model.
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
