package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	cohere "github.com/cohere-ai/cohere-go/v2"
	"github.com/cohere-ai/cohere-go/v2/option"
	coherev2 "github.com/cohere-ai/cohere-go/v2/v2"
)

var (
	// ErrNoAPIKey is returned by NewCohere when no API key is configured.
	ErrNoAPIKey = errors.New("no cohere api key: set COHERE_API_KEY")
	// ErrUnauthorized means the API key was rejected (401, 403, 498).
	ErrUnauthorized = errors.New("unauthorized")
	// ErrRateLimited means the API kept answering 429 after every retry.
	ErrRateLimited = errors.New("rate limited")
	// ErrServer means the API kept failing with 5xx after every retry.
	ErrServer = errors.New("server error")
	// ErrTimeout means no complete answer arrived within the per-request
	// timeout, on every attempt. It is not context.DeadlineExceeded: the
	// caller's context is still alive, only the server was too slow.
	ErrTimeout = errors.New("timeout")
	// ErrBadRequest means the API rejected the request (4xx other than auth
	// and rate limits): unknown model, invalid message sequence, ...
	ErrBadRequest = errors.New("bad request")
	// ErrBadResponse means a 2xx answer that is not a usable chat response.
	ErrBadResponse = errors.New("bad response")
	// ErrInvalidRequest means the Request cannot be expressed for the
	// provider (an image in a system message, a tool message without id, ...).
	ErrInvalidRequest = errors.New("invalid request")
)

const (
	// DefaultModel is the Cohere model used when a Request names none.
	DefaultModel = "command-a-03-2025"
	// DefaultVisionModel is used instead when a Request without a model
	// carries images, which DefaultModel cannot read.
	DefaultVisionModel = "command-a-vision-07-2025"

	// DefaultCohereURL is the API a client talks to without a BaseURL.
	DefaultCohereURL = "https://api.cohere.com"

	defaultCohereURL  = DefaultCohereURL
	defaultTimeout    = 120 * time.Second
	defaultMaxRetries = 3
	backoffBase       = time.Second
	backoffCap        = 30 * time.Second
	// Retry-After is honoured up to this long; a longer wait is better
	// reported as an error than spent blocking a one-shot command.
	retryAfterCap = 60 * time.Second
	// Chat answers are a few KB; the cap only guards memory.
	maxResponseBytes = 8 << 20
	// Server messages quoted in errors are cut to this length.
	maxServerMessage = 300
)

// CohereConfig configures NewCohere.
type CohereConfig struct {
	APIKey string
	// BaseURL defaults to https://api.cohere.com; the SDK appends /v2/chat.
	BaseURL string
	// Timeout bounds each attempt, reading the body included. 0 means 120s,
	// a negative value means no per-request limit.
	Timeout time.Duration
	// MaxRetries is how many times a 429, 5xx or timeout is retried. 0 means
	// 3 (so up to 4 attempts), a negative value disables retries.
	MaxRetries int
	// HTTPClient defaults to a client with http.DefaultTransport.
	HTTPClient *http.Client
	// Logger receives retries and per-attempt diagnostics; nil discards.
	Logger *slog.Logger
	// Sleep waits between retries; nil means a timer that returns early with
	// ctx.Err() when ctx ends. Tests inject a recorder.
	Sleep func(ctx context.Context, d time.Duration) error
}

// Cohere is a Client for Cohere's Chat v2 API. It is safe for concurrent use.
type Cohere struct {
	// sdk is the v2 chat client; the umbrella client package would pull in
	// the AWS SDK for Bedrock, which reme does not need.
	sdk        *coherev2.Client
	apiKey     string
	baseURL    string
	httpClient *http.Client
	timeout    time.Duration
	maxRetries int
	log        *slog.Logger
	sleep      func(ctx context.Context, d time.Duration) error
}

var _ Client = (*Cohere)(nil)

