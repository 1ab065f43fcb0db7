package llmtest

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/reme-dev/reme/jobs/llm"
)

// ErrScriptExhausted is returned by Scripted when a request arrives after
// the last scripted reply was used.
var ErrScriptExhausted = errors.New("scripted client: no reply left")

// FakeAPIKey is the only API key the fake Cohere servers accept.
const FakeAPIKey = "fake-cohere-key-0123456789"

// Scripted is a deterministic Client for tests: it answers with Responses in
// order, or with Func when that is set, and records every request.
type Scripted struct {
	// Responses are returned in order; set them before the first Chat.
	Responses []*llm.Response
	// Func, when set, answers every request instead of Responses.
	Func func(llm.Request) (*llm.Response, error)

	mu       sync.Mutex
	next     int
	requests []llm.Request
}

var _ llm.Client = (*Scripted)(nil)

// NewScripted returns a Scripted client that answers with responses in order.
func NewScripted(responses ...*llm.Response) *Scripted {
	return &Scripted{Responses: responses}
}

// TextReply is a Response with one text part and no tool calls.
func TextReply(text string) *llm.Response {
	return &llm.Response{Message: llm.TextMessage(llm.RoleAssistant, text), FinishReason: "COMPLETE"}
}

// ToolCallReply is a Response that calls the given tools.
func ToolCallReply(calls ...llm.ToolCall) *llm.Response {
	return &llm.Response{Message: llm.Message{Role: llm.RoleAssistant, ToolCalls: calls}, FinishReason: "TOOL_CALL"}
}

// Chat records req and returns the next scripted reply.
func (s *Scripted) Chat(ctx context.Context, req llm.Request) (*llm.Response, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	// Copy the slices: the caller keeps appending to its transcript.
	req.Messages = slices.Clone(req.Messages)
	req.Tools = slices.Clone(req.Tools)
	s.mu.Lock()
	s.requests = append(s.requests, req)
	n := len(s.requests)
	fn := s.Func
	var resp *llm.Response
	if fn == nil && s.next < len(s.Responses) {
		resp = s.Responses[s.next]
		s.next++
	}
	s.mu.Unlock()
	if fn != nil {
		return fn(req)
	}
	if resp == nil {
		return nil, fmt.Errorf("%w for request %d (script has %d)", ErrScriptExhausted, n, len(s.Responses))
	}
	out := *resp
	out.Message.Parts = slices.Clone(resp.Message.Parts)
	out.Message.ToolCalls = slices.Clone(resp.Message.ToolCalls)
	return &out, nil
}

// Requests returns every request received so far.
func (s *Scripted) Requests() []llm.Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.requests)
}

// FakeReply is one scripted answer of a fake Cohere server. A zero Status
// with an empty Body produces a Chat v2 response from Text, ToolPlan and
// ToolCalls; otherwise Body is sent verbatim with Status (default 200), which
// is how errors (401, 429, 500) and malformed answers are produced.
type FakeReply struct {
	Text      string         `json:"text,omitempty"`
	ToolPlan  string         `json:"tool_plan,omitempty"`
	ToolCalls []FakeToolCall `json:"tool_calls,omitempty"`
	// FinishReason defaults to TOOL_CALL when there are tool calls, else COMPLETE.
	FinishReason string `json:"finish_reason,omitempty"`
	InputTokens  int    `json:"input_tokens,omitempty"`
	OutputTokens int    `json:"output_tokens,omitempty"`

	// Status is the HTTP status; with no Body, a Cohere-style
	// {"message": ...} body is sent.
	Status int `json:"status,omitempty"`
	// Body is sent as is, e.g. "{not json" for a malformed answer.
	Body string `json:"body,omitempty"`
	// Header is added to the answer, e.g. {"Retry-After": "2"}.
	Header map[string]string `json:"header,omitempty"`
	// Delay is waited before answering; in JSON a duration string ("1.5s").
	Delay time.Duration `json:"-"`
}

// FakeToolCall is a tool call in a FakeReply. Arguments is any JSON value,
// sent compacted as the call's arguments string; a JSON string is sent as
// its content instead, so "{oops" scripts malformed arguments.
type FakeToolCall struct {
	// ID defaults to call_<request>_<index>.
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
}

