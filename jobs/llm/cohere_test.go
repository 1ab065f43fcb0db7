package llm_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/reme-dev/reme/jobs/llm"
	"github.com/reme-dev/reme/jobs/llm/llmtest"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata/")

// sleepRecorder replaces CohereConfig.Sleep: it records each delay and
// returns at once, so retry tests take no time.
type sleepRecorder struct {
	mu     sync.Mutex
	delays []time.Duration
}

func (r *sleepRecorder) sleep(ctx context.Context, d time.Duration) error {
	r.mu.Lock()
	r.delays = append(r.delays, d)
	r.mu.Unlock()
	return ctx.Err()
}

func (r *sleepRecorder) got() []time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]time.Duration(nil), r.delays...)
}

func newTestCohere(t *testing.T, baseURL string, mod func(*llm.Config)) (*llm.Cohere, *sleepRecorder) {
	t.Helper()
	rec := &sleepRecorder{}
	cfg := llm.Config{APIKey: llmtest.FakeAPIKey, BaseURL: baseURL, Sleep: rec.sleep, Timeout: 5 * time.Second}
	if mod != nil {
		mod(&cfg)
	}
	c, err := llm.NewCohere(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c, rec
}

func ptr[T any](v T) *T { return &v }

const tinyPNG = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="

var writeTool = llm.Tool{
	Name:        "daily_write",
	Description: "Create the day's note for this conversation.",
	Parameters: json.RawMessage(`{"type":"object","properties":{
		"name":{"type":"string","description":"file name stem"},
		"description":{"type":"string"},
		"tags":{"type":"array","items":{"type":"string"}},
		"content":{"type":"string"}},
		"required":["name","description","content"],"additionalProperties":false}`),
}

var readTool = llm.Tool{
	Name:        "read",
	Description: "Read a workspace file.",
	Parameters:  json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"},"offset":{"type":"integer"}},"required":["path"]}`),
}

func TestCohereGoldenRequests(t *testing.T) {
	tests := []struct {
		name string
		req  llm.Request
	}{
		{
			name: "text_only",
			req:  llm.Request{Messages: []llm.Message{llm.TextMessage(llm.RoleUser, "Hello there.")}},
		},
		{
			name: "full_conversation",
			req: llm.Request{
				Temperature: ptr(0.3),
				MaxTokens:   2000,
				Tools:       []llm.Tool{writeTool, readTool},
				Messages: []llm.Message{
					llm.TextMessage(llm.RoleSystem, "You are an automatic memory system."),
					{Role: llm.RoleUser, Parts: []llm.Part{{Text: "Remember this screenshot."}, {ImageURL: tinyPNG}}},
					{
						Role:     llm.RoleAssistant,
						ToolPlan: "I will read the existing note first.",
						ToolCalls: []llm.ToolCall{{
							ID: "read_abc123", Name: "read",
							Arguments: json.RawMessage(`{"path":"daily/2026-06-20/cold-remedies.md"}`),
						}},
					},
					{Role: llm.RoleTool, ToolCallID: "read_abc123", Parts: []llm.Part{{Text: "---\nname: cold-remedies\n---\n\nGinger tea."}}},
					{Role: llm.RoleAssistant, Parts: []llm.Part{{Text: "The note exists."}, {Text: "Nothing to add."}}},
					llm.TextMessage(llm.RoleUser, "Thanks."),
				},
			},
		},
		{
			name: "explicit_model_empty_tool_result",
			req: llm.Request{
				Model: "command-r7b-12-2024",
				Tools: []llm.Tool{{Name: "list_tags", Description: "List tags."}},
				Messages: []llm.Message{
					{Role: llm.RoleSystem, Parts: []llm.Part{{Text: "Rule one."}, {Text: "Rule two."}}},
					llm.TextMessage(llm.RoleUser, "Tag it."),
					{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "c1", Name: "list_tags"}}},
					{Role: llm.RoleTool, ToolCallID: "c1"},
				},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.NewFakeCohereServer(t, llmtest.FakeReply{Text: "ok"})
			c, _ := newTestCohere(t, srv.URL(), nil)
			if _, err := c.Chat(t.Context(), tt.req); err != nil {
				t.Fatal(err)
			}
			reqs := srv.Requests()
			if len(reqs) != 1 {
				t.Fatalf("server got %d requests, want 1", len(reqs))
			}
			checkGolden(t, "request_"+tt.name, reqs[0])
		})
	}
}