// NewCohere returns a Cohere client. It makes no request.
func NewCohere(cfg CohereConfig) (*Cohere, error) {
	if strings.TrimSpace(cfg.APIKey) == "" {
		return nil, ErrNoAPIKey
	}
	c := &Cohere{
		apiKey:     cfg.APIKey,
		httpClient: cfg.HTTPClient,
		timeout:    cfg.Timeout,
		maxRetries: cfg.MaxRetries,
		log:        cfg.Logger,
		sleep:      cfg.Sleep,
	}
	if c.httpClient == nil {
		c.httpClient = &http.Client{}
	}
	if c.timeout == 0 {
		c.timeout = defaultTimeout
	}
	if c.maxRetries == 0 {
		c.maxRetries = defaultMaxRetries
	}
	if c.maxRetries < 0 {
		c.maxRetries = 0
	}
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	if c.sleep == nil {
		c.sleep = sleepContext
	}
	baseURL := strings.TrimRight(cfg.BaseURL, "/")
	if baseURL == "" {
		baseURL = defaultCohereURL
	}
	clientName := "reme"
	c.baseURL = baseURL
	c.sdk = coherev2.NewClient(
		option.WithToken(cfg.APIKey),
		option.WithBaseURL(baseURL),
		option.WithHTTPClient(c.httpClient),
		option.WithClientName(&clientName),
		// The SDK's own retries sleep without watching ctx; ours do.
		option.WithMaxAttempts(1),
	)
	return c, nil
}

// String describes the client without its API key, so that printing it by
// accident leaks nothing.
func (c *Cohere) String() string { return "cohere client for " + c.baseURL }

// String hides the API key when the config is printed.
func (cfg CohereConfig) String() string {
	return fmt.Sprintf("{APIKey:%s BaseURL:%s Timeout:%s MaxRetries:%d}", redacted(cfg.APIKey), cfg.BaseURL, cfg.Timeout, cfg.MaxRetries)
}

// GoString hides the API key from %#v as well.
func (cfg CohereConfig) GoString() string { return "llm.CohereConfig" + cfg.String() }

// LogValue hides the API key when the config is logged.
func (cfg CohereConfig) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("api_key", redacted(cfg.APIKey)),
		slog.String("base_url", cfg.BaseURL),
		slog.Duration("timeout", cfg.Timeout),
		slog.Int("max_retries", cfg.MaxRetries),
	)
}

func redacted(key string) string {
	if key == "" {
		return "(none)"
	}
	return "[redacted]"
}

// APIError is an error answer from the Cohere API. It unwraps to one of
// ErrUnauthorized, ErrRateLimited, ErrServer, ErrBadRequest, ErrTimeout or
// ErrBadResponse.
type APIError struct {
	// StatusCode is the HTTP status, 0 for timeouts.
	StatusCode int
	// Message is the server's explanation, shortened, with the API key
	// removed should the server echo it.
	Message string
	// Attempts is how many requests were made.
	Attempts int
	kind     error
	hint     string
}

func (e *APIError) Error() string {
	var b strings.Builder
	b.WriteString(e.kind.Error())
	if e.StatusCode != 0 {
		fmt.Fprintf(&b, " (%d)", e.StatusCode)
	}
	if e.hint != "" {
		b.WriteString(": ")
		b.WriteString(e.hint)
	}
	if e.Attempts > 1 {
		fmt.Fprintf(&b, " after %d attempts", e.Attempts)
	}
	if e.Message != "" {
		b.WriteString(": ")
		b.WriteString(e.Message)
	}
	return b.String()
}

func (e *APIError) Unwrap() error { return e.kind }

// retryable reports whether another attempt may succeed.
func (e *APIError) retryable() bool {
	return e.kind == ErrRateLimited || e.kind == ErrServer || e.kind == ErrTimeout
}

// Chat sends req to Cohere's /v2/chat, retrying rate limits, server errors
// and timeouts with exponential backoff.
func (c *Cohere) Chat(ctx context.Context, req Request) (*Response, error) {
	creq, err := toCohereRequest(req)
	if err != nil {
		return nil, fmt.Errorf("cohere chat: %w", err)
	}
	for attempt := 1; ; attempt++ {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("cohere chat: %w", err)
		}
		start := time.Now()
		resp, retryAfter, err := c.attempt(ctx, creq)
		if err == nil {
			c.log.DebugContext(ctx, "cohere chat", "model", creq.Model, "attempt", attempt,
				"duration", time.Since(start), "finish_reason", resp.FinishReason,
				"input_tokens", resp.Usage.InputTokens, "output_tokens", resp.Usage.OutputTokens)
			return resp, nil
		}
		if ctxErr := ctx.Err(); ctxErr != nil {
			return nil, fmt.Errorf("cohere chat: %w", ctxErr)
		}
		var apiErr *APIError
		if !errors.As(err, &apiErr) {
			return nil, fmt.Errorf("cohere chat: %w", err)
		}
		apiErr.Attempts = attempt
		if !apiErr.retryable() || attempt > c.maxRetries {
			return nil, fmt.Errorf("cohere chat: %w", apiErr)
		}
		delay := backoff(attempt)
		if retryAfter > 0 {
			delay = min(retryAfter, retryAfterCap)
		}
		c.log.WarnContext(ctx, "cohere chat: retrying", "model", creq.Model, "attempt", attempt,
			"status", apiErr.StatusCode, "error", apiErr.kind.Error(), "delay", delay)
		if err := c.sleep(ctx, delay); err != nil {
			if ctxErr := ctx.Err(); ctxErr != nil {
				return nil, fmt.Errorf("cohere chat: %w", ctxErr)
			}
			return nil, fmt.Errorf("cohere chat: wait before retry: %w", err)
		}
	}
}

