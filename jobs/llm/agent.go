package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"slices"
	"strconv"
	"strings"
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
	// RequireToolCall makes a run that ends without a single tool call
	// fail with ErrNoToolCalls, for tasks whose only useful outcome is a
	// tool call. Without it, a text answer is a valid end (a model may
	// decide that there is nothing to do).
	RequireToolCall bool
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
// it can correct itself. Arguments that are not JSON at all get one repair:
// if the very next reply again holds malformed arguments, the run stops with
// ErrToolArguments. A model that writes a tool call as text instead of
// making it (a server without tool support does that) ends the run with
// ErrNoToolCalls, as does a run with RequireToolCall that calls no tool.
// A Client error, ctx ending or the step budget stop the run too; the
// partial result is always returned with the error.
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

	// repairAsked is set when the previous step had arguments that were
	// not JSON, so that a second such step in a row ends the run.
	repairAsked := false
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
			if len(res.ToolCalls) == 0 && len(defs) > 0 {
				if name := textualToolCall(reply.Text(), defs); name != "" {
					return res, fmt.Errorf("%w: it wrote a call to %s as text instead of calling the tool; the server or the model does not support tool calls", ErrNoToolCalls, name)
				}
				if cfg.RequireToolCall {
					return res, fmt.Errorf("%w: it answered without calling %s", ErrNoToolCalls, toolNames(defs))
				}
			}
			return res, nil
		}
		if repairAsked {
			for _, call := range reply.ToolCalls {
				if err := decodeJSON(call.Arguments, new(any)); err != nil {
					return res, fmt.Errorf("%w: %s at step %d, again after being asked to repair them: %v",
						ErrToolArguments, call.Name, step, err)
				}
			}
		}
		repairAsked = false
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
					if errors.Is(err, errNotJSON) {
						rec.Error += ". Call " + call.Name + " again with its arguments as one JSON object, quotes and newlines inside strings escaped"
						repairAsked = true
					}
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

// toolNames lists tool names for a message: "a", "a or b", "a, b or c".
func toolNames(defs []Tool) string {
	names := make([]string, len(defs))
	for i, d := range defs {
		names[i] = d.Name
	}
	if len(names) == 1 {
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// textualCallMarkers are the tags that chat templates wrap tool calls in;
// seen in a text answer, they mean the server did not parse the call.
var textualCallMarkers = []string{"<tool_call>", "<|tool_call|>", "[TOOL_CALLS]", "<|python_tag|>", "<function=", "<|tool_calls_section_begin|>", "<tool_calls>"}

// textualToolCall returns the name of an offered tool that text calls in
// writing instead of through the API: "daily_write(name=...)" as the prompt
// shows it, {"name": "daily_write", "arguments": ...} as a JSON tool call,
// or a chat template's tool-call tag. It returns "" when there is none.
func textualToolCall(text string, defs []Tool) string {
	if strings.TrimSpace(text) == "" {
		return ""
	}
	for _, d := range defs {
		if d.Name == "" {
			continue
		}
		q := regexp.QuoteMeta(d.Name)
		re := regexp.MustCompile(`(?:^|[^\w.])` + q + `\s*\(\s*(?:\)|[\w"'{])|"(?:name|function|tool|tool_name)"\s*:\s*"` + q + `"`)
		if re.MatchString(text) {
			return d.Name
		}
	}
	for _, m := range textualCallMarkers {
		if strings.Contains(text, m) {
			return "a tool (" + m + ")"
		}
	}
	return ""
}
