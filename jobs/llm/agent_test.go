package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// recordingTool is a daily_write stand-in that records its calls.
type recordingTool struct {
	mu    sync.Mutex
	calls []string
	out   string
	err   error
}

func (r *recordingTool) run(_ context.Context, args json.RawMessage) (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, string(args))
	return r.out, r.err
}

func call(id, name, args string) ToolCall {
	return ToolCall{ID: id, Name: name, Arguments: json.RawMessage(args)}
}

const goodArgs = `{"name":"cold-remedies","description":"Remedies for a cold","content":"Ginger tea."}`

func TestRunAgentTwoSteps(t *testing.T) {
	tool := &recordingTool{out: "wrote daily/2026-06-20/cold-remedies.md"}
	step1 := ToolCallReply(call("w1", "daily_write", goodArgs))
	step1.Message.ToolPlan = "I will write the note."
	step1.Usage = Usage{InputTokens: 100, OutputTokens: 20}
	step2 := &Response{
		Message: Message{Role: RoleAssistant, Parts: []Part{{Text: "Preamble."}, {Text: "Created cold-remedies."}}},
		Usage:   Usage{InputTokens: 150, OutputTokens: 10},
	}
	sc := NewScripted(step1, step2)
	user := TextMessage(RoleUser, "I have a cold; ginger tea helps.")
	res, err := RunAgent(t.Context(), sc, AgentConfig{
		Model:    "m",
		System:   "You are a memory system.",
		Messages: []Message{user},
		Tools:    []AgentTool{{Tool: writeTool, Run: tool.run}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "Created cold-remedies." {
		t.Errorf("Text = %q", res.Text)
	}
	if res.Steps != 2 {
		t.Errorf("Steps = %d, want 2", res.Steps)
	}
	if want := (Usage{InputTokens: 250, OutputTokens: 30}); res.Usage != want {
		t.Errorf("Usage = %+v, want %+v", res.Usage, want)
	}
	wantRecords := []ToolCallRecord{{Step: 1, ID: "w1", Name: "daily_write", Arguments: json.RawMessage(goodArgs), Result: tool.out}}
	if diff := cmp.Diff(wantRecords, res.ToolCalls); diff != "" {
		t.Errorf("ToolCalls (-want +got):\n%s", diff)
	}
	toolMsg := Message{Role: RoleTool, ToolCallID: "w1", Parts: []Part{{Text: tool.out}}}
	wantTranscript := []Message{
		TextMessage(RoleSystem, "You are a memory system."),
		user,
		step1.Message,
		toolMsg,
		step2.Message,
	}
	if diff := cmp.Diff(wantTranscript, res.Transcript); diff != "" {
		t.Errorf("Transcript (-want +got):\n%s", diff)
	}
	reqs := sc.Requests()
	if len(reqs) != 2 {
		t.Fatalf("model called %d times, want 2", len(reqs))
	}
	if diff := cmp.Diff(wantTranscript[:4], reqs[1].Messages); diff != "" {
		t.Errorf("second request messages (-want +got):\n%s", diff)
	}
	if reqs[0].Model != "m" || len(reqs[0].Tools) != 1 || reqs[0].Tools[0].Name != "daily_write" {
		t.Errorf("first request = %+v", reqs[0])
	}
	if len(tool.calls) != 1 || tool.calls[0] != goodArgs {
		t.Errorf("tool runs = %q", tool.calls)
	}
}

// TestRunAgentFeedsErrorsBack covers every non-fatal failure: the model gets
// "Error: ..." as the tool result and its next call is honoured.
func TestRunAgentFeedsErrorsBack(t *testing.T) {
	tests := []struct {
		name     string
		first    ToolCall
		toolErr  error // returned by the tool on its first run
		wantMsg  string
		wantRuns int // runs of the tool, the corrected call included
	}{
		{
			name:     "missing required and undeclared argument",
			first:    call("a", "daily_write", `{"name":"x","description":"d","colour":"red"}`),
			wantMsg:  `Error: invalid arguments for daily_write: missing required argument "content"; unknown argument "colour" (allowed: content, description, name, tags)`,
			wantRuns: 1,
		},
		{
			name:     "wrong types",
			first:    call("a", "daily_write", `{"name":7,"description":"d","content":"c","tags":["ok",3]}`),
			wantMsg:  `Error: invalid arguments for daily_write: argument "name": want string, got integer; argument "tags[1]": want string, got integer`,
			wantRuns: 1,
		},
		{
			name:     "not JSON",
			first:    call("a", "daily_write", `{"name": "x",`),
			wantMsg:  "Error: invalid arguments for daily_write: arguments are not valid JSON: unexpected EOF",
			wantRuns: 1,
		},
		{
			name:     "not an object",
			first:    call("a", "daily_write", `["x"]`),
			wantMsg:  "Error: invalid arguments for daily_write: arguments must be a JSON object, got array",
			wantRuns: 1,
		},
		{
			name:     "unknown tool",
			first:    call("a", "delete_everything", `{}`),
			wantMsg:  `Error: unknown tool "delete_everything"`,
			wantRuns: 1,
		},
		{
			name:     "tool error",
			first:    call("a", "daily_write", goodArgs),
			toolErr:  errors.New(`note "cold-remedies" already exists; use edit`),
			wantMsg:  `Error: note "cold-remedies" already exists; use edit`,
			wantRuns: 2,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var runs []string
			run := func(_ context.Context, args json.RawMessage) (string, error) {
				runs = append(runs, string(args))
				if len(runs) == 1 && tt.toolErr != nil {
					return "", tt.toolErr
				}
				return "written", nil
			}
			sc := NewScripted(
				ToolCallReply(tt.first),
				ToolCallReply(call("b", "daily_write", goodArgs)),
				TextReply("Done."),
			)
			res, err := RunAgent(t.Context(), sc, AgentConfig{
				Messages: []Message{TextMessage(RoleUser, "remember")},
				Tools:    []AgentTool{{Tool: writeTool, Run: run}},
			})
			if err != nil {
				t.Fatal(err)
			}
			if res.Text != "Done." || res.Steps != 3 {
				t.Errorf("Text, Steps = %q, %d; want Done., 3", res.Text, res.Steps)
			}
			second := sc.Requests()[1].Messages
			got := second[len(second)-1]
			want := Message{Role: RoleTool, ToolCallID: "a", Parts: []Part{{Text: tt.wantMsg}}}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("tool result sent to the model (-want +got):\n%s", diff)
			}
			if len(runs) != tt.wantRuns || runs[len(runs)-1] != goodArgs {
				t.Errorf("tool runs = %q, want %d ending with the corrected call", runs, tt.wantRuns)
			}
			if len(res.ToolCalls) != 2 || res.ToolCalls[0].Error != strings.TrimPrefix(tt.wantMsg, "Error: ") ||
				res.ToolCalls[0].Result != "" || res.ToolCalls[1].Error != "" || res.ToolCalls[1].Result != "written" {
				t.Errorf("ToolCalls = %+v", res.ToolCalls)
			}
		})
	}
}

func TestRunAgentSeveralCallsInOneStep(t *testing.T) {
	var order []string
	mk := func(name string) AgentTool {
		return AgentTool{
			Tool: Tool{Name: name, Parameters: json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}}}`)},
			Run: func(_ context.Context, args json.RawMessage) (string, error) {
				order = append(order, name+string(args))
				return name + " ok", nil
			},
		}
	}
	sc := NewScripted(
		// No ids: the loop must make them up and answer each call by its id.
		ToolCallReply(call("", "b", `{"n":1}`), call("", "a", `{"n":2}`)),
		TextReply("fin"),
	)
	res, err := RunAgent(t.Context(), sc, AgentConfig{
		Messages: []Message{TextMessage(RoleUser, "go")},
		Tools:    []AgentTool{mk("a"), mk("b")},
	})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{`b{"n":1}`, `a{"n":2}`}, order); diff != "" {
		t.Errorf("run order (-want +got):\n%s", diff)
	}
	tr := res.Transcript
	calls := tr[1].ToolCalls
	if calls[0].ID != "call_1_0" || calls[1].ID != "call_1_1" {
		t.Errorf("synthesised ids = %q, %q", calls[0].ID, calls[1].ID)
	}
	if tr[2].ToolCallID != calls[0].ID || tr[3].ToolCallID != calls[1].ID || tr[2].Text() != "b ok" || tr[3].Text() != "a ok" {
		t.Errorf("tool messages = %+v", tr[2:4])
	}
}

func TestRunAgentMaxSteps(t *testing.T) {
	sc := &Scripted{Func: func(Request) (*Response, error) {
		return ToolCallReply(call("x", "daily_write", goodArgs)), nil
	}}
	tool := &recordingTool{out: "ok"}
	res, err := RunAgent(t.Context(), sc, AgentConfig{
		Messages: []Message{TextMessage(RoleUser, "loop")},
		Tools:    []AgentTool{{Tool: writeTool, Run: tool.run}},
		MaxSteps: 3,
	})
	if !errors.Is(err, ErrMaxSteps) || err.Error() != "agent did not finish within 3 steps" {
		t.Fatalf("error = %v, want ErrMaxSteps", err)
	}
	if res == nil || res.Steps != 3 || len(sc.Requests()) != 3 || len(tool.calls) != 3 {
		t.Errorf("steps, requests, runs = %d, %d, %d; want 3 each", res.Steps, len(sc.Requests()), len(tool.calls))
	}
}

func TestRunAgentDefaultMaxSteps(t *testing.T) {
	sc := &Scripted{Func: func(Request) (*Response, error) {
		return ToolCallReply(call("x", "nope", `{}`)), nil
	}}
	_, err := RunAgent(t.Context(), sc, AgentConfig{Messages: []Message{TextMessage(RoleUser, "loop")}})
	if !errors.Is(err, ErrMaxSteps) || len(sc.Requests()) != DefaultMaxSteps {
		t.Fatalf("error = %v after %d requests, want ErrMaxSteps after %d", err, len(sc.Requests()), DefaultMaxSteps)
	}
}

func TestRunAgentChatError(t *testing.T) {
	sc := NewScripted(ToolCallReply(call("x", "nope", `{}`)))
	res, err := RunAgent(t.Context(), sc, AgentConfig{Messages: []Message{TextMessage(RoleUser, "hi")}})
	if !errors.Is(err, ErrScriptExhausted) || !strings.HasPrefix(err.Error(), "agent step 2: ") {
		t.Fatalf("error = %v, want wrapped ErrScriptExhausted at step 2", err)
	}
	if res == nil || res.Steps != 1 || len(res.Transcript) != 3 {
		t.Errorf("partial result = %+v", res)
	}
}

func TestRunAgentCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	blocking := AgentTool{
		Tool: Tool{Name: "slow"},
		Run: func(ctx context.Context, _ json.RawMessage) (string, error) {
			cancel()
			<-ctx.Done()
			return "", ctx.Err()
		},
	}
	sc := &Scripted{Func: func(Request) (*Response, error) {
		return ToolCallReply(call("s", "slow", `{}`), call("t", "slow", `{}`)), nil
	}}
	start := time.Now()
	_, err := RunAgent(ctx, sc, AgentConfig{Messages: []Message{TextMessage(RoleUser, "hi")}, Tools: []AgentTool{blocking}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error = %v, want context.Canceled", err)
	}
	if len(sc.Requests()) != 1 {
		t.Errorf("model called %d times after cancel, want 1", len(sc.Requests()))
	}
	if time.Since(start) > time.Second {
		t.Errorf("took %v", time.Since(start))
	}
}

func TestRunAgentConfigErrors(t *testing.T) {
	run := func(context.Context, json.RawMessage) (string, error) { return "", nil }
	tests := []struct {
		name  string
		tools []AgentTool
		want  string
	}{
		{"no Run", []AgentTool{{Tool: Tool{Name: "a"}}}, `agent tool "a": name and Run are required`},
		{"duplicate", []AgentTool{{Tool: Tool{Name: "a"}, Run: run}, {Tool: Tool{Name: "a"}, Run: run}}, `agent tool "a": defined twice`},
		{"bad schema", []AgentTool{{Tool: Tool{Name: "a", Parameters: json.RawMessage(`{"type":"strin"}`)}, Run: run}}, `unknown type "strin"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sc := NewScripted(TextReply("x"))
			_, err := RunAgent(t.Context(), sc, AgentConfig{Messages: []Message{TextMessage(RoleUser, "hi")}, Tools: tt.tools})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error = %v, want %q", err, tt.want)
			}
			if len(sc.Requests()) != 0 {
				t.Error("model was called despite a bad config")
			}
		})
	}
}