// attempt makes one request. It returns the Retry-After delay the server
// asked for, if any.
func (c *Cohere) attempt(ctx context.Context, creq *cohere.V2ChatRequest) (*Response, time.Duration, error) {
	actx := ctx
	if c.timeout > 0 {
		var cancel context.CancelFunc
		actx, cancel = context.WithTimeout(ctx, c.timeout)
		defer cancel()
	}
	rec := &recordingDoer{client: c.httpClient}
	cresp, err := c.sdk.Chat(actx, creq, option.WithHTTPClient(rec))
	if err != nil {
		if ctx.Err() != nil {
			return nil, 0, ctx.Err()
		}
		var se *statusError
		if errors.As(err, &se) {
			return nil, se.retryAfter, c.statusToError(se)
		}
		var ne net.Error
		if actx.Err() != nil || (errors.As(err, &ne) && ne.Timeout()) {
			hint := "the HTTP client timed out"
			if c.timeout > 0 {
				hint = fmt.Sprintf("no answer within %s", c.timeout)
			}
			return nil, 0, &APIError{kind: ErrTimeout, hint: hint}
		}
		if rec.gotBody {
			// The body arrived whole, so the SDK could not decode it.
			return nil, 0, &APIError{kind: ErrBadResponse, Message: c.clean(err.Error())}
		}
		// Transport errors name the URL, never the Authorization header.
		return nil, 0, err
	}
	resp, err := fromCohereResponse(cresp)
	if err != nil {
		return nil, 0, &APIError{kind: ErrBadResponse, Message: c.clean(err.Error())}
	}
	return resp, 0, nil
}

func (c *Cohere) statusToError(se *statusError) *APIError {
	e := &APIError{StatusCode: se.status, Message: c.clean(serverMessage(se.body))}
	switch {
	case se.status == http.StatusUnauthorized || se.status == 498:
		e.kind, e.hint = ErrUnauthorized, "check COHERE_API_KEY"
	case se.status == http.StatusForbidden:
		e.kind, e.hint = ErrUnauthorized, "check COHERE_API_KEY and its permissions"
	case se.status == http.StatusTooManyRequests:
		e.kind = ErrRateLimited
	case se.status == http.StatusRequestTimeout:
		e.kind = ErrTimeout
	case se.status >= 500:
		e.kind = ErrServer
	default:
		e.kind = ErrBadRequest
	}
	return e
}

// clean makes server-provided text safe to show: one line, short, and
// without the API key should a proxy or server echo it back.
func (c *Cohere) clean(s string) string {
	s = strings.ReplaceAll(s, c.apiKey, "[redacted]")
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > maxServerMessage {
		s = s[:maxServerMessage] + "..."
	}
	return s
}

// serverMessage extracts the "message" of a Cohere error body, falling back
// to the raw body.
func serverMessage(body []byte) string {
	var v struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(body, &v) == nil && v.Message != "" {
		return v.Message
	}
	return string(body)
}

// backoff returns the delay before retry number attempt (1-based): 1s, 2s,
// 4s, ... capped, with ±20% jitter so that parallel jobs spread out.
func backoff(attempt int) time.Duration {
	d := backoffBase << min(attempt-1, 10)
	d = min(d, backoffCap)
	jitter := time.Duration(rand.Int64N(int64(d)*2/5+1)) - d/5
	return d + jitter
}

// parseRetryAfter reads a Retry-After header: seconds or an HTTP date.
func parseRetryAfter(v string) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if secs, err := strconv.Atoi(v); err == nil {
		if secs <= 0 {
			return 0
		}
		return time.Duration(secs) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(time.Until(t), 0)
	}
	return 0
}