// UnmarshalJSON reads a FakeReply from a script file, rejecting unknown keys
// so that a typo in a script fails loudly.
func (r *FakeReply) UnmarshalJSON(data []byte) error {
	type plain FakeReply
	var aux struct {
		plain
		Delay string `json:"delay,omitempty"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&aux); err != nil {
		return err
	}
	*r = FakeReply(aux.plain)
	if aux.Delay != "" {
		d, err := time.ParseDuration(aux.Delay)
		if err != nil {
			return fmt.Errorf("delay: %w", err)
		}
		r.Delay = d
	}
	return nil
}

func (r FakeReply) validate() error {
	if r.Status != 0 && (r.Status < 100 || r.Status > 599) {
		return fmt.Errorf("status %d out of range", r.Status)
	}
	if r.Delay < 0 {
		return errors.New("negative delay")
	}
	for i, tc := range r.ToolCalls {
		if tc.Name == "" {
			return fmt.Errorf("tool call %d has no name", i)
		}
	}
	return nil
}

// LoadFakeScript reads a fake Cohere script: a JSON array of replies, used in
// order, one per request. Keys of a reply (all optional):
//
//	text           assistant text
//	tool_plan      Cohere's tool_plan
//	tool_calls     [{"id": "...", "name": "daily_write", "arguments": {...}}]
//	finish_reason  defaults to TOOL_CALL with tool calls, else COMPLETE
//	input_tokens, output_tokens
//	status         HTTP status, e.g. 401, 429, 500
//	body           raw response body, e.g. "{not json"
//	header         {"Retry-After": "1"}
//	delay          wait before answering, e.g. "2s"
//
// For example:
//
//	[{"status": 429, "header": {"Retry-After": "1"}},
//	 {"tool_calls": [{"name": "daily_write", "arguments": {"name": "x"}}]},
//	 {"text": "Created daily/2026-06-20/x.md."}]
func LoadFakeScript(path string) ([]FakeReply, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("load fake script: %w", err)
	}
	replies, err := parseFakeScript(data)
	if err != nil {
		return nil, fmt.Errorf("load fake script %s: %w", path, err)
	}
	return replies, nil
}

func parseFakeScript(data []byte) ([]FakeReply, error) {
	var replies []FakeReply
	if err := decodeStrict(data, &replies); err != nil {
		return nil, err
	}
	for i, r := range replies {
		if err := r.validate(); err != nil {
			return nil, fmt.Errorf("reply %d: %w", i, err)
		}
	}
	return replies, nil
}

func decodeStrict(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return errors.New("trailing data after the JSON value")
	}
	return nil
}

// FakeCohere is an http.Handler speaking the Cohere Chat v2 wire format from
// a script. It checks the path, method, bearer token (FakeAPIKey) and that
// the body is a chat request; anything wrong is answered with a 4xx and, in
// a FakeCohereServer, fails the test.
type FakeCohere struct {
	mu       sync.Mutex
	replies  []FakeReply
	next     int
	handler  func(body []byte) FakeReply
	requests []json.RawMessage
	errorf   func(format string, args ...any)
	done     chan struct{}
	stop     sync.Once
}

// NewFakeCohere returns a handler answering with replies in order.
func NewFakeCohere(replies ...FakeReply) *FakeCohere {
	return &FakeCohere{replies: replies, done: make(chan struct{})}
}

// SetHandler makes h choose every following reply from the request body,
// for scripts that depend on what was asked.
func (f *FakeCohere) SetHandler(h func(body []byte) FakeReply) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.handler = h
}

// Requests returns every request body received, in order.
func (f *FakeCohere) Requests() []json.RawMessage {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]json.RawMessage, len(f.requests))
	for i, r := range f.requests {
		out[i] = slices.Clone(r)
	}
	return out
}

// Close ends pending delays so that servers can shut down at once.
func (f *FakeCohere) Close() {
	f.stop.Do(func() { close(f.done) })
}

func (f *FakeCohere) fail(w http.ResponseWriter, status int, format string, args ...any) {
	msg := "fake cohere: " + fmt.Sprintf(format, args...)
	if f.errorf != nil {
		f.errorf("%s", msg)
	}
	writeJSON(w, status, map[string]string{"message": msg})
}

// ServeHTTP implements http.Handler.
func (f *FakeCohere) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		f.fail(w, http.StatusMethodNotAllowed, "method %s, want POST", r.Method)
		return
	}
	if r.URL.Path != "/v2/chat" {
		f.fail(w, http.StatusNotFound, "path %q, want /v2/chat", r.URL.Path)
		return
	}
	// Never echo the header: a misconfigured test could be sending a real key.
	if r.Header.Get("Authorization") != "Bearer "+FakeAPIKey {
		f.fail(w, http.StatusUnauthorized, "missing or wrong Authorization bearer token")
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		f.fail(w, http.StatusBadRequest, "read body: %v", err)
		return
	}
	var req struct {
		Model    string            `json:"model"`
		Messages []json.RawMessage `json:"messages"`
	}
	bad := json.Unmarshal(body, &req) != nil || req.Model == "" || len(req.Messages) == 0

	f.mu.Lock()
	f.requests = append(f.requests, body)
	n := len(f.requests)
	handler := f.handler
	var reply FakeReply
	ok := true
	if handler == nil && !bad {
		ok = f.next < len(f.replies)
		if ok {
			reply = f.replies[f.next]
			f.next++
		}
	}
	f.mu.Unlock()

	if bad {
		f.fail(w, http.StatusBadRequest, "request %d is not a chat request with model and messages", n)
		return
	}
	if handler != nil {
		reply = handler(body)
	} else if !ok {
		f.fail(w, http.StatusBadRequest, "no reply left for request %d (script has %d)", n, len(f.replies))
		return
	}
	if err := reply.validate(); err != nil {
		f.fail(w, http.StatusBadRequest, "reply for request %d: %v", n, err)
		return
	}

	if reply.Delay > 0 {
		t := time.NewTimer(reply.Delay)
		defer t.Stop()
		select {
		case <-t.C:
		case <-r.Context().Done():
			return
		case <-f.done:
			return
		}
	}
	for k, v := range reply.Header {
		w.Header().Set(k, v)
	}
	if reply.Status != 0 || reply.Body != "" {
		status := cmp.Or(reply.Status, http.StatusOK)
		if reply.Body == "" {
			writeJSON(w, status, map[string]string{"message": http.StatusText(status)})
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		io.WriteString(w, reply.Body)
		return
	}
	writeJSON(w, http.StatusOK, wireResponse(reply, n))
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	data, err := json.Marshal(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(data)
}

type wireToolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

type wireTokens struct {
	InputTokens  int `json:"input_tokens"`
	OutputTokens int `json:"output_tokens"`
}

type wireResp struct {
	ID           string `json:"id"`
	FinishReason string `json:"finish_reason"`
	Message      struct {
		Role      string           `json:"role"`
		ToolPlan  string           `json:"tool_plan,omitempty"`
		ToolCalls []wireToolCall   `json:"tool_calls,omitempty"`
		Content   []map[string]any `json:"content,omitempty"`
	} `json:"message"`
	Usage struct {
		BilledUnits wireTokens `json:"billed_units"`
		Tokens      wireTokens `json:"tokens"`
	} `json:"usage"`
}

// wireResponse renders a FakeReply the way Cohere's /v2/chat does.
func wireResponse(r FakeReply, n int) wireResp {
	var out wireResp
	out.ID = "fake-" + strconv.Itoa(n)
	out.Message.Role = "assistant"
	out.Message.ToolPlan = r.ToolPlan
	for i, tc := range r.ToolCalls {
		var wc wireToolCall
		wc.ID = tc.ID
		if wc.ID == "" {
			wc.ID = fmt.Sprintf("call_%d_%d", n, i)
		}
		wc.Type = "function"
		wc.Function.Name = tc.Name
		wc.Function.Arguments = fakeArguments(tc.Arguments)
		out.Message.ToolCalls = append(out.Message.ToolCalls, wc)
	}
	if r.Text != "" || len(r.ToolCalls) == 0 {
		out.Message.Content = []map[string]any{{"type": "text", "text": r.Text}}
	}
	out.FinishReason = r.FinishReason
	if out.FinishReason == "" {
		out.FinishReason = "COMPLETE"
		if len(r.ToolCalls) > 0 {
			out.FinishReason = "TOOL_CALL"
		}
	}
	tokens := wireTokens{InputTokens: r.InputTokens, OutputTokens: r.OutputTokens}
	out.Usage.BilledUnits = tokens
	out.Usage.Tokens = tokens
	return out
}

func fakeArguments(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "{}"
	}
	var s string
	if raw[0] == '"' && json.Unmarshal(raw, &s) == nil {
		return s
	}
	var buf bytes.Buffer
	if json.Compact(&buf, raw) == nil {
		return buf.String()
	}
	return string(raw)
}

// FakeCohereServer is a FakeCohere behind an httptest.Server, closed when
// the test ends. Protocol violations fail the test through t.Errorf.
type FakeCohereServer struct {
	*FakeCohere
	srv *httptest.Server
}

// NewFakeCohereServer starts a fake Cohere server answering with replies in
// order. Point CohereConfig.BaseURL at URL() and use FakeAPIKey.
func NewFakeCohereServer(t testing.TB, replies ...FakeReply) *FakeCohereServer {
	t.Helper()
	for i, r := range replies {
		if err := r.validate(); err != nil {
			t.Fatalf("fake cohere reply %d: %v", i, err)
		}
	}
	f := NewFakeCohere(replies...)
	f.errorf = t.Errorf
	s := &FakeCohereServer{FakeCohere: f, srv: httptest.NewServer(f)}
	t.Cleanup(s.Close)
	return s
}

// Close ends pending delays and shuts the server down; the test's cleanup
// calls it too, so calling it early is optional.
func (s *FakeCohereServer) Close() {
	s.FakeCohere.Close()
	s.srv.Close()
}

// URL is the server's base URL, for CohereConfig.BaseURL.
func (s *FakeCohereServer) URL() string { return s.srv.URL }

// ServeFakeCohere serves a scripted fake Cohere API on ln until the returned
// server is closed; it is for harnesses without a testing.TB, such as
// testscript commands. Protocol violations are answered with 4xx errors.
func ServeFakeCohere(ln net.Listener, replies []FakeReply) *http.Server {
	f := NewFakeCohere(replies...)
	srv := &http.Server{Handler: f, ReadHeaderTimeout: 10 * time.Second}
	srv.RegisterOnShutdown(f.Close)
	go srv.Serve(ln)
	return srv
}
