// Package llm is the only way reme talks to language models:
// provider-neutral chat, embedding and rerank interfaces, their Cohere and
// OpenAI-compatible implementations, and a small tool-using agent loop.
// Deterministic fakes for tests live in llmtest.
package llm

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
)

var (
	// ErrNoAPIKey is returned by the Cohere constructors when no API key is
	// configured.
	ErrNoAPIKey = errors.New("no cohere api key: set COHERE_API_KEY")
	// ErrInvalidConfig means a Config cannot work: a base URL that is not
	// an http(s) URL, a negative batch size, ...
	ErrInvalidConfig = errors.New("invalid model configuration")
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
	// ErrBadResponse means a 2xx answer that is not a usable response.
	ErrBadResponse = errors.New("bad response")
	// ErrNoToolCalls means that the model does not call tools where the
	// job needs it to: the server rejected the tools, the model wrote its
	// call as text, or a run that required a tool call ended without one.
	// Local servers often lack tool support for a model; the job's fallback
	// applies.
	ErrNoToolCalls = errors.New("the model does not call tools")
	// ErrToolArguments means the model sent tool arguments that are not
	// valid JSON again after being told what was wrong.
	ErrToolArguments = errors.New("the model sent malformed tool arguments")
	// ErrInvalidRequest means the Request cannot be expressed for the
	// provider (an image in a system message, a tool message without id, ...).
	ErrInvalidRequest = errors.New("invalid request")
)

// Role says who wrote a message.
type Role string

// The roles a conversation is made of.
const (
	RoleSystem    Role = "system"
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool"
)

// Part is one piece of message content: exactly one of Text and ImageURL is
// set. ImageURL is a data: URL (base64) or an http(s) URL.
type Part struct {
	Text     string `json:"text,omitempty"`
	ImageURL string `json:"image_url,omitempty"`
}

// Message is one turn of a conversation.
type Message struct {
	Role  Role   `json:"role"`
	Parts []Part `json:"parts,omitempty"`
	// ToolCalls are set on assistant messages that call tools.
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	// ToolCallID is set on RoleTool messages: the call this result answers.
	ToolCallID string `json:"tool_call_id,omitempty"`
	// ToolPlan is Cohere's tool_plan text, kept so that the conversation can
	// be replayed to the model exactly as it happened.
	ToolPlan string `json:"tool_plan,omitempty"`
}

// Tool describes a function the model may call.
type Tool struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	// Parameters is a JSON Schema object describing the arguments.
	Parameters json.RawMessage `json:"parameters,omitempty"`
}

// ToolCall is the model's request to run a tool.
type ToolCall struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	// Arguments is what the model sent, which may not be valid JSON: the
	// agent loop reports that back to the model instead of failing.
	Arguments json.RawMessage `json:"arguments,omitempty"`
}

// Usage counts tokens.
type Usage struct {
	InputTokens  int `json:"input_tokens"`
	OutputTokens int `json:"output_tokens"`
}

// Add returns the sum of u and v.
func (u Usage) Add(v Usage) Usage {
	return Usage{InputTokens: u.InputTokens + v.InputTokens, OutputTokens: u.OutputTokens + v.OutputTokens}
}

// Request is one chat completion request.
type Request struct {
	// Model is the provider's model name; empty selects the client's default.
	Model       string
	Messages    []Message
	Tools       []Tool
	Temperature *float64
	// MaxTokens limits the reply; 0 leaves it to the provider.
	MaxTokens int
}

// Response is the model's reply.
type Response struct {
	Message      Message
	FinishReason string
	Usage        Usage
}

// Client is a chat model. Implementations must be safe for concurrent use.
type Client interface {
	Chat(ctx context.Context, req Request) (*Response, error)
}

// TextMessage returns a message with a single text part.
func TextMessage(role Role, text string) Message {
	return Message{Role: role, Parts: []Part{{Text: text}}}
}

// Text returns the concatenation of the message's text parts.
func (m Message) Text() string {
	var b strings.Builder
	for _, p := range m.Parts {
		b.WriteString(p.Text)
	}
	return b.String()
}

// lastText returns the last non-empty text part, which is what a job reports
// as the model's answer (a reply may start with a preamble block).
func (m Message) lastText() string {
	for i := len(m.Parts) - 1; i >= 0; i-- {
		if m.Parts[i].Text != "" {
			return m.Parts[i].Text
		}
	}
	return ""
}

// messageParts returns the texts of m's text parts and whether it carries
// images, refusing what no provider takes: a part with both text and an
// image, images outside user messages, tool calls outside assistant ones.
func messageParts(m Message) (texts []string, hasImg bool, err error) {
	for _, p := range m.Parts {
		if p.Text != "" && p.ImageURL != "" {
			return nil, false, errors.New("part has both text and image_url")
		}
		if p.ImageURL != "" {
			hasImg = true
		} else {
			texts = append(texts, p.Text)
		}
	}
	if hasImg && m.Role != RoleUser {
		return nil, false, errors.New("only user messages may carry images")
	}
	if len(m.ToolCalls) > 0 && m.Role != RoleAssistant {
		return nil, false, errors.New("only assistant messages may carry tool calls")
	}
	return texts, hasImg, nil
}

// hasImage reports whether any message carries an image part.
func hasImage(msgs []Message) bool {
	for _, m := range msgs {
		for _, p := range m.Parts {
			if p.ImageURL != "" {
				return true
			}
		}
	}
	return false
}
