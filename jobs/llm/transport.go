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
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Config says how to reach a provider. Every client of this package (chat,
// embeddings, rerank; Cohere or OpenAI-compatible) takes one, so that
// timeouts, retries and the handling of secrets are the same everywhere.
type Config struct {
	// APIKey is sent as a bearer token. Cohere requires one; an
	// OpenAI-compatible server on the local machine may need none.
	APIKey string
	// BaseURL defaults to the provider's public API. It may carry
	// credentials (user:password@ or a token in the query); they are used
	// for requests and never shown in errors, logs or String().
	BaseURL string
	// Model is used when a request names none: the chat model of a chat
	// client, the embedding model of an embedder, the rerank model of a
	// reranker. Empty selects the provider's default, where it has one.
	Model string
	// VisionModel is the chat model used instead of Model when a request
	// that names no model carries images.
	VisionModel string
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

// String hides the API key and the credentials of the base URL when the
// config is printed.
func (cfg Config) String() string {
	return fmt.Sprintf("{APIKey:%s BaseURL:%s Model:%s VisionModel:%s Timeout:%s MaxRetries:%d}",
		redacted(cfg.APIKey), RedactURL(cfg.BaseURL), cfg.Model, cfg.VisionModel, cfg.Timeout, cfg.MaxRetries)
}

// GoString hides the secrets from %#v as well.
func (cfg Config) GoString() string { return "llm.Config" + cfg.String() }

// LogValue hides the secrets when the config is logged.
func (cfg Config) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("api_key", redacted(cfg.APIKey)),
		slog.String("base_url", RedactURL(cfg.BaseURL)),
		slog.String("model", cfg.Model),
		slog.String("vision_model", cfg.VisionModel),
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

// RedactURL returns u without its secrets: user information becomes ***
// and every query value ***, so that the address can be shown. A value
// that does not parse is not shown at all.
func RedactURL(u string) string {
	if u == "" {
		return ""
	}
	p, err := url.Parse(u)
	if err != nil {
		return "(invalid URL)"
	}
	if p.User != nil {
		p.User = url.User("***")
	}
	if p.RawQuery != "" {
		q := p.Query()
		for k := range q {
			for i := range q[k] {
				q[k][i] = "***"
			}
		}
		p.RawQuery = strings.ReplaceAll(q.Encode(), "%2A%2A%2A", "***")
	}
	p.Fragment, p.RawFragment = "", ""
	return strings.Replace(p.String(), "%2A%2A%2A@", "***@", 1)
}

// endpoint is a parsed base URL with its secrets listed.
type endpoint struct {
	// base is the URL without its query, which SDKs would otherwise drop
	// or mangle when they append a path.
	base string
	// query holds the base URL's query parameters, sent with every request.
	query url.Values
	// shown is the base URL with its secrets masked.
	shown string
}

// parseEndpoint checks a base URL: http or https with a host.
func parseEndpoint(raw, fallback string) (endpoint, error) {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		raw = fallback
	}
	p, err := url.Parse(raw)
	if err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
		return endpoint{}, fmt.Errorf("%w: base URL %s is not an http(s) URL with a host", ErrInvalidConfig, RedactURL(raw))
	}
	ep := endpoint{query: p.Query(), shown: RedactURL(raw)}
	p.RawQuery, p.Fragment, p.RawFragment = "", "", ""
	ep.base = strings.TrimRight(p.String(), "/")
	return ep, nil
}

// secrets lists what must never appear in a message: the API key and the
// credentials of the base URL, raw and escaped.
func secrets(apiKey, baseURL string) []string {
	var out []string
	add := func(s string) {
		// Short values (a port, "1", "true") are not credentials, and
		// replacing them everywhere would garble messages.
		if len(s) >= 4 {
			out = append(out, s, url.QueryEscape(s), url.PathEscape(s))
		}
	}
	add(apiKey)
	if p, err := url.Parse(strings.TrimSpace(baseURL)); err == nil {
		if p.User != nil {
			add(p.User.String())
			add(p.User.Username())
			if pw, ok := p.User.Password(); ok {
				add(pw)
			}
		}
		for _, vs := range p.Query() {
			for _, v := range vs {
				add(v)
			}
		}
		add(p.RawQuery)
	}
	return out
}

