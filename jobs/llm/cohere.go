package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	cohere "github.com/cohere-ai/cohere-go/v2"
	"github.com/cohere-ai/cohere-go/v2/option"
	coherev2 "github.com/cohere-ai/cohere-go/v2/v2"
)

const (
	// DefaultModel is the Cohere model used when a Request names none.
	DefaultModel = "command-a-03-2025"
	// DefaultVisionModel is used instead when a Request without a model
	// carries images, which DefaultModel cannot read.
	DefaultVisionModel = "command-a-vision-07-2025"

	// DefaultCohereURL is Cohere's API.
	DefaultCohereURL  = "https://api.cohere.com"
	defaultTimeout    = 120 * time.Second
	defaultMaxRetries = 3
	backoffBase       = time.Second
	backoffCap        = 30 * time.Second
	// Retry-After is honoured up to this long; a longer wait is better
	// reported as an error than spent blocking a one-shot command.
	retryAfterCap = 60 * time.Second
	// Chat answers are a few KB and a batch of embeddings a few MB; the
	// cap only guards memory.
	maxResponseBytes = 16 << 20
	// Server messages quoted in errors are cut to this length.
	maxServerMessage = 300
)

// Cohere is a Client for Cohere's Chat v2 API. It is safe for concurrent use.
type Cohere struct {
	*transport
	// sdk is the v2 client; the umbrella client package would pull in the
	// AWS SDK for Bedrock, which reme does not need.
	sdk         *coherev2.Client
	model       string
	visionModel string
}

var _ Client = (*Cohere)(nil)

// NewCohere returns a Cohere chat client. It makes no request.
func NewCohere(cfg Config) (*Cohere, error) {
	t, sdk, err := newCohereTransport(cfg)
	if err != nil {
		return nil, err
	}
	c := &Cohere{transport: t, sdk: sdk, model: cfg.Model, visionModel: cfg.VisionModel}
	if c.model == "" {
		c.model = DefaultModel
	}
	if c.visionModel == "" {
		c.visionModel = DefaultVisionModel
	}
	return c, nil
}

// newCohereTransport checks cfg and returns the transport and SDK client
// that every Cohere client uses.
func newCohereTransport(cfg Config) (*transport, *coherev2.Client, error) {
	if strings.TrimSpace(cfg.APIKey) == "" {
		return nil, nil, ErrNoAPIKey
	}
	t, err := newTransport(cfg, DefaultCohereURL, "COHERE_API_KEY")
	if err != nil {
		return nil, nil, err
	}
	clientName := "reme"
	opts := []option.RequestOption{
		option.WithToken(cfg.APIKey),
		option.WithBaseURL(t.base),
		option.WithHTTPClient(t.httpClient),
		option.WithClientName(&clientName),
		// The SDK's own retries sleep without watching ctx; ours do.
		option.WithMaxAttempts(1),
	}
	return t, coherev2.NewClient(opts...), nil
}

// cohereCall is the per-request options of one attempt: its HTTP client,
// and the base URL's query, which the SDK takes per request only.
func (t *transport) cohereCall(doer *recordingDoer) []option.RequestOption {
	opts := []option.RequestOption{option.WithHTTPClient(doer)}
	if len(t.query) > 0 {
		opts = append(opts, option.WithQueryParameters(t.query))
	}
	return opts
}

// String describes the client without its secrets, so that printing it by
// accident leaks nothing.
func (c *Cohere) String() string { return "cohere client for " + c.shown }

// Chat sends req to Cohere's /v2/chat, retrying rate limits, server errors
// and timeouts with exponential backoff.
func (c *Cohere) Chat(ctx context.Context, req Request) (*Response, error) {
	creq, err := toCohereRequest(req, c.model, c.visionModel)
	if err != nil {
		return nil, fmt.Errorf("cohere chat: %w", err)
	}
	var resp *Response
	err = c.do(ctx, "cohere chat", creq.Model, func(ctx context.Context, doer *recordingDoer) error {
		cresp, err := c.sdk.Chat(ctx, creq, c.cohereCall(doer)...)
		if err != nil {
			return err
		}
		resp, err = fromCohereResponse(cresp)
		if err != nil {
			return &APIError{kind: ErrBadResponse, Message: err.Error()}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	c.log.DebugContext(ctx, "cohere chat done", "model", creq.Model, "finish_reason", resp.FinishReason,
		"input_tokens", resp.Usage.InputTokens, "output_tokens", resp.Usage.OutputTokens)
	return resp, nil
}

// toCohereRequest maps a Request onto the SDK's v2 types.
func toCohereRequest(req Request, model, visionModel string) (*cohere.V2ChatRequest, error) {
	out := &cohere.V2ChatRequest{Model: req.Model, Temperature: req.Temperature}
	if out.Model == "" {
		out.Model = model
		if hasImage(req.Messages) {
			out.Model = visionModel
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
	texts, hasImg, err := messageParts(m)
	if err != nil {
		return nil, err
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