func TestCohereParsesReplies(t *testing.T) {
	tests := []struct {
		name  string
		reply llmtest.FakeReply
		want  *llm.Response
	}{
		{
			name:  "text",
			reply: llmtest.FakeReply{Text: "Created the note.", InputTokens: 120, OutputTokens: 8},
			want: &llm.Response{
				Message:      llm.TextMessage(llm.RoleAssistant, "Created the note."),
				FinishReason: "COMPLETE",
				Usage:        llm.Usage{InputTokens: 120, OutputTokens: 8},
			},
		},
		{
			name: "tool_calls",
			reply: llmtest.FakeReply{
				ToolPlan: "Write the note, then read it back.",
				ToolCalls: []llmtest.FakeToolCall{
					{ID: "w1", Name: "daily_write", Arguments: json.RawMessage(`{"name": "cold-remedies", "tags": ["health"]}`)},
					{Name: "read", Arguments: json.RawMessage(`"{\"path\": oops"`)},
				},
				InputTokens: 50, OutputTokens: 30,
			},
			want: &llm.Response{
				Message: llm.Message{
					Role:     llm.RoleAssistant,
					ToolPlan: "Write the note, then read it back.",
					ToolCalls: []llm.ToolCall{
						{ID: "w1", Name: "daily_write", Arguments: json.RawMessage(`{"name":"cold-remedies","tags":["health"]}`)},
						{ID: "call_1_1", Name: "read", Arguments: json.RawMessage(`{"path": oops`)},
					},
				},
				FinishReason: "TOOL_CALL",
				Usage:        llm.Usage{InputTokens: 50, OutputTokens: 30},
			},
		},
		{
			name: "thinking_is_dropped_and_billed_units_used",
			reply: llmtest.FakeReply{Body: `{"id":"x","finish_reason":"COMPLETE","message":{"role":"assistant","content":[
				{"type":"thinking","thinking":"hmm"},{"type":"text","text":"First."},{"type":"text","text":"Second."}]},
				"usage":{"billed_units":{"input_tokens":7,"output_tokens":3}}}`},
			want: &llm.Response{
				Message:      llm.Message{Role: llm.RoleAssistant, Parts: []llm.Part{{Text: "First."}, {Text: "Second."}}},
				FinishReason: "COMPLETE",
				Usage:        llm.Usage{InputTokens: 7, OutputTokens: 3},
			},
		},
		{
			name:  "tool_call_without_arguments",
			reply: llmtest.FakeReply{Body: `{"id":"x","finish_reason":"TOOL_CALL","message":{"role":"assistant","tool_calls":[{"id":"t","type":"function","function":{"name":"list_tags"}}]}}`},
			want: &llm.Response{
				Message:      llm.Message{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "t", Name: "list_tags", Arguments: json.RawMessage(`{}`)}}},
				FinishReason: "TOOL_CALL",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.NewFakeCohereServer(t, tt.reply)
			c, _ := newTestCohere(t, srv.URL(), nil)
			got, err := c.Chat(t.Context(), llm.Request{Messages: []llm.Message{llm.TextMessage(llm.RoleUser, "hi")}})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("response mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCohereErrors(t *testing.T) {
	hi := llm.Request{Messages: []llm.Message{llm.TextMessage(llm.RoleUser, "hi")}}
	tests := []struct {
		name       string
		replies    []llmtest.FakeReply
		maxRetries int
		timeout    time.Duration
		wantErr    error
		wantText   string
		wantCalls  int
		wantSleeps []time.Duration // exact delays; nil means none
		sleepRange bool            // compare wantSleeps as the nominal Backoff (±20%)
	}{
		{
			name:      "401 fails at once",
			replies:   []llmtest.FakeReply{{Status: 401, Body: `{"id":"e","message":"invalid api token"}`}},
			wantErr:   llm.ErrUnauthorized,
			wantText:  "cohere chat: unauthorized (401): check COHERE_API_KEY: invalid api token",
			wantCalls: 1,
		},
		{
			name:      "400 fails at once",
			replies:   []llmtest.FakeReply{{Status: 400, Body: `{"message":"invalid request: model 'x' not found"}`}},
			wantErr:   llm.ErrBadRequest,
			wantText:  "cohere chat: bad request (400): invalid request: model 'x' not found",
			wantCalls: 1,
		},
		{
			name: "500 until retries run out",
			replies: []llmtest.FakeReply{
				{Status: 500}, {Status: 502}, {Status: 503}, {Status: 500, Body: `{"message":"internal server error"}`},
			},
			wantErr:    llm.ErrServer,
			wantText:   "cohere chat: server error (500) after 4 attempts: internal server error",
			wantCalls:  4,
			wantSleeps: []time.Duration{time.Second, 2 * time.Second, 4 * time.Second},
			sleepRange: true,
		},
		{
			name:       "429 until retries run out",
			replies:    []llmtest.FakeReply{{Status: 429}, {Status: 429}},
			maxRetries: 1,
			wantErr:    llm.ErrRateLimited,
			wantText:   "cohere chat: rate limited (429) after 2 attempts: Too Many Requests",
			wantCalls:  2,
			wantSleeps: []time.Duration{time.Second},
			sleepRange: true,
		},
		{
			name:       "retries disabled",
			replies:    []llmtest.FakeReply{{Status: 503}},
			maxRetries: -1,
			wantErr:    llm.ErrServer,
			wantCalls:  1,
		},
		{
			name:      "malformed JSON",
			replies:   []llmtest.FakeReply{{Body: `{"id": "x", "message": {`}},
			wantErr:   llm.ErrBadResponse,
			wantCalls: 1,
		},
		{
			name:      "no message",
			replies:   []llmtest.FakeReply{{Body: `{"id":"x","finish_reason":"COMPLETE"}`}},
			wantErr:   llm.ErrBadResponse,
			wantText:  "cohere chat: bad response: response has no message",
			wantCalls: 1,
		},
		{
			name:      "tool call without a name",
			replies:   []llmtest.FakeReply{{Body: `{"id":"x","message":{"role":"assistant","tool_calls":[{"id":"a","function":{}}]}}`}},
			wantErr:   llm.ErrBadResponse,
			wantCalls: 1,
		},
		{
			name:       "timeout",
			replies:    []llmtest.FakeReply{{Delay: 10 * time.Second, Text: "too late"}},
			maxRetries: -1,
			timeout:    100 * time.Millisecond,
			wantErr:    llm.ErrTimeout,
			wantText:   "cohere chat: timeout: no answer within 100ms",
			wantCalls:  1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.NewFakeCohereServer(t, tt.replies...)
			c, sleeps := newTestCohere(t, srv.URL(), func(cfg *llm.Config) {
				cfg.MaxRetries = tt.maxRetries
				if tt.timeout != 0 {
					cfg.Timeout = tt.timeout
				}
			})
			_, err := c.Chat(t.Context(), hi)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("error = %v, want %v", err, tt.wantErr)
			}
			if tt.wantText != "" && err.Error() != tt.wantText {
				t.Errorf("error text = %q\nwant %q", err.Error(), tt.wantText)
			}
			if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
				t.Errorf("error %v must not look like the caller's context ending", err)
			}
			if n := len(srv.Requests()); n != tt.wantCalls {
				t.Errorf("server got %d requests, want %d", n, tt.wantCalls)
			}
			got := sleeps.got()
			if len(got) != len(tt.wantSleeps) {
				t.Fatalf("slept %v, want %d sleeps like %v", got, len(tt.wantSleeps), tt.wantSleeps)
			}
			for i, d := range got {
				lo, hi := tt.wantSleeps[i], tt.wantSleeps[i]
				if tt.sleepRange {
					lo, hi = lo*8/10, hi*12/10
				}
				if d < lo || d > hi {
					t.Errorf("sleep %d = %v, want within [%v, %v]", i, d, lo, hi)
				}
			}
			var apiErr *llm.APIError
			if errors.As(err, &apiErr) && apiErr.Attempts != tt.wantCalls {
				t.Errorf("APIError.Attempts = %d, want %d", apiErr.Attempts, tt.wantCalls)
			}
		})
	}
}

