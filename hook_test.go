package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// hookEnv is the environment of a Stop hook run by the tests: no model (the
// extractive distiller), a fixed clock.
func hookEnv() []string {
	return append(os.Environ(), "COHERE_API_KEY=", "REME_TIMEZONE=UTC", "REME_NOW=2026-06-21T12:00:00Z", "REME_WORKSPACE=")
}

// claudeTurn is one exchange as Claude Code writes it: a user line and an
// assistant line with a text block.
func claudeTurn(sid string, i int) string {
	user := map[string]any{
		"parentUuid": nil, "isSidechain": false, "userType": "external", "cwd": "/home/dana/src/app", "sessionId": sid,
		"version": "2.1.27", "gitBranch": "main", "type": "user",
		"message":   map[string]any{"role": "user", "content": fmt.Sprintf("Decision %d: keep marker-%02d in the release notes.", i, i)},
		"uuid":      fmt.Sprintf("00000000-0000-4000-8000-%012d", 2*i+1),
		"timestamp": fmt.Sprintf("2026-06-21T10:%02d:00.000Z", i),
	}
	asst := map[string]any{
		"parentUuid": user["uuid"], "isSidechain": false, "userType": "external", "cwd": "/home/dana/src/app", "sessionId": sid,
		"version": "2.1.27", "gitBranch": "main", "type": "assistant", "requestId": fmt.Sprintf("req_%d", i),
		"message": map[string]any{"id": fmt.Sprintf("msg_%d", i), "type": "message", "role": "assistant", "model": "claude-opus-4-6",
			"content":     []any{map[string]any{"type": "text", "text": fmt.Sprintf("Noted decision %d.", i)}},
			"stop_reason": "end_turn", "usage": map[string]any{"input_tokens": 3, "output_tokens": 5}},
		"uuid":      fmt.Sprintf("00000000-0000-4000-8000-%012d", 2*i+2),
		"timestamp": fmt.Sprintf("2026-06-21T10:%02d:05.000Z", i),
	}
	var b strings.Builder
	for _, e := range []any{user, asst} {
		line, _ := json.Marshal(e)
		b.Write(line)
		b.WriteByte('\n')
	}
	return b.String()
}

var hookPID = regexp.MustCompile(`"background_pid": (\d+)`)

