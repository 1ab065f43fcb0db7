package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reme-dev/reme/jobs/llm/llmtest"
	"github.com/reme-dev/reme/store"
)

// Secrets pasted into a conversation, as people paste them, each with the
// placeholder it must become; and look-alikes that must pass untouched.
var (
	pastedSecrets = map[string]string{
		"AKIA2QZ5K7X4MWRP3T6N":                            "[redacted:aws-access-key]",
		"sk-proj-Zq3k9LmN2pX7vB4tR8sW1yC6dF0hJ5gK2aE9uV3": "[redacted:openai-api-key]",
		"ghp_R8mK2pW9xQ4vT7nZ3bL6cY1dF5hJ0sA8eG2u":        "[redacted:github-token]",
		"Tr0ub4dor-3x!":                                   "[redacted:password]",
	}
	secretLookalikes = []string{
		"9fceb02d0ae598e95dc970b74767f19372d61af8",                         // a git SHA
		"3f2504e0-4f89-41d3-9a0c-0305e82c3301",                             // a UUID
		"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", // a SHA-256
	}
)

// secretConversation is a conversation that carries every pasted secret
// and every look-alike.
func secretConversation() string {
	msgs := []map[string]any{
		{"id": "s-00", "role": "user", "created_at": "2026-06-22T09:00:00",
			"content": "Deploy with AWS key AKIA2QZ5K7X4MWRP3T6N and the OpenAI key sk-proj-Zq3k9LmN2pX7vB4tR8sW1yC6dF0hJ5gK2aE9uV3; commit 9fceb02d0ae598e95dc970b74767f19372d61af8."},
		{"id": "s-01", "role": "assistant", "created_at": "2026-06-22T09:00:10",
			"content": "Pushed with ghp_R8mK2pW9xQ4vT7nZ3bL6cY1dF5hJ0sA8eG2u, run 3f2504e0-4f89-41d3-9a0c-0305e82c3301."},
		{"id": "s-02", "role": "user", "created_at": "2026-06-22T09:00:20",
			"content": "The database config is password=Tr0ub4dor-3x! and the image digest is e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855."},
	}
	b, _ := json.Marshal(msgs)
	return string(b)
}

// checkNoSecrets fails when text holds a pasted secret; want lists the
// placeholders and look-alikes it must hold.
func checkNoSecrets(t *testing.T, what, text string, want ...string) {
	t.Helper()
	for secret := range pastedSecrets {
		if strings.Contains(text, secret) {
			t.Errorf("%s holds the secret %s:\n%s", what, secret, text)
		}
	}
	for _, w := range want {
		if !strings.Contains(text, w) {
			t.Errorf("%s lacks %q:\n%s", what, w, text)
		}
	}
}

func allPlaceholders() []string {
	var out []string
	for _, p := range pastedSecrets {
		out = append(out, p)
	}
	return out
}