func TestCohereRetriesThenSucceeds(t *testing.T) {
	tests := []struct {
		name       string
		replies    []llmtest.FakeReply
		wantSleeps []time.Duration
	}{
		{
			name:       "429 with Retry-After seconds",
			replies:    []llmtest.FakeReply{{Status: 429, Header: map[string]string{"Retry-After": "7"}}, {Text: "done"}},
			wantSleeps: []time.Duration{7 * time.Second},
		},
		{
			name:       "Retry-After is capped",
			replies:    []llmtest.FakeReply{{Status: 503, Header: map[string]string{"Retry-After": "3600"}}, {Text: "done"}},
			wantSleeps: []time.Duration{llm.RetryAfterCap},
		},
		{
			name: "timeout then success",
			replies: []llmtest.FakeReply{
				{Delay: 10 * time.Second, Text: "too late"},
				{Status: 429, Header: map[string]string{"Retry-After": "2"}},
				{Text: "done"},
			},
			wantSleeps: []time.Duration{0, 2 * time.Second},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.NewFakeCohereServer(t, tt.replies...)
			c, sleeps := newTestCohere(t, srv.URL(), func(cfg *llm.Config) { cfg.Timeout = 100 * time.Millisecond })
			resp, err := c.Chat(t.Context(), llm.Request{Messages: []llm.Message{llm.TextMessage(llm.RoleUser, "hi")}})
			if err != nil {
				t.Fatal(err)
			}
			if resp.Message.Text() != "done" {
				t.Errorf("text = %q, want done", resp.Message.Text())
			}
			got := sleeps.got()
			if len(got) != len(tt.wantSleeps) {
				t.Fatalf("slept %v, want %v", got, tt.wantSleeps)
			}
			for i, want := range tt.wantSleeps {
				if want == 0 {
					// A Backoff without Retry-After: nominal 1s with jitter.
					if got[i] < 800*time.Millisecond || got[i] > 1200*time.Millisecond {
						t.Errorf("sleep %d = %v, want about 1s", i, got[i])
					}
					continue
				}
				if got[i] != want {
					t.Errorf("sleep %d = %v, want %v (Retry-After)", i, got[i], want)
				}
			}
			if n := len(srv.Requests()); n != len(tt.replies) {
				t.Errorf("server got %d requests, want %d", n, len(tt.replies))
			}
		})
	}
}

