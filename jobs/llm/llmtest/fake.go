package llmtest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/reme-dev/reme/jobs/llm"
)

// ErrScriptExhausted is returned by Scripted when a request arrives after
// the last scripted reply was used.
var ErrScriptExhausted = errors.New("scripted client: no reply left")

const (
	// FakeAPIKey is the only API key the fake Cohere servers accept.
	FakeAPIKey = "fake-cohere-key-0123456789"
	// FakeOpenAIKey is the only API key the fake OpenAI-compatible servers
	// accept; it differs from FakeAPIKey so that a test notices a key
	// taken from the wrong variable.
	FakeOpenAIKey = "fake-openai-key-0123456789"
)

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

// FakeReply is one scripted answer of a fake chat server. A zero Status
// with an empty Body produces a chat response in the server's wire format
// (Cohere Chat v2 or OpenAI chat completions) from Text, ToolPlan (Cohere
// only) and ToolCalls; otherwise Body is sent verbatim with Status (default
// 200), which is how errors (401, 429, 500) and malformed answers are
// produced. One script therefore drives either fake.
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

// LoadFakeScript reads a fake chat script: a JSON array of replies, used in
// order, one per request. Keys of a reply (all optional):
//
//	text           assistant text
//	tool_plan      Cohere's tool_plan (the OpenAI fake ignores it)
//	tool_calls     [{"id": "...", "name": "daily_write", "arguments": {...}}]
//	finish_reason  defaults to TOOL_CALL with tool calls, else COMPLETE
//	               (tool_calls and stop for the OpenAI fake)
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
