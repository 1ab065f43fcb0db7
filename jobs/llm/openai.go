package llm

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"regexp"
	"strings"
	"sync"
)

const (
	// DefaultOpenAIURL is the OpenAI API; any server that speaks its chat
	// completions protocol (Ollama, vLLM, llama.cpp, LM Studio, DashScope's
	// compatible mode, ...) can be used instead.
	DefaultOpenAIURL = "https://api.openai.com/v1"
	// DefaultOpenAIModel is the chat model used with DefaultOpenAIURL when
	// none is configured. Other servers have no common default.
	DefaultOpenAIModel = "gpt-4.1-mini"

	openAIKeyHint = "the API key (OPENAI_API_KEY, REME_LLM_API_KEY or LLM_API_KEY)"
)

// OpenAI is a Client for OpenAI's chat completions API and the servers that
// copy it. It is lenient where such servers are loose: tool arguments sent
// as a JSON object or encoded twice, a legacy function_call, content as a
// list of parts, JSON labelled as text. It is safe for concurrent use.
//
// The protocol is spoken directly with encoding/json: the official Go SDK
// registers its whole API surface at start-up and would more than double
// the size of the binary for the two endpoints used here.
type OpenAI struct {
	*transport
	model       string
	visionModel string
	// official is true for api.openai.com, which wants
	// max_completion_tokens where other servers know only max_tokens.
	official bool
}

var _ Client = (*OpenAI)(nil)

// NewOpenAI returns a chat client for an OpenAI-compatible server. The API
// key may be empty for a local server that needs none; the model is
// required unless the server is OpenAI's own. It makes no request and reads
// no environment variable: the caller decides what configures it.
func NewOpenAI(cfg Config) (*OpenAI, error) {
	t, err := newOpenAITransport(cfg)
	if err != nil {
		return nil, err
	}
	c := &OpenAI{transport: t, model: cfg.Model, visionModel: cfg.VisionModel, official: t.base == DefaultOpenAIURL}
	if c.model == "" {
		if !c.official {
			return nil, fmt.Errorf("%w: no chat model for the server at %s (set llm.model)", ErrInvalidConfig, t.shown)
		}
		c.model = DefaultOpenAIModel
	}
	if c.visionModel == "" {
		c.visionModel = c.model
	}
	return c, nil
}

func newOpenAITransport(cfg Config) (*transport, error) {
	t, err := newTransport(cfg, DefaultOpenAIURL, openAIKeyHint)
	if err != nil {
		return nil, err
	}
	t.classify = classifyOpenAIError
	return t, nil
}

// postJSON sends body to path under the base URL (with the base URL's
// query) through doer and decodes the answer into out.
func (t *transport) postJSON(ctx context.Context, doer *recordingDoer, path string, body []byte, out any) error {
	u := t.base + path
	if len(t.query) > 0 {
		u += "?" + t.query.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "reme")
	if t.apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+t.apiKey)
	}
	resp, err := doer.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return fmt.Errorf("decode response: %w", err)
	}
	return nil
}

