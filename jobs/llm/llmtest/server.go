package llmtest

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"
)

// protocol is one provider's wire format, as the fake servers speak it.
type protocol struct {
	name       string
	key        string
	chatPath   string
	embedPath  string
	rerankPath string // empty: the provider has no rerank endpoint
	// checkChat says what is wrong with a chat request body, if anything.
	checkChat func(body []byte) error
	// render builds the answer to request n of the given model.
	render func(r FakeReply, n int, model string) any
	// errorBody is how the provider words an error.
	errorBody func(msg string) any
	// embed and rerank answer those endpoints, or say what is wrong.
	embed  func(body []byte, n int) (any, error)
	rerank func(body []byte, n int) (any, error)
}

// fake is the part of the fake servers that does not depend on the wire
// format: the script, the recorded requests, delays and shutdown.
type fake struct {
	proto    *protocol
	mu       sync.Mutex
	replies  []FakeReply
	next     int
	handler  func(body []byte) FakeReply
	requests []json.RawMessage
	other    []json.RawMessage
	errorf   func(format string, args ...any)
	done     chan struct{}
	stop     sync.Once
}

func newFake(p *protocol, replies []FakeReply) fake {
	return fake{proto: p, replies: replies, done: make(chan struct{})}
}

// FakeCohere is an http.Handler speaking Cohere's v2 API: /v2/chat from a
// script, /v2/embed with HashVector embeddings and /v2/rerank with
// OverlapScore. It checks the path, method, bearer token (FakeAPIKey) and
// the request bodies; anything wrong is answered with a 4xx and, in a
// FakeCohereServer, fails the test.
type FakeCohere struct{ fake }

// FakeOpenAI is an http.Handler speaking the OpenAI API as compatible
// servers do: /v1/chat/completions from a script and /v1/embeddings with
// HashVector embeddings. It checks the path, method, bearer token
// (FakeOpenAIKey) and that requests are what the API accepts: roles, tool
// calls with JSON arguments, tool results answering an earlier call.
type FakeOpenAI struct{ fake }

// NewFakeCohere returns a handler answering chat requests with replies in
// order.
func NewFakeCohere(replies ...FakeReply) *FakeCohere {
	return &FakeCohere{newFake(cohereProtocol, replies)}
}

// NewFakeOpenAI returns a handler answering chat requests with replies in
// order.
func NewFakeOpenAI(replies ...FakeReply) *FakeOpenAI {
	return &FakeOpenAI{newFake(openAIProtocol, replies)}
}

// SetHandler makes h choose every following chat reply from the request
// body, for scripts that depend on what was asked.
func (f *fake) SetHandler(h func(body []byte) FakeReply) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.handler = h
}

// Requests returns every chat request body received, in order.
func (f *fake) Requests() []json.RawMessage {
	f.mu.Lock()
	defer f.mu.Unlock()
	return cloneBodies(f.requests)
}

// EmbedRequests returns every embed and rerank request body received, in
// order.
func (f *fake) EmbedRequests() []json.RawMessage {
	f.mu.Lock()
	defer f.mu.Unlock()
	return cloneBodies(f.other)
}

func cloneBodies(bodies []json.RawMessage) []json.RawMessage {
	out := make([]json.RawMessage, len(bodies))
	for i, r := range bodies {
		out[i] = slices.Clone(r)
	}
	return out
}

// Close ends pending delays so that servers can shut down at once.
func (f *fake) Close() {
	f.stop.Do(func() { close(f.done) })
}

func (f *fake) fail(w http.ResponseWriter, status int, format string, args ...any) {
	msg := "fake " + f.proto.name + ": " + fmt.Sprintf(format, args...)
	if f.errorf != nil {
		f.errorf("%s", msg)
	}
	writeJSON(w, status, f.proto.errorBody(msg))
}