// TestRunAgentOverCohere runs the loop through the real client and the fake
// server, checking what reaches the wire on the second step.
func TestRunAgentOverCohere(t *testing.T) {
	srv := NewFakeCohereServer(t,
		FakeReply{ToolPlan: "Write it.", ToolCalls: []FakeToolCall{{ID: "dw_1", Name: "daily_write", Arguments: json.RawMessage(goodArgs)}}, InputTokens: 10, OutputTokens: 4},
		FakeReply{Text: "Created cold-remedies.", InputTokens: 20, OutputTokens: 5},
	)
	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	c, _ := newTestCohere(t, srv.URL(), func(cfg *CohereConfig) { cfg.Logger = logger })
	tool := &recordingTool{out: "wrote it"}
	res, err := RunAgent(t.Context(), c, AgentConfig{
		System:   "sys",
		Messages: []Message{TextMessage(RoleUser, "remember")},
		Tools:    []AgentTool{{Tool: writeTool, Run: tool.run}},
		Logger:   logger,
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "Created cold-remedies." || res.Usage != (Usage{InputTokens: 30, OutputTokens: 9}) {
		t.Errorf("result = %q, %+v", res.Text, res.Usage)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("server got %d requests", len(reqs))
	}
	var second struct {
		Messages []map[string]any `json:"messages"`
	}
	if err := json.Unmarshal(reqs[1], &second); err != nil {
		t.Fatal(err)
	}
	want := []map[string]any{
		{"role": "system", "content": "sys"},
		{"role": "user", "content": "remember"},
		{"role": "assistant", "tool_plan": "Write it.", "tool_calls": []any{map[string]any{
			"id": "dw_1", "type": "function",
			"function": map[string]any{"name": "daily_write", "arguments": goodArgs},
		}}},
		{"role": "tool", "tool_call_id": "dw_1", "content": []any{map[string]any{"type": "text", "text": "wrote it"}}},
	}
	if diff := cmp.Diff(want, second.Messages); diff != "" {
		t.Errorf("second request messages (-want +got):\n%s", diff)
	}
	if strings.Contains(logs.String(), FakeAPIKey) {
		t.Error("logs contain the API key")
	}
	if !strings.Contains(logs.String(), "agent step") {
		t.Errorf("expected debug logs, got %q", logs.String())
	}
}
