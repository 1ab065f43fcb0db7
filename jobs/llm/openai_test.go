package llm_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/reme-dev/reme/jobs/llm"
	"github.com/reme-dev/reme/jobs/llm/llmtest"
)

func newTestOpenAI(t *testing.T, baseURL string, mod func(*llm.Config)) (*llm.OpenAI, *sleepRecorder) {
	t.Helper()
	rec := &sleepRecorder{}
	cfg := llm.Config{APIKey: llmtest.FakeOpenAIKey, BaseURL: baseURL, Model: "llama3.1", VisionModel: "llava", Sleep: rec.sleep, Timeout: 5 * time.Second}
	if mod != nil {
		mod(&cfg)
	}
	c, err := llm.NewOpenAI(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c, rec
}

// checkGolden compares a request body with testdata/golden/NAME.json
// (rewritten with -update).
func checkGolden(t *testing.T, name string, body []byte) {
	t.Helper()
	var got bytes.Buffer
	if err := json.Indent(&got, body, "", "  "); err != nil {
		t.Fatal(err)
	}
	got.WriteByte('\n')
	golden := filepath.Join("testdata", "golden", name+".json")
	if *update {
		if err := os.WriteFile(golden, got.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update to create)", err)
	}
	if diff := cmp.Diff(string(want), got.String()); diff != "" {
		t.Errorf("request body mismatch (-golden +got):\n%s", diff)
	}
}

func TestOpenAIGoldenRequests(t *testing.T) {
	tests := []struct {
		name string
		req  llm.Request
	}{
		{"text_only", llm.Request{Messages: []llm.Message{llm.TextMessage(llm.RoleUser, "Hello there.")}}},
		{"full_conversation", llm.Request{
			Temperature: ptr(0.3),
			MaxTokens:   2000,
			Tools:       []llm.Tool{writeTool, readTool},
			Messages: []llm.Message{
				llm.TextMessage(llm.RoleSystem, "You are an automatic memory system."),
				{Role: llm.RoleUser, Parts: []llm.Part{{Text: "Remember this screenshot."}, {ImageURL: tinyPNG}}},
				{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "read_abc123", Name: "read", Arguments: json.RawMessage(`{"path":"daily/2026-06-20/cold-remedies.md"}`)}}},
				{Role: llm.RoleTool, ToolCallID: "read_abc123", Parts: []llm.Part{{Text: "---\nname: cold-remedies\n---\n\nGinger tea."}}},
				{Role: llm.RoleAssistant, Parts: []llm.Part{{Text: "The note exists."}, {Text: "Nothing to add."}}},
				llm.TextMessage(llm.RoleUser, "Thanks."),
			},
		}},
		{"explicit_model_empty_tool_result_malformed_replay", llm.Request{
			Model: "qwen2.5:7b",
			Tools: []llm.Tool{{Name: "list_tags", Description: "List tags."}},
			Messages: []llm.Message{
				{Role: llm.RoleSystem, Parts: []llm.Part{{Text: "Rule one."}, {Text: "Rule two."}}},
				llm.TextMessage(llm.RoleUser, "Tag it."),
				{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "c1", Name: "list_tags"}, {ID: "c2", Name: "list_tags", Arguments: json.RawMessage(`{"limit": 5,`)}}},
				{Role: llm.RoleTool, ToolCallID: "c1"},
				{Role: llm.RoleTool, ToolCallID: "c2", Parts: []llm.Part{{Text: "Error: invalid arguments"}}},
			},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.NewFakeOpenAIServer(t, llmtest.FakeReply{Text: "ok"})
			c, _ := newTestOpenAI(t, srv.URL(), nil)
			if _, err := c.Chat(t.Context(), tt.req); err != nil {
				t.Fatal(err)
			}
			reqs := srv.Requests()
			if len(reqs) != 1 {
				t.Fatalf("server got %d requests, want 1", len(reqs))
			}
			checkGolden(t, "openai_request_"+tt.name, reqs[0])
		})
	}
}

