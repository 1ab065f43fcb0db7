package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestLoadFakeScript(t *testing.T) {
	got, err := LoadFakeScript(filepath.Join("testdata", "fake_script.json"))
	if err != nil {
		t.Fatal(err)
	}
	want := []FakeReply{
		{Status: 429, Header: map[string]string{"Retry-After": "1"}},
		{
			ToolPlan: "I will write the day's note.",
			ToolCalls: []FakeToolCall{{ID: "dw_1", Name: "daily_write",
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
			_, err := LoadFakeScript(path)
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), path) {
				t.Fatalf("error = %v, want one naming %s and containing %q", err, path, tt.want)
			}
		})
	}
	if _, err := LoadFakeScript(filepath.Join(dir, "missing.json")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file error = %v", err)
	}
}

// TestServeFakeCohereScript is the end-to-end path a CLI test harness takes:
// a script file, a plain listener, the real client and the agent loop.
func TestServeFakeCohereScript(t *testing.T) {
	replies, err := LoadFakeScript(filepath.Join("testdata", "fake_script.json"))
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := ServeFakeCohere(ln, replies)
	defer srv.Close()

	c, sleeps := newTestCohere(t, "http://"+ln.Addr().String(), nil)
	tool := &recordingTool{out: "wrote daily/2026-06-20/cold-remedies.md"}
	res, err := RunAgent(t.Context(), c, AgentConfig{
		Messages: []Message{TextMessage(RoleUser, "I have a cold.")},
		Tools:    []AgentTool{{Tool: writeTool, Run: tool.run}},
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

func TestFakeCohereRejectsProtocolErrors(t *testing.T) {
	const good = `{"model":"m","messages":[{"role":"user","content":"hi"}]}`
	tests := []struct {
		name, method, path, auth, body string
		wantStatus                     int
		wantReport                     string
	}{
		{"wrong path", "POST", "/v1/chat", "Bearer " + FakeAPIKey, good, 404, `path "/v1/chat", want /v2/chat`},
		{"wrong method", "GET", "/v2/chat", "Bearer " + FakeAPIKey, "", 405, "method GET, want POST"},
		{"no auth", "POST", "/v2/chat", "", good, 401, "missing or wrong Authorization bearer token"},
		{"wrong key", "POST", "/v2/chat", "Bearer sk-real-key", good, 401, "missing or wrong Authorization bearer token"},
		{"not JSON", "POST", "/v2/chat", "Bearer " + FakeAPIKey, "{", 400, "request 1 is not a chat request"},
		{"no messages", "POST", "/v2/chat", "Bearer " + FakeAPIKey, `{"model":"m","messages":[]}`, 400, "request 1 is not a chat request"},
		{"script exhausted", "POST", "/v2/chat", "Bearer " + FakeAPIKey, good, 400, "no reply left for request 1 (script has 0)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := NewFakeCohere()
			var reports []string
			f.errorf = func(format string, args ...any) { reports = append(reports, fmt.Sprintf(format, args...)) }
			req := httptest.NewRequest(tt.method, tt.path, strings.NewReader(tt.body))
			if tt.auth != "" {
				req.Header.Set("Authorization", tt.auth)
			}
			w := httptest.NewRecorder()
			f.ServeHTTP(w, req)
			if w.Code != tt.wantStatus {
				t.Errorf("status = %d, want %d", w.Code, tt.wantStatus)
			}
			if len(reports) != 1 || !strings.Contains(reports[0], tt.wantReport) {
				t.Errorf("reports = %q, want one containing %q", reports, tt.wantReport)
			}
			if strings.Contains(w.Body.String()+strings.Join(reports, ""), "sk-real-key") {
				t.Error("the fake echoed the Authorization header")
			}
		})
	}
}

func TestFakeCohereSetHandler(t *testing.T) {
	srv := NewFakeCohereServer(t)
	srv.SetHandler(func(body []byte) FakeReply {
		if strings.Contains(string(body), `"role":"tool"`) {
			return FakeReply{Text: "saw the tool result"}
		}
		return FakeReply{ToolCalls: []FakeToolCall{{Name: "read", Arguments: json.RawMessage(`{"path":"a.md"}`)}}}
	})
	c, _ := newTestCohere(t, srv.URL(), nil)
	res, err := RunAgent(t.Context(), c, AgentConfig{
		Messages: []Message{TextMessage(RoleUser, "read a.md")},
		Tools: []AgentTool{{Tool: readTool, Run: func(context.Context, json.RawMessage) (string, error) {
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
	srv := NewFakeCohereServer(t, FakeReply{Delay: time.Minute, Text: "late"})
	c, _ := newTestCohere(t, srv.URL(), func(cfg *CohereConfig) { cfg.MaxRetries = -1 })
	errc := make(chan error, 1)
	go func() {
		_, err := c.Chat(context.Background(), Request{Messages: []Message{TextMessage(RoleUser, "hi")}})
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

func TestFakeArguments(t *testing.T) {
	tests := []struct{ in, want string }{
		{``, `{}`},
		{`{ "a" : [1, 2] }`, `{"a":[1,2]}`},
		{`"{oops"`, `{oops`},
		{`"\"quoted\""`, `"quoted"`},
		{`{not json`, `{not json`},
	}
	for _, tt := range tests {
		if got := fakeArguments(json.RawMessage(tt.in)); got != tt.want {
			t.Errorf("fakeArguments(%s) = %s, want %s", tt.in, got, tt.want)
		}
	}
}

func TestScripted(t *testing.T) {
	sc := NewScripted(TextReply("one"))
	msgs := []Message{TextMessage(RoleUser, "a")}
	resp, err := sc.Chat(t.Context(), Request{Messages: msgs})
	if err != nil || resp.Message.Text() != "one" {
		t.Fatalf("first reply = %+v, %v", resp, err)
	}
	// Mutating the caller's slice after the call must not change the record.
	msgs[0] = TextMessage(RoleUser, "changed")
	resp.Message.Parts[0].Text = "mutated"
	if got := sc.Requests()[0].Messages[0].Text(); got != "a" {
		t.Errorf("recorded request changed to %q", got)
	}
	if sc.Responses[0].Message.Text() != "one" {
		t.Error("caller mutated the script through the returned response")
	}
	_, err = sc.Chat(t.Context(), Request{Messages: msgs})
	if !errors.Is(err, ErrScriptExhausted) || err.Error() != "scripted client: no reply left for request 2 (script has 1)" {
		t.Errorf("exhausted error = %v", err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := sc.Chat(ctx, Request{}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled ctx error = %v", err)
	}
	if n := len(sc.Requests()); n != 2 {
		t.Errorf("recorded %d requests, want 2", n)
	}
}

func TestMessageText(t *testing.T) {
	m := Message{Role: RoleUser, Parts: []Part{{Text: "a"}, {ImageURL: tinyPNG}, {Text: "b"}, {Text: ""}}}
	if m.Text() != "ab" || m.lastText() != "b" {
		t.Errorf("Text, lastText = %q, %q", m.Text(), m.lastText())
	}
	if (Message{}).Text() != "" || (Message{}).lastText() != "" {
		t.Error("empty message has text")
	}
	if got := TextMessage(RoleSystem, "x"); got.Role != RoleSystem || got.Text() != "x" {
		t.Errorf("TextMessage = %+v", got)
	}
}

func FuzzParseFakeScript(f *testing.F) {
	data, err := os.ReadFile(filepath.Join("testdata", "fake_script.json"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(string(data))
	f.Add(`[{"status": 500, "body": "x", "delay": "1ms"}]`)
	f.Fuzz(func(t *testing.T, script string) {
		replies, err := parseFakeScript([]byte(script))
		if err != nil {
			return
		}
		for _, r := range replies {
			if r.validate() != nil {
				t.Errorf("accepted invalid reply %+v", r)
			}
			wireResponse(r, 1)
		}
	})
}