// TestStopHookConcurrentEvents fires a Stop hook after each of many turns
// without waiting for the background runs: they queue behind the session
// lock, and every statement of every turn ends up in the card.
func TestStopHookConcurrentEvents(t *testing.T) {
	if testing.Short() {
		t.Skip("starts many processes")
	}
	if runtime.GOOS == "windows" {
		t.Skip("background runs are detached with setsid")
	}
	dir := t.TempDir()
	ws := filepath.Join(dir, "ws")
	sid := "3a5f9c1e-2b4d-4e6f-8a0b-1c2d3e4f5a6b"
	transcript := filepath.Join(dir, sid+".jsonl")
	stdin := fmt.Sprintf(`{"session_id":%q,"transcript_path":%q,"cwd":"/home/dana/src/app","permission_mode":"default","hook_event_name":"Stop","stop_hook_active":false}`, sid, transcript)
	const turns = 8
	var wg sync.WaitGroup
	var mu sync.Mutex
	var pids []int
	var failures []string
	f, err := os.OpenFile(transcript, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for i := 0; i < turns; i++ {
		// Claude Code appends the turn, then fires the hook and moves on.
		if _, err := f.WriteString(claudeTurn(sid, i)); err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.Command("reme", "-w", ws, "--json", "auto_memory_cc")
			cmd.Env = hookEnv()
			cmd.Stdin = strings.NewReader(stdin)
			var out, errb bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &errb
			err := cmd.Run()
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				failures = append(failures, fmt.Sprintf("%v: %s", err, errb.String()))
				return
			}
			if m := hookPID.FindStringSubmatch(out.String()); m != nil {
				pid, _ := strconv.Atoi(m[1])
				pids = append(pids, pid)
			}
		}()
	}
	wg.Wait()
	if len(failures) > 0 {
		t.Fatalf("hooks failed:\n%s", strings.Join(failures, "\n"))
	}
	if len(pids) == 0 {
		t.Fatal("no hook started a background run")
	}
	for _, pid := range pids {
		waitGone(t.Fatalf, pid)
	}
	log, _ := os.ReadFile(filepath.Join(ws, "metadata", "logs", "auto_memory_cc.log"))
	if bytes.Contains(log, []byte("failed")) || bytes.Contains(log, []byte("reme: error")) {
		t.Fatalf("a background run failed:\n%s", log)
	}
	copyFile, err := os.ReadFile(filepath.Join(ws, "session", "claude_code", sid+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(copyFile, []byte("\n")); n != 2*turns {
		t.Errorf("the copy holds %d lines, want %d (each entry once)", n, 2*turns)
	}
	cards, _ := filepath.Glob(filepath.Join(ws, "daily", "2026-06-21", "*.md"))
	if len(cards) != 1 {
		t.Fatalf("cards = %v, want one for the session", cards)
	}
	card, _ := os.ReadFile(cards[0])
	for i := 0; i < turns; i++ {
		if !bytes.Contains(card, []byte(fmt.Sprintf("marker-%02d", i))) {
			t.Errorf("the card lacks turn %d:\n%s\nlog:\n%s", i, card, log)
		}
	}
	// Nothing is left pending: one more Stop has nothing to do.
	cmd := exec.Command("reme", "-w", ws, "auto_memory_cc")
	cmd.Env = hookEnv()
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.Output()
	if err != nil || !strings.HasPrefix(string(out), "nothing new in ") {
		t.Fatalf("last hook: %v, %s", err, out)
	}
}

// TestHookNeverExitsTwo: Claude Code reads exit code 2 from a Stop hook as
// "do not stop, feed stderr to the model". Every mistake exits 1 instead,
// says what is wrong on stderr and is logged in the workspace.
func TestHookNeverExitsTwo(t *testing.T) {
	dir := t.TempDir()
	ws := filepath.Join(dir, "ws")
	if err := os.MkdirAll(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	good := `{"session_id":"abc","transcript_path":"/nonexistent/abc.jsonl","hook_event_name":"Stop","stop_hook_active":false}`
	tests := []struct {
		name   string
		args   []string
		stdin  string
		stderr string
	}{
		{"unknown flag", []string{"auto_memory_cc", "--frobnicate"}, good, "unknown flag --frobnicate"},
		{"unknown key", []string{"auto_memory_cc", "colour=blue"}, good, `unknown argument "colour"`},
		{"bad enum", []string{"auto_memory_cc", "--language", "fr"}, good, "--language"},
		{"bad date", []string{"auto_memory_cc", "--date", "2026-02-30"}, good, "date must be YYYY-MM-DD"},
		{"flag before the command", []string{"--frobnicate", "auto_memory_cc"}, good, "unknown flag --frobnicate"},
		{"ReMe job form", []string{"--auto_memory_cc", "--frobnicate"}, good, "unknown flag --frobnicate"},
		{"empty stdin", []string{"auto_memory_cc"}, "", "hook input is empty"},
		{"not JSON", []string{"auto_memory_cc"}, "Stop", "not a JSON object"},
		{"bad session id", []string{"auto_memory_cc"}, `{"session_id":"../../etc","transcript_path":"x"}`, "session_id"},
		{"missing transcript", []string{"auto_memory_cc"}, good, "/nonexistent/abc.jsonl"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd := exec.Command("reme", append([]string{"-w", ws}, tt.args...)...)
			cmd.Env = hookEnv()
			cmd.Stdin = strings.NewReader(tt.stdin)
			var errb bytes.Buffer
			cmd.Stderr = &errb
			err := cmd.Run()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 1 {
				t.Fatalf("exit: %v, want exit status 1; stderr:\n%s", err, errb.String())
			}
			if !strings.HasPrefix(errb.String(), "reme: ") || !strings.Contains(errb.String(), tt.stderr) {
				t.Errorf("stderr = %q, want reme: … %q", errb.String(), tt.stderr)
			}
			log, _ := os.ReadFile(filepath.Join(ws, "metadata", "logs", "auto_memory_cc.log"))
			if !strings.Contains(string(log), "failed: reme -w "+ws+" "+strings.Join(tt.args, " ")) || !strings.Contains(string(log), tt.stderr) {
				t.Errorf("the failure is not in the log:\n%s", log)
			}
		})
	}
	// The same mistake in another command is a usage error, exit 2.
	cmd := exec.Command("reme", "-w", ws, "search", "--frobnicate", "x")
	cmd.Env = hookEnv()
	err := cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 2 {
		t.Fatalf("search with an unknown flag: %v, want exit status 2", err)
	}
}

// TestImportedSessionRunsAreHookRuns: the runs of the Stop hook commands
// are journaled as started by a hook, whatever the agent.
func TestImportedSessionRunsAreHookRuns(t *testing.T) {
	faultEnv(t)
	for _, tc := range []struct {
		command string
		turn    string
	}{
		{"auto_memory_cc", claudeTurn("s1", 0)},
		{"auto_memory_codex", codexTurn(0)},
	} {
		t.Run(tc.command, func(t *testing.T) {
			ws := newWorkspaceDir(t)
			transcript := filepath.Join(t.TempDir(), "s1.jsonl")
			writeFile(t, transcript, tc.turn)
			mustRun(t, ws, "", tc.command, "--wait", "session_id=s1", "transcript_path="+transcript)
			var runs []struct {
				Command string `json:"command"`
				Trigger string `json:"trigger"`
			}
			if err := json.Unmarshal([]byte(mustRun(t, ws, "", "--json", "history").stdout), &runs); err != nil {
				t.Fatal(err)
			}
			if len(runs) == 0 {
				t.Fatal("no run journaled")
			}
			for _, r := range runs {
				if r.Trigger != "hook" {
					t.Errorf("run of %s journaled as started by %q", r.Command, r.Trigger)
				}
			}
		})
	}
}
