package llm_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/reme-dev/reme/jobs/llm"
	"github.com/reme-dev/reme/jobs/llm/llmtest"
)

func TestLoadFakeScript(t *testing.T) {
	got, err := llmtest.LoadFakeScript(filepath.Join("llmtest", "testdata", "fake_script.json"))
	if err != nil {
		t.Fatal(err)
	}
	want := []llmtest.FakeReply{
		{Status: 429, Header: map[string]string{"Retry-After": "1"}},
		{
			ToolPlan: "I will write the day's note.",
			ToolCalls: []llmtest.FakeToolCall{{ID: "dw_1", Name: "daily_write",
				Arguments: json.RawMessage(`{"name": "cold-remedies", "description": "Remedies for a cold", "content": "Ginger tea."}`)}},
			InputTokens: 100, OutputTokens: 20,
		},
		{Text: "Created daily/2026-06-20/cold-remedies.md.", InputTokens: 150, OutputTokens: 12, Delay: 10 * time.Millisecond},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("script (-want +got):\n%s", diff)
	}
}
func TestLoadFakeScriptErrors(t *testing.T) {
	tests := []struct{ name, script, want string }{
		{"unknown key", `[{"txt": "hi"}]`, `unknown field "txt"`},
		{"unknown tool call key", `[{"tool_calls": [{"name": "a", "args": {}}]}]`, `unknown field "args"`},
		{"bad delay", `[{"delay": "soon"}]`, "delay: time: invalid duration"},
		{"negative delay", `[{"delay": "-1s"}]`, "reply 0: negative delay"},
		{"bad status", `[{}, {"status": 42}]`, "reply 1: status 42 out of range"},
		{"tool call without name", `[{"tool_calls": [{"arguments": {}}]}]`, "reply 0: tool call 0 has no name"},
		{"not a list", `{"text": "hi"}`, "cannot unmarshal object"},
		{"trailing data", `[] []`, "trailing data"},
	}
	dir := t.TempDir()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(tt.name, " ", "_")+".json")
			if err := os.WriteFile(path, []byte(tt.script), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := llmtest.LoadFakeScript(path)
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), path) {
				t.Fatalf("error = %v, want one naming %s and containing %q", err, path, tt.want)
			}
		})
	}
	if _, err := llmtest.LoadFakeScript(filepath.Join(dir, "missing.json")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file error = %v", err)
	}
}
func TestFakeCohereSetHandler(t *testing.T) {
	srv := llmtest.NewFakeCohereServer(t)
	srv.SetHandler(func(body []byte) llmtest.FakeReply {
		if strings.Contains(string(body), `"role":"tool"`) {
			return llmtest.FakeReply{Text: "saw the tool result"}
		}
		return llmtest.FakeReply{ToolCalls: []llmtest.FakeToolCall{{Name: "read", Arguments: json.RawMessage(`{"path":"a.md"}`)}}}
	})
	c, _ := newTestCohere(t, srv.URL(), nil)
	res, err := llm.RunAgent(t.Context(), c, llm.AgentConfig{
		Messages: []llm.Message{llm.TextMessage(llm.RoleUser, "read a.md")},
		Tools: []llm.AgentTool{{Tool: readTool, Run: func(context.Context, json.RawMessage) (string, error) {
			return "contents", nil
		}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "saw the tool result" || len(srv.Requests()) != 2 {
		t.Errorf("result %q after %d requests", res.Text, len(srv.Requests()))
	}
}
func TestFakeCohereCloseEndsDelays(t *testing.T) {
	srv := llmtest.NewFakeCohereServer(t, llmtest.FakeReply{Delay: time.Minute, Text: "late"})
	c, _ := newTestCohere(t, srv.URL(), func(cfg *llm.Config) { cfg.MaxRetries = -1 })
	errc := make(chan error, 1)
	go func() {
		_, err := c.Chat(context.Background(), llm.Request{Messages: []llm.Message{llm.TextMessage(llm.RoleUser, "hi")}})
		errc <- err
	}()
	for len(srv.Requests()) == 0 {
		time.Sleep(5 * time.Millisecond)
	}
	srv.Close()
	select {
	case err := <-errc:
		if err == nil {
			t.Error("want an error after the fake gave up the delayed reply")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not end the pending delay")
	}
}
func TestScripted(t *testing.T) {
	sc := llmtest.NewScripted(llmtest.TextReply("one"))
	msgs := []llm.Message{llm.TextMessage(llm.RoleUser, "a")}
	resp, err := sc.Chat(t.Context(), llm.Request{Messages: msgs})
	if err != nil || resp.Message.Text() != "one" {
		t.Fatalf("first reply = %+v, %v", resp, err)
	}
	// Mutating the caller's slice after the call must not change the record.
	msgs[0] = llm.TextMessage(llm.RoleUser, "changed")
	resp.Message.Parts[0].Text = "mutated"
	if got := sc.Requests()[0].Messages[0].Text(); got != "a" {
		t.Errorf("recorded request changed to %q", got)
	}
	if sc.Responses[0].Message.Text() != "one" {
		t.Error("caller mutated the script through the returned response")
	}
	_, err = sc.Chat(t.Context(), llm.Request{Messages: msgs})
	if !errors.Is(err, llmtest.ErrScriptExhausted) || err.Error() != "scripted client: no reply left for request 2 (script has 1)" {
		t.Errorf("exhausted error = %v", err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := sc.Chat(ctx, llm.Request{}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled ctx error = %v", err)
	}
	if n := len(sc.Requests()); n != 2 {
		t.Errorf("recorded %d requests, want 2", n)
	}
}