// ServeHTTP implements http.Handler.
func (f *fake) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p := f.proto
	route := r.URL.Path
	if r.Method != http.MethodPost {
		f.fail(w, http.StatusMethodNotAllowed, "method %s, want POST", r.Method)
		return
	}
	if route != p.chatPath && route != p.embedPath && (p.rerankPath == "" || route != p.rerankPath) {
		f.fail(w, http.StatusNotFound, "path %q, want %s", route, p.chatPath)
		return
	}
	// Never echo the header: a misconfigured test could be sending a real key.
	if r.Header.Get("Authorization") != "Bearer "+p.key {
		f.fail(w, http.StatusUnauthorized, "missing or wrong Authorization bearer token")
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		f.fail(w, http.StatusBadRequest, "read body: %v", err)
		return
	}
	if route != p.chatPath {
		f.serveVectors(w, route, body)
		return
	}
	bad := p.checkChat(body)

	f.mu.Lock()
	f.requests = append(f.requests, body)
	n := len(f.requests)
	handler := f.handler
	var reply FakeReply
	ok := true
	if handler == nil && bad == nil {
		ok = f.next < len(f.replies)
		if ok {
			reply = f.replies[f.next]
			f.next++
		}
	}
	f.mu.Unlock()

	if bad != nil {
		f.fail(w, http.StatusBadRequest, "request %d is not a chat request with model and messages: %v", n, bad)
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
			writeJSON(w, status, p.errorBody(http.StatusText(status)))
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		io.WriteString(w, reply.Body)
		return
	}
	var req struct {
		Model string `json:"model"`
	}
	_ = json.Unmarshal(body, &req)
	writeJSON(w, http.StatusOK, p.render(reply, n, req.Model))
}