func TestCohereCancelDuringBackoff(t *testing.T) {
	srv := llmtest.NewFakeCohereServer(t, llmtest.FakeReply{Status: 500}, llmtest.FakeReply{Text: "never asked"})
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var backoff time.Duration
	c, _ := newTestCohere(t, srv.URL(), func(cfg *llm.Config) {
		cfg.Sleep = func(ctx context.Context, d time.Duration) error {
			backoff = d
			cancel() // the caller gives up during the backoff
			// The real sleep, for an hour: it returns only because the
			// context ended (if it did not, the test would hang).
			return llm.SleepContext(ctx, time.Hour)
		}
	})
	_, err := c.Chat(ctx, llm.Request{Messages: []llm.Message{llm.TextMessage(llm.RoleUser, "hi")}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error = %v, want context.Canceled", err)
	}
	if backoff < 800*time.Millisecond {
		t.Errorf("backoff %v, want about 1s", backoff)
	}
	if n := len(srv.Requests()); n != 1 {
		t.Errorf("server got %d requests, want 1", n)
	}
}

// TestCohereCancelDuringRequest: the server would answer after 10s; the
// caller's deadline ends the request instead (an answer would mean the
// deadline was ignored).
func TestCohereCancelDuringRequest(t *testing.T) {
	srv := llmtest.NewFakeCohereServer(t, llmtest.FakeReply{Delay: 10 * time.Second, Text: "late"})
	c, _ := newTestCohere(t, srv.URL(), nil)
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	_, err := c.Chat(ctx, llm.Request{Messages: []llm.Message{llm.TextMessage(llm.RoleUser, "hi")}})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("error = %v, want context.DeadlineExceeded", err)
	}
	if errors.Is(err, llm.ErrTimeout) {
		t.Errorf("the caller's deadline must not be reported as ErrTimeout: %v", err)
	}
}

