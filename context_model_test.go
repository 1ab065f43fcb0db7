package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/reme-dev/reme/jobs/llm/llmtest"
)

// TestContextModelPick: with a model and 30 entries, reme context asks it
// (over Cohere's wire format) to pick entries by name and description,
// shows the ones it picked, and says so; an answer that is not a list
// leaves the keyword matches, with a warning.
func TestContextModelPick(t *testing.T) {
	root := t.TempDir()
	t.Setenv("REME_NOW", "2026-06-22T10:00:00+08:00")
	t.Setenv("REME_TIMEZONE", "Asia/Shanghai")
	t.Setenv("COHERE_API_KEY", "")
	t.Setenv("OPENAI_API_KEY", "")
	for i := 0; i < 30; i++ {
		if _, stderr, code := runReme(t, "-w", root, "memory_write", "--type", "reference", "--name", fmt.Sprintf("runbook-%02d", i),
			"--description", fmt.Sprintf("Where runbook %d lives.", i), "--content", fmt.Sprintf("Runbook %d is in the wiki, page %d.", i, i)); code != 0 {
			t.Fatal(stderr)
		}
	}
	srv := llmtest.NewFakeCohereServer(t, llmtest.FakeReply{Text: "[7]"}, llmtest.FakeReply{Text: "I think runbook 7."})
	t.Setenv("COHERE_API_KEY", llmtest.FakeAPIKey)
	t.Setenv("REME_LLM_BASE_URL", srv.URL())
	out, stderr, code := runReme(t, "-w", root, "context", "where do I find the deploy runbook")
	if code != 0 || !strings.Contains(out, "### runbook-06 (reference)") || !strings.Contains(out, "entries picked by command-a-03-2025") ||
		strings.Count(out, "### runbook-") != 1 {
		t.Fatalf("exit %d\n%s%s", code, out, stderr)
	}
	reqs := srv.Requests()
	var req struct {
		Messages []struct{ Role, Content string }
	}
	if len(reqs) != 1 || json.Unmarshal(reqs[0], &req) != nil || len(req.Messages) != 2 ||
		!strings.Contains(req.Messages[1].Content, "where do I find the deploy runbook") ||
		!strings.Contains(req.Messages[1].Content, "7. runbook-06 (reference): Where runbook 6 lives.") {
		t.Fatalf("request %s", reqs)
	}
	// garbage from the model: keywords, and a warning
	out, stderr, code = runReme(t, "-w", root, "context", "runbook 12")
	if code != 0 || !strings.Contains(stderr, "is not a list of entry numbers") || !strings.Contains(out, "### runbook-12") || strings.Contains(out, "picked by") {
		t.Fatalf("exit %d\n%s%s", code, out, stderr)
	}
}
