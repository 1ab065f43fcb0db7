package llm

import "testing"

func TestMessageText(t *testing.T) {
	m := Message{Role: RoleUser, Parts: []Part{{Text: "a"}, {ImageURL: "data:image/png;base64,iVBORw0KGgo="}, {Text: "b"}, {Text: ""}}}
	if m.Text() != "ab" || m.lastText() != "b" {
		t.Errorf("Text, lastText = %q, %q", m.Text(), m.lastText())
	}
	if (Message{}).Text() != "" || (Message{}).lastText() != "" {
		t.Error("empty message has text")
	}
	if got := TextMessage(RoleSystem, "x"); got.Role != RoleSystem || got.Text() != "x" {
		t.Errorf("TextMessage = %+v", got)
	}
}