// TestInvalidRequests: what a provider cannot express is refused before
// any request, in the same words by both clients.
func TestInvalidRequests(t *testing.T) {
	tests := []struct {
		name string
		req  llm.Request
		want string
	}{
		{"no messages", llm.Request{}, "no messages"},
		{"image in system", llm.Request{Messages: []llm.Message{{Role: llm.RoleSystem, Parts: []llm.Part{{ImageURL: tinyPNG}}}}}, "only user messages may carry images"},
		{"both text and image", llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Parts: []llm.Part{{Text: "a", ImageURL: tinyPNG}}}}}, "both text and image_url"},
		{"tool without id", llm.Request{Messages: []llm.Message{{Role: llm.RoleTool, Parts: []llm.Part{{Text: "x"}}}}}, "no tool_call_id"},
		{"unknown role", llm.Request{Messages: []llm.Message{{Role: "developer", Parts: []llm.Part{{Text: "x"}}}}}, `unknown role "developer"`},
		{"empty assistant", llm.Request{Messages: []llm.Message{{Role: llm.RoleAssistant}}}, "no content and no tool calls"},
		{"empty user", llm.Request{Messages: []llm.Message{{Role: llm.RoleUser}}}, "no content"},
		{"tool calls on a user message", llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Parts: []llm.Part{{Text: "x"}}, ToolCalls: []llm.ToolCall{{ID: "a", Name: "b"}}}}}, "only assistant messages may carry tool calls"},
		{"tool call without id", llm.Request{Messages: []llm.Message{{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{Name: "x"}}}}}, "tool call without id"},
		{"bad parameters", llm.Request{Messages: []llm.Message{llm.TextMessage(llm.RoleUser, "x")}, Tools: []llm.Tool{{Name: "t", Parameters: json.RawMessage(`[1]`)}}}, "parameters are not a JSON object"},
	}
	cohereSrv := llmtest.NewFakeCohereServer(t)
	openAISrv := llmtest.NewFakeOpenAIServer(t)
	cohere, _ := newTestCohere(t, cohereSrv.URL(), nil)
	openAI, _ := newTestOpenAI(t, openAISrv.URL(), nil)
	for _, c := range []llm.Client{cohere, openAI} {
		for _, tt := range tests {
			t.Run(fmt.Sprint(c)+"/"+tt.name, func(t *testing.T) {
				_, err := c.Chat(t.Context(), tt.req)
				if !errors.Is(err, llm.ErrInvalidRequest) || !strings.Contains(err.Error(), tt.want) {
					t.Fatalf("error = %v, want ErrInvalidRequest containing %q", err, tt.want)
				}
			})
		}
	}
	if n := len(cohereSrv.Requests()) + len(openAISrv.Requests()); n != 0 {
		t.Errorf("servers got %d requests, want none", n)
	}
}

