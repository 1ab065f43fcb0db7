package jobs

// The Claude Code side of auto_memory_cc: the Stop hook's stdin, finding the
// session transcript, copying it into the workspace, and rendering it for
// the model.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/reme-dev/reme/store"
)

// ErrNoTranscript is returned when a Claude Code session has no transcript
// file where Claude Code keeps them.
var ErrNoTranscript = errors.New("claude code transcript not found")

const (
	// claudeHookInputMax bounds what is read from the Stop hook's stdin.
	claudeHookInputMax = 1 << 20
	// claudeExcerpt is how many characters of a tool input or result reach
	// the prompt.
	claudeExcerpt = 200
	// claudeCopyDir holds the workspace copies of Claude Code transcripts.
	claudeCopyDir = store.SessionDir + "/claude_code"
)

// ClaudeHookInput is what the Stop hook sends on stdin.
type ClaudeHookInput struct {
	SessionID      string `json:"session_id"`
	TranscriptPath string `json:"transcript_path"`
	HookEventName  string `json:"hook_event_name"`
	Cwd            string `json:"cwd"`
}

// ParseClaudeHookInput reads the hook's JSON (at most 1 MiB; unknown fields
// are ignored) and checks that it names a valid session.
func ParseClaudeHookInput(r io.Reader) (*ClaudeHookInput, error) {
	data, err := io.ReadAll(io.LimitReader(r, claudeHookInputMax+1))
	if err != nil {
		return nil, fmt.Errorf("read hook input: %w", err)
	}
	if len(data) > claudeHookInputMax {
		return nil, fmt.Errorf("%w: hook input is larger than 1 MiB", ErrInput)
	}
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return nil, fmt.Errorf("%w: hook input is empty (expected the Claude Code hook JSON on stdin)", ErrInput)
	}
	if data[0] != '{' {
		return nil, fmt.Errorf("%w: hook input is not a JSON object", ErrInput)
	}
	var in ClaudeHookInput
	if err := json.Unmarshal(data, &in); err != nil {
		var syn *json.SyntaxError
		if errors.As(err, &syn) {
			return nil, fmt.Errorf("%w: hook input is not valid JSON (at byte %d): %v", ErrInput, syn.Offset, err)
		}
		return nil, fmt.Errorf("%w: hook input: %v", ErrInput, err)
	}
	if strings.TrimSpace(in.SessionID) == "" {
		return nil, fmt.Errorf("%w: hook input has no session_id", ErrInput)
	}
	if err := ValidateSessionID(in.SessionID); err != nil {
		return nil, err
	}
	return &in, nil
}

