// Package claudecode imports Claude Code sessions for auto_memory_cc: the
// Stop hook's stdin, finding the session transcript, copying it into the
// workspace, and rendering it for the model.
package claudecode

import (
	"bufio"
	"bytes"
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
	// ErrNoTranscript is returned when a Claude Code session has no
	// transcript file where Claude Code keeps them.
	ErrNoTranscript = errors.New("claude code transcript not found")
	// ErrTooLarge is returned for a transcript above the size limit.
	ErrTooLarge = errors.New("too large")
)

const (
	// hookInputMax bounds what is read from the Stop hook's stdin.
	hookInputMax = 1 << 20
	// excerptRunes is how many characters of a tool input or result reach
	// the prompt.
	excerptRunes = 200
	// copyDir holds the workspace copies of Claude Code transcripts.
	copyDir = store.SessionDir + "/claude_code"
)

// HookInput is what a hook sends on stdin (Stop, UserPromptSubmit,
// SessionStart).
type HookInput struct {
	SessionID      string `json:"session_id"`
	TranscriptPath string `json:"transcript_path"`
	HookEventName  string `json:"hook_event_name"`
	Cwd            string `json:"cwd"`
	// Prompt is the user's message (UserPromptSubmit).
	Prompt string `json:"prompt"`
	// Source says why a session starts: startup, resume, clear, compact
	// (SessionStart).
	Source string `json:"source"`
}

// ParseHookInput reads the hook's JSON (at most 1 MiB; unknown fields
// are ignored) and checks that it names a valid session.
func ParseHookInput(r io.Reader) (*HookInput, error) {
	data, err := io.ReadAll(io.LimitReader(r, hookInputMax+1))
	if err != nil {
		return nil, fmt.Errorf("read hook input: %w", err)
	}
	if len(data) > hookInputMax {
		return nil, fmt.Errorf("%w: hook input is larger than 1 MiB", store.ErrInput)
	}
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return nil, fmt.Errorf("%w: hook input is empty (expected the Claude Code hook JSON on stdin)", store.ErrInput)
	}
	if data[0] != '{' {
		return nil, fmt.Errorf("%w: hook input is not a JSON object", store.ErrInput)
	}
	var in HookInput
	if err := json.Unmarshal(data, &in); err != nil {
		var syn *json.SyntaxError
		if errors.As(err, &syn) {
			return nil, fmt.Errorf("%w: hook input is not valid JSON (at byte %d): %v", store.ErrInput, syn.Offset, err)
		}
		return nil, fmt.Errorf("%w: hook input: %v", store.ErrInput, err)
	}
	if strings.TrimSpace(in.SessionID) == "" {
		return nil, fmt.Errorf("%w: hook input has no session_id", store.ErrInput)
	}
	if err := store.ValidateSessionID(in.SessionID); err != nil {
		return nil, err
	}
	return &in, nil
}

// FindTranscript locates <configDir>/projects/*/<sessionID>.jsonl,
// where configDir is $CLAUDE_CONFIG_DIR if set, else <home>/.claude (a
// CLAUDE_CONFIG_DIR that already ends in "projects" is used as is, as ReMe
// does). When several project folders hold the session, the most recently
// modified file wins.
func FindTranscript(sessionID string, getenv func(string) string, home string) (string, error) {
	if err := store.ValidateSessionID(sessionID); err != nil {
		return "", err
	}
	projects, err := projectsDir(getenv, home)
	if err != nil {
		return "", err
	}
	dirs, err := os.ReadDir(projects)
	if errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("%w: %s does not exist (set CLAUDE_CONFIG_DIR if Claude Code keeps its data elsewhere)", ErrNoTranscript, projects)
	}
	if err != nil {
		return "", fmt.Errorf("read %s: %w", projects, err)
	}
	name := sessionID + ".jsonl"
	best, bestMod := "", int64(0)
	for _, d := range dirs { // sorted by name, so ties go to the first
		p := filepath.Join(projects, d.Name(), name)
		fi, err := os.Stat(p) // follows a symlinked project folder, as a glob would
		if err != nil || !fi.Mode().IsRegular() {
			continue
		}
		if mod := fi.ModTime().UnixNano(); best == "" || mod > bestMod {
			best, bestMod = p, mod
		}
	}
	if best == "" {
		return "", fmt.Errorf("%w: no %s in any project folder of %s", ErrNoTranscript, name, projects)
	}
	return best, nil
}