// TestOpenAIOfficialUsesMaxCompletionTokens: api.openai.com wants
// max_completion_tokens; other servers know max_tokens (golden above).
func TestOpenAIOfficialUsesMaxCompletionTokens(t *testing.T) {
	var body []byte
	hc := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		body, _ = io.ReadAll(r.Body)
		if r.URL.String() != "https://api.openai.com/v1/chat/completions" {
			t.Errorf("URL = %s", r.URL)
		}
		return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"application/json"}},
			Body: io.NopCloser(strings.NewReader(`{"choices":[{"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}]}`))}, nil
	})}
	c, err := llm.NewOpenAI(llm.Config{APIKey: "k", HTTPClient: hc})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Chat(t.Context(), llm.Request{MaxTokens: 100, Messages: []llm.Message{llm.TextMessage(llm.RoleUser, "hi")}}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(body), `"max_completion_tokens":100`) || strings.Contains(string(body), `"max_tokens"`) ||
		!strings.Contains(string(body), `"model":"`+llm.DefaultOpenAIModel+`"`) {
		t.Errorf("body = %s", body)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestOpenAIParsesReplies(t *testing.T) {
	hi := llm.Request{Messages: []llm.Message{llm.TextMessage(llm.RoleUser, "hi")}}
	wrap := func(message string) string {
		return `{"id":"x","object":"chat.completion","model":"m","choices":[{"index":0,"finish_reason":"tool_calls","message":` + message + `}],"usage":{"prompt_tokens":7,"completion_tokens":3,"total_tokens":10}}`
	}
	tests := []struct {
		name        string
		reply       llmtest.FakeReply
		contentType string
		want        *llm.Response
	}{
		{
			name:  "text",
			reply: llmtest.FakeReply{Text: "Created the note.", InputTokens: 120, OutputTokens: 8},
			want:  &llm.Response{Message: llm.TextMessage(llm.RoleAssistant, "Created the note."), FinishReason: "stop", Usage: llm.Usage{InputTokens: 120, OutputTokens: 8}},
		},
		{
			name: "tool_calls",
			reply: llmtest.FakeReply{ToolCalls: []llmtest.FakeToolCall{
				{ID: "w1", Name: "daily_write", Arguments: json.RawMessage(`{"name": "cold-remedies", "tags": ["health"]}`)},
				{Name: "read", Arguments: json.RawMessage(`"{\"path\": oops"`)},
			}, InputTokens: 50, OutputTokens: 30},
			want: &llm.Response{
				Message: llm.Message{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{
					{ID: "w1", Name: "daily_write", Arguments: json.RawMessage(`{"name":"cold-remedies","tags":["health"]}`)},
					{ID: "call_1_1", Name: "read", Arguments: json.RawMessage(`{"path": oops`)},
				}},
				FinishReason: "tool_calls",
				Usage:        llm.Usage{InputTokens: 50, OutputTokens: 30},
			},
		},
		{
			name:  "arguments as an object, no id, no type (loose servers)",
			reply: llmtest.FakeReply{Body: wrap(`{"role":"assistant","content":null,"tool_calls":[{"function":{"name":"read","arguments":{"path":"a.md"}}}]}`)},
			want: &llm.Response{Message: llm.Message{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{Name: "read", Arguments: json.RawMessage(`{"path":"a.md"}`)}}},
				FinishReason: "tool_calls", Usage: llm.Usage{InputTokens: 7, OutputTokens: 3}},
		},
		{
			name:  "arguments encoded twice, empty arguments",
			reply: llmtest.FakeReply{Body: wrap(`{"role":"assistant","tool_calls":[{"id":"a","type":"function","function":{"name":"read","arguments":"\"{\\\"path\\\":\\\"a.md\\\"}\""}},{"id":"b","type":"function","function":{"name":"list_tags","arguments":""}}]}`)},
			want: &llm.Response{Message: llm.Message{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{
				{ID: "a", Name: "read", Arguments: json.RawMessage(`{"path":"a.md"}`)},
				{ID: "b", Name: "list_tags", Arguments: json.RawMessage(`{}`)},
			}}, FinishReason: "tool_calls", Usage: llm.Usage{InputTokens: 7, OutputTokens: 3}},
		},
		{
			name:  "legacy function_call",
			reply: llmtest.FakeReply{Body: wrap(`{"role":"assistant","content":null,"function_call":{"name":"read","arguments":"{\"path\":\"b.md\"}"}}`)},
			want: &llm.Response{Message: llm.Message{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{Name: "read", Arguments: json.RawMessage(`{"path":"b.md"}`)}}},
				FinishReason: "tool_calls", Usage: llm.Usage{InputTokens: 7, OutputTokens: 3}},
		},
		{
			name:        "content as a list, JSON labelled as text",
			reply:       llmtest.FakeReply{Body: wrap(`{"role":"assistant","content":[{"type":"text","text":"First."},{"type":"text","text":"Second."}]}`)},
			contentType: "text/plain",
			want: &llm.Response{Message: llm.TextMessage(llm.RoleAssistant, "First.\n\nSecond."),
				FinishReason: "tool_calls", Usage: llm.Usage{InputTokens: 7, OutputTokens: 3}},
		},
		{
			name:  "refusal",
			reply: llmtest.FakeReply{Body: wrap(`{"role":"assistant","content":null,"refusal":"I cannot help with that."}`)},
			want: &llm.Response{Message: llm.TextMessage(llm.RoleAssistant, "I cannot help with that."),
				FinishReason: "tool_calls", Usage: llm.Usage{InputTokens: 7, OutputTokens: 3}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake := llmtest.NewFakeOpenAIServer(t, tt.reply)
			url := fake.URL()
			if tt.contentType != "" {
				// Relabel the fake's answer, as some local servers do.
				srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					rec := httptest.NewRecorder()
					r.URL.Path = "/v1" + strings.TrimPrefix(r.URL.Path, "/v1")
					fake.ServeHTTP(rec, r)
					w.Header().Set("Content-Type", tt.contentType)
					w.WriteHeader(rec.Code)
					w.Write(rec.Body.Bytes())
				}))
				defer srv.Close()
				url = srv.URL + "/v1"
			}
			c, _ := newTestOpenAI(t, url, nil)
			got, err := c.Chat(t.Context(), hi)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("response mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestOpenAIErrors(t *testing.T) {
	hi := llm.Request{Messages: []llm.Message{llm.TextMessage(llm.RoleUser, "hi")}}
	tests := []struct {
		name      string
		replies   []llmtest.FakeReply
		timeout   time.Duration
		wantErr   []error
		wantText  string
		wantCalls int
		wantSleep []time.Duration
	}{
		{
			name:      "401 names the variables",
			replies:   []llmtest.FakeReply{{Status: 401, Body: `{"error":{"message":"Incorrect API key provided","type":"invalid_request_error","code":"invalid_api_key"}}`}},
			wantErr:   []error{llm.ErrUnauthorized},
			wantText:  "openai chat: unauthorized (401): check the API key (OPENAI_API_KEY, REME_LLM_API_KEY or LLM_API_KEY): Incorrect API key provided",
			wantCalls: 1,
		},
		{
			name:      "404 hints at the base URL",
			replies:   []llmtest.FakeReply{{Status: 404, Body: `{"error":"model \"llama3.1\" not found, try pulling it first"}`}},
			wantErr:   []error{llm.ErrBadRequest},
			wantText:  "openai chat: bad request (404): check the base URL (OpenAI-compatible APIs usually end in /v1) and the model name: model \"llama3.1\" not found, try pulling it first",
			wantCalls: 1,
		},
		{
			name:      "Ollama model without tools",
			replies:   []llmtest.FakeReply{{Status: 400, Body: `{"error":{"message":"registry.ollama.ai/library/gemma:2b does not support tools","type":"api_error"}}`}},
			wantErr:   []error{llm.ErrNoToolCalls, llm.ErrBadRequest},
			wantText:  "openai chat: the model does not call tools (400): registry.ollama.ai/library/gemma:2b does not support tools",
			wantCalls: 1,
		},
		{
			name:      "llama.cpp without --jinja is not retried",
			replies:   []llmtest.FakeReply{{Status: 500, Body: `{"error":{"code":500,"message":"tools param requires --jinja flag","type":"server_error"}}`}},
			wantErr:   []error{llm.ErrNoToolCalls},
			wantCalls: 1,
		},
		{
			name:      "vLLM without a tool parser",
			replies:   []llmtest.FakeReply{{Status: 400, Body: `{"object":"error","message":"\"auto\" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set","type":"BadRequestError","code":400}`}},
			wantErr:   []error{llm.ErrNoToolCalls},
			wantCalls: 1,
		},
		{
			name:      "429 then 503 until retries run out, Retry-After honoured",
			replies:   []llmtest.FakeReply{{Status: 429, Header: map[string]string{"Retry-After": "3"}}, {Status: 503}, {Status: 503}, {Status: 503}},
			wantErr:   []error{llm.ErrServer},
			wantText:  "openai chat: server error (503) after 4 attempts: Service Unavailable",
			wantCalls: 4,
			wantSleep: []time.Duration{3 * time.Second, 0, 0},
		},
		{
			name:      "no choices",
			replies:   []llmtest.FakeReply{{Body: `{"id":"x","object":"chat.completion","choices":[]}`}},
			wantErr:   []error{llm.ErrBadResponse},
			wantText:  "openai chat: bad response: response has no choices",
			wantCalls: 1,
		},
		{
			name:      "malformed JSON",
			replies:   []llmtest.FakeReply{{Body: `{"id": "x", "choices": [`}},
			wantErr:   []error{llm.ErrBadResponse},
			wantCalls: 1,
		},
		{
			name:      "tool call without a name",
			replies:   []llmtest.FakeReply{{Body: `{"choices":[{"message":{"role":"assistant","tool_calls":[{"id":"a","type":"function","function":{"arguments":"{}"}}]}}]}`}},
			wantErr:   []error{llm.ErrBadResponse},
			wantCalls: 1,
		},
		{
			name:      "timeout on every attempt",
			replies:   []llmtest.FakeReply{{Delay: 10 * time.Second, Text: "late"}, {Delay: 10 * time.Second, Text: "late"}, {Delay: 10 * time.Second, Text: "late"}, {Delay: 10 * time.Second, Text: "late"}},
			timeout:   50 * time.Millisecond,
			wantErr:   []error{llm.ErrTimeout},
			wantText:  "openai chat: timeout: no answer within 50ms after 4 attempts",
			wantCalls: 4,
			wantSleep: []time.Duration{0, 0, 0},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.NewFakeOpenAIServer(t, tt.replies...)
			c, sleeps := newTestOpenAI(t, srv.URL(), func(cfg *llm.Config) {
				if tt.timeout != 0 {
					cfg.Timeout = tt.timeout
				}
			})
			_, err := c.Chat(t.Context(), hi)
			for _, want := range tt.wantErr {
				if !errors.Is(err, want) {
					t.Errorf("error = %v, want it to be %v", err, want)
				}
			}
			if tt.wantText != "" && (err == nil || err.Error() != tt.wantText) {
				t.Errorf("error text = %v\nwant %q", err, tt.wantText)
			}
			if n := len(srv.Requests()); n != tt.wantCalls {
				t.Errorf("server got %d requests, want %d", n, tt.wantCalls)
			}
			got := sleeps.got()
			if len(got) != len(tt.wantSleep) {
				t.Fatalf("slept %v, want %d sleeps", got, len(tt.wantSleep))
			}
			for i, want := range tt.wantSleep {
				if want != 0 && got[i] != want {
					t.Errorf("sleep %d = %v, want %v", i, got[i], want)
				}
			}
		})
	}
}