// APIError is an error answer from a provider's API. It unwraps to one of
// ErrUnauthorized, ErrRateLimited, ErrServer, ErrBadRequest, ErrTimeout or
// ErrBadResponse, and also to ErrNoToolCalls when the server said that the
// model cannot call tools.
type APIError struct {
	// StatusCode is the HTTP status, 0 for timeouts.
	StatusCode int
	// Message is the server's explanation, shortened, with the API key
	// and URL credentials removed should the server echo them.
	Message string
	// Attempts is how many requests were made.
	Attempts int
	kind     error
	also     error
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

func (e *APIError) Unwrap() []error {
	if e.also != nil {
		return []error{e.kind, e.also}
	}
	return []error{e.kind}
}

// retryable reports whether another attempt may succeed.
func (e *APIError) retryable() bool {
	return e.kind == ErrRateLimited || e.kind == ErrServer || e.kind == ErrTimeout
}

// connError is a failure to reach the server, told without the secrets
// that the URL in the underlying error may hold.
type connError struct {
	msg string
	err error
}

func (e *connError) Error() string { return e.msg }
func (e *connError) Unwrap() error { return e.err }

// transport is the HTTP side shared by every client: one attempt at a time
// under a per-attempt timeout, retries with backoff, error classification,
// and secrets kept out of every message.
type transport struct {
	endpoint
	apiKey     string
	keyHint    string // which variable holds the key, for 401 errors
	httpClient *http.Client
	timeout    time.Duration
	maxRetries int
	log        *slog.Logger
	sleep      func(ctx context.Context, d time.Duration) error
	secrets    []string
	// classify refines the classification of an error status; nil keeps it.
	classify func(e *APIError)
}

func newTransport(cfg Config, defaultURL, keyHint string) (*transport, error) {
	ep, err := parseEndpoint(cfg.BaseURL, defaultURL)
	if err != nil {
		return nil, err
	}
	t := &transport{
		endpoint:   ep,
		apiKey:     cfg.APIKey,
		keyHint:    keyHint,
		httpClient: cfg.HTTPClient,
		timeout:    cfg.Timeout,
		maxRetries: cfg.MaxRetries,
		log:        cfg.Logger,
		sleep:      cfg.Sleep,
		secrets:    secrets(cfg.APIKey, cfg.BaseURL),
	}
	if t.httpClient == nil {
		t.httpClient = &http.Client{}
	}
	if t.timeout == 0 {
		t.timeout = defaultTimeout
	}
	if t.maxRetries == 0 {
		t.maxRetries = defaultMaxRetries
	}
	if t.maxRetries < 0 {
		t.maxRetries = 0
	}
	if t.log == nil {
		t.log = slog.New(slog.DiscardHandler)
	}
	if t.sleep == nil {
		t.sleep = sleepContext
	}
	return t, nil
}

// do runs attempt until it succeeds, fails for good or the retries run
// out. attempt makes one request through doer, under a context that the
// per-attempt timeout bounds. Errors are prefixed with op.
func (t *transport) do(ctx context.Context, op, model string, attempt func(ctx context.Context, doer *recordingDoer) error) error {
	for n := 1; ; n++ {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("%s: %w", op, err)
		}
		start := time.Now()
		retryAfter, err := t.once(ctx, attempt)
		if err == nil {
			t.log.DebugContext(ctx, op, "model", model, "attempt", n, "duration", time.Since(start))
			return nil
		}
		if ctxErr := ctx.Err(); ctxErr != nil {
			return fmt.Errorf("%s: %w", op, ctxErr)
		}
		var apiErr *APIError
		if !errors.As(err, &apiErr) {
			return fmt.Errorf("%s: %w", op, err)
		}
		apiErr.Attempts = n
		if !apiErr.retryable() || n > t.maxRetries {
			return fmt.Errorf("%s: %w", op, apiErr)
		}
		delay := backoff(n)
		if retryAfter > 0 {
			delay = min(retryAfter, retryAfterCap)
		}
		t.log.WarnContext(ctx, op+": retrying", "model", model, "attempt", n,
			"status", apiErr.StatusCode, "error", apiErr.kind.Error(), "delay", delay)
		if err := t.sleep(ctx, delay); err != nil {
			if ctxErr := ctx.Err(); ctxErr != nil {
				return fmt.Errorf("%s: %w", op, ctxErr)
			}
			return fmt.Errorf("%s: wait before retry: %w", op, err)
		}
	}
}

