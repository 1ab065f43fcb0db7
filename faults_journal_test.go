//go:build linux

package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/reme-dev/reme/jobs/llm/llmtest"
)

// memoryScript is the fake model's part in one auto_memory call: write the
// card under a name (so that it is renamed), end, tag it, end.
func memoryScript(t *testing.T) []llmtest.FakeReply {
	t.Helper()
	var replies []llmtest.FakeReply
	err := json.Unmarshal([]byte(`[
 {"tool_calls":[{"name":"daily_write","arguments":{"name":"backup-schedule","description":"The nightly backup runs at 02:00 UTC and is kept 30 days.","content":"## Backups\n\n- Nightly at 02:00 UTC, kept 30 days.\n"}}]},
 {"text":"Wrote the card."},
 {"tool_calls":[{"name":"frontmatter_update","arguments":{"path":"daily/2026-06-22/backup-schedule.md","metadata":{"memory_tags":["backup","ops"]}}}]},
 {"text":"backup, ops"}
]`), &replies)
	if err != nil {
		t.Fatal(err)
	}
	return replies
}

const memoryConversation = `[{"role":"user","content":"The nightly backup runs at 02:00 UTC; keep 30 days.","created_at":"2026-06-22T09:00:00+08:00"},
{"role":"assistant","content":"Noted: backups at 02:00 UTC, 30 days.","created_at":"2026-06-22T09:00:05+08:00"}]`

func memoryRun(t *testing.T, root string, env ...string) *exec.Cmd {
	// the card run alone; the long-term pass has its own kill test
	return modelRun(t, root, memoryScript(t), append([]string{"REME_MEMORY_EXTRACT=false"}, env...)...)
}

// modelRun is auto_memory of memoryConversation against a fake Cohere
// server answering with replies.
func modelRun(t *testing.T, root string, replies []llmtest.FakeReply, env ...string) *exec.Cmd {
	srv := llmtest.NewFakeCohereServer(t, replies...)
	conv := filepath.Join(t.TempDir(), "conv.json")
	if err := os.WriteFile(conv, []byte(memoryConversation), 0o644); err != nil {
		t.Fatal(err)
	}
	return remeCmd(root, append([]string{"REME_LLM_BASE_URL=" + srv.URL(), "COHERE_API_KEY=" + llmtest.FakeAPIKey, "REME_LLM_MAX_RETRIES=0"}, env...),
		"auto_memory", "session_id=backup-talk", "messages=@"+conv)
}

func memoryWorkspace(t *testing.T) string {
	root := t.TempDir()
	if err := copyDir(filepath.Join("testdata", "workspace"), root); err != nil {
		t.Fatal(err)
	}
	if out, err := remeCmd(root, nil, "daily_reindex", "2026-06-22").CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	return root
}

// withoutSession drops session/ from a tree listing: the conversation is
// saved before any card work, and is meant to survive a crash.
func withoutSession(sums string) string {
	var keep []string
	for _, l := range strings.Split(sums, "\n") {
		if !strings.Contains(l, "  session/") {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "\n")
}

// TestAutoMemoryKilledAtEveryStep kills `reme auto_memory` (SIGKILL) after
// each journaled step in turn. The next command rolls the card work back
// (the conversation stays saved, its messages pending), the journal says
// so, and the next auto_memory call gives the same card as an
// uninterrupted one.
func TestAutoMemoryKilledAtEveryStep(t *testing.T) {
	if testing.Short() {
		t.Skip("starts many processes")
	}
	ref := memoryWorkspace(t)
	before := withoutSession(mustTreeSums(t, ref))
	if out, err := memoryRun(t, ref).CombinedOutput(); err != nil {
		t.Fatalf("auto_memory: %v\n%s", err, out)
	}
	want := withoutSession(mustTreeSums(t, ref))
	if !strings.Contains(want, "daily/2026-06-22/backup-schedule.md") {
		t.Fatalf("the reference run wrote no card:\n%s", want)
	}
	killed := 0
	for n := 1; n < 100; n++ {
		root := memoryWorkspace(t)
		out, err := memoryRun(t, root, fmt.Sprintf("REME_CRASH_AT=#%d", n)).CombinedOutput()
		if err == nil {
			break
		}
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ProcessState.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
			t.Fatalf("step %d: auto_memory failed instead of being killed: %v\n%s", n, err, out)
		}
		killed++
		hist, err := remeCmd(root, nil, "history").CombinedOutput()
		if err != nil {
			t.Fatalf("step %d: the next command failed: %v\n%s", n, err, hist)
		}
		if !strings.Contains(string(hist), "auto_memory  cli  rolled_back") && !strings.Contains(string(hist), "No changes journaled") {
			t.Errorf("step %d: the journal does not say the run was rolled back:\n%s", n, hist)
		}
		if got := withoutSession(mustTreeSums(t, root)); got != before {
			t.Errorf("step %d: workspace after recovery differs from before the run:\n%s", n, cmp.Diff(before, got))
		}
		if _, err := os.Stat(filepath.Join(root, "session/dialog/backup-talk.jsonl")); err != nil {
			t.Errorf("step %d: the conversation was not kept: %v", n, err)
		}
		if openRuns(t, root) != 0 {
			t.Errorf("step %d: a run is still open", n)
		}
		if out, err := memoryRun(t, root).CombinedOutput(); err != nil {
			t.Fatalf("step %d: auto_memory after recovery: %v\n%s", n, err, out)
		}
		if got := withoutSession(mustTreeSums(t, root)); got != want {
			t.Errorf("step %d: the card after recovery differs from an uninterrupted run:\n%s", n, cmp.Diff(want, got))
		}
	}
	t.Logf("killed at %d steps", killed)
	if killed < 5 {
		t.Fatalf("only %d steps were tried", killed)
	}
}
