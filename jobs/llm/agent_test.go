package llm_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/reme-dev/reme/jobs/llm"
	"github.com/reme-dev/reme/jobs/llm/llmtest"
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

func call(id, name, args string) llm.ToolCall {
	return llm.ToolCall{ID: id, Name: name, Arguments: json.RawMessage(args)}
}

const goodArgs = `{"name":"cold-remedies","description":"Remedies for a cold","content":"Ginger tea."}`

func TestRunAgentTwoSteps(t *testing.T) {
	tool := &recordingTool{out: "wrote daily/2026-06-20/cold-remedies.md"}
	step1 := llmtest.ToolCallReply(call("w1", "daily_write", goodArgs))
	step1.Message.ToolPlan = "I will write the note."
	step1.Usage = llm.Usage{InputTokens: 100, OutputTokens: 20}
	step2 := &llm.Response{
		Message: llm.Message{Role: llm.RoleAssistant, Parts: []llm.Part{{Text: "Preamble."}, {Text: "Created cold-remedies."}}},
		Usage:   llm.Usage{InputTokens: 150, OutputTokens: 10},
	}
	sc := llmtest.NewScripted(step1, step2)
	user := llm.TextMessage(llm.RoleUser, "I have a cold; ginger tea helps.")
	res, err := llm.RunAgent(t.Context(), sc, llm.AgentConfig{
		Model:    "m",
		System:   "You are a memory system.",
		Messages: []llm.Message{user},
		Tools:    []llm.AgentTool{{Tool: writeTool, Run: tool.run}},
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
	if want := (llm.Usage{InputTokens: 250, OutputTokens: 30}); res.Usage != want {
		t.Errorf("Usage = %+v, want %+v", res.Usage, want)
	}
	wantRecords := []llm.ToolCallRecord{{Step: 1, ID: "w1", Name: "daily_write", Arguments: json.RawMessage(goodArgs), Result: tool.out}}
	if diff := cmp.Diff(wantRecords, res.ToolCalls); diff != "" {
		t.Errorf("ToolCalls (-want +got):\n%s", diff)
	}
	toolMsg := llm.Message{Role: llm.RoleTool, ToolCallID: "w1", Parts: []llm.Part{{Text: tool.out}}}
	wantTranscript := []llm.Message{
		llm.TextMessage(llm.RoleSystem, "You are a memory system."),
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
		first    llm.ToolCall
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
			wantMsg:  "Error: invalid arguments for daily_write: arguments are not valid JSON: unexpected EOF. Call daily_write again with its arguments as one JSON object, quotes and newlines inside strings escaped",
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
			sc := llmtest.NewScripted(
				llmtest.ToolCallReply(tt.first),
				llmtest.ToolCallReply(call("b", "daily_write", goodArgs)),
				llmtest.TextReply("Done."),
			)
			res, err := llm.RunAgent(t.Context(), sc, llm.AgentConfig{
				Messages: []llm.Message{llm.TextMessage(llm.RoleUser, "remember")},
				Tools:    []llm.AgentTool{{Tool: writeTool, Run: run}},
			})
			if err != nil {
				t.Fatal(err)
			}
			if res.Text != "Done." || res.Steps != 3 {
				t.Errorf("Text, Steps = %q, %d; want Done., 3", res.Text, res.Steps)
			}
			second := sc.Requests()[1].Messages
			got := second[len(second)-1]
			want := llm.Message{Role: llm.RoleTool, ToolCallID: "a", Parts: []llm.Part{{Text: tt.wantMsg}}}
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
	mk := func(name string) llm.AgentTool {
		return llm.AgentTool{
			Tool: llm.Tool{Name: name, Parameters: json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}}}`)},
			Run: func(_ context.Context, args json.RawMessage) (string, error) {
				order = append(order, name+string(args))
				return name + " ok", nil
			},
		}
	}
	sc := llmtest.NewScripted(
		// No ids: the loop must make them up and answer each call by its id.
		llmtest.ToolCallReply(call("", "b", `{"n":1}`), call("", "a", `{"n":2}`)),
		llmtest.TextReply("fin"),
	)
	res, err := llm.RunAgent(t.Context(), sc, llm.AgentConfig{
		Messages: []llm.Message{llm.TextMessage(llm.RoleUser, "go")},
		Tools:    []llm.AgentTool{mk("a"), mk("b")},
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
	sc := &llmtest.Scripted{Func: func(llm.Request) (*llm.Response, error) {
		return llmtest.ToolCallReply(call("x", "daily_write", goodArgs)), nil
	}}
	tool := &recordingTool{out: "ok"}
	res, err := llm.RunAgent(t.Context(), sc, llm.AgentConfig{
		Messages: []llm.Message{llm.TextMessage(llm.RoleUser, "loop")},
		Tools:    []llm.AgentTool{{Tool: writeTool, Run: tool.run}},
		MaxSteps: 3,
	})
	if !errors.Is(err, llm.ErrMaxSteps) || err.Error() != "agent did not finish within 3 steps" {
		t.Fatalf("error = %v, want ErrMaxSteps", err)
	}
	if res == nil || res.Steps != 3 || len(sc.Requests()) != 3 || len(tool.calls) != 3 {
		t.Errorf("steps, requests, runs = %d, %d, %d; want 3 each", res.Steps, len(sc.Requests()), len(tool.calls))
	}
}

func TestRunAgentDefaultMaxSteps(t *testing.T) {
	sc := &llmtest.Scripted{Func: func(llm.Request) (*llm.Response, error) {
		return llmtest.ToolCallReply(call("x", "nope", `{}`)), nil
	}}
	_, err := llm.RunAgent(t.Context(), sc, llm.AgentConfig{Messages: []llm.Message{llm.TextMessage(llm.RoleUser, "loop")}})
	if !errors.Is(err, llm.ErrMaxSteps) || len(sc.Requests()) != llm.DefaultMaxSteps {
		t.Fatalf("error = %v after %d requests, want ErrMaxSteps after %d", err, len(sc.Requests()), llm.DefaultMaxSteps)
	}
}

func TestRunAgentChatError(t *testing.T) {
	sc := llmtest.NewScripted(llmtest.ToolCallReply(call("x", "nope", `{}`)))
	res, err := llm.RunAgent(t.Context(), sc, llm.AgentConfig{Messages: []llm.Message{llm.TextMessage(llm.RoleUser, "hi")}})
	if !errors.Is(err, llmtest.ErrScriptExhausted) || !strings.HasPrefix(err.Error(), "agent step 2: ") {
		t.Fatalf("error = %v, want wrapped ErrScriptExhausted at step 2", err)
	}
	if res == nil || res.Steps != 1 || len(res.Transcript) != 3 {
		t.Errorf("partial result = %+v", res)
	}
}

func TestRunAgentCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	runs := 0
	blocking := llm.AgentTool{
		Tool: llm.Tool{Name: "slow"},
		Run: func(ctx context.Context, _ json.RawMessage) (string, error) {
			runs++
			cancel()
			<-ctx.Done()
			return "", ctx.Err()
		},
	}
	sc := &llmtest.Scripted{Func: func(llm.Request) (*llm.Response, error) {
		return llmtest.ToolCallReply(call("s", "slow", `{}`), call("t", "slow", `{}`)), nil
	}}
	_, err := llm.RunAgent(ctx, sc, llm.AgentConfig{Messages: []llm.Message{llm.TextMessage(llm.RoleUser, "hi")}, Tools: []llm.AgentTool{blocking}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error = %v, want context.Canceled", err)
	}
	if len(sc.Requests()) != 1 {
		t.Errorf("model called %d times after cancel, want 1", len(sc.Requests()))
	}
	if runs != 1 {
		t.Errorf("%d tool calls ran, want 1: the second must not start after the cancel", runs)
	}
}

func TestRunAgentConfigErrors(t *testing.T) {
	run := func(context.Context, json.RawMessage) (string, error) { return "", nil }
	tests := []struct {
		name  string
		tools []llm.AgentTool
		want  string
	}{
		{"no Run", []llm.AgentTool{{Tool: llm.Tool{Name: "a"}}}, `agent tool "a": name and Run are required`},
		{"duplicate", []llm.AgentTool{{Tool: llm.Tool{Name: "a"}, Run: run}, {Tool: llm.Tool{Name: "a"}, Run: run}}, `agent tool "a": defined twice`},
		{"bad schema", []llm.AgentTool{{Tool: llm.Tool{Name: "a", Parameters: json.RawMessage(`{"type":"strin"}`)}, Run: run}}, `unknown type "strin"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sc := llmtest.NewScripted(llmtest.TextReply("x"))
			_, err := llm.RunAgent(t.Context(), sc, llm.AgentConfig{Messages: []llm.Message{llm.TextMessage(llm.RoleUser, "hi")}, Tools: tt.tools})
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
	srv := llmtest.NewFakeCohereServer(t,
		llmtest.FakeReply{ToolPlan: "Write it.", ToolCalls: []llmtest.FakeToolCall{{ID: "dw_1", Name: "daily_write", Arguments: json.RawMessage(goodArgs)}}, InputTokens: 10, OutputTokens: 4},
		llmtest.FakeReply{Text: "Created cold-remedies.", InputTokens: 20, OutputTokens: 5},
	)
	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	c, _ := newTestCohere(t, srv.URL(), func(cfg *llm.Config) { cfg.Logger = logger })
	tool := &recordingTool{out: "wrote it"}
	res, err := llm.RunAgent(t.Context(), c, llm.AgentConfig{
		System:   "sys",
		Messages: []llm.Message{llm.TextMessage(llm.RoleUser, "remember")},
		Tools:    []llm.AgentTool{{Tool: writeTool, Run: tool.run}},
		Logger:   logger,
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "Created cold-remedies." || res.Usage != (llm.Usage{InputTokens: 30, OutputTokens: 9}) {
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
	if strings.Contains(logs.String(), llmtest.FakeAPIKey) {
		t.Error("logs contain the API key")
	}
	if !strings.Contains(logs.String(), "agent step") {
		t.Errorf("expected debug logs, got %q", logs.String())
	}
}

// TestServeFakeCohereScript is the end-to-end path a CLI test harness takes:
// a script file, a plain listener, the real client and the agent loop.
func TestServeFakeCohereScript(t *testing.T) {
	replies, err := llmtest.LoadFakeScript(filepath.Join("llmtest", "testdata", "fake_script.json"))
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := llmtest.ServeFakeCohere(ln, replies)
	defer srv.Close()

	c, sleeps := newTestCohere(t, "http://"+ln.Addr().String(), nil)
	tool := &recordingTool{out: "wrote daily/2026-06-20/cold-remedies.md"}
	res, err := llm.RunAgent(t.Context(), c, llm.AgentConfig{
		Messages: []llm.Message{llm.TextMessage(llm.RoleUser, "I have a cold.")},
		Tools:    []llm.AgentTool{{Tool: writeTool, Run: tool.run}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "Created daily/2026-06-20/cold-remedies.md." || res.Steps != 2 {
		t.Errorf("result = %q after %d steps", res.Text, res.Steps)
	}
	if got := sleeps.got(); len(got) != 1 || got[0] != time.Second {
		t.Errorf("sleeps = %v, want [1s] from Retry-After", got)
	}
	if len(tool.calls) != 1 || !json.Valid([]byte(tool.calls[0])) || !strings.Contains(tool.calls[0], `"name":"cold-remedies"`) {
		t.Errorf("tool calls = %q", tool.calls)
	}
}

// TestRunAgentRepairsMalformedArgumentsOnce: arguments that are not JSON get
// one repair request; a second malformed reply in a row ends the run with
// ErrToolArguments, for the caller's fallback.
func TestRunAgentRepairsMalformedArgumentsOnce(t *testing.T) {
	bad := call("a", "daily_write", `{"name": "x", "content": "line one`)
	tests := []struct {
		name      string
		replies   []*llm.Response
		wantErr   error
		wantSteps int
		wantRuns  int
	}{
		{"repaired", []*llm.Response{llmtest.ToolCallReply(bad), llmtest.ToolCallReply(call("b", "daily_write", goodArgs)), llmtest.TextReply("Done.")}, nil, 3, 1},
		{"malformed twice", []*llm.Response{llmtest.ToolCallReply(bad), llmtest.ToolCallReply(call("b", "daily_write", `{name: "x"}`)), llmtest.TextReply("never asked")}, llm.ErrToolArguments, 2, 0},
		// Each malformed call gets its own repair when a good step separates them.
		{"malformed, good, malformed", []*llm.Response{
			llmtest.ToolCallReply(bad), llmtest.ToolCallReply(call("b", "daily_write", goodArgs)),
			llmtest.ToolCallReply(bad), llmtest.ToolCallReply(call("c", "daily_write", goodArgs)), llmtest.TextReply("Done."),
		}, nil, 5, 2},
		// A schema error is not malformed JSON: it may be corrected over several steps.
		{"schema errors are not limited to one repair", []*llm.Response{
			llmtest.ToolCallReply(call("a", "daily_write", `{"name":"x"}`)), llmtest.ToolCallReply(call("b", "daily_write", `{"name":"x","description":"d"}`)),
			llmtest.ToolCallReply(call("c", "daily_write", goodArgs)), llmtest.TextReply("Done."),
		}, nil, 4, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tool := &recordingTool{out: "written"}
			sc := llmtest.NewScripted(tt.replies...)
			res, err := llm.RunAgent(t.Context(), sc, llm.AgentConfig{
				Messages: []llm.Message{llm.TextMessage(llm.RoleUser, "remember")},
				Tools:    []llm.AgentTool{{Tool: writeTool, Run: tool.run}},
			})
			if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil) != (err == nil) {
				t.Fatalf("error = %v, want %v", err, tt.wantErr)
			}
			if res.Steps != tt.wantSteps || len(tool.calls) != tt.wantRuns {
				t.Errorf("steps, tool runs = %d, %d; want %d, %d", res.Steps, len(tool.calls), tt.wantSteps, tt.wantRuns)
			}
			if tt.wantErr != nil && !strings.Contains(err.Error(), "again after being asked to repair them") {
				t.Errorf("error text = %q", err)
			}
		})
	}
}

// TestRunAgentDetectsModelsThatDoNotCallTools covers servers that pass the
// tools to a model that cannot use them: the call comes back as text.
func TestRunAgentDetectsModelsThatDoNotCallTools(t *testing.T) {
	tests := []struct {
		name    string
		text    string
		require bool
		called  bool // a real tool call came first
		wantErr bool
	}{
		{name: "prompt-style call", text: `daily_write(name="cold-remedies", description="Remedies", content="Ginger tea.")`, wantErr: true},
		{name: "JSON call in a fence", text: "```json\n{\"name\": \"daily_write\", \"arguments\": {\"name\": \"x\"}}\n```", wantErr: true},
		{name: "template tag", text: `<tool_call>{"name":"daily_write","arguments":{}}</tool_call>`, wantErr: true},
		{name: "llama tag", text: `<|python_tag|>{"type":"function"}`, wantErr: true},
		{name: "a skip is fine", text: "Only greetings; nothing worth remembering."},
		{name: "mentioning the tool is fine", text: "I did not use daily_write because nothing was worth keeping."},
		{name: "after a real call, prose about it is fine", text: `Created it with daily_write(name="cold-remedies").`, called: true},
		{name: "required but skipped", text: "Nothing to do.", require: true, wantErr: true},
		{name: "required and called", text: "Done.", require: true, called: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var replies []*llm.Response
			if tt.called {
				replies = append(replies, llmtest.ToolCallReply(call("a", "daily_write", goodArgs)))
			}
			replies = append(replies, llmtest.TextReply(tt.text))
			sc := llmtest.NewScripted(replies...)
			tool := &recordingTool{out: "written"}
			res, err := llm.RunAgent(t.Context(), sc, llm.AgentConfig{
				Messages:        []llm.Message{llm.TextMessage(llm.RoleUser, "remember")},
				Tools:           []llm.AgentTool{{Tool: writeTool, Run: tool.run}, {Tool: readTool, Run: tool.run}},
				RequireToolCall: tt.require,
			})
			if got := errors.Is(err, llm.ErrNoToolCalls); got != tt.wantErr || (!tt.wantErr && err != nil) {
				t.Fatalf("error = %v, want ErrNoToolCalls: %v", err, tt.wantErr)
			}
			if res == nil || res.Text != tt.text {
				t.Errorf("result text = %+v, want the model's answer kept", res)
			}
			if tt.wantErr && tt.require && !strings.Contains(err.Error(), "answered without calling daily_write or read") {
				t.Errorf("error text = %q", err)
			}
		})
	}
}
