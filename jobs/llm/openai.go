package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strings"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/shared"
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
type OpenAI struct {
	*transport
	chat        openai.ChatCompletionService
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
	t, opts, err := newOpenAITransport(cfg)
	if err != nil {
		return nil, err
	}
	c := &OpenAI{
		transport:   t,
		chat:        openai.NewChatCompletionService(opts...),
		model:       cfg.Model,
		visionModel: cfg.VisionModel,
		official:    t.base == DefaultOpenAIURL,
	}
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

// newOpenAITransport returns the transport and SDK options that every
// OpenAI-compatible client uses. The SDK is given everything explicitly:
// its client constructor would read OPENAI_* variables on its own.
func newOpenAITransport(cfg Config) (*transport, []option.RequestOption, error) {
	t, err := newTransport(cfg, DefaultOpenAIURL, openAIKeyHint)
	if err != nil {
		return nil, nil, err
	}
	t.classify = classifyOpenAIError
	opts := []option.RequestOption{
		option.WithBaseURL(t.base + "/"),
		option.WithAPIKey(cfg.APIKey),
		// Our transport retries, watching ctx and Retry-After.
		option.WithMaxRetries(0),
		option.WithHTTPClient(t.httpClient),
	}
	for k, vs := range t.query {
		for _, v := range vs {
			opts = append(opts, option.WithQueryAdd(k, v))
		}
	}
	return t, opts, nil
}

// toolsUnsupported matches what servers say when a model cannot use tools:
// Ollama ("... does not support tools"), llama.cpp ("tools param requires
// --jinja flag"), vLLM ("auto" tool choice requires
// --enable-auto-tool-choice ...) and others.
var toolsUnsupported = regexp.MustCompile(`(?i)does not support tools|tools? (is|are) not supported|not support(ed)? (for )?(tools|tool calls|function calling)|requires --jinja|enable-auto-tool-choice|function calling is not (supported|enabled)`)

func classifyOpenAIError(e *APIError) {
	switch {
	case toolsUnsupported.MatchString(e.Message):
		// Not worth retrying, whatever the status: the server will say the
		// same again.
		e.kind, e.also = ErrNoToolCalls, ErrBadRequest
	case e.StatusCode == http.StatusNotFound:
		e.hint = "check the base URL (OpenAI-compatible APIs usually end in /v1) and the model name"
	}
}

// String describes the client without its secrets.
func (c *OpenAI) String() string { return "openai-compatible client for " + c.shown }

// Chat sends req to the server's /chat/completions, retrying rate limits,
// server errors and timeouts with exponential backoff.
func (c *OpenAI) Chat(ctx context.Context, req Request) (*Response, error) {
	params, err := c.toParams(req)
	if err != nil {
		return nil, fmt.Errorf("openai chat: %w", err)
	}
	var resp *Response
	err = c.do(ctx, "openai chat", params.Model, func(ctx context.Context, doer *recordingDoer) error {
		completion, err := c.chat.New(ctx, params, option.WithHTTPClient(doer))
		if err != nil {
			return err
		}
		resp, err = fromOpenAIResponse(completion)
		if err != nil {
			return &APIError{kind: ErrBadResponse, Message: err.Error()}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	c.log.DebugContext(ctx, "openai chat done", "model", params.Model, "finish_reason", resp.FinishReason,
		"input_tokens", resp.Usage.InputTokens, "output_tokens", resp.Usage.OutputTokens)
	return resp, nil
}

// toParams maps a Request onto the SDK's request type.
func (c *OpenAI) toParams(req Request) (openai.ChatCompletionNewParams, error) {
	out := openai.ChatCompletionNewParams{Model: req.Model}
	if out.Model == "" {
		out.Model = c.model
		if hasImage(req.Messages) {
			out.Model = c.visionModel
		}
	}
	if req.Temperature != nil {
		out.Temperature = param.NewOpt(*req.Temperature)
	}
	if req.MaxTokens > 0 {
		if c.official {
			out.MaxCompletionTokens = param.NewOpt(int64(req.MaxTokens))
		} else {
			out.MaxTokens = param.NewOpt(int64(req.MaxTokens))
		}
	}
	if len(req.Messages) == 0 {
		return out, fmt.Errorf("%w: no messages", ErrInvalidRequest)
	}
	for i, m := range req.Messages {
		om, err := toOpenAIMessage(m)
		if err != nil {
			return out, fmt.Errorf("%w: message %d (%s): %w", ErrInvalidRequest, i, m.Role, err)
		}
		out.Messages = append(out.Messages, om)
	}
	for _, t := range req.Tools {
		ot, err := toOpenAITool(t)
		if err != nil {
			return out, fmt.Errorf("%w: tool %q: %w", ErrInvalidRequest, t.Name, err)
		}
		out.Tools = append(out.Tools, ot)
	}
	return out, nil
}

// toOpenAIMessage maps one message. Text parts are sent as one string
// except in user messages with images: many compatible servers accept
// content lists only there.
func toOpenAIMessage(m Message) (openai.ChatCompletionMessageParamUnion, error) {
	var none openai.ChatCompletionMessageParamUnion
	var texts []string
	hasImg := false
	for _, p := range m.Parts {
		if p.Text != "" && p.ImageURL != "" {
			return none, errors.New("part has both text and image_url")
		}
		if p.ImageURL != "" {
			hasImg = true
		} else {
			texts = append(texts, p.Text)
		}
	}
	if hasImg && m.Role != RoleUser {
		return none, errors.New("only user messages may carry images")
	}
	if len(m.ToolCalls) > 0 && m.Role != RoleAssistant {
		return none, errors.New("only assistant messages may carry tool calls")
	}
	text := strings.Join(texts, "\n\n")
	switch m.Role {
	case RoleSystem:
		if len(texts) == 0 {
			return none, errors.New("no content")
		}
		return openai.SystemMessage(text), nil

	case RoleUser:
		if len(m.Parts) == 0 {
			return none, errors.New("no content")
		}
		if !hasImg {
			return openai.UserMessage(text), nil
		}
		var parts []openai.ChatCompletionContentPartUnionParam
		for _, p := range m.Parts {
			if p.ImageURL != "" {
				parts = append(parts, openai.ImageContentPart(openai.ChatCompletionContentPartImageImageURLParam{URL: p.ImageURL}))
			} else {
				parts = append(parts, openai.TextContentPart(p.Text))
			}
		}
		return openai.UserMessage(parts), nil

	case RoleAssistant:
		if len(m.ToolCalls) == 0 && text == "" {
			return none, errors.New("no content and no tool calls")
		}
		var am openai.ChatCompletionAssistantMessageParam
		if text != "" {
			am.Content.OfString = param.NewOpt(text)
		}
		for _, tc := range m.ToolCalls {
			if tc.ID == "" || tc.Name == "" {
				return none, errors.New("tool call without id or name")
			}
			am.ToolCalls = append(am.ToolCalls, openai.ChatCompletionMessageToolCallUnionParam{
				OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{
					ID: tc.ID,
					Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{
						Name: tc.Name, Arguments: replayArguments(tc.Arguments),
					},
				},
			})
		}
		return openai.ChatCompletionMessageParamUnion{OfAssistant: &am}, nil

	case RoleTool:
		if m.ToolCallID == "" {
			return none, errors.New("no tool_call_id")
		}
		return openai.ToolMessage(text, m.ToolCallID), nil
	}
	return none, fmt.Errorf("unknown role %q", m.Role)
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

func toOpenAITool(t Tool) (openai.ChatCompletionToolUnionParam, error) {
	if t.Name == "" {
		return openai.ChatCompletionToolUnionParam{}, errors.New("no name")
	}
	params := map[string]any{"type": "object", "properties": map[string]any{}}
	if len(bytes.TrimSpace(t.Parameters)) > 0 {
		dec := json.NewDecoder(bytes.NewReader(t.Parameters))
		dec.UseNumber()
		params = nil
		if err := dec.Decode(&params); err != nil || params == nil {
			return openai.ChatCompletionToolUnionParam{}, errors.New("parameters are not a JSON object")
		}
	}
	fn := shared.FunctionDefinitionParam{Name: t.Name, Parameters: shared.FunctionParameters(params)}
	if t.Description != "" {
		fn.Description = param.NewOpt(t.Description)
	}
	return openai.ChatCompletionFunctionTool(fn), nil
}

// fromOpenAIResponse maps the first choice back onto our types.
func fromOpenAIResponse(r *openai.ChatCompletion) (*Response, error) {
	if r == nil || len(r.Choices) == 0 {
		return nil, errors.New("response has no choices")
	}
	choice := r.Choices[0]
	m := choice.Message
	msg := Message{Role: RoleAssistant}
	text := m.Content
	if list, ok := contentListText(m.JSON.Content.Raw()); ok {
		// The SDK would keep a list of parts as its raw JSON.
		text = list
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
		msg.ToolCalls = append(msg.ToolCalls, ToolCall{
			ID:        tc.ID,
			Name:      tc.Function.Name,
			Arguments: lenientArguments(tc.Function.JSON.Arguments.Raw()),
		})
	}
	if len(msg.ToolCalls) == 0 && m.FunctionCall.Name != "" {
		// The legacy single function call, which some servers still send.
		msg.ToolCalls = []ToolCall{{Name: m.FunctionCall.Name, Arguments: lenientArguments(m.FunctionCall.JSON.Arguments.Raw())}}
	}
	return &Response{
		Message:      msg,
		FinishReason: choice.FinishReason,
		Usage:        Usage{InputTokens: int(r.Usage.PromptTokens), OutputTokens: int(r.Usage.CompletionTokens)},
	}, nil
}

// lenientArguments reads the arguments of a tool call as a server sent
// them: normally a JSON string holding JSON, but loose servers send the
// object itself or encode it twice. What cannot be read is passed on as
// it is, for the agent loop to report to the model.
func lenientArguments(raw string) json.RawMessage {
	raw = strings.TrimSpace(raw)
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

// contentListText joins the text parts of content sent as a list; ok is
// false when the content is not a list.
func contentListText(raw string) (text string, ok bool) {
	if !strings.HasPrefix(strings.TrimSpace(raw), "[") {
		return "", false
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal([]byte(raw), &parts) != nil {
		return "", false
	}
	var texts []string
	for _, p := range parts {
		if p.Text != "" && (p.Type == "" || p.Type == "text") {
			texts = append(texts, p.Text)
		}
	}
	return strings.Join(texts, "\n\n"), true
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
	svc        openai.EmbeddingService
	dimensions int
}

var _ Embedder = (*OpenAIEmbedder)(nil)

// NewOpenAIEmbedder returns an Embedder for an OpenAI-compatible server.
// The model is required unless the server is OpenAI's own. It makes no
// request.
func NewOpenAIEmbedder(cfg EmbedConfig) (*OpenAIEmbedder, error) {
	t, opts, err := newOpenAITransport(cfg.Config)
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
	return &OpenAIEmbedder{transport: t, embedBase: base, svc: openai.NewEmbeddingService(opts...), dimensions: cfg.Dimensions}, nil
}

// String describes the embedder without its secrets.
func (e *OpenAIEmbedder) String() string {
	return "openai-compatible embedder " + e.model + " at " + e.shown
}

// Embed implements Embedder.
func (e *OpenAIEmbedder) Embed(ctx context.Context, texts []string, input InputType) ([][]float32, error) {
	return e.embed(ctx, "openai embed", texts, input, func(ctx context.Context, batch []string) ([][]float64, error) {
		params := openai.EmbeddingNewParams{
			Model: openai.EmbeddingModel(e.model),
			Input: openai.EmbeddingNewParamsInputUnion{OfArrayOfStrings: batch},
		}
		if e.dimensions > 0 {
			params.Dimensions = param.NewOpt(int64(e.dimensions))
		}
		var vecs [][]float64
		err := e.do(ctx, "openai embed", e.model, func(ctx context.Context, doer *recordingDoer) error {
			resp, err := e.svc.New(ctx, params, option.WithHTTPClient(doer))
			if err != nil {
				return err
			}
			vecs, err = embeddingsInOrder(resp, len(batch))
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
func embeddingsInOrder(resp *openai.CreateEmbeddingResponse, n int) ([][]float64, error) {
	if resp == nil || len(resp.Data) != n {
		got := 0
		if resp != nil {
			got = len(resp.Data)
		}
		return nil, fmt.Errorf("%d embeddings for %d texts", got, n)
	}
	out := make([][]float64, n)
	for _, d := range resp.Data {
		if d.Index < 0 || int(d.Index) >= n || out[d.Index] != nil {
			return nil, fmt.Errorf("embedding with a repeated or out-of-range index %d", d.Index)
		}
		if len(d.Embedding) == 0 {
			return nil, fmt.Errorf("embedding %d is empty", d.Index)
		}
		out[d.Index] = d.Embedding
	}
	return out, nil
}