// TestSecretsMaskedForModelAndCard: a conversation with an AWS key, an
// sk- key, a GitHub token and a password reaches the model (the real
// Cohere client, checked in the fake server's request bodies) with typed
// placeholders only, the look-alikes as they are; a model that writes the
// secrets back into the card anyway (and into its name) gets a card that
// holds placeholders only; tool calls echoed back to the model are masked
// too. The session file keeps the raw text (redact.sessions is off).
func TestSecretsMaskedForModelAndCard(t *testing.T) {
	faultEnv(t)
	ws := newWorkspaceDir(t)
	leaked := "Deploy with AKIA2QZ5K7X4MWRP3T6N, sk-proj-Zq3k9LmN2pX7vB4tR8sW1yC6dF0hJ5gK2aE9uV3 and password=Tr0ub4dor-3x!; " +
		"commit 9fceb02d0ae598e95dc970b74767f19372d61af8, run 3f2504e0-4f89-41d3-9a0c-0305e82c3301."
	fake := llmtest.NewFakeCohere()
	fake.SetHandler(func(body []byte) llmtest.FakeReply {
		switch {
		case strings.Contains(string(body), `"role":"tool"`):
			return llmtest.FakeReply{Text: "done"}
		case strings.Contains(string(body), `"daily_write"`):
			args, _ := json.Marshal(map[string]any{
				"name":        "push ghp_R8mK2pW9xQ4vT7nZ3bL6cY1dF5hJ0sA8eG2u password",
				"description": "Deploy keys: AKIA2QZ5K7X4MWRP3T6N",
				"content":     "- " + leaked + "\n- Image digest e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855.",
			})
			return llmtest.FakeReply{ToolCalls: []llmtest.FakeToolCall{{Name: "daily_write", Arguments: args}}}
		}
		return llmtest.FakeReply{Text: "no tags"}
	})
	t.Setenv("REME_LLM_BASE_URL", startFake(t, fake))
	t.Setenv("COHERE_API_KEY", llmtest.FakeAPIKey)
	r := mustRun(t, ws, "", "--json", "auto_memory", "session_id=s1", "messages="+secretConversation())
	var res struct{ Path *string }
	if err := json.Unmarshal([]byte(r.stdout), &res); err != nil || res.Path == nil {
		t.Fatalf("no card: %v\n%s", err, r.stdout)
	}

	reqs := fake.Requests()
	if len(reqs) < 2 {
		t.Fatalf("%d model requests", len(reqs))
	}
	// the first request carries the conversation: every secret masked,
	// every look-alike as it was
	checkNoSecrets(t, "the first model request", string(reqs[0]), append(allPlaceholders(), secretLookalikes...)...)
	for i, body := range reqs[1:] {
		checkNoSecrets(t, "model request "+string(rune('2'+i)), string(body))
	}
	// the write the model sent is echoed back, masked
	if !strings.Contains(string(reqs[1]), "push [redacted:github-token] password") {
		t.Errorf("the echoed tool call is not masked:\n%s", reqs[1])
	}

	card := *res.Path
	if strings.Contains(card, "ghp_") || !strings.Contains(card, "redacted-github-token") {
		t.Errorf("the card is named %s", card)
	}
	b, err := os.ReadFile(filepath.Join(ws, card))
	if err != nil {
		t.Fatal(err)
	}
	checkNoSecrets(t, card, string(b), append([]string{"[redacted:aws-access-key]", "[redacted:openai-api-key]", "password=[redacted:password]"},
		secretLookalikes...)...)
	if n := store.ParseNote(card, b); n.FMErr != nil || n.Description() != "Deploy keys: [redacted:aws-access-key]" {
		t.Errorf("the description is not masked (%v):\n%s", n.FMErr, b)
	}
	// the day page lists the card under its masked name and description
	day, _ := os.ReadFile(filepath.Join(ws, "daily", "2026-06-22.md"))
	checkNoSecrets(t, "the day page", string(day), "redacted-github-token")
	// session files keep the raw conversation unless redact.sessions is on
	raw, _ := os.ReadFile(filepath.Join(ws, "session", "dialog", "s1.jsonl"))
	if !strings.Contains(string(raw), "AKIA2QZ5K7X4MWRP3T6N") {
		t.Errorf("the session file was masked with redact.sessions off:\n%s", raw)
	}
}

// TestSecretsMaskedInExtractiveCard: without a model, the extractive
// distiller builds the card (and its name) from the conversation's own
// words; the card holds placeholders, never a secret or a piece of one (a
// card was named push-ghp-r8mk2…-password.md after the pieces of a token),
// and the look-alikes as they were. With redact.sessions the session file
// is masked too.
func TestSecretsMaskedInExtractiveCard(t *testing.T) {
	faultEnv(t)
	ws := newWorkspaceDir(t)
	writeFile(t, filepath.Join(ws, "config.yaml"), "redact:\n  sessions: true\n")
	for sid, msgs := range map[string]string{
		"s2": `[{"id":"x-00","role":"user","created_at":"2026-06-22T09:00:00","content":"push ghp_R8mK2pW9xQ4vT7nZ3bL6cY1dF5hJ0sA8eG2u password"}]`,
		"s3": secretConversation(),
	} {
		r := mustRun(t, ws, "", "--json", "auto_memory", "session_id="+sid, "fallback=extractive", "messages="+msgs)
		var res struct{ Path *string }
		if err := json.Unmarshal([]byte(r.stdout), &res); err != nil || res.Path == nil {
			t.Fatalf("%s: no card: %v\n%s", sid, err, r.stdout)
		}
		if strings.Contains(strings.ToLower(*res.Path), "r8mk2") {
			t.Errorf("%s: the card is named %s", sid, *res.Path)
		}
		b, err := os.ReadFile(filepath.Join(ws, *res.Path))
		if err != nil {
			t.Fatal(err)
		}
		checkNoSecrets(t, *res.Path, string(b), "[redacted:")
		if strings.Contains(strings.ToLower(string(b)), "r8mk2") {
			t.Errorf("%s holds a piece of the token:\n%s", *res.Path, b)
		}
		raw, _ := os.ReadFile(filepath.Join(ws, "session", "dialog", sid+".jsonl"))
		checkNoSecrets(t, "the session file", string(raw), "[redacted:")
	}
	b, _ := os.ReadFile(filepath.Join(ws, "daily", "2026-06-22.md"))
	checkNoSecrets(t, "the day page", string(b))
	cards, _ := filepath.Glob(filepath.Join(ws, "daily", "2026-06-22", "*.md"))
	var all string
	for _, c := range cards {
		b, _ := os.ReadFile(c)
		all += string(b)
	}
	checkNoSecrets(t, "the cards", all, append(allPlaceholders(), secretLookalikes...)...)
}