func projectsDir(getenv func(string) string, home string) (string, error) {
	dir := ""
	if getenv != nil {
		dir = strings.TrimSpace(getenv("CLAUDE_CONFIG_DIR"))
	}
	if dir == "" || dir == "~" || strings.HasPrefix(dir, "~/") {
		if home == "" {
			return "", fmt.Errorf("%w: no home folder to find ~/.claude in (set CLAUDE_CONFIG_DIR)", ErrNoTranscript)
		}
		switch {
		case dir == "":
			dir = filepath.Join(home, ".claude")
		default:
			dir = filepath.Join(home, strings.TrimPrefix(dir, "~"))
		}
	}
	dir = filepath.Clean(dir)
	if filepath.Base(dir) == "projects" {
		return dir, nil
	}
	return filepath.Join(dir, "projects"), nil
}

// CopyPath is the workspace copy of a Claude Code session transcript.
// The session id must have passed store.ValidateName.
func CopyPath(sessionID string) string { return copyDir + "/" + sessionID + ".jsonl" }

// Entry is one line of a Claude Code transcript.
type Entry struct {
	UUID, ParentUUID, Type, Timestamp string
	IsMeta                            bool
	// IsSidechain marks a subagent's conversation (its "user" turns are
	// prompts written by the main agent); IsCompactSummary marks the
	// summary Claude Code injects as a user turn after compacting.
	IsSidechain, IsCompactSummary bool
	Role                          string          // message.role
	Content                       json.RawMessage // message.content: a string or a list of blocks
	Raw                           json.RawMessage // the line exactly as in the transcript
}

// Copy reports what CopyTranscript did.
type Copy struct {
	Path string // workspace-relative path of the copy
	// Entries are every entry of the copy, old then new; the new ones are
	// the last New. Old entries carry no Raw line, and only user and
	// assistant entries carry their Content: that is all rendering needs.
	Entries      []Entry
	New          int // entries appended by this call
	SkippedLines int // transcript lines that are not JSON objects (a line being written, or damage)
	// SetAside is set when the copy ended in a line cut by a crash or a
	// full disk: it was moved to <copy>.corrupt (store.RepairTail), and its
	// entry is copied again from the transcript.
	SetAside *store.SetAside
	// Consumed is how many bytes of the transcript were taken in: through
	// its last complete line, or all of it when an unterminated last line
	// was a whole entry. A later call may start reading there.
	Consumed int64
}

// NewEntries returns the entries this call added to the copy.
func (c *Copy) NewEntries() []Entry { return c.Entries[len(c.Entries)-c.New:] }

// DefaultMaxTranscriptBytes bounds the transcript an import reads.
const DefaultMaxTranscriptBytes = 256 << 20