func TestNewOpenAIConfig(t *testing.T) {
	tests := []struct {
		name string
		cfg  llm.Config
		want string
	}{
		{"no model for a local server", llm.Config{BaseURL: "http://127.0.0.1:11434/v1"}, "invalid model configuration: no chat model for the server at http://127.0.0.1:11434/v1 (set llm.model)"},
		{"not http", llm.Config{BaseURL: "ftp://example.com", Model: "m"}, "invalid model configuration: base URL ftp://example.com is not an http(s) URL with a host"},
		{"no host, secret hidden", llm.Config{BaseURL: "http:///v1?key=SECRETVALUE", Model: "m"}, "base URL http:///v1?key=*** is not"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := llm.NewOpenAI(tt.cfg)
			if !errors.Is(err, llm.ErrInvalidConfig) || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "SECRETVALUE") {
				t.Fatalf("error = %v, want ErrInvalidConfig containing %q", err, tt.want)
			}
		})
	}
}

// TestOpenAIWithoutKeyAndWithQuery: a local server needs no key (no
// Authorization header is sent), and query parameters of the base URL are
// sent with every request, which the SDK alone would drop.
func TestOpenAIWithoutKeyAndWithQuery(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, fmt.Sprintf("%s %s auth=%q", r.URL.Path, r.URL.RawQuery, r.Header.Get("Authorization")))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"choices":[{"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}]}`)
	}))
	defer srv.Close()
	c, err := llm.NewOpenAI(llm.Config{BaseURL: srv.URL + "/openai/v1/?api-version=2024-10-21", Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Chat(t.Context(), llm.Request{Messages: []llm.Message{llm.TextMessage(llm.RoleUser, "hi")}}); err != nil {
		t.Fatal(err)
	}
	want := []string{`/openai/v1/chat/completions api-version=2024-10-21 auth=""`}
	if diff := cmp.Diff(want, seen); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
}

// TestOpenAIReadsNoEnvironment: OpenAI's own tools read OPENAI_* variables
// on their own; this client is told everything explicitly, so that the
// choice made from the configuration is the one used.
func TestOpenAIReadsNoEnvironment(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "from-env")
	t.Setenv("OPENAI_BASE_URL", "http://127.0.0.1:1/v1")
	t.Setenv("OPENAI_ORG_ID", "org-from-env")
	t.Setenv("OPENAI_CUSTOM_HEADERS", "X-Leak: yes")
	var header http.Header
	fake := llmtest.NewFakeOpenAI(llmtest.FakeReply{Text: "ok"})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		header = r.Header.Clone()
		fake.ServeHTTP(w, r)
	}))
	defer srv.Close()
	c, _ := newTestOpenAI(t, srv.URL+"/v1", nil)
	if _, err := c.Chat(t.Context(), llm.Request{Messages: []llm.Message{llm.TextMessage(llm.RoleUser, "hi")}}); err != nil {
		t.Fatal(err)
	}
	if header.Get("OpenAI-Organization") != "" || header.Get("X-Leak") != "" {
		t.Errorf("environment leaked into the request: %v", header)
	}
}