func TestNewCohereNeedsKey(t *testing.T) {
	for _, key := range []string{"", "  "} {
		if _, err := llm.NewCohere(llm.Config{APIKey: key}); !errors.Is(err, llm.ErrNoAPIKey) {
			t.Errorf("NewCohere(%q) error = %v, want ErrNoAPIKey", key, err)
		}
	}
}

// TestCohereNeverLeaksKey drives every failure path against a server that
// echoes the Authorization header back, and checks errors, logs and printed
// values for the key.
func TestCohereNeverLeaksKey(t *testing.T) {
	const key = "sk-live-SECRET-7f3a9c"
	var step int
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		step++
		n := step
		mu.Unlock()
		echo := r.Header.Get("Authorization")
		switch n {
		case 1:
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprintf(w, `{"message":"invalid api token %s"}`, echo)
		case 2:
			w.WriteHeader(http.StatusInternalServerError)
			fmt.Fprintf(w, "upstream rejected %s", echo)
		case 3:
			fmt.Fprintf(w, `{"message": "%s"`, echo)
		case 4:
			fmt.Fprintf(w, `{"id":"x","message":{"role":"%s"}}`, echo)
		default:
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprintf(w, `{"message":"bad key %s"}`, key)
		}
	}))
	defer srv.Close()

	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	cfg := llm.Config{APIKey: key, BaseURL: srv.URL, MaxRetries: -1, Logger: logger, Sleep: (&sleepRecorder{}).sleep}
	c, err := llm.NewCohere(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	for range 5 {
		_, err := c.Chat(t.Context(), llm.Request{Messages: []llm.Message{llm.TextMessage(llm.RoleUser, "hi")}})
		if err == nil {
			t.Fatal("want an error")
		}
		texts = append(texts, err.Error())
	}
	// An agent run logs Chat errors too.
	_, err = llm.RunAgent(t.Context(), c, llm.AgentConfig{Messages: []llm.Message{llm.TextMessage(llm.RoleUser, "hi")}, Logger: logger})
	if err == nil {
		t.Fatal("want an agent error")
	}
	texts = append(texts, err.Error())
	logger.Info("config", "cfg", cfg)
	texts = append(texts, logs.String(), fmt.Sprintf("%v %+v %#v %v", cfg, cfg, cfg, c))
	for _, s := range texts {
		if strings.Contains(s, key) || strings.Contains(s, "SECRET") {
			t.Errorf("API key leaked: %s", s)
		}
	}
	if !strings.Contains(texts[0], "[redacted]") {
		t.Errorf("echoed key should be redacted, got %q", texts[0])
	}
}