// CopyTranscript appends to session/claude_code/<sid>.jsonl every
// transcript line that has a uuid the copy does not hold yet, verbatim and
// in transcript order. Both files are read line by line. The transcript
// must be a regular file of at most maxBytes (0 means
// DefaultMaxTranscriptBytes); anything larger is refused with an error
// that says so, before the copy changes. Transcript lines that do not
// parse are skipped and counted (Claude Code may be writing the last one);
// a line of the copy that does not parse is an error, so nothing already
// saved is lost, except an unfinished last line, which a crash left and
// which is set aside into <copy>.corrupt (its entry is still in the
// transcript). New lines are appended all or nothing (store's AppendFile);
// with redact.sessions their strings are masked (store's SessionLine).
// When nothing is new the copy is not touched. The caller holds the
// session's lock: two concurrent copies could both append the same lines.
func CopyTranscript(ws *store.Workspace, sessionID, transcriptPath string, maxBytes int64) (*Copy, error) {
	if err := store.ValidateSessionID(sessionID); err != nil {
		return nil, err
	}
	if maxBytes <= 0 {
		maxBytes = DefaultMaxTranscriptBytes
	}
	rel, err := ws.Rel(CopyPath(sessionID))
	if err != nil {
		return nil, err
	}
	src, err := os.Open(transcriptPath)
	if err != nil {
		return nil, fmt.Errorf("read claude code transcript: %w", err)
	}
	defer src.Close()
	fi, err := src.Stat()
	if err != nil {
		return nil, fmt.Errorf("read claude code transcript: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%w: claude code transcript %s is not a regular file", store.ErrInput, transcriptPath)
	}
	if fi.Size() > maxBytes {
		return nil, fmt.Errorf("%w: claude code transcript %s is %d bytes, more than the limit of %d (auto_memory.max_transcript_bytes)",
			ErrTooLarge, transcriptPath, fi.Size(), maxBytes)
	}
	res := &Copy{Path: rel}
	if res.SetAside, err = ws.RepairTail(rel, isEntryLine); err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	good, endsInNewline, err := readCopy(ws.Abs(rel), rel, res, seen)
	if err != nil {
		return nil, err
	}
	nl := newLines{seen: seen, ws: ws}
	// The limit also holds for a transcript that grows while it is read.
	err = eachLine(io.LimitReader(src, maxBytes+1), func(line []byte, complete bool) error {
		if int64(nl.add.Len()) > maxBytes {
			return fmt.Errorf("%w: claude code transcript %s grew past the limit of %d bytes while it was read (auto_memory.max_transcript_bytes)", ErrTooLarge, transcriptPath, maxBytes)
		}
		nl.take(line, complete)
		return nil
	})
	if err != nil {
		if errors.Is(err, ErrTooLarge) {
			return nil, err
		}
		return nil, fmt.Errorf("read claude code transcript: %w", err)
	}
	res.Entries = append(res.Entries, nl.entries...)
	res.New, res.SkippedLines, res.Consumed = len(nl.entries), nl.skipped, nl.consumed
	if res.New == 0 {
		return res, nil
	}
	data := nl.add.Bytes()
	if good == 0 {
		return res, ws.WriteFile(rel, data)
	}
	if !endsInNewline {
		data = append([]byte{'\n'}, data...)
	}
	return res, ws.AppendFile(rel, data)
}

// isEntryLine tells a whole line of the copy from the torn end of one.
func isEntryLine(line []byte) bool {
	_, ok := parseLine(line, false)
	return ok
}

// newLines takes in transcript lines: those with a uuid not seen yet are
// kept verbatim (add, entries), the others skipped, and consumed says how
// far the transcript was taken in (through the last complete line, or an
// unterminated last line that is a whole entry).
type newLines struct {
	ws            *store.Workspace // masks the lines kept, with redact.sessions
	seen          map[string]bool
	add           bytes.Buffer
	entries       []Entry
	skipped       int
	pos, consumed int64
}

func (n *newLines) take(line []byte, complete bool) {
	n.pos += int64(len(line))
	if complete {
		n.pos++
		n.consumed = n.pos
	}
	if len(bytes.TrimSpace(line)) == 0 {
		return
	}
	e, ok := parseLine(n.ws.SessionLine(line), true)
	if !ok {
		n.skipped++
		return
	}
	n.consumed = n.pos
	if e.UUID == "" || n.seen[e.UUID] {
		return
	}
	n.seen[e.UUID] = true
	n.entries = append(n.entries, e)
	n.add.Write(e.Raw) // the line without its terminator (\n or \r\n)
	n.add.WriteByte('\n')
}

// readCopy reads the workspace copy line by line into res and seen. It
// returns the length of the file up to its last entry and whether that
// part ends in a newline (the last entry may lack it).
func readCopy(abs, rel string, res *Copy, seen map[string]bool) (good int64, endsInNewline bool, err error) {
	return readCopyUpTo(abs, rel, -1, res, seen)
}