// TestOpenAINeverLeaksSecrets drives every failure path against a server
// that echoes what it was sent, with credentials in the key, the base
// URL's user information and its query, and checks errors, logs and
// printed values.
func TestOpenAINeverLeaksSecrets(t *testing.T) {
	const key = "sk-live-SECRET-7f3a9c"
	var step int
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		step++
		n := step
		mu.Unlock()
		echo := r.Header.Get("Authorization") + " " + r.URL.String()
		user, pass, _ := r.BasicAuth()
		switch n {
		case 1:
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprintf(w, `{"error":{"message":"invalid api token %s %s:%s"}}`, echo, user, pass)
		case 2:
			w.WriteHeader(http.StatusInternalServerError)
			fmt.Fprintf(w, "upstream rejected %s", echo)
		case 3:
			fmt.Fprintf(w, `{"choices": "%s"`, echo)
		default:
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprintf(w, `{"error":{"message":"bad key %s token=tok-SECRET-query"}}`, key)
		}
	}))
	defer srv.Close()
	base := strings.Replace(srv.URL, "http://", "http://bob:pw-SECRET-basic@", 1) + "/v1?token=tok-SECRET-query"

	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	cfg := llm.Config{APIKey: key, BaseURL: base, Model: "m", MaxRetries: -1, Logger: logger, Sleep: (&sleepRecorder{}).sleep}
	c, err := llm.NewOpenAI(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	for range 4 {
		_, err := c.Chat(t.Context(), llm.Request{Messages: []llm.Message{llm.TextMessage(llm.RoleUser, "hi")}})
		if err == nil {
			t.Fatal("want an error")
		}
		texts = append(texts, err.Error())
	}
	// A server that is not there: the transport error names the URL.
	down, err := llm.NewOpenAI(llm.Config{APIKey: key, BaseURL: "http://bob:pw-SECRET-basic@127.0.0.1:1/v1?token=tok-SECRET-query", Model: "m", MaxRetries: -1, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	_, err = down.Chat(t.Context(), llm.Request{Messages: []llm.Message{llm.TextMessage(llm.RoleUser, "hi")}})
	if err == nil || !strings.Contains(err.Error(), "http://***@127.0.0.1:1/v1/chat/completions?token=***") {
		t.Errorf("connection error = %v, want the redacted URL", err)
	}
	texts = append(texts, fmt.Sprint(err))
	logger.Info("config", "cfg", cfg)
	texts = append(texts, logs.String(), fmt.Sprintf("%v %+v %#v %v %v", cfg, cfg, cfg, c, down))
	for _, s := range texts {
		if strings.Contains(s, "SECRET") || strings.Contains(s, "bob") {
			t.Errorf("secret leaked: %s", s)
		}
	}
	if !strings.Contains(texts[0], "[redacted]") {
		t.Errorf("echoed key should be redacted, got %q", texts[0])
	}
}

// A long server message is cut on a character boundary: the error text
// stays valid UTF-8 however the cut falls.
func TestServerMessageCutKeepsUTF8(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprintf(w, `{"message": "a%s"}`, strings.Repeat("é", 150))
	}))
	defer srv.Close()
	c, _ := newTestOpenAI(t, srv.URL, func(cfg *llm.Config) { cfg.MaxRetries = -1 })
	_, err := c.Chat(t.Context(), llm.Request{Messages: []llm.Message{llm.TextMessage(llm.RoleUser, "hi")}})
	var apiErr *llm.APIError
	if !errors.As(err, &apiErr) {
		t.Fatalf("err = %v, want an APIError", err)
	}
	if !utf8.ValidString(apiErr.Message) || !strings.HasSuffix(apiErr.Message, "é...") {
		t.Errorf("message %q: want valid UTF-8 cut after a whole é", apiErr.Message)
	}
}