// FindClaudeTranscript locates <configDir>/projects/*/<sessionID>.jsonl,
// where configDir is $CLAUDE_CONFIG_DIR if set, else <home>/.claude (a
// CLAUDE_CONFIG_DIR that already ends in "projects" is used as is, as ReMe
// does). When several project folders hold the session, the most recently
// modified file wins.
func FindClaudeTranscript(sessionID string, getenv func(string) string, home string) (string, error) {
	if err := ValidateSessionID(sessionID); err != nil {
		return "", err
	}
	projects, err := claudeProjectsDir(getenv, home)
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

func claudeProjectsDir(getenv func(string) string, home string) (string, error) {
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

// ClaudeCopyPath is the workspace copy of a Claude Code session transcript.
// The session id must have passed store.ValidateName.
func ClaudeCopyPath(sessionID string) string { return claudeCopyDir + "/" + sessionID + ".jsonl" }

// ClaudeEntry is one line of a Claude Code transcript.
type ClaudeEntry struct {
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

// ClaudeCopy reports what CopyClaudeTranscript did.
type ClaudeCopy struct {
	Path         string        // workspace-relative path of the copy
	Entries      []ClaudeEntry // every entry of the copy, old then new; the new ones are the last New
	New          int           // entries appended by this call
	SkippedLines int           // transcript lines that are not JSON objects (a line being written, or damage)
	// Consumed is how many bytes of the transcript were taken in: up to its
	// last complete line, or all of it when the unterminated last line
	// parsed. A later call may start reading there.
	Consumed     int64
	consumedTail []byte // the end of what was consumed
}

// NewEntries returns the entries this call added to the copy.
func (c *ClaudeCopy) NewEntries() []ClaudeEntry { return c.Entries[len(c.Entries)-c.New:] }

// CopyClaudeTranscript appends to session/claude_code/<sid>.jsonl every
// transcript line that has a uuid the copy does not hold yet, verbatim and
// in transcript order. Transcript lines that do not parse are skipped and
// counted (Claude Code may be writing the last one); a line of the copy
// that does not parse is an error, so nothing already saved is lost. When
// nothing is new the copy is not touched. The caller holds the session's
// lock: two concurrent copies could both append the same lines.
func CopyClaudeTranscript(ws *store.Workspace, sessionID, transcriptPath string) (*ClaudeCopy, error) {
	if err := ValidateSessionID(sessionID); err != nil {
		return nil, err
	}
	rel, err := ws.Rel(ClaudeCopyPath(sessionID))
	if err != nil {
		return nil, err
	}
	src, err := os.ReadFile(transcriptPath)
	if err != nil {
		return nil, fmt.Errorf("read claude code transcript: %w", err)
	}
	old, entries, err := readClaudeCopy(ws, rel)
	if err != nil {
		return nil, err
	}
	res := &ClaudeCopy{Path: rel, Entries: entries, Consumed: claudeConsumed(src)}
	res.consumedTail = claudeTail(src[:res.Consumed])
	seen := map[string]bool{}
	for _, e := range entries {
		if e.UUID != "" {
			seen[e.UUID] = true
		}
	}
	var add bytes.Buffer
	fresh, skipped := claudeNewEntries(src, seen, &add)
	res.Entries = append(res.Entries, fresh...)
	res.New, res.SkippedLines = len(fresh), skipped
	if res.New == 0 {
		return res, nil
	}
	if len(bytes.TrimSpace(old)) == 0 {
		if err := ws.WriteFile(rel, add.Bytes()); err != nil {
			return nil, err
		}
		return res, nil
	}
	data := add.Bytes()
	if old[len(old)-1] != '\n' {
		data = append([]byte{'\n'}, data...)
	}
	if err := claudeAppend(ws.Abs(rel), data); err != nil {
		return nil, fmt.Errorf("append %s: %w", rel, err)
	}
	return res, nil
}

// ClaudeImport is what ImportClaudeTranscript did and what is left to do.
type ClaudeImport struct {
	Path         string // the copy, workspace-relative
	New          int    // entries this call appended
	Entries      int    // entries in the copy
	SkippedLines int    // transcript lines that are not entries (a line being written, or damage)
	// Pending counts the copy's last entries that no successful run has
	// distilled into a card yet.
	Pending int
	// Known is false when the session has no recorded position (it was
	// distilled before positions were kept, or never): then every entry
	// counts as pending.
	Known bool
}

// claudePosition records how far a session's copy has been distilled.
type claudePosition struct {
	Entries  int    `json:"entries"`
	LastUUID string `json:"last_uuid"`
}

// claudeImportState records how far the transcript has been copied, so
// that the next Stop reads only what Claude Code appended since. It is a
// hint: when the transcript or the copy is not as recorded, the whole
// transcript is compared with the copy again.
type claudeImportState struct {
	Transcript string `json:"transcript"` // absolute path
	Offset     int64  `json:"offset"`     // transcript bytes taken in
	Tail       []byte `json:"tail"`       // the last bytes before Offset, to notice a rewritten transcript
	CopySize   int64  `json:"copy_size"`  // the copy's size after that
	Entries    int    `json:"entries"`    // entries in the copy
}

func claudeStatePath(ws *store.Workspace, sessionID, kind string) string {
	return ws.MetadataPath("auto_memory", sessionID+"."+kind+".json")
}

func readClaudeState(ws *store.Workspace, sessionID, kind string, v any) bool {
	b, err := os.ReadFile(claudeStatePath(ws, sessionID, kind))
	return err == nil && json.Unmarshal(b, v) == nil
}

// ImportClaudeTranscript appends the transcript's new entries to the
// session's copy, durably, under a short lock of its own (so that a Stop
// hook never waits for a distillation in progress), and says how many
// entries wait to be distilled. It reads only the part of the transcript
// added since the last call when nothing else changed.
func ImportClaudeTranscript(ctx context.Context, ws *store.Workspace, sessionID, transcriptPath string) (*ClaudeImport, error) {
	imp, _, err := importClaudeTranscript(ctx, ws, sessionID, transcriptPath, false)
	return imp, err
}

// importClaudeTranscript is ImportClaudeTranscript that can also return
// every entry of the copy, read under the same lock.
func importClaudeTranscript(ctx context.Context, ws *store.Workspace, sessionID, transcriptPath string, wantEntries bool) (*ClaudeImport, []ClaudeEntry, error) {
	if err := ValidateSessionID(sessionID); err != nil {
		return nil, nil, err
	}
	rel, err := ws.Rel(ClaudeCopyPath(sessionID))
	if err != nil {
		return nil, nil, err
	}
	lock, err := ws.Lock(ctx, "claude-copy-"+sessionID)
	if err != nil {
		return nil, nil, err
	}
	defer lock.Unlock()
	imp := &ClaudeImport{Path: rel}
	var st claudeImportState
	readClaudeState(ws, sessionID, "claude_import", &st)
	var entries []ClaudeEntry
	ok, err := st.appendNew(ws, rel, transcriptPath, imp)
	if err != nil {
		return nil, nil, err
	}
	if !ok {
		cp, err := CopyClaudeTranscript(ws, sessionID, transcriptPath)
		if err != nil {
			return nil, nil, err
		}
		imp.New, imp.Entries, imp.SkippedLines = cp.New, len(cp.Entries), cp.SkippedLines
		entries = cp.Entries
		abs, _ := filepath.Abs(transcriptPath)
		st = claudeImportState{Transcript: abs, Offset: cp.Consumed, Tail: claudeTail(cp.consumedTail), Entries: len(cp.Entries)}
	}
	st.CopySize = 0
	if fi, err := os.Stat(ws.Abs(rel)); err == nil {
		st.CopySize = fi.Size()
	}
	st.save(ws, sessionID)
	if wantEntries && entries == nil {
		if _, entries, err = readClaudeCopy(ws, rel); err != nil {
			return nil, nil, err
		}
	}
	imp.Pending = imp.Entries
	var pos claudePosition
	if !readClaudeState(ws, sessionID, "claude_code", &pos) {
		return imp, entries, nil
	}
	switch {
	case pos.Entries == 0:
		imp.Known = true
	case entries == nil && pos.Entries <= imp.Entries:
		imp.Pending, imp.Known = imp.Entries-pos.Entries, true
	case entries != nil && pos.Entries <= len(entries) && entries[pos.Entries-1].UUID == pos.LastUUID:
		imp.Pending, imp.Known = len(entries)-pos.Entries, true
	case entries != nil && pos.LastUUID != "":
		// The copy was edited: find the last distilled entry by its uuid.
		for i := len(entries) - 1; i >= 0; i-- {
			if entries[i].UUID == pos.LastUUID {
				imp.Pending, imp.Known = len(entries)-i-1, true
				break
			}
		}
	}
	return imp, entries, nil
}

// appendNew copies the entries Claude Code appended since the recorded
// offset. ok is false when the state does not describe the files as they
// are (another transcript, a copy changed since, a transcript rewritten):
// then the caller compares the whole transcript with the copy.
func (st *claudeImportState) appendNew(ws *store.Workspace, rel, transcriptPath string, imp *ClaudeImport) (bool, error) {
	abs, err := filepath.Abs(transcriptPath)
	if err != nil || st.Transcript != abs || st.Offset <= 0 || st.CopySize <= 0 {
		return false, nil
	}
	if fi, err := os.Stat(ws.Abs(rel)); err != nil || fi.Size() != st.CopySize {
		return false, nil
	}
	f, err := os.Open(transcriptPath)
	if err != nil {
		return false, nil // the whole comparison reports it
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() || fi.Size() < st.Offset {
		return false, nil
	}
	tail := make([]byte, len(st.Tail))
	if len(tail) == 0 || int64(len(tail)) > st.Offset {
		return false, nil
	}
	if _, err := f.ReadAt(tail, st.Offset-int64(len(tail))); err != nil || !bytes.Equal(tail, st.Tail) || tail[len(tail)-1] != '\n' {
		return false, nil
	}
	src := make([]byte, fi.Size()-st.Offset)
	if _, err := io.ReadFull(io.NewSectionReader(f, st.Offset, int64(len(src))), src); err != nil {
		return false, nil
	}
	consumed := claudeConsumed(src)
	var add bytes.Buffer
	fresh, skipped := claudeNewEntries(src, map[string]bool{}, &add)
	imp.New, imp.SkippedLines = len(fresh), skipped
	if imp.New > 0 {
		if err := claudeAppend(ws.Abs(rel), add.Bytes()); err != nil {
			return false, fmt.Errorf("append %s: %w", rel, err)
		}
	}
	st.Tail = claudeTail(append(st.Tail, src[:consumed]...))
	st.Offset += consumed
	st.Entries += imp.New
	imp.Entries = st.Entries
	return true, nil
}

// claudeTail keeps the last bytes of what was read.
func claudeTail(b []byte) []byte {
	const n = 64
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return append([]byte(nil), b...)
}

// save writes the state without waiting for the disk: losing it only
// means that the next call compares the whole transcript again.
func (st *claudeImportState) save(ws *store.Workspace, sessionID string) {
	p := claudeStatePath(ws, sessionID, "claude_import")
	b, _ := json.Marshal(st)
	if os.MkdirAll(filepath.Dir(p), 0o755) != nil {
		return
	}
	tmp := p + ".tmp"
	if os.WriteFile(tmp, b, 0o644) == nil {
		_ = os.Rename(tmp, p)
	}
}

// markDistilled records that the copy's first n entries are in the card.
func markDistilled(ws *store.Workspace, sessionID string, entries []ClaudeEntry) error {
	pos := claudePosition{Entries: len(entries)}
	if pos.Entries > 0 {
		pos.LastUUID = entries[pos.Entries-1].UUID
	}
	b, _ := json.Marshal(pos)
	if err := store.WriteFileAbs(claudeStatePath(ws, sessionID, "claude_code"), b); err != nil {
		return fmt.Errorf("record the distilled position: %w", err)
	}
	return nil
}

// claudeNewEntries picks the transcript lines whose uuid is not in seen
// (adding it), in order, and writes each to add verbatim with a newline;
// skipped counts the lines that are not entries.
func claudeNewEntries(src []byte, seen map[string]bool, add *bytes.Buffer) (fresh []ClaudeEntry, skipped int) {
	for _, line := range bytes.Split(src, []byte("\n")) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		e, ok := parseClaudeLine(line)
		if !ok {
			skipped++
			continue
		}
		if e.UUID == "" || seen[e.UUID] {
			continue
		}
		seen[e.UUID] = true
		fresh = append(fresh, e)
		add.Write(e.Raw) // the line without its terminator (\n or \r\n)
		add.WriteByte('\n')
	}
	return fresh, skipped
}

// readClaudeCopy reads and parses the session's copy (none yet is no
// error). A line that does not parse is an error, so that nothing already
// saved is lost.
func readClaudeCopy(ws *store.Workspace, rel string) ([]byte, []ClaudeEntry, error) {
	old, err := os.ReadFile(ws.Abs(rel))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, nil, fmt.Errorf("read %s: %w", rel, err)
	}
	var entries []ClaudeEntry
	for i, line := range bytes.Split(old, []byte("\n")) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		e, ok := parseClaudeLine(line)
		if !ok {
			return nil, nil, fmt.Errorf("%s line %d is not a JSON object; fix or move the file before adding to this session", rel, i+1)
		}
		entries = append(entries, e)
	}
	return old, entries, nil
}

// claudeConsumed is how much of src a copy takes in: through its last
// newline, or all of it when the unterminated tail is a whole entry.
func claudeConsumed(src []byte) int64 {
	nl := bytes.LastIndexByte(src, '\n')
	tail := src[nl+1:]
	if len(bytes.TrimSpace(tail)) == 0 {
		return int64(len(src))
	}
	if _, ok := parseClaudeLine(tail); ok {
		return int64(len(src))
	}
	return int64(nl + 1)
}

// claudeAppend appends and fsyncs; on failure it cuts the file back to its
// old size so that a half-written line never stays behind.
func claudeAppend(abs string, data []byte) error {
	f, err := os.OpenFile(abs, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return errors.New("not a regular file")
	}
	_, werr := f.Write(data)
	if werr == nil {
		werr = f.Sync()
	}
	if werr != nil {
		_ = f.Truncate(fi.Size())
		_ = f.Sync()
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	return werr
}

// parseClaudeLine decodes one transcript line; ok is false when the line is
// not a JSON object. Fields of an unexpected type are left empty.
func parseClaudeLine(line []byte) (ClaudeEntry, bool) {
	line = bytes.TrimRight(line, "\r")
	t := bytes.TrimSpace(line)
	if len(t) == 0 || t[0] != '{' || !json.Valid(t) {
		return ClaudeEntry{}, false
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
		return ClaudeEntry{}, false
	}
	e := ClaudeEntry{
		UUID:             claudeString(head.UUID),
		ParentUUID:       claudeString(head.ParentUUID),
		Type:             claudeString(head.Type),
		Timestamp:        claudeString(head.Timestamp),
		IsMeta:           head.IsMeta == true,
		IsSidechain:      head.IsSidechain == true,
		IsCompactSummary: head.IsCompactSummary == true,
		Raw:              json.RawMessage(line),
	}
	var msg struct {
		Role    any             `json:"role"`
		Content json.RawMessage `json:"content"`
	}
	if len(head.Message) > 0 && head.Message[0] == '{' && json.Unmarshal(head.Message, &msg) == nil {
		e.Role = claudeString(msg.Role)
		e.Content = msg.Content
	}
	return e, true
}

func claudeString(v any) string {
	s, _ := v.(string)
	return s
}

// claudeInjected matches the wrappers Claude Code puts into user turns:
// they are the harness talking, never the user.
var claudeInjected = regexp.MustCompile(`(?s)` + strings.Join([]string{
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

var claudeBlankLines = regexp.MustCompile(`\n[ \t]*\n(?:[ \t]*\n)+`)

// claudeStripInjected removes the injected wrappers and the blank lines
// they leave behind.
func claudeStripInjected(s string) string {
	for { // a removal can join the halves of another wrapper
		t := claudeInjected.ReplaceAllString(s, "")
		if t == s {
			break
		}
		s = t
	}
	s = claudeBlankLines.ReplaceAllString(s, "\n\n")
	return strings.TrimSpace(s)
}

// claudeBlock is the decoded form of a transcript content block.
type claudeBlock struct {
	Type     string          `json:"type"`
	Text     string          `json:"text"`
	Name     string          `json:"name"`
	Input    json.RawMessage `json:"input"`
	Content  json.RawMessage `json:"content"`
	IsError  bool            `json:"is_error"`
	Thinking string          `json:"thinking"`
}

// claudeRendered is one entry's contribution to the prompt.
type claudeRendered struct {
	lines    []string
	toolOnly bool // every line is a tool call or a tool result
}

// RenderClaudeMessages turns transcript entries into messages for the model
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
func RenderClaudeMessages(entries []ClaudeEntry) []store.Message {
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
		r := renderClaudeContent(e.Role, e.Content)
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

func renderClaudeContent(role string, content json.RawMessage) claudeRendered {
	content = bytes.TrimSpace(content)
	if len(content) == 0 {
		return claudeRendered{}
	}
	if content[0] == '"' {
		var s string
		if json.Unmarshal(content, &s) != nil {
			return claudeRendered{}
		}
		if t := claudeCleanText(role, s); t != "" {
			return claudeRendered{lines: []string{t}}
		}
		return claudeRendered{}
	}
	var blocks []json.RawMessage
	if json.Unmarshal(content, &blocks) != nil {
		return claudeRendered{}
	}
	r := claudeRendered{toolOnly: true}
	for _, raw := range blocks {
		var b claudeBlock
		if json.Unmarshal(raw, &b) != nil {
			continue
		}
		switch b.Type {
		case "text":
			if t := claudeCleanText(role, b.Text); t != "" {
				r.lines = append(r.lines, t)
				r.toolOnly = false
			}
		case "tool_use":
			r.lines = append(r.lines, "[tool "+claudeOneLine(b.Name)+"("+claudeToolInput(b.Input)+")]")
		case "tool_result":
			label := "tool result"
			if b.IsError {
				label = "tool error"
			}
			body := claudeExcerptOf(claudeStripInjected(claudeResultText(b.Content)))
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

func claudeCleanText(role, s string) string {
	if role == "user" {
		return claudeStripInjected(s)
	}
	return strings.TrimSpace(s)
}

// claudeToolInput is the compact JSON of a tool call's input, cut to the
// excerpt length.
func claudeToolInput(in json.RawMessage) string {
	var buf bytes.Buffer
	if len(in) == 0 || json.Compact(&buf, in) != nil {
		return ""
	}
	return store.TruncateRunes(buf.String(), claudeExcerpt, "…")
}

// claudeResultText is the text of a tool result's content: a string, or a
// list of blocks of which text counts and images show as [image].
func claudeResultText(c json.RawMessage) string {
	c = bytes.TrimSpace(c)
	if len(c) == 0 {
		return ""
	}
	var s string
	if json.Unmarshal(c, &s) == nil {
		return s
	}
	var blocks []claudeBlock
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

// claudeExcerptOf puts s on one line and keeps its first 200 characters.
func claudeExcerptOf(s string) string {
	return store.TruncateRunes(claudeOneLine(s), claudeExcerpt, "…")
}

func claudeOneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