// readCopyUpTo is readCopy of the first size bytes (all with size < 0):
// what a save left, read while later saves may be appending.
func readCopyUpTo(abs, rel string, size int64, res *Copy, seen map[string]bool) (good int64, endsInNewline bool, err error) {
	f, err := os.Open(abs)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, true, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("read %s: %w", rel, err)
	}
	defer f.Close()
	var r io.Reader = f
	if size >= 0 {
		r = io.LimitReader(f, size)
	}
	n := 0
	var pos int64
	endsInNewline = true
	err = eachLine(r, func(line []byte, complete bool) error {
		n++
		start := pos
		pos += int64(len(line))
		if complete {
			pos++
		}
		if len(bytes.TrimSpace(line)) == 0 {
			if start == good {
				good = pos
			}
			return nil
		}
		e, ok := parseLine(line, false)
		if !ok {
			return fmt.Errorf("%s line %d is not a JSON object; fix or move the file before adding to this session", rel, n)
		}
		if e.UUID != "" {
			seen[e.UUID] = true
		}
		res.Entries = append(res.Entries, e)
		good, endsInNewline = pos, complete
		return nil
	})
	return good, endsInNewline, err
}

// eachLine calls fn with every line of r, without its terminator;
// complete is false for a last line that has no newline.
func eachLine(r io.Reader, fn func(line []byte, complete bool) error) error {
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			complete := line[len(line)-1] == '\n'
			if complete {
				line = line[:len(line)-1]
			}
			if ferr := fn(line, complete); ferr != nil {
				return ferr
			}
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// parseLine decodes one transcript line; ok is false when the line is
// not a JSON object. Fields of an unexpected type are left empty. Raw is
// kept only with keepRaw, and Content only for user and assistant entries.
func parseLine(line []byte, keepRaw bool) (Entry, bool) {
	line = bytes.TrimRight(line, "\r")
	t := bytes.TrimSpace(line)
	if len(t) == 0 || t[0] != '{' || !json.Valid(t) {
		return Entry{}, false
	}
	var head struct {
		UUID             any             `json:"uuid"`
		ParentUUID       any             `json:"parentUuid"`
		Type             any             `json:"type"`
		Timestamp        any             `json:"timestamp"`
		IsMeta           any             `json:"isMeta"`
		IsSidechain      any             `json:"isSidechain"`
		IsCompactSummary any             `json:"isCompactSummary"`
		Message          json.RawMessage `json:"message"`
	}
	if json.Unmarshal(t, &head) != nil {
		return Entry{}, false
	}
	e := Entry{
		UUID:             asString(head.UUID),
		ParentUUID:       asString(head.ParentUUID),
		Type:             asString(head.Type),
		Timestamp:        asString(head.Timestamp),
		IsMeta:           head.IsMeta == true,
		IsSidechain:      head.IsSidechain == true,
		IsCompactSummary: head.IsCompactSummary == true,
	}
	if keepRaw {
		e.Raw = json.RawMessage(line)
	}
	if e.Type != "user" && e.Type != "assistant" {
		return e, true
	}
	var msg struct {
		Role    any             `json:"role"`
		Content json.RawMessage `json:"content"`
	}
	if len(head.Message) > 0 && head.Message[0] == '{' && json.Unmarshal(head.Message, &msg) == nil {
		e.Role = asString(msg.Role)
		e.Content = msg.Content
	}
	return e, true
}

func asString(v any) string {
	s, _ := v.(string)
	return s
}

// injected matches the wrappers Claude Code puts into user turns:
// they are the harness talking, never the user.
var injected = store.LazyRegexp(`(?s)` + strings.Join([]string{
	`<system-reminder>.*?</system-reminder>`,
	`<command-name>.*?</command-name>`,
	`<command-message>.*?</command-message>`,
	`<command-args>.*?</command-args>`,
	`<command-contents>.*?</command-contents>`,
	`<local-command-caveat>.*?</local-command-caveat>`,
	`<local-command-stdout>.*?</local-command-stdout>`,
	`<local-command-stderr>.*?</local-command-stderr>`,
	`<bash-input>.*?</bash-input>`,
	`<bash-stdout>.*?</bash-stdout>`,
	`<bash-stderr>.*?</bash-stderr>`,
	`<user-prompt-submit-hook>.*?</user-prompt-submit-hook>`,
	`Caveat: The messages below were generated by the user while running local commands[^\n]*`,
	`(?m:^\[Request interrupted by user[^\]\n]*\]$)`,
}, "|"))

var blankLines = store.LazyRegexp(`\n[ \t]*\n(?:[ \t]*\n)+`)

// stripInjected removes the injected wrappers and the blank lines
// they leave behind.
func stripInjected(s string) string {
	for { // a removal can join the halves of another wrapper
		t := injected().ReplaceAllString(s, "")
		if t == s {
			break
		}
		s = t
	}
	s = blankLines().ReplaceAllString(s, "\n\n")
	return strings.TrimSpace(s)
}

// block is the decoded form of a transcript content block.
type block struct {
	Type     string          `json:"type"`
	Text     string          `json:"text"`
	Name     string          `json:"name"`
	Input    json.RawMessage `json:"input"`
	Content  json.RawMessage `json:"content"`
	IsError  bool            `json:"is_error"`
	Thinking string          `json:"thinking"`
}

// rendered is one entry's contribution to the prompt.
type rendered struct {
	lines    []string
	toolOnly bool // every line is a tool call or a tool result
}

// RenderMessages turns transcript entries into messages for the model
// prompt, one text block each:
//   - only "user" and "assistant" entries with that message role count;
//     isMeta, sidechain and compact-summary entries are dropped;
//   - injected wrappers (<system-reminder>, command wrappers, local command
//     output, the local-command caveat) are removed from user text and tool
//     results; assistant text is kept as written;
//   - thinking blocks are dropped; a tool call becomes
//     "[tool <name>(<compact JSON input, at most 200 chars>)]", a tool result
//     "[tool result: <at most 200 chars on one line>]" ("[tool error: …]"
//     when is_error), an image "[image]";
//   - an entry that renders to tool lines only is merged into the message
//     before it when that one is the assistant's: Claude Code writes every
//     block of a turn as its own line, and merging keeps a run of
//     call/result pairs under one header. A tool-only entry that cannot be
//     merged becomes an assistant message (tool activity is the assistant's,
//     never what the user said), and later tool lines merge into it;
//   - a message that is left with no text is dropped.
//
// Name is the role, ID the entry's uuid and CreatedAt its timestamp (of the
// first entry, for a merged message).
func RenderMessages(entries []Entry) []store.Message {
	var out []store.Message
	var texts []string // text of out[i], grown by merges
	for _, e := range entries {
		if e.Type != "user" && e.Type != "assistant" {
			continue
		}
		if e.Role != "user" && e.Role != "assistant" {
			continue
		}
		if e.IsMeta || e.IsSidechain || e.IsCompactSummary {
			continue
		}
		r := renderContent(e.Role, e.Content)
		if len(r.lines) == 0 {
			continue
		}
		text := strings.Join(r.lines, "\n")
		if r.toolOnly && len(out) > 0 && out[len(out)-1].Role == "assistant" {
			texts[len(texts)-1] += "\n" + text
			continue
		}
		role := e.Role
		if r.toolOnly {
			role = "assistant"
		}
		out = append(out, store.Message{Name: role, Role: role, ID: e.UUID, CreatedAt: e.Timestamp})
		texts = append(texts, text)
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

func renderContent(role string, content json.RawMessage) rendered {
	content = bytes.TrimSpace(content)
	if len(content) == 0 {
		return rendered{}
	}
	if content[0] == '"' {
		var s string
		if json.Unmarshal(content, &s) != nil {
			return rendered{}
		}
		if t := cleanText(role, s); t != "" {
			return rendered{lines: []string{t}}
		}
		return rendered{}
	}
	var blocks []json.RawMessage
	if json.Unmarshal(content, &blocks) != nil {
		return rendered{}
	}
	r := rendered{toolOnly: true}
	for _, raw := range blocks {
		var b block
		if json.Unmarshal(raw, &b) != nil {
			continue
		}
		switch b.Type {
		case "text":
			if t := cleanText(role, b.Text); t != "" {
				r.lines = append(r.lines, t)
				r.toolOnly = false
			}
		case "tool_use":
			r.lines = append(r.lines, "[tool "+oneLine(b.Name)+"("+toolInput(b.Input)+")]")
		case "tool_result":
			label := "tool result"
			if b.IsError {
				label = "tool error"
			}
			body := excerptOf(stripInjected(resultText(b.Content)))
			if body == "" {
				body = "(no output)"
			}
			r.lines = append(r.lines, "["+label+": "+body+"]")
		case "image":
			r.lines = append(r.lines, "[image]")
			r.toolOnly = false
		case "document":
			r.lines = append(r.lines, "[document]")
			r.toolOnly = false
		}
		// thinking, redacted_thinking and unknown blocks are dropped.
	}
	if len(r.lines) == 0 {
		r.toolOnly = false
	}
	return r
}

func cleanText(role, s string) string {
	if role == "user" {
		return stripInjected(s)
	}
	return strings.TrimSpace(s)
}

// toolInput is the compact JSON of a tool call's input, cut to the
// excerpt length.
func toolInput(in json.RawMessage) string {
	var buf bytes.Buffer
	if len(in) == 0 || json.Compact(&buf, in) != nil {
		return ""
	}
	return store.TruncateRunes(buf.String(), excerptRunes, "…")
}

// resultText is the text of a tool result's content: a string, or a
// list of blocks of which text counts and images show as [image].
func resultText(c json.RawMessage) string {
	c = bytes.TrimSpace(c)
	if len(c) == 0 {
		return ""
	}
	var s string
	if json.Unmarshal(c, &s) == nil {
		return s
	}
	var blocks []block
	if json.Unmarshal(c, &blocks) != nil {
		return ""
	}
	var parts []string
	for _, b := range blocks {
		switch b.Type {
		case "text":
			parts = append(parts, b.Text)
		case "image":
			parts = append(parts, "[image]")
		}
	}
	return strings.Join(parts, "\n")
}

// excerptOf puts s on one line and keeps its first 200 characters.
func excerptOf(s string) string {
	return store.TruncateRunes(oneLine(s), excerptRunes, "…")
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// recentToolsBytes is how much of a transcript's end RecentTools reads.
const recentToolsBytes = 256 << 10

// RecentTools lists the tools the last n tool calls of a transcript used
// (distinct, sorted), from its last 256 KiB: what the session did
// recently, not all it ever did.
func RecentTools(path string, n int) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open transcript: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("open transcript: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%w: transcript %s is not a regular file", store.ErrInput, path)
	}
	off := fi.Size() - recentToolsBytes
	if off < 0 {
		off = 0
	}
	data := make([]byte, fi.Size()-off)
	if _, err := f.ReadAt(data, off); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("read transcript: %w", err)
	}
	if off > 0 {
		// the first line is cut
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			data = data[i+1:]
		}
	}
	var used []string
	for _, line := range bytes.Split(data, []byte("\n")) {
		e, ok := parseLine(line, false)
		if !ok || e.Type != "assistant" || len(e.Content) == 0 || e.Content[0] != '[' {
			continue
		}
		var blocks []struct {
			Type string `json:"type"`
			Name string `json:"name"`
		}
		if json.Unmarshal(e.Content, &blocks) != nil {
			continue
		}
		for _, b := range blocks {
			if b.Type == "tool_use" && b.Name != "" {
				used = append(used, b.Name)
			}
		}
	}
	if len(used) > n {
		used = used[len(used)-n:]
	}
	set := map[string]bool{}
	var out []string
	for _, t := range used {
		if !set[t] {
			set[t] = true
			out = append(out, t)
		}
	}
	sort.Strings(out)
	return out, nil
}