func TestParseRetryAfter(t *testing.T) {
	tests := []struct {
		in   string
		want time.Duration
	}{
		{"", 0},
		{"7", 7 * time.Second},
		{" 2 ", 2 * time.Second},
		{"0", 0},
		{"-3", 0},
		{"soon", 0},
		{time.Now().Add(-time.Hour).UTC().Format(http.TimeFormat), 0},
	}
	for _, tt := range tests {
		if got := llm.ParseRetryAfter(tt.in); got != tt.want {
			t.Errorf("ParseRetryAfter(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
	future := time.Now().Add(30 * time.Second).UTC().Format(http.TimeFormat)
	if got := llm.ParseRetryAfter(future); got < 28*time.Second || got > 30*time.Second {
		t.Errorf("ParseRetryAfter(date in 30s) = %v", got)
	}
}

func TestBackoff(t *testing.T) {
	for attempt, nominal := range map[int]time.Duration{1: time.Second, 2: 2 * time.Second, 3: 4 * time.Second, 6: llm.BackoffCap, 40: llm.BackoffCap} {
		for range 50 {
			d := llm.Backoff(attempt)
			if d < nominal*8/10 || d > nominal*12/10 {
				t.Fatalf("Backoff(%d) = %v, want %v ±20%%", attempt, d, nominal)
			}
		}
	}
}

// TestCohereDoesNotReadSDKEnv makes sure the key passed in is the one sent,
// whatever CO_API_KEY says.
func TestCohereDoesNotReadSDKEnv(t *testing.T) {
	t.Setenv("CO_API_KEY", "from-env")
	srv := llmtest.NewFakeCohereServer(t, llmtest.FakeReply{Text: "ok"})
	c, _ := newTestCohere(t, srv.URL(), nil)
	if _, err := c.Chat(t.Context(), llm.Request{Messages: []llm.Message{llm.TextMessage(llm.RoleUser, "hi")}}); err != nil {
		t.Fatal(err)
	}
}

func TestCohereUnusableBodies(t *testing.T) {
	tests := []struct {
		name  string
		write func(w io.Writer)
	}{
		{"empty", func(io.Writer) {}},
		{"too large", func(w io.Writer) { io.Copy(w, io.LimitReader(spaces{}, llm.MaxResponseBytes+10)) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { tt.write(w) }))
			defer srv.Close()
			c, _ := newTestCohere(t, srv.URL, nil)
			_, err := c.Chat(t.Context(), llm.Request{Messages: []llm.Message{llm.TextMessage(llm.RoleUser, "hi")}})
			if !errors.Is(err, llm.ErrBadResponse) {
				t.Fatalf("error = %v, want ErrBadResponse", err)
			}
		})
	}
}

type spaces struct{}

func (spaces) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = ' '
	}
	return len(p), nil
}

// TestCohereHidesURLCredentials: a proxy URL with a token in its query
// reaches the server with it, but neither that token nor the URL's user
// information is ever shown.
func TestCohereHidesURLCredentials(t *testing.T) {
	var got string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		user, pass, _ := r.BasicAuth()
		got = fmt.Sprintf("%s %s %s:%s", r.URL.Path, r.URL.RawQuery, user, pass)
		w.WriteHeader(http.StatusBadGateway)
		fmt.Fprintf(w, `{"message":"upstream refused %s"}`, r.URL.RawQuery)
	}))
	defer srv.Close()
	base := strings.Replace(srv.URL, "http://", "http://proxyuser:pw-SECRET-1@", 1) + "?token=tok-SECRET-2"
	c, _ := newTestCohere(t, base, func(cfg *llm.Config) { cfg.MaxRetries = -1 })
	_, err := c.Chat(t.Context(), llm.Request{Messages: []llm.Message{llm.TextMessage(llm.RoleUser, "hi")}})
	if !errors.Is(err, llm.ErrServer) {
		t.Fatalf("error = %v, want ErrServer", err)
	}
	if got != "/v2/chat token=tok-SECRET-2 :" {
		t.Errorf("server saw %q, want the path and the query token", got)
	}
	down, _ := newTestCohere(t, "http://proxyuser:pw-SECRET-1@127.0.0.1:1?token=tok-SECRET-2", func(cfg *llm.Config) { cfg.MaxRetries = -1 })
	_, downErr := down.Chat(t.Context(), llm.Request{Messages: []llm.Message{llm.TextMessage(llm.RoleUser, "hi")}})
	for _, s := range []string{err.Error(), fmt.Sprint(downErr), c.String(), fmt.Sprint(llm.Config{BaseURL: base})} {
		if strings.Contains(s, "SECRET") || strings.Contains(s, "proxyuser") {
			t.Errorf("credentials shown: %s", s)
		}
	}
	if downErr == nil || !strings.Contains(downErr.Error(), "http://***@127.0.0.1:1/v2/chat?token=***") {
		t.Errorf("connection error = %v", downErr)
	}
}