// once makes one attempt. It returns the Retry-After delay the server
// asked for, if any.
func (t *transport) once(ctx context.Context, attempt func(ctx context.Context, doer *recordingDoer) error) (time.Duration, error) {
	actx := ctx
	if t.timeout > 0 {
		var cancel context.CancelFunc
		actx, cancel = context.WithTimeout(ctx, t.timeout)
		defer cancel()
	}
	rec := &recordingDoer{client: t.httpClient}
	err := attempt(actx, rec)
	if err == nil {
		return 0, nil
	}
	if ctx.Err() != nil {
		return 0, ctx.Err()
	}
	var se *statusError
	if errors.As(err, &se) {
		return se.retryAfter, t.statusToError(se)
	}
	var apiErr *APIError
	if errors.As(err, &apiErr) {
		apiErr.Message = t.clean(apiErr.Message)
		return 0, apiErr
	}
	var ne net.Error
	if actx.Err() != nil || (errors.As(err, &ne) && ne.Timeout()) {
		hint := "the HTTP client timed out"
		if t.timeout > 0 {
			hint = fmt.Sprintf("no answer within %s", t.timeout)
		}
		return 0, &APIError{kind: ErrTimeout, hint: hint}
	}
	if rec.gotBody {
		// The body arrived whole, so the SDK could not decode it.
		return 0, &APIError{kind: ErrBadResponse, Message: t.clean(err.Error())}
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		return 0, &connError{msg: t.clean(fmt.Sprintf("%s %s: %v", ue.Op, RedactURL(ue.URL), ue.Err)), err: ue.Err}
	}
	return 0, &connError{msg: t.clean(err.Error()), err: err}
}

func (t *transport) statusToError(se *statusError) *APIError {
	e := &APIError{StatusCode: se.status, Message: t.clean(serverMessage(se.body))}
	switch {
	case se.status == http.StatusUnauthorized || se.status == 498:
		e.kind, e.hint = ErrUnauthorized, "check "+t.keyHint
	case se.status == http.StatusForbidden:
		e.kind, e.hint = ErrUnauthorized, "check "+t.keyHint+" and its permissions"
	case se.status == http.StatusTooManyRequests:
		e.kind = ErrRateLimited
	case se.status == http.StatusRequestTimeout:
		e.kind = ErrTimeout
	case se.status >= 500:
		e.kind = ErrServer
	default:
		e.kind = ErrBadRequest
	}
	if t.classify != nil {
		t.classify(e)
	}
	return e
}

// clean makes text safe to show: one line, short, and without the API key
// or URL credentials should a proxy or server echo them back.
func (t *transport) clean(s string) string {
	for _, secret := range t.secrets {
		s = strings.ReplaceAll(s, secret, "[redacted]")
	}
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > maxServerMessage {
		// Cut at the start of a character, not inside one.
		end := maxServerMessage
		for end > 0 && !utf8.RuneStart(s[end]) {
			end--
		}
		s = s[:end] + "..."
	}
	return s
}

// serverMessage extracts the message of an error body: Cohere's
// {"message": ...}, OpenAI's {"error": {"message": ...}} or a bare
// {"error": "..."}, falling back to the raw body.
func serverMessage(body []byte) string {
	var v struct {
		Message string          `json:"message"`
		Error   json.RawMessage `json:"error"`
	}
	if json.Unmarshal(body, &v) == nil {
		if v.Message != "" {
			return v.Message
		}
		var nested struct {
			Message string `json:"message"`
		}
		var s string
		switch {
		case json.Unmarshal(v.Error, &nested) == nil && nested.Message != "":
			return nested.Message
		case json.Unmarshal(v.Error, &s) == nil && s != "":
			return s
		}
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

// statusError carries a non-2xx answer out of an SDK before its retrier
// sees it, so that the SDK never sleeps and the status, headers and body
// reach our classification intact.
type statusError struct {
	status     int
	body       []byte
	retryAfter time.Duration
}

func (e *statusError) Error() string { return fmt.Sprintf("http status %d", e.status) }

// recordingDoer is an SDK's HTTP client for one attempt. It reads the whole
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
