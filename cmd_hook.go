package main

// auto_memory_cc as a Claude Code Stop hook. Claude Code waits for the hook
// and reads exit code 2 as "do not stop, show stderr to the model", so the
// hook must return at once and never exit 2: it saves the new transcript
// entries, starts a detached process that distils them under the session's
// lock, and returns. Failures are also appended to
// metadata/logs/auto_memory_cc.log, where the background runs write too.

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/reme-dev/reme/store"
)

const (
	hookLogName = "auto_memory_cc.log"
	// hookLogMax is the size at which the log is rotated to .1.
	hookLogMax = 4 << 20
)

// hookCommand reports whether args run an agent's hook, so that even a
// bad flag does not exit 2, and names the hook's log: auto_memory_cc and
// auto_memory_codex (also ReMe's --auto_memory_cc form), or reme context
// --format claude-code.
func hookCommand(args []string) (logName string, ok bool) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if globalValueFlags[a] {
			i++
			continue
		}
		switch strings.TrimLeft(a, "-") {
		case "auto_memory_cc", "auto-memory-cc", "auto_memory_codex", "auto-memory-codex":
			return hookLogName, true
		case "context":
			if isClaudeCodeFormat(args[i+1:]) {
				return contextLogName, true
			}
			return "", false
		}
		if !strings.HasPrefix(a, "-") {
			return "", false
		}
	}
	return "", false
}

// isClaudeCodeFormat reports whether a command's arguments ask for the
// Claude Code hook format.
func isClaudeCodeFormat(args []string) bool {
	for i, a := range args {
		switch {
		case a == "--format=claude-code", a == "format=claude-code", a == "--format" && i+1 < len(args) && args[i+1] == "claude-code":
			return true
		}
	}
	return false
}

// hookWorkspace finds the workspace folder from raw arguments, for logging
// a command line that did not parse. It returns "" when the folder does not
// exist: a broken command never creates a workspace.
func hookWorkspace(args []string, getenv func(string) string) string {
	dir := ""
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case globalValueFlags[a] && i+1 < len(args):
			dir = args[i+1]
			i++
		case strings.HasPrefix(a, "--workspace="):
			dir = strings.TrimPrefix(a, "--workspace=")
		}
	}
	ws, err := store.OpenWorkspace(workspaceDir(dir, getenv))
	if err != nil {
		return ""
	}
	if fi, err := os.Stat(ws.Root); err != nil || !fi.IsDir() {
		return ""
	}
	return ws.Root
}

// openHookLog opens a hook's log under metadata/logs/ for appending,
// rotating it first when it has grown large.
func openHookLog(root, name string) (*os.File, string, error) {
	dir := filepath.Join(root, store.MetadataDir, "logs")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, "", fmt.Errorf("create log folder: %w", err)
	}
	p := filepath.Join(dir, name)
	if fi, err := os.Stat(p); err == nil && fi.Size() > hookLogMax {
		_ = os.Rename(p, p+".1")
	}
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return nil, "", fmt.Errorf("open log: %w", err)
	}
	return f, p, nil
}

// logHookFailure appends a failed hook call and what it printed to the
// log; it is best effort, as the hook has already failed.
func logHookFailure(root, name string, args []string, stderr string, now time.Time) {
	if root == "" {
		return
	}
	f, _, err := openHookLog(root, name)
	if err != nil {
		return
	}
	defer f.Close()
	fmt.Fprintf(f, "%s [pid %d] failed: reme %s\n", now.Format(time.RFC3339), os.Getpid(), strings.Join(args, " "))
	for _, line := range strings.Split(strings.TrimRight(stderr, "\n"), "\n") {
		fmt.Fprintf(f, "  %s\n", line)
	}
}

// startDistiller starts `reme auto_memory_cc --background` for a session in
// a process of its own session group, with its output going to the log, and
// returns without waiting for it.
func (a *App) startDistiller(command string, c *autoMemoryCCCmd, sid, transcript string) (pid int, logPath string, err error) {
	exe, err := os.Executable()
	if err != nil {
		return 0, "", err
	}
	if transcript, err = filepath.Abs(transcript); err != nil {
		return 0, "", err
	}
	args := []string{"-w", a.root, "-v", command, "--background", "--session-id", sid, "--transcript-path", transcript}
	if a.Globals.Verbose > 1 {
		args[2] = "-vv"
	}
	for _, kv := range [][2]string{{"--date", c.Date}, {"--memory-hint", c.MemoryHint}, {"--language", c.Language}, {"--fallback", c.Fallback}} {
		if kv[1] != "" {
			args = append(args, kv[0]+"="+kv[1])
		}
	}
	logf, logPath, err := openHookLog(a.root, hookLogName)
	if err != nil {
		return 0, "", err
	}
	defer logf.Close() // the child has its own descriptor
	cmd := exec.Command(exe, args...)
	cmd.Stdout, cmd.Stderr = logf, logf // stdin is /dev/null
	cmd.Env = append(os.Environ(), a.dotEnv.extra()...)
	detach(cmd)
	if err := cmd.Start(); err != nil {
		return 0, "", err
	}
	pid = cmd.Process.Pid
	_ = cmd.Process.Release()
	return pid, logPath, nil
}

// linePrefixer starts every line written through it with a time stamp and
// a tag, so that the lines of concurrent background runs can be told apart.
type linePrefixer struct {
	mu   sync.Mutex
	w    io.Writer
	tag  string
	now  func() time.Time
	midl bool // the last write ended inside a line
}

func (p *linePrefixer) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := len(b)
	var out []byte
	for len(b) > 0 {
		if !p.midl {
			out = append(out, p.now().Format(time.RFC3339)+" "+p.tag+" "...)
		}
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			out = append(out, b...)
			p.midl = true
			break
		}
		out = append(out, b[:i+1]...)
		b = b[i+1:]
		p.midl = false
	}
	if _, err := p.w.Write(out); err != nil {
		return 0, err
	}
	return n, nil
}
