// Package codex imports Codex CLI sessions: the rollout transcript
// (~/.codex/sessions/YYYY/MM/DD/rollout-<time>-<session id>.jsonl, one JSON
// object a line: {"timestamp", "type", "payload"}) is copied into the
// workspace and rendered as messages for the card of the day.
package codex

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/reme-dev/reme/store"
)

var (
	// ErrNoTranscript is returned when no rollout of the session is found.
	ErrNoTranscript = errors.New("no Codex transcript found for this session")
	// ErrTooLarge refuses a transcript over the configured bound.
	ErrTooLarge = errors.New("the Codex transcript is too large")
)

// copyDir holds the copies of Codex transcripts in the workspace.
const copyDir = "session/codex"

// excerptRunes bounds a tool call's arguments and a tool output's excerpt.
const excerptRunes = 200

// CopyPath is the workspace path of a session's copy.
func CopyPath(sessionID string) string { return copyDir + "/" + sessionID + ".jsonl" }

// SessionsDir is $CODEX_HOME/sessions, by default ~/.codex/sessions.
func SessionsDir(getenv func(string) string, home string) string {
	if d := strings.TrimSpace(getenv("CODEX_HOME")); d != "" {
		return filepath.Join(d, "sessions")
	}
	return filepath.Join(home, ".codex", "sessions")
}

// FindTranscript finds the rollout file of a session: the newest file
// under the sessions folder whose name ends in -<session id>.jsonl.
func FindTranscript(sessionID string, getenv func(string) string, home string) (string, error) {
	dir := SessionsDir(getenv, home)
	var found []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && p == dir {
				return fs.SkipAll
			}
			return err
		}
		if d.Type().IsRegular() && strings.HasSuffix(d.Name(), "-"+sessionID+".jsonl") {
			found = append(found, p)
		}
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("look for the Codex transcript in %s: %w", dir, err)
	}
	if len(found) == 0 {
		return "", fmt.Errorf("%w: %s under %s (give transcript_path)", ErrNoTranscript, sessionID, dir)
	}
	sort.Strings(found) // the date folders and the time in the name sort by time
	return found[len(found)-1], nil
}

// Copy is a session's copy after a save.
type Copy struct {
	Path  string   // workspace path
	Lines [][]byte // every line of the copy
	New   int      // lines this save added
	// SetAside is set when the copy ended in a line cut by a crash or a
	// full disk: it was moved to <copy>.corrupt (store.RepairTail), and its
	// line is copied again from the rollout.
	SetAside *store.SetAside
}