func sleepContext(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// statusError carries a non-2xx answer out of the SDK before its retrier
// sees it, so that the SDK never sleeps and the status, headers and body
// reach our classification intact.
type statusError struct {
	status     int
	body       []byte
	retryAfter time.Duration
}

func (e *statusError) Error() string { return fmt.Sprintf("http status %d", e.status) }

// recordingDoer is the SDK's HTTP client for one attempt. It reads the whole
// body under the attempt's context so the timeout covers slow bodies too.
type recordingDoer struct {
	client  *http.Client
	gotBody bool
}

func (d *recordingDoer) Do(req *http.Request) (*http.Response, error) {
	resp, err := d.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read response: %w", err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, &statusError{
			status:     resp.StatusCode,
			body:       body,
			retryAfter: parseRetryAfter(resp.Header.Get("Retry-After")),
		}
	}
	if len(body) > maxResponseBytes {
		return nil, &APIError{kind: ErrBadResponse, Message: fmt.Sprintf("body larger than %d bytes", maxResponseBytes)}
	}
	d.gotBody = true
	resp.Body = io.NopCloser(bytes.NewReader(body))
	return resp, nil
}

// toCohereRequest maps a Request onto the SDK's v2 types.
func toCohereRequest(req Request) (*cohere.V2ChatRequest, error) {
	out := &cohere.V2ChatRequest{Model: req.Model, Temperature: req.Temperature}
	if out.Model == "" {
		out.Model = DefaultModel
		if hasImage(req.Messages) {
			out.Model = DefaultVisionModel
		}
	}
	if req.MaxTokens > 0 {
		n := req.MaxTokens
		out.MaxTokens = &n
	}
	if len(req.Messages) == 0 {
		return nil, fmt.Errorf("%w: no messages", ErrInvalidRequest)
	}
	for i, m := range req.Messages {
		cm, err := toCohereMessage(m)
		if err != nil {
			return nil, fmt.Errorf("%w: message %d (%s): %w", ErrInvalidRequest, i, m.Role, err)
		}
		out.Messages = append(out.Messages, cm)
	}
	for _, t := range req.Tools {
		ct, err := toCohereTool(t)
		if err != nil {
			return nil, fmt.Errorf("%w: tool %q: %w", ErrInvalidRequest, t.Name, err)
		}
		out.Tools = append(out.Tools, ct)
	}
	return out, nil
}

func toCohereMessage(m Message) (*cohere.ChatMessageV2, error) {
	var texts []string
	hasImg := false
	for _, p := range m.Parts {
		if p.Text != "" && p.ImageURL != "" {
			return nil, errors.New("part has both text and image_url")
		}
		if p.ImageURL != "" {
			hasImg = true
		} else {
			texts = append(texts, p.Text)
		}
	}
	if hasImg && m.Role != RoleUser {
		return nil, errors.New("only user messages may carry images")
	}
	if len(m.ToolCalls) > 0 && m.Role != RoleAssistant {
		return nil, errors.New("only assistant messages may carry tool calls")
	}
	switch m.Role {
	case RoleSystem:
		if len(texts) == 0 {
			return nil, errors.New("no content")
		}
		content := &cohere.SystemMessageV2Content{}
		if len(texts) == 1 && texts[0] != "" {
			content.String = texts[0]
		} else {
			for _, t := range texts {
				content.SystemMessageV2ContentItemList = append(content.SystemMessageV2ContentItemList,
					&cohere.SystemMessageV2ContentItem{Type: "text", Text: &cohere.ChatTextContent{Text: t}})
			}
		}
		return &cohere.ChatMessageV2{Role: "system", System: &cohere.SystemMessageV2{Content: content}}, nil

	case RoleUser:
		if len(m.Parts) == 0 {
			return nil, errors.New("no content")
		}
		content := &cohere.UserMessageV2Content{}
		if !hasImg && len(texts) == 1 && texts[0] != "" {
			content.String = texts[0]
		} else {
			for _, p := range m.Parts {
				if p.ImageURL != "" {
					content.ContentList = append(content.ContentList, &cohere.Content{Type: "image_url",
						ImageUrl: &cohere.ImageContent{ImageUrl: &cohere.ImageUrl{Url: p.ImageURL}}})
				} else {
					content.ContentList = append(content.ContentList, &cohere.Content{Type: "text",
						Text: &cohere.ChatTextContent{Text: p.Text}})
				}
			}
		}
		return &cohere.ChatMessageV2{Role: "user", User: &cohere.UserMessageV2{Content: content}}, nil

	case RoleAssistant:
		am := &cohere.AssistantMessage{}
		if m.ToolPlan != "" {
			plan := m.ToolPlan
			am.ToolPlan = &plan
		}
		for _, tc := range m.ToolCalls {
			if tc.ID == "" || tc.Name == "" {
				return nil, errors.New("tool call without id or name")
			}
			id, name, typ := tc.ID, tc.Name, "function"
			args := string(tc.Arguments)
			if args == "" {
				args = "{}"
			}
			am.ToolCalls = append(am.ToolCalls, &cohere.ToolCallV2{Id: &id, Type: &typ,
				Function: &cohere.ToolCallV2Function{Name: &name, Arguments: &args}})
		}
		switch {
		case len(texts) == 1 && texts[0] != "":
			am.Content = &cohere.AssistantMessageV2Content{String: texts[0]}
		case len(texts) > 1:
			content := &cohere.AssistantMessageV2Content{}
			for _, t := range texts {
				content.AssistantMessageV2ContentItemList = append(content.AssistantMessageV2ContentItemList,
					&cohere.AssistantMessageV2ContentItem{Type: "text", Text: &cohere.ChatTextContent{Text: t}})
			}
			am.Content = content
		case len(m.ToolCalls) == 0:
			return nil, errors.New("no content and no tool calls")
		}
		return &cohere.ChatMessageV2{Role: "assistant", Assistant: am}, nil

	case RoleTool:
		if m.ToolCallID == "" {
			return nil, errors.New("no tool_call_id")
		}
		// A list of text blocks, because the string form is meant for JSON
		// objects and tool results here are plain text, possibly empty.
		content := &cohere.ToolMessageV2Content{}
		for _, t := range texts {
			content.ToolContentList = append(content.ToolContentList,
				&cohere.ToolContent{Type: "text", Text: &cohere.ChatTextContent{Text: t}})
		}
		if len(content.ToolContentList) == 0 {
			content.ToolContentList = []*cohere.ToolContent{{Type: "text", Text: &cohere.ChatTextContent{}}}
		}
		return &cohere.ChatMessageV2{Role: "tool", Tool: &cohere.ToolMessageV2{ToolCallId: m.ToolCallID, Content: content}}, nil
	}
	return nil, fmt.Errorf("unknown role %q", m.Role)
}