// serveVectors answers the embed and rerank endpoints, which are not
// scripted: their answers follow from the request.
func (f *fake) serveVectors(w http.ResponseWriter, route string, body []byte) {
	f.mu.Lock()
	f.other = append(f.other, body)
	n := len(f.other)
	f.mu.Unlock()
	answer := f.proto.embed
	if route == f.proto.rerankPath {
		answer = f.proto.rerank
	}
	resp, err := answer(body, n)
	if err != nil {
		f.fail(w, http.StatusBadRequest, "%s request %d: %v", route, n, err)
		return
	}
	writeJSON(w, http.StatusOK, resp)
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

// decodeRequest decodes a request body strictly: unknown fields are an
// error, so that a client sending what the API does not know is noticed.
func decodeRequest(body []byte, v any) error {
	if err := decodeStrict(body, v); err != nil {
		return fmt.Errorf("body: %w", err)
	}
	return nil
}

// ---- Cohere ----

var cohereProtocol = &protocol{
	name:       "cohere",
	key:        FakeAPIKey,
	chatPath:   "/v2/chat",
	embedPath:  "/v2/embed",
	rerankPath: "/v2/rerank",
	checkChat: func(body []byte) error {
		var req struct {
			Model    string            `json:"model"`
			Messages []json.RawMessage `json:"messages"`
		}
		if err := json.Unmarshal(body, &req); err != nil {
			return err
		}
		if req.Model == "" || len(req.Messages) == 0 {
			return errors.New("no model or no messages")
		}
		return nil
	},
	render:    func(r FakeReply, n int, _ string) any { return wireResponse(r, n) },
	errorBody: func(msg string) any { return map[string]string{"message": msg} },
	embed:     cohereEmbed,
	rerank:    cohereRerank,
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

// wireToolCalls renders scripted tool calls, numbering the unnamed ones.
func wireToolCalls(calls []FakeToolCall, n int) []wireToolCall {
	var out []wireToolCall
	for i, tc := range calls {
		var wc wireToolCall
		wc.ID = tc.ID
		if wc.ID == "" {
			wc.ID = fmt.Sprintf("call_%d_%d", n, i)
		}
		wc.Type = "function"
		wc.Function.Name = tc.Name
		wc.Function.Arguments = fakeArguments(tc.Arguments)
		out = append(out, wc)
	}
	return out
}

// wireResponse renders a FakeReply the way Cohere's /v2/chat does.
func wireResponse(r FakeReply, n int) wireResp {
	var out wireResp
	out.ID = "fake-" + strconv.Itoa(n)
	out.Message.Role = "assistant"
	out.Message.ToolPlan = r.ToolPlan
	out.Message.ToolCalls = wireToolCalls(r.ToolCalls, n)
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

// cohereEmbedDims are the fake's output sizes per model; other models get
// fakeDefaultDims.
var cohereEmbedDims = map[string]int{"embed-v4.0": 1536, "embed-english-v3.0": 1024, "embed-multilingual-v3.0": 1024}

const (
	fakeDefaultDims = 256
	maxCohereTexts  = 96
	maxRerankDocs   = 1000
)

func cohereEmbed(body []byte, n int) (any, error) {
	var req struct {
		Model           string   `json:"model"`
		Texts           []string `json:"texts"`
		InputType       string   `json:"input_type"`
		EmbeddingTypes  []string `json:"embedding_types"`
		OutputDimension *int     `json:"output_dimension"`
		Truncate        string   `json:"truncate"`
		MaxTokens       *int     `json:"max_tokens"`
	}
	if err := decodeRequest(body, &req); err != nil {
		return nil, err
	}
	switch {
	case req.Model == "":
		return nil, errors.New("no model")
	case len(req.Texts) == 0 || len(req.Texts) > maxCohereTexts:
		return nil, fmt.Errorf("%d texts, want 1 to %d", len(req.Texts), maxCohereTexts)
	case !slices.Contains([]string{"search_document", "search_query", "classification", "clustering"}, req.InputType):
		return nil, fmt.Errorf("input_type %q", req.InputType)
	case !slices.Contains(req.EmbeddingTypes, "float"):
		return nil, fmt.Errorf("embedding_types %q lacks float", req.EmbeddingTypes)
	case req.Truncate != "" && !slices.Contains([]string{"NONE", "START", "END"}, req.Truncate):
		return nil, fmt.Errorf("truncate %q", req.Truncate)
	}
	dims := cmp.Or(cohereEmbedDims[req.Model], fakeDefaultDims)
	if req.OutputDimension != nil {
		if !slices.Contains([]int{256, 512, 1024, 1536}, *req.OutputDimension) || req.Model != "embed-v4.0" {
			return nil, fmt.Errorf("output_dimension %d for %s", *req.OutputDimension, req.Model)
		}
		dims = *req.OutputDimension
	}
	vecs := make([][]float64, len(req.Texts))
	words := 0
	for i, t := range req.Texts {
		if t == "" {
			return nil, fmt.Errorf("text %d is empty", i)
		}
		vecs[i] = HashVector(t, dims, nil)
		words += len(Words(t, nil))
	}
	return map[string]any{
		"id":            "fake-embed-" + strconv.Itoa(n),
		"response_type": "embeddings_by_type",
		"embeddings":    map[string]any{"float": vecs},
		"texts":         req.Texts,
		"meta":          map[string]any{"api_version": map[string]string{"version": "2"}, "billed_units": map[string]int{"input_tokens": words}},
	}, nil
}

func cohereRerank(body []byte, n int) (any, error) {
	var req struct {
		Model           string   `json:"model"`
		Query           string   `json:"query"`
		Documents       []string `json:"documents"`
		TopN            *int     `json:"top_n"`
		MaxTokensPerDoc *int     `json:"max_tokens_per_doc"`
	}
	if err := decodeRequest(body, &req); err != nil {
		return nil, err
	}
	switch {
	case req.Model == "" || req.Query == "":
		return nil, errors.New("no model or no query")
	case len(req.Documents) == 0 || len(req.Documents) > maxRerankDocs:
		return nil, fmt.Errorf("%d documents, want 1 to %d", len(req.Documents), maxRerankDocs)
	case req.TopN != nil && *req.TopN < 1:
		return nil, fmt.Errorf("top_n %d", *req.TopN)
	}
	ranked := RankByOverlap(req.Query, req.Documents, nil)
	if req.TopN != nil && *req.TopN < len(ranked) {
		ranked = ranked[:*req.TopN]
	}
	results := make([]map[string]any, len(ranked))
	for i, r := range ranked {
		results[i] = map[string]any{"index": r.Index, "relevance_score": r.Score}
	}
	return map[string]any{
		"id":      "fake-rerank-" + strconv.Itoa(n),
		"results": results,
		"meta":    map[string]any{"api_version": map[string]string{"version": "2"}, "billed_units": map[string]int{"search_units": 1}},
	}, nil
}

// ---- OpenAI ----

var openAIProtocol = &protocol{
	name:      "openai",
	key:       FakeOpenAIKey,
	chatPath:  "/v1/chat/completions",
	embedPath: "/v1/embeddings",
	checkChat: checkOpenAIChat,
	render:    openAIResponse,
	errorBody: func(msg string) any {
		return map[string]any{"error": map[string]any{"message": msg, "type": "invalid_request_error"}}
	},
	embed: openAIEmbed,
}

// checkOpenAIChat checks a chat completions request as strictly as the
// stricter servers do.
func checkOpenAIChat(body []byte) error {
	var req struct {
		Model    string `json:"model"`
		Stream   bool   `json:"stream"`
		Messages []struct {
			Role       string          `json:"role"`
			Content    json.RawMessage `json:"content"`
			ToolCallID string          `json:"tool_call_id"`
			ToolCalls  []struct {
				ID       string `json:"id"`
				Type     string `json:"type"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"messages"`
		Tools []struct {
			Type     string `json:"type"`
			Function struct {
				Name       string         `json:"name"`
				Parameters map[string]any `json:"parameters"`
			} `json:"function"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return err
	}
	if req.Model == "" || len(req.Messages) == 0 {
		return errors.New("no model or no messages")
	}
	if req.Stream {
		return errors.New("streaming was not asked for")
	}
	for i, t := range req.Tools {
		if t.Type != "function" || t.Function.Name == "" || t.Function.Parameters == nil {
			return fmt.Errorf("tool %d is not a function with a name and parameters", i)
		}
	}
	open := map[string]bool{} // tool call ids not answered yet
	for i, m := range req.Messages {
		switch m.Role {
		case "system", "developer", "user":
			if len(m.Content) == 0 || string(m.Content) == "null" {
				return fmt.Errorf("message %d (%s) has no content", i, m.Role)
			}
		case "assistant":
			if (len(m.Content) == 0 || string(m.Content) == "null") && len(m.ToolCalls) == 0 {
				return fmt.Errorf("message %d (assistant) has neither content nor tool calls", i)
			}
			for _, tc := range m.ToolCalls {
				if tc.ID == "" || tc.Type != "function" || tc.Function.Name == "" {
					return fmt.Errorf("message %d has a tool call without id, type or name", i)
				}
				if !json.Valid([]byte(tc.Function.Arguments)) {
					return fmt.Errorf("message %d: arguments of %s are not JSON", i, tc.Function.Name)
				}
				open[tc.ID] = true
			}
		case "tool":
			if !open[m.ToolCallID] {
				return fmt.Errorf("message %d answers tool call %q, which no earlier message made or which was answered", i, m.ToolCallID)
			}
			delete(open, m.ToolCallID)
			var s string
			if json.Unmarshal(m.Content, &s) != nil {
				return fmt.Errorf("message %d (tool) content is not a string", i)
			}
		default:
			return fmt.Errorf("message %d has role %q", i, m.Role)
		}
	}
	return nil
}

type openAIMessage struct {
	Role      string         `json:"role"`
	Content   *string        `json:"content"`
	ToolCalls []wireToolCall `json:"tool_calls,omitempty"`
}

type openAIChoice struct {
	Index        int           `json:"index"`
	Message      openAIMessage `json:"message"`
	FinishReason string        `json:"finish_reason"`
	Logprobs     any           `json:"logprobs"`
}

type openAIUsage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

type openAIResp struct {
	ID      string         `json:"id"`
	Object  string         `json:"object"`
	Created int64          `json:"created"`
	Model   string         `json:"model"`
	Choices []openAIChoice `json:"choices"`
	Usage   openAIUsage    `json:"usage"`
}

// openAIResponse renders a FakeReply the way /v1/chat/completions does.
func openAIResponse(r FakeReply, n int, model string) any {
	msg := openAIMessage{Role: "assistant", ToolCalls: wireToolCalls(r.ToolCalls, n)}
	if r.Text != "" || len(r.ToolCalls) == 0 {
		text := r.Text
		msg.Content = &text
	}
	finish := r.FinishReason
	if finish == "" {
		finish = "stop"
		if len(r.ToolCalls) > 0 {
			finish = "tool_calls"
		}
	}
	return openAIResp{
		ID: "chatcmpl-fake-" + strconv.Itoa(n), Object: "chat.completion", Created: 1782000000, Model: model,
		Choices: []openAIChoice{{Message: msg, FinishReason: finish}},
		Usage:   openAIUsage{PromptTokens: r.InputTokens, CompletionTokens: r.OutputTokens, TotalTokens: r.InputTokens + r.OutputTokens},
	}
}

// openAIEmbedDims are the fake's output sizes per model; other models get
// fakeDefaultDims.
var openAIEmbedDims = map[string]int{"text-embedding-3-small": 1536, "text-embedding-3-large": 3072}

func openAIEmbed(body []byte, n int) (any, error) {
	var req struct {
		Model          string          `json:"model"`
		Input          json.RawMessage `json:"input"`
		Dimensions     *int            `json:"dimensions"`
		EncodingFormat string          `json:"encoding_format"`
		User           string          `json:"user"`
	}
	if err := decodeRequest(body, &req); err != nil {
		return nil, err
	}
	var texts []string
	if err := json.Unmarshal(req.Input, &texts); err != nil {
		var one string
		if json.Unmarshal(req.Input, &one) != nil {
			return nil, errors.New("input is neither a string nor a list of strings")
		}
		texts = []string{one}
	}
	switch {
	case req.Model == "":
		return nil, errors.New("no model")
	case len(texts) == 0 || len(texts) > 2048:
		return nil, fmt.Errorf("%d inputs, want 1 to 2048", len(texts))
	case req.EncodingFormat != "" && req.EncodingFormat != "float":
		return nil, fmt.Errorf("encoding_format %q", req.EncodingFormat)
	}
	dims := cmp.Or(openAIEmbedDims[req.Model], fakeDefaultDims)
	if req.Dimensions != nil {
		if *req.Dimensions < 1 || *req.Dimensions > dims {
			return nil, fmt.Errorf("dimensions %d for %s", *req.Dimensions, req.Model)
		}
		dims = *req.Dimensions
	}
	data := make([]map[string]any, len(texts))
	tokens := 0
	for i, t := range texts {
		if t == "" {
			return nil, fmt.Errorf("input %d is empty", i)
		}
		data[i] = map[string]any{"object": "embedding", "index": i, "embedding": HashVector(t, dims, nil)}
		tokens += len(Words(t, nil))
	}
	return map[string]any{
		"object": "list", "data": data, "model": req.Model,
		"usage": map[string]int{"prompt_tokens": tokens, "total_tokens": tokens},
	}, nil
}

// ---- servers ----

// TB is the part of testing.TB the fake servers use; taking it as an
// interface keeps package testing out of everything that imports llmtest.
type TB interface {
	Helper()
	Errorf(format string, args ...any)
	Fatalf(format string, args ...any)
	Cleanup(func())
}

// localServer is an HTTP server on a loopback port.
type localServer struct {
	URL string
	srv *http.Server
}

func (s *localServer) Close() { s.srv.Close() }

// FakeCohereServer is a FakeCohere on a loopback port, closed when the
// test ends. Protocol violations fail the test through t.Errorf.
type FakeCohereServer struct {
	*FakeCohere
	srv *localServer
}

// NewFakeCohereServer starts a fake Cohere server answering with replies in
// order. Point Config.BaseURL at URL() and use FakeAPIKey.
func NewFakeCohereServer(t TB, replies ...FakeReply) *FakeCohereServer {
	t.Helper()
	f := NewFakeCohere(replies...)
	return &FakeCohereServer{FakeCohere: f, srv: startServer(t, &f.fake, f, replies)}
}

// Close ends pending delays and shuts the server down; the test's cleanup
// calls it too, so calling it early is optional.
func (s *FakeCohereServer) Close() {
	s.FakeCohere.Close()
	s.srv.Close()
}

// URL is the server's base URL, for Config.BaseURL.
func (s *FakeCohereServer) URL() string { return s.srv.URL }

// FakeOpenAIServer is a FakeOpenAI on a loopback port, closed when the
// test ends. Protocol violations fail the test through t.Errorf.
type FakeOpenAIServer struct {
	*FakeOpenAI
	srv *localServer
}

// NewFakeOpenAIServer starts a fake OpenAI-compatible server answering
// with replies in order. Point Config.BaseURL at URL() and use
// FakeOpenAIKey.
func NewFakeOpenAIServer(t TB, replies ...FakeReply) *FakeOpenAIServer {
	t.Helper()
	f := NewFakeOpenAI(replies...)
	return &FakeOpenAIServer{FakeOpenAI: f, srv: startServer(t, &f.fake, f, replies)}
}

// Close ends pending delays and shuts the server down; the test's cleanup
// calls it too, so calling it early is optional.
func (s *FakeOpenAIServer) Close() {
	s.FakeOpenAI.Close()
	s.srv.Close()
}

// URL is the server's base URL with its /v1, for Config.BaseURL.
func (s *FakeOpenAIServer) URL() string { return s.srv.URL + "/v1" }

func startServer(t TB, f *fake, h http.Handler, replies []FakeReply) *localServer {
	t.Helper()
	for i, r := range replies {
		if err := r.validate(); err != nil {
			t.Fatalf("fake %s reply %d: %v", f.proto.name, i, err)
		}
	}
	f.errorf = t.Errorf
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("fake %s server: %v", f.proto.name, err)
	}
	srv := &localServer{URL: "http://" + ln.Addr().String(), srv: &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}}
	go srv.srv.Serve(ln)
	t.Cleanup(func() {
		f.Close()
		srv.Close()
	})
	return srv
}

// ServeFakeCohere serves a scripted fake Cohere API on ln until the returned
// server is closed; it is for harnesses without a testing.TB, such as
// testscript commands. Protocol violations are answered with 4xx errors.
func ServeFakeCohere(ln net.Listener, replies []FakeReply) *http.Server {
	f := NewFakeCohere(replies...)
	return serve(ln, &f.fake, f)
}

// ServeFakeOpenAI serves a scripted fake OpenAI-compatible API on ln, with
// its endpoints under /v1, until the returned server is closed. It is for
// harnesses without a testing.TB.
func ServeFakeOpenAI(ln net.Listener, replies []FakeReply) *http.Server {
	f := NewFakeOpenAI(replies...)
	return serve(ln, &f.fake, f)
}

func serve(ln net.Listener, f *fake, h http.Handler) *http.Server {
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	srv.RegisterOnShutdown(f.Close)
	go srv.Serve(ln)
	return srv
}
