package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMCPMemoryTools: the memory tools over MCP answer as their commands
// (text, and the --json value as the structured result), confine the
// agent as a model is confined, and write through the journal.
func TestMCPMemoryTools(t *testing.T) {
	root := copyWorkspace(t)
	t.Setenv("REME_NOW", "2026-06-22T10:00:00+08:00")
	t.Setenv("REME_TIMEZONE", "Asia/Shanghai")
	cs, _ := mcpInProcess(t, root, nil)
	content := "Answer with bullet points.\n\nWhy: long paragraphs are hard to scan.\nHow to apply: short bullets.\n"
	res := callTool(t, cs, "memory_write", map[string]any{"type": "feedback", "name": "answer-format",
		"description": "Prefers bullet answers.", "content": content})
	if res.IsError || !strings.HasPrefix(resultText(res), "created memory/entries/answer-format.md (hash ") {
		t.Fatalf("memory_write: %s", resultText(res))
	}
	var written struct{ Path, Action, Hash string }
	b, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(b, &written); err != nil || written.Action != "created" || len(written.Hash) != 64 {
		t.Fatalf("structured %s", b)
	}
	// the same as the CLI prints
	stdout, _, code := runReme(t, "-w", root, "memory_get", "--name", "answer-format")
	got := callTool(t, cs, "memory_get", map[string]any{"name": "answer-format"})
	if code != 0 || got.IsError || resultText(got) != stdout || !strings.Contains(stdout, "# hash: "+written.Hash) {
		t.Errorf("memory_get over MCP %q, CLI %q", resultText(got), stdout)
	}
	hits := callTool(t, cs, "memory_search", map[string]any{"query": "bullet points", "types": []string{"feedback"}})
	if hits.IsError || !strings.Contains(resultText(hits), "========== memory/entries/answer-format.md (feedback") {
		t.Errorf("memory_search: %s", resultText(hits))
	}
	ctxRes := callTool(t, cs, "context", map[string]any{"query": "how should I format answers", "budget": 2000})
	if ctxRes.IsError || !strings.Contains(resultText(ctxRes), "### answer-format (feedback)") || len(resultText(ctxRes)) > 2000 {
		t.Errorf("context: %s", resultText(ctxRes))
	}
	// bad input: a clear error, nothing changed
	for _, bad := range []map[string]any{
		{"type": "feedback", "name": "terse", "content": "Be terse."},
		{"path": "daily/2026-06-22/x.md", "content": "x"},
		{"path": "memory/profile.md", "content": "I am an agent."},
		{"type": "user", "name": "x", "content": "@/etc/passwd"},
	} {
		if r := callTool(t, cs, "memory_write", bad); !r.IsError {
			t.Errorf("%v was accepted: %s", bad, resultText(r))
		}
	}
	if _, err := os.Stat(filepath.Join(root, "memory", "profile.md")); err == nil {
		t.Error("an agent over MCP wrote the profile")
	}
	del := callTool(t, cs, "memory_delete", map[string]any{"name": "answer-format", "reason": "the user said so", "hash": written.Hash})
	if del.IsError || resultText(del) != "deleted memory/entries/answer-format.md (in the trash: archive/memory/entries/answer-format.md)\n" {
		t.Errorf("memory_delete: %s", resultText(del))
	}
	hist, _, _ := runReme(t, "-w", root, "history", "--limit", "1")
	if !strings.Contains(hist, " memory_delete  mcp  ok ") {
		t.Errorf("history:\n%s", hist)
	}
}