// Save appends to the copy every complete line of the transcript that is
// JSON and not in the copy yet (a rollout only grows; a line cut short by a
// write in progress waits for the next save), all or nothing (store's
// AppendFile), with its strings masked under redact.sessions (store's
// SessionLine). A torn last line of the copy is set aside first.
func Save(ws *store.Workspace, sessionID, transcript string, maxBytes int64) (*Copy, error) {
	if err := store.ValidateSessionID(sessionID); err != nil {
		return nil, err
	}
	fi, err := os.Stat(transcript)
	if err != nil {
		return nil, fmt.Errorf("codex transcript: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("codex transcript %s is not a regular file", transcript)
	}
	if maxBytes > 0 && fi.Size() > maxBytes {
		return nil, fmt.Errorf("%w: %s is %d bytes, more than %d (auto_memory.max_transcript_bytes)", ErrTooLarge, transcript, fi.Size(), maxBytes)
	}
	c := &Copy{Path: CopyPath(sessionID)}
	if c.SetAside, err = ws.RepairTail(c.Path, func(l []byte) bool { return json.Valid(l) }); err != nil {
		return nil, err
	}
	old, err := os.ReadFile(ws.Abs(c.Path))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("read %s: %w", c.Path, err)
	}
	seen := map[string]bool{}
	for _, l := range splitLines(old) {
		c.Lines = append(c.Lines, l)
		seen[lineKey(l)] = true
	}
	f, err := os.Open(transcript)
	if err != nil {
		return nil, fmt.Errorf("codex transcript: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, fi.Size()))
	if err != nil {
		return nil, fmt.Errorf("codex transcript: %w", err)
	}
	var added bytes.Buffer
	for _, l := range splitLines(completeLinesBytes(data)) {
		// the copy may hold the line masked (redact.sessions on now or
		// when it was saved) or as it is
		masked, _ := store.RedactJSONStrings(l)
		if !json.Valid(l) || seen[lineKey(l)] || seen[lineKey(masked)] {
			continue
		}
		l = ws.SessionLine(l)
		seen[lineKey(l)] = true
		c.Lines = append(c.Lines, l)
		added.Write(l)
		added.WriteByte('\n')
		c.New++
	}
	if c.New == 0 {
		return c, nil
	}
	if len(bytes.TrimSpace(old)) == 0 {
		return c, ws.WriteFile(c.Path, added.Bytes())
	}
	if !bytes.HasSuffix(old, []byte("\n")) {
		return c, ws.AppendFile(c.Path, append([]byte{'\n'}, added.Bytes()...))
	}
	return c, ws.AppendFile(c.Path, added.Bytes())
}

// splitLines splits data into its non-empty lines.
func splitLines(data []byte) [][]byte {
	var out [][]byte
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, len(data)+1)
	for sc.Scan() {
		if l := bytes.TrimSpace(sc.Bytes()); len(l) > 0 {
			out = append(out, bytes.Clone(l))
		}
	}
	return out
}

// completeLinesBytes is data up to its last newline.
func completeLinesBytes(data []byte) []byte {
	if i := bytes.LastIndexByte(data, '\n'); i >= 0 {
		return data[:i]
	}
	return nil
}

func lineKey(l []byte) string {
	sum := sha256.Sum256(l)
	return hex.EncodeToString(sum[:])
}

type rolloutLine struct {
	Timestamp string          `json:"timestamp"`
	Type      string          `json:"type"`
	Payload   json.RawMessage `json:"payload"`
}

type item struct {
	Type      string          `json:"type"`
	Role      string          `json:"role"`
	Content   []contentPart   `json:"content"`
	Name      string          `json:"name"`
	Arguments string          `json:"arguments"`
	Input     string          `json:"input"`
	Output    json.RawMessage `json:"output"`
	Action    json.RawMessage `json:"action"`
}

type contentPart struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// injected matches the context Codex puts into user messages itself: the
// environment, AGENTS.md instructions, user instructions, aborted turns.
var injected = store.LazyRegexp(`(?s)<(environment_context|user_instructions|permissions instructions|turn_aborted|user_shell_command)>.*?</(environment_context|user_instructions|permissions instructions|turn_aborted|user_shell_command)>|^# AGENTS\.md instructions for .*?</INSTRUCTIONS>`)

// RenderMessages turns rollout lines into messages, one text block each:
// user and assistant messages (response items) with Codex's injected
// context removed; developer and system messages, reasoning, and the event
// lines that repeat the messages are dropped; a tool call becomes
// "[tool <name>(<arguments, at most 200 chars>)]" and its output
// "[tool result: <at most 200 chars on one line>]", merged into the
// assistant message before it. Name is the role, ID a hash of the line,
// CreatedAt its timestamp.
func RenderMessages(lines [][]byte) []store.Message {
	var out []store.Message
	var texts []string
	add := func(role, id, at, text string, tool bool) {
		if tool && len(out) > 0 && out[len(out)-1].Role == "assistant" {
			texts[len(texts)-1] += "\n" + text
			return
		}
		out = append(out, store.Message{Name: role, Role: role, ID: id, CreatedAt: at})
		texts = append(texts, text)
	}
	for _, l := range lines {
		var rl rolloutLine
		if json.Unmarshal(l, &rl) != nil || rl.Type != "response_item" {
			continue
		}
		var it item
		if json.Unmarshal(rl.Payload, &it) != nil {
			continue
		}
		id := lineKey(l)[:16]
		switch it.Type {
		case "message":
			if it.Role != "user" && it.Role != "assistant" {
				continue
			}
			var parts []string
			for _, p := range it.Content {
				switch p.Type {
				case "input_text", "output_text", "text":
					t := p.Text
					if it.Role == "user" {
						t = injected().ReplaceAllString(t, "")
					}
					if t = strings.TrimSpace(t); t != "" {
						parts = append(parts, t)
					}
				case "input_image":
					parts = append(parts, "[image]")
				}
			}
			if len(parts) > 0 {
				add(it.Role, id, rl.Timestamp, strings.Join(parts, "\n"), false)
			}
		case "function_call", "custom_tool_call":
			args := it.Arguments
			if it.Type == "custom_tool_call" {
				args = it.Input
			}
			add("assistant", id, rl.Timestamp, "[tool "+oneLine(it.Name)+"("+excerpt(args)+")]", true)
		case "local_shell_call":
			add("assistant", id, rl.Timestamp, "[tool shell("+excerpt(string(it.Action))+")]", true)
		case "function_call_output", "custom_tool_call_output":
			body := excerpt(outputText(it.Output))
			if body == "" {
				body = "(no output)"
			}
			add("assistant", id, rl.Timestamp, "[tool result: "+body+"]", true)
		}
	}
	for i := range out {
		b, _ := json.Marshal(struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}{"text", texts[i]})
		out[i].Content = []json.RawMessage{b}
	}
	return out
}

// outputText is a tool output: a string, or an object with "content" (as
// Codex writes a shell call's result), or a list of content parts.
func outputText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		var inner struct {
			Output string `json:"output"`
		}
		if json.Unmarshal([]byte(s), &inner) == nil && inner.Output != "" {
			return inner.Output
		}
		return s
	}
	var obj struct {
		Content string `json:"content"`
	}
	if json.Unmarshal(raw, &obj) == nil && obj.Content != "" {
		return obj.Content
	}
	var parts []contentPart
	if json.Unmarshal(raw, &parts) == nil {
		var b []string
		for _, p := range parts {
			b = append(b, p.Text)
		}
		return strings.Join(b, "\n")
	}
	return ""
}

func excerpt(s string) string { return store.TruncateRunes(oneLine(s), excerptRunes, "…") }

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
