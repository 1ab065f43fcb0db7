// Package llm is the only way reme's jobs talk to language models: a
// provider-neutral chat interface, a Cohere implementation, a small tool-using
// agent loop and deterministic fakes for tests.
package llm

import (
	"context"
	"encoding/json"
	"strings"
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