// TestRunAgentOverOpenAI runs the loop through the real client and the fake
// server: a malformed call, its repair, the final answer.
func TestRunAgentOverOpenAI(t *testing.T) {
	srv := llmtest.NewFakeOpenAIServer(t,
		llmtest.FakeReply{ToolCalls: []llmtest.FakeToolCall{{ID: "dw_1", Name: "daily_write", Arguments: json.RawMessage(`"{\"name\": \"x\", \"content\": \"a\nb\"}"`)}}},
		llmtest.FakeReply{ToolCalls: []llmtest.FakeToolCall{{ID: "dw_2", Name: "daily_write", Arguments: json.RawMessage(goodArgs)}}},
		llmtest.FakeReply{Text: "Created cold-remedies.", InputTokens: 20, OutputTokens: 5},
	)
	c, _ := newTestOpenAI(t, srv.URL(), nil)
	tool := &recordingTool{out: "wrote it"}
	res, err := llm.RunAgent(t.Context(), c, llm.AgentConfig{
		System:   "Remember things.",
		Messages: []llm.Message{llm.TextMessage(llm.RoleUser, "I have a cold; ginger tea helps.")},
		Tools:    []llm.AgentTool{{Tool: writeTool, Run: tool.run}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "Created cold-remedies." || res.Steps != 3 || len(tool.calls) != 1 || tool.calls[0] != goodArgs {
		t.Errorf("result %q after %d steps, tool calls %q", res.Text, res.Steps, tool.calls)
	}
	reqs := srv.Requests()
	second := string(reqs[1])
	// The malformed arguments went back wrapped in valid JSON, with the
	// repair request as the tool result.
	for _, want := range []string{`"arguments":"{\"malformed_arguments\":\"{\\\"name\\\": \\\"x\\\", \\\"content\\\": \\\"a\\nb\\\"}\"}"`, `Call daily_write again with its arguments as one JSON object`, `"tool_call_id":"dw_1"`} {
		if !strings.Contains(second, want) {
			t.Errorf("second request lacks %s:\n%s", want, second)
		}
	}
}

func FuzzParseOpenAIResponse(f *testing.F) {
	f.Add(`{"choices":[{"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}]}`)
	f.Add(`{"choices":[{"message":{"content":[{"type":"text","text":"a"}],"tool_calls":[{"function":{"name":"r","arguments":{"p":1}}}]}}]}`)
	f.Add(`{"choices":[{"message":{"function_call":{"name":"r","arguments":"\"{\\\"a\\\":1}\""}}}]}`)
	f.Fuzz(func(t *testing.T, body string) {
		resp, err := llm.ParseOpenAIResponse([]byte(body))
		if err != nil {
			return
		}
		for _, tc := range resp.Message.ToolCalls {
			if tc.Name == "" || len(tc.Arguments) == 0 {
				t.Errorf("accepted a tool call without name or arguments: %+v", tc)
			}
		}
	})
}

func FuzzRedactURL(f *testing.F) {
	f.Add("https://user:hunter2pass@example.com/v1?token=qtok-secret", "hunter2pass")
	f.Add("http://127.0.0.1:11434/v1", "")
	f.Fuzz(func(t *testing.T, raw, secret string) {
		shown := llm.RedactURL(raw)
		u, err := url.Parse(raw)
		if err != nil {
			if shown != "" && shown != "(invalid URL)" {
				t.Errorf("RedactURL(%q) = %q for a URL that does not parse", raw, shown)
			}
			return
		}
		if pw, ok := u.User.Password(); ok && len(pw) >= 4 && strings.Contains(shown, pw) && !strings.Contains(u.Host+u.Path, pw) {
			t.Errorf("RedactURL(%q) = %q shows the password", raw, shown)
		}
		for _, vs := range u.Query() {
			for _, v := range vs {
				if len(v) >= 4 && strings.Contains(shown, v) && !strings.Contains(u.Scheme+u.Host+u.Path, v) && !strings.Contains(u.RawQuery, "&"+v) {
					t.Errorf("RedactURL(%q) = %q shows the query value %q", raw, shown, v)
				}
			}
		}
	})
}