func toCohereTool(t Tool) (*cohere.ToolV2, error) {
	if t.Name == "" {
		return nil, errors.New("no name")
	}
	params := map[string]any{"type": "object", "properties": map[string]any{}}
	if len(bytes.TrimSpace(t.Parameters)) > 0 {
		dec := json.NewDecoder(bytes.NewReader(t.Parameters))
		dec.UseNumber()
		params = nil
		if err := dec.Decode(&params); err != nil || params == nil {
			return nil, errors.New("parameters are not a JSON object")
		}
	}
	typ := "function"
	fn := &cohere.ToolV2Function{Name: t.Name, Parameters: params}
	if t.Description != "" {
		desc := t.Description
		fn.Description = &desc
	}
	return &cohere.ToolV2{Type: &typ, Function: fn}, nil
}

// fromCohereResponse maps the SDK's answer back onto our types.
func fromCohereResponse(r *cohere.V2ChatResponse) (*Response, error) {
	if r == nil || r.Message == nil {
		return nil, errors.New("response has no message")
	}
	msg := Message{Role: RoleAssistant}
	if r.Message.ToolPlan != nil {
		msg.ToolPlan = *r.Message.ToolPlan
	}
	for _, item := range r.Message.Content {
		// Thinking blocks are the model's scratchpad, not its answer.
		if item != nil && item.Text != nil {
			msg.Parts = append(msg.Parts, Part{Text: item.Text.Text})
		}
	}
	for i, tc := range r.Message.ToolCalls {
		if tc == nil || tc.Function == nil || tc.Function.Name == nil || *tc.Function.Name == "" {
			return nil, fmt.Errorf("tool call %d has no function name", i)
		}
		call := ToolCall{Name: *tc.Function.Name, Arguments: json.RawMessage("{}")}
		if tc.Id != nil {
			call.ID = *tc.Id
		}
		if a := tc.Function.Arguments; a != nil && *a != "" {
			call.Arguments = json.RawMessage(*a)
		}
		msg.ToolCalls = append(msg.ToolCalls, call)
	}
	resp := &Response{Message: msg, FinishReason: string(r.FinishReason)}
	if u := r.Usage; u != nil {
		switch {
		case u.Tokens != nil:
			resp.Usage = Usage{InputTokens: intOf(u.Tokens.InputTokens), OutputTokens: intOf(u.Tokens.OutputTokens)}
		case u.BilledUnits != nil:
			resp.Usage = Usage{InputTokens: intOf(u.BilledUnits.InputTokens), OutputTokens: intOf(u.BilledUnits.OutputTokens)}
		}
	}
	return resp, nil
}

func intOf(f *float64) int {
	if f == nil {
		return 0
	}
	return int(*f)
}
