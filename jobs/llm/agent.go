package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
)

// ErrMaxSteps means the model was still calling tools when the step budget
// ran out.
var ErrMaxSteps = errors.New("agent did not finish")

// DefaultMaxSteps matches ReMe's ReAct max_iters.
const DefaultMaxSteps = 30

// ToolFunc runs a tool with arguments that already passed the tool's schema.
// Its error is shown to the model, so it should say what to fix.
type ToolFunc func(ctx context.Context, args json.RawMessage) (string, error)

// AgentTool is a tool the agent may call, with its implementation.
type AgentTool struct {
	Tool
	Run ToolFunc
}

// AgentConfig configures RunAgent.
type AgentConfig struct {
	// Model is passed to the Client; empty selects its default.
	Model string
	// System, when set, is sent as the first message.
	System string
	// Messages follow the system message, typically one user message.
	Messages []Message
	Tools    []AgentTool
	// MaxSteps bounds the number of model calls; 0 means DefaultMaxSteps.
	MaxSteps    int
	Temperature *float64
	// Logger receives one line per step and tool call; nil discards.
	Logger *slog.Logger
}

// ToolCallRecord is one tool call the model made and what came of it.
type ToolCallRecord struct {
	Step      int             `json:"step"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
	// Result is the tool's output; empty when Error is set.
	Result string `json:"result,omitempty"`
	// Error is why the call failed (validation, unknown tool or the tool's
	// own error); the model received it as "Error: <Error>".
	Error string `json:"error,omitempty"`
}

// AgentResult is what an agent run produced.
type AgentResult struct {
	// Text is the last text block of the final assistant message.
	Text string
	// Steps is the number of model calls made.
	Steps int
	// Usage is summed over all steps.
	Usage Usage
	// ToolCalls lists every call in order.
	ToolCalls []ToolCallRecord
	// Transcript is the whole conversation, system message included.
	Transcript []Message
}

// RunAgent runs a tool-using loop: each step sends the transcript to the
// model; tool calls are validated, run in order and answered with one tool
// message each; a reply without tool calls ends the run. Bad arguments,
// unknown tools and tool errors go back to the model as "Error: ..." so that
// it can correct itself; only a Client error, ctx ending or the step budget
// stop the run, and then the partial result is returned with the error.
func RunAgent(ctx context.Context, c Client, cfg AgentConfig) (*AgentResult, error) {
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	maxSteps := cfg.MaxSteps
	if maxSteps <= 0 {
		maxSteps = DefaultMaxSteps
	}
	type boundTool struct {
		AgentTool
		schema *argSchema
	}
	tools := make(map[string]boundTool, len(cfg.Tools))
	defs := make([]Tool, 0, len(cfg.Tools))
	for _, t := range cfg.Tools {
		if t.Name == "" || t.Run == nil {
			return nil, fmt.Errorf("agent tool %q: name and Run are required", t.Name)
		}
		if _, dup := tools[t.Name]; dup {
			return nil, fmt.Errorf("agent tool %q: defined twice", t.Name)
		}
		s, err := compileSchema(t.Parameters)
		if err != nil {
			return nil, fmt.Errorf("agent tool %q: %w", t.Name, err)
		}
		tools[t.Name] = boundTool{AgentTool: t, schema: s}
		defs = append(defs, t.Tool)
	}

	res := &AgentResult{}
	if cfg.System != "" {
		res.Transcript = append(res.Transcript, TextMessage(RoleSystem, cfg.System))
	}
	res.Transcript = append(res.Transcript, cfg.Messages...)

	for step := 1; step <= maxSteps; step++ {
		if err := ctx.Err(); err != nil {
			return res, fmt.Errorf("agent step %d: %w", step, err)
		}
		resp, err := c.Chat(ctx, Request{
			Model:       cfg.Model,
			Messages:    slices.Clone(res.Transcript),
			Tools:       defs,
			Temperature: cfg.Temperature,
		})
		if err != nil {
			return res, fmt.Errorf("agent step %d: %w", step, err)
		}
		res.Steps = step
		res.Usage = res.Usage.Add(resp.Usage)
		reply := resp.Message
		reply.Role = RoleAssistant
		reply.ToolCalls = slices.Clone(reply.ToolCalls)
		for i := range reply.ToolCalls {
			// Every result must name its call; make one up if the model did not.
			if reply.ToolCalls[i].ID == "" {
				reply.ToolCalls[i].ID = "call_" + strconv.Itoa(step) + "_" + strconv.Itoa(i)
			}
		}
		res.Transcript = append(res.Transcript, reply)
		log.DebugContext(ctx, "agent step", "step", step, "tool_calls", len(reply.ToolCalls),
			"finish_reason", resp.FinishReason)

		if len(reply.ToolCalls) == 0 {
			res.Text = reply.lastText()
			return res, nil
		}
		for _, call := range reply.ToolCalls {
			if err := ctx.Err(); err != nil {
				return res, fmt.Errorf("agent step %d: %w", step, err)
			}
			rec := ToolCallRecord{Step: step, ID: call.ID, Name: call.Name, Arguments: call.Arguments}
			t, ok := tools[call.Name]
			switch {
			case !ok:
				rec.Error = fmt.Sprintf("unknown tool %q", call.Name)
			default:
				if err := validateArgs(t.schema, call.Arguments); err != nil {
					rec.Error = fmt.Sprintf("invalid arguments for %s: %v", call.Name, err)
					break
				}
				out, err := t.Run(ctx, call.Arguments)
				if ctxErr := ctx.Err(); ctxErr != nil {
					// The tool most likely failed because of it; that is not
					// something the model can fix.
					return res, fmt.Errorf("agent step %d: tool %s: %w", step, call.Name, ctxErr)
				}
				if err != nil {
					rec.Error = err.Error()
				} else {
					rec.Result = out
				}
			}
			content := rec.Result
			if rec.Error != "" {
				content = "Error: " + rec.Error
				log.InfoContext(ctx, "agent tool error", "step", step, "tool", call.Name, "error", rec.Error)
			} else {
				log.DebugContext(ctx, "agent tool", "step", step, "tool", call.Name, "result_bytes", len(rec.Result))
			}
			res.ToolCalls = append(res.ToolCalls, rec)
			res.Transcript = append(res.Transcript, Message{
				Role:       RoleTool,
				ToolCallID: call.ID,
				Parts:      []Part{{Text: content}},
			})
		}
	}
	return res, fmt.Errorf("%w within %d steps", ErrMaxSteps, maxSteps)
}