// encodeJSON marshals a request body without HTML escaping, so that
// prompts reach the server as written.
func encodeJSON(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

// toolsUnsupported matches what servers say when a model cannot use tools:
// Ollama ("... does not support tools"), llama.cpp ("tools param requires
// --jinja flag"), vLLM ("auto" tool choice requires
// --enable-auto-tool-choice ...) and others. Compiled on the first error,
// not when every command starts.
var toolsUnsupported = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)does not support tools|tools? (is|are) not supported|not support(ed)? (for )?(tools|tool calls|function calling)|requires --jinja|enable-auto-tool-choice|function calling is not (supported|enabled)`)
})

func classifyOpenAIError(e *APIError) {
	switch {
	case toolsUnsupported().MatchString(e.Message):
		// Not worth retrying, whatever the status: the server will say the
		// same again.
		e.kind, e.also = ErrNoToolCalls, ErrBadRequest
	case e.StatusCode == http.StatusNotFound:
		e.hint = "check the base URL (OpenAI-compatible APIs usually end in /v1) and the model name"
	}
}

// String describes the client without its secrets.
func (c *OpenAI) String() string { return "openai-compatible client for " + c.shown }

// The chat completions wire format, as much of it as reme uses.
type (
	oaRequest struct {
		Model               string      `json:"model"`
		Messages            []oaMessage `json:"messages"`
		Tools               []oaTool    `json:"tools,omitempty"`
		Temperature         *float64    `json:"temperature,omitempty"`
		MaxTokens           int         `json:"max_tokens,omitempty"`
		MaxCompletionTokens int         `json:"max_completion_tokens,omitempty"`
	}
	oaMessage struct {
		Role string `json:"role"`
		// Content is a string, or a list of oaPart in user messages with
		// images; nil leaves it out (an assistant message that only calls
		// tools).
		Content    any          `json:"content,omitempty"`
		ToolCalls  []oaToolCall `json:"tool_calls,omitempty"`
		ToolCallID string       `json:"tool_call_id,omitempty"`
	}
	oaPart struct {
		Type     string      `json:"type"`
		Text     string      `json:"text,omitempty"`
		ImageURL *oaImageURL `json:"image_url,omitempty"`
	}
	oaImageURL struct {
		URL string `json:"url"`
	}
	oaToolCall struct {
		ID       string     `json:"id"`
		Type     string     `json:"type"`
		Function oaFunction `json:"function"`
	}
	oaFunction struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	}
	oaTool struct {
		Type     string        `json:"type"`
		Function oaFunctionDef `json:"function"`
	}
	oaFunctionDef struct {
		Name        string          `json:"name"`
		Description string          `json:"description,omitempty"`
		Parameters  json.RawMessage `json:"parameters"`
	}
	oaResponse struct {
		Choices []struct {
			FinishReason string `json:"finish_reason"`
			Message      struct {
				Content   json.RawMessage `json:"content"`
				Refusal   string          `json:"refusal"`
				ToolCalls []struct {
					ID       string `json:"id"`
					Function struct {
						Name      string          `json:"name"`
						Arguments json.RawMessage `json:"arguments"`
					} `json:"function"`
				} `json:"tool_calls"`
				FunctionCall *struct {
					Name      string          `json:"name"`
					Arguments json.RawMessage `json:"arguments"`
				} `json:"function_call"`
			} `json:"message"`
		} `json:"choices"`
		Usage struct {
			PromptTokens     int `json:"prompt_tokens"`
			CompletionTokens int `json:"completion_tokens"`
		} `json:"usage"`
	}
)

// Chat sends req to the server's /chat/completions, retrying rate limits,
// server errors and timeouts with exponential backoff.
func (c *OpenAI) Chat(ctx context.Context, req Request) (*Response, error) {
	oreq, err := c.toRequest(req)
	if err != nil {
		return nil, fmt.Errorf("openai chat: %w", err)
	}
	body, err := encodeJSON(oreq)
	if err != nil {
		return nil, fmt.Errorf("openai chat: %w: %w", ErrInvalidRequest, err)
	}
	var resp *Response
	err = c.do(ctx, "openai chat", oreq.Model, func(ctx context.Context, doer *recordingDoer) error {
		var out oaResponse
		if err := c.postJSON(ctx, doer, "/chat/completions", body, &out); err != nil {
			return err
		}
		resp, err = fromOpenAIResponse(&out)
		if err != nil {
			return &APIError{kind: ErrBadResponse, Message: err.Error()}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	c.log.DebugContext(ctx, "openai chat done", "model", oreq.Model, "finish_reason", resp.FinishReason,
		"input_tokens", resp.Usage.InputTokens, "output_tokens", resp.Usage.OutputTokens)
	return resp, nil
}

// toRequest maps a Request onto the wire format.
func (c *OpenAI) toRequest(req Request) (*oaRequest, error) {
	out := &oaRequest{Model: req.Model, Temperature: req.Temperature}
	if out.Model == "" {
		out.Model = c.model
		if hasImage(req.Messages) {
			out.Model = c.visionModel
		}
	}
	if req.MaxTokens > 0 {
		if c.official {
			out.MaxCompletionTokens = req.MaxTokens
		} else {
			out.MaxTokens = req.MaxTokens
		}
	}
	if len(req.Messages) == 0 {
		return nil, fmt.Errorf("%w: no messages", ErrInvalidRequest)
	}
	for i, m := range req.Messages {
		om, err := toOpenAIMessage(m)
		if err != nil {
			return nil, fmt.Errorf("%w: message %d (%s): %w", ErrInvalidRequest, i, m.Role, err)
		}
		out.Messages = append(out.Messages, om)
	}
	for _, t := range req.Tools {
		ot, err := toOpenAITool(t)
		if err != nil {
			return nil, fmt.Errorf("%w: tool %q: %w", ErrInvalidRequest, t.Name, err)
		}
		out.Tools = append(out.Tools, ot)
	}
	return out, nil
}

// toOpenAIMessage maps one message. Text parts are sent as one string
// except in user messages with images: many compatible servers accept
// content lists only there.
func toOpenAIMessage(m Message) (oaMessage, error) {
	texts, hasImg, err := messageParts(m)
	if err != nil {
		return oaMessage{}, err
	}
	text := strings.Join(texts, "\n\n")
	switch m.Role {
	case RoleSystem:
		if len(texts) == 0 {
			return oaMessage{}, errors.New("no content")
		}
		return oaMessage{Role: "system", Content: text}, nil

	case RoleUser:
		if len(m.Parts) == 0 {
			return oaMessage{}, errors.New("no content")
		}
		if !hasImg {
			return oaMessage{Role: "user", Content: text}, nil
		}
		parts := make([]oaPart, 0, len(m.Parts))
		for _, p := range m.Parts {
			if p.ImageURL != "" {
				parts = append(parts, oaPart{Type: "image_url", ImageURL: &oaImageURL{URL: p.ImageURL}})
			} else {
				parts = append(parts, oaPart{Type: "text", Text: p.Text})
			}
		}
		return oaMessage{Role: "user", Content: parts}, nil

	case RoleAssistant:
		if len(m.ToolCalls) == 0 && text == "" {
			return oaMessage{}, errors.New("no content and no tool calls")
		}
		om := oaMessage{Role: "assistant"}
		if text != "" {
			om.Content = text
		}
		for _, tc := range m.ToolCalls {
			if tc.ID == "" || tc.Name == "" {
				return oaMessage{}, errors.New("tool call without id or name")
			}
			om.ToolCalls = append(om.ToolCalls, oaToolCall{ID: tc.ID, Type: "function",
				Function: oaFunction{Name: tc.Name, Arguments: replayArguments(tc.Arguments)}})
		}
		return om, nil

	case RoleTool:
		if m.ToolCallID == "" {
			return oaMessage{}, errors.New("no tool_call_id")
		}
		return oaMessage{Role: "tool", Content: text, ToolCallID: m.ToolCallID}, nil
	}
	return oaMessage{}, fmt.Errorf("unknown role %q", m.Role)
}

// replayArguments is what an earlier tool call's arguments are sent back
// as. Malformed arguments are wrapped in a JSON object: servers that parse
// the history's arguments (vLLM's chat templates do) would otherwise reject
// the very request that asks the model to repair them.
func replayArguments(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "{}"
	}
	if !json.Valid(raw) {
		b, _ := json.Marshal(map[string]string{"malformed_arguments": string(raw)})
		return string(b)
	}
	return string(raw)
}

func toOpenAITool(t Tool) (oaTool, error) {
	if t.Name == "" {
		return oaTool{}, errors.New("no name")
	}
	params := json.RawMessage(`{"type":"object","properties":{}}`)
	if raw := bytes.TrimSpace(t.Parameters); len(raw) > 0 {
		var obj map[string]json.RawMessage
		if json.Unmarshal(raw, &obj) != nil || obj == nil {
			return oaTool{}, errors.New("parameters are not a JSON object")
		}
		var b bytes.Buffer
		if err := json.Compact(&b, raw); err != nil {
			return oaTool{}, errors.New("parameters are not a JSON object")
		}
		params = b.Bytes()
	}
	return oaTool{Type: "function", Function: oaFunctionDef{Name: t.Name, Description: t.Description, Parameters: params}}, nil
}

// fromOpenAIResponse maps the first choice back onto our types.
func fromOpenAIResponse(r *oaResponse) (*Response, error) {
	if len(r.Choices) == 0 {
		return nil, errors.New("response has no choices")
	}
	choice := r.Choices[0]
	m := choice.Message
	msg := Message{Role: RoleAssistant}
	text, err := contentText(m.Content)
	if err != nil {
		return nil, err
	}
	if text == "" && m.Refusal != "" {
		text = m.Refusal
	}
	if text != "" {
		msg.Parts = []Part{{Text: text}}
	}
	for i, tc := range m.ToolCalls {
		if tc.Function.Name == "" {
			return nil, fmt.Errorf("tool call %d has no function name", i)
		}
		msg.ToolCalls = append(msg.ToolCalls, ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: lenientArguments(tc.Function.Arguments)})
	}
	if len(msg.ToolCalls) == 0 && m.FunctionCall != nil && m.FunctionCall.Name != "" {
		// The legacy single function call, which some servers still send.
		msg.ToolCalls = []ToolCall{{Name: m.FunctionCall.Name, Arguments: lenientArguments(m.FunctionCall.Arguments)}}
	}
	return &Response{
		Message:      msg,
		FinishReason: choice.FinishReason,
		Usage:        Usage{InputTokens: r.Usage.PromptTokens, OutputTokens: r.Usage.CompletionTokens},
	}, nil
}

// lenientArguments reads the arguments of a tool call as a server sent
// them: normally a JSON string holding JSON, but loose servers send the
// object itself or encode it twice. What cannot be read is passed on as
// it is, for the agent loop to report to the model.
func lenientArguments(rawJSON json.RawMessage) json.RawMessage {
	raw := strings.TrimSpace(string(rawJSON))
	if raw == "" || raw == "null" {
		return json.RawMessage("{}")
	}
	if raw[0] != '"' {
		return json.RawMessage(raw)
	}
	var s string
	if json.Unmarshal([]byte(raw), &s) != nil {
		return json.RawMessage(raw)
	}
	s = strings.TrimSpace(s)
	if s == "" {
		return json.RawMessage("{}")
	}
	if s[0] == '"' {
		var inner string
		if json.Unmarshal([]byte(s), &inner) == nil && json.Valid([]byte(inner)) {
			return json.RawMessage(inner)
		}
	}
	return json.RawMessage(s)
}

// contentText reads message content: a string, null, or a list of parts
// whose text parts are joined.
func contentText(raw json.RawMessage) (string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, nil
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", errors.New("content is neither text nor a list of parts")
	}
	var texts []string
	for _, p := range parts {
		if p.Text != "" && (p.Type == "" || p.Type == "text") {
			texts = append(texts, p.Text)
		}
	}
	return strings.Join(texts, "\n\n"), nil
}

const (
	// DefaultOpenAIEmbedModel is the embedding model used with
	// DefaultOpenAIURL when none is configured.
	DefaultOpenAIEmbedModel = "text-embedding-3-small"
)

// openAIEmbedDims are the full output sizes of OpenAI's embedding models.
var openAIEmbedDims = map[string]int{
	"text-embedding-3-small": 1536,
	"text-embedding-3-large": 3072,
	"text-embedding-ada-002": 1536,
}

// OpenAIEmbedder is an Embedder for an OpenAI-compatible /embeddings
// endpoint. Such endpoints know no input type: documents and queries are
// embedded alike.
type OpenAIEmbedder struct {
	*transport
	*embedBase
	dimensions int
}

var _ Embedder = (*OpenAIEmbedder)(nil)

// NewOpenAIEmbedder returns an Embedder for an OpenAI-compatible server.
// The model is required unless the server is OpenAI's own. It makes no
// request.
func NewOpenAIEmbedder(cfg EmbedConfig) (*OpenAIEmbedder, error) {
	t, err := newOpenAITransport(cfg.Config)
	if err != nil {
		return nil, err
	}
	model := cfg.Model
	if model == "" {
		if t.base != DefaultOpenAIURL {
			return nil, fmt.Errorf("%w: no embedding model for the server at %s", ErrInvalidConfig, t.shown)
		}
		model = DefaultOpenAIEmbedModel
	}
	base, err := newEmbedBase(cfg, model, openAIEmbedDims[model])
	if err != nil {
		return nil, err
	}
	return &OpenAIEmbedder{transport: t, embedBase: base, dimensions: cfg.Dimensions}, nil
}

// String describes the embedder without its secrets.
func (e *OpenAIEmbedder) String() string {
	return "openai-compatible embedder " + e.model + " at " + e.shown
}

type (
	oaEmbedRequest struct {
		Model      string   `json:"model"`
		Input      []string `json:"input"`
		Dimensions int      `json:"dimensions,omitempty"`
	}
	oaEmbedResponse struct {
		Data []struct {
			Index int `json:"index"`
			// Embedding is a list of numbers, or base64 of little-endian
			// float32s from servers that default to that encoding.
			Embedding json.RawMessage `json:"embedding"`
		} `json:"data"`
	}
)

// Embed implements Embedder.
func (e *OpenAIEmbedder) Embed(ctx context.Context, texts []string, input InputType) ([][]float32, error) {
	return e.embed(ctx, "openai embed", texts, input, func(ctx context.Context, batch []string) ([][]float64, error) {
		body, err := encodeJSON(oaEmbedRequest{Model: e.model, Input: batch, Dimensions: e.dimensions})
		if err != nil {
			return nil, fmt.Errorf("openai embed: %w: %w", ErrInvalidRequest, err)
		}
		var vecs [][]float64
		err = e.do(ctx, "openai embed", e.model, func(ctx context.Context, doer *recordingDoer) error {
			var out oaEmbedResponse
			if err := e.postJSON(ctx, doer, "/embeddings", body, &out); err != nil {
				return err
			}
			vecs, err = embeddingsInOrder(&out, len(batch))
			if err != nil {
				return &APIError{kind: ErrBadResponse, Message: err.Error()}
			}
			return nil
		})
		return vecs, err
	})
}

// embeddingsInOrder puts the answer's vectors in input order by their
// index, which the protocol does not promise to keep sorted.
func embeddingsInOrder(resp *oaEmbedResponse, n int) ([][]float64, error) {
	if len(resp.Data) != n {
		return nil, fmt.Errorf("%d embeddings for %d texts", len(resp.Data), n)
	}
	out := make([][]float64, n)
	for _, d := range resp.Data {
		if d.Index < 0 || d.Index >= n || out[d.Index] != nil {
			return nil, fmt.Errorf("embedding with a repeated or out-of-range index %d", d.Index)
		}
		v, err := decodeEmbedding(d.Embedding)
		if err != nil || len(v) == 0 {
			return nil, fmt.Errorf("embedding %d is empty or unreadable", d.Index)
		}
		out[d.Index] = v
	}
	return out, nil
}

func decodeEmbedding(raw json.RawMessage) ([]float64, error) {
	var v []float64
	if err := json.Unmarshal(raw, &v); err == nil {
		return v, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, err
	}
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil || len(b)%4 != 0 {
		return nil, errors.New("not base64 of float32s")
	}
	v = make([]float64, len(b)/4)
	for i := range v {
		v[i] = float64(math.Float32frombits(binary.LittleEndian.Uint32(b[i*4:])))
	}
	return v, nil
}
