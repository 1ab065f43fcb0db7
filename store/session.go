package store

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

var (
	// ErrMessages is wrapped by every problem with the messages of a call.
	ErrMessages = errors.New("invalid messages")
	// ErrInput is wrapped by every other problem with what a caller handed
	// in (a session id, a hook's input), whichever package finds it.
	ErrInput = errors.New("invalid input")
)

// ValidateSessionID applies ReMe's rule: a session id is a file name.
func ValidateSessionID(sid string) error {
	if strings.TrimSpace(sid) == "" {
		return fmt.Errorf("%w: session_id is required", ErrInput)
	}
	if err := ValidateName(sid); err != nil {
		return fmt.Errorf("%w: session_id: %v", ErrInput, err)
	}
	return nil
}

// Message is one conversation message in AgentScope's Msg shape, which is
// what ReMe writes to session/dialog/<session_id>.jsonl.
type Message struct {
	Name             string            `json:"name"`
	Content          []json.RawMessage `json:"content"`
	Role             string            `json:"role"`
	ID               string            `json:"id"`
	Metadata         json.RawMessage   `json:"metadata"`
	CreatedAt        string            `json:"created_at"`
	Usage            json.RawMessage   `json:"usage"`
	FinishedAt       json.RawMessage   `json:"finished_at"`
	FinishedReason   json.RawMessage   `json:"finished_reason"`
	StructuredOutput json.RawMessage   `json:"structured_output"`
	Error            json.RawMessage   `json:"error"`
}

// Block is the decoded form of one content block.
type Block struct {
	Type   string `json:"type"`
	Text   string `json:"text,omitempty"`
	Name   string `json:"name,omitempty"`
	Input  any    `json:"input,omitempty"`
	Source *struct {
		Type      string `json:"type"`
		MediaType string `json:"media_type"`
		Data      string `json:"data"`
		URL       string `json:"url"`
	} `json:"source,omitempty"`
}

// Blocks decodes the content blocks; undecodable blocks are skipped.
func (m *Message) Blocks() []Block {
	out := make([]Block, 0, len(m.Content))
	for _, raw := range m.Content {
		var b Block
		if json.Unmarshal(raw, &b) == nil {
			out = append(out, b)
		}
	}
	return out
}

// Text joins the text blocks.
func (m *Message) Text() string {
	var parts []string
	for _, b := range m.Blocks() {
		if b.Type == "text" && strings.TrimSpace(b.Text) != "" {
			parts = append(parts, b.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// timestampAliases are the dataset field names accepted when created_at is
// missing, looked up at the top level, then in metadata.
var timestampAliases = []string{"time_created", "timestamp", "createdAt", "timeCreated", "created_time"}

// ParseMessages validates and normalises the messages of a call: a JSON
// list of objects with a role (user, assistant or system) and content as a
// string or a list of blocks. A missing name defaults to the role, a
// missing id is derived from the content, and a missing created_at comes
// from the first timestamp alias (now, if none); a timestamp that is not a
// date or time is an error, not a card dated today. Text must be UTF-8:
// bytes that are not are refused (with where they are), never replaced,
// and a text given as a string keeps its JSON escapes as written.
func ParseMessages(raw []byte, now time.Time) ([]Message, error) {
	if !json.Valid(raw) && len(bytes.TrimSpace(raw)) > 0 {
		// Unmarshal names the offset of the first error the way a reader
		// of the whole text expects it; it allocates nothing on failure.
		var v json.RawMessage
		if err := json.Unmarshal(raw, &v); err != nil {
			var syn *json.SyntaxError
			if errors.As(err, &syn) {
				return nil, fmt.Errorf("%w: not valid JSON (at byte %d): %v", ErrMessages, syn.Offset, err)
			}
		}
	}
	return ReadMessages(bytes.NewReader(raw), now)
}

// ReadMessages is ParseMessages over a reader: the list is decoded one
// message at a time, so that a long conversation is not held twice.
func ReadMessages(r io.Reader, now time.Time) ([]Message, error) {
	dec := json.NewDecoder(r)
	syntax := func(err error) error {
		var syn *json.SyntaxError
		var typ *json.UnmarshalTypeError
		switch {
		case errors.As(err, &syn):
			return fmt.Errorf("%w: not valid JSON (at byte %d): %v", ErrMessages, syn.Offset, err)
		case errors.Is(err, io.ErrUnexpectedEOF):
			return fmt.Errorf("%w: not valid JSON (cut off at byte %d)", ErrMessages, dec.InputOffset())
		case errors.As(err, &typ):
			return fmt.Errorf("%w: %v", ErrMessages, err)
		}
		return fmt.Errorf("read messages: %w", err) // the reader's own error, such as a size limit
	}
	tok, err := dec.Token()
	if errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%w: no messages given", ErrMessages)
	}
	if err != nil {
		return nil, syntax(err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '[' {
		return nil, fmt.Errorf("%w: messages must be a JSON list of message objects", ErrMessages)
	}
	var out []Message
	for i := 0; dec.More(); i++ {
		var item json.RawMessage
		if err := dec.Decode(&item); err != nil {
			return nil, syntax(err)
		}
		if !utf8.Valid(item) {
			at := dec.InputOffset() - int64(len(item)) + int64(invalidUTF8At(item))
			return nil, fmt.Errorf("%w: message %d is not UTF-8 text (bad byte at offset %d); convert it to UTF-8 first (for GBK: iconv -f GBK -t UTF-8), nothing was saved", ErrMessages, i, at)
		}
		m, err := parseMessage(item, now)
		if err != nil {
			return nil, fmt.Errorf("%w: message %d: %v", ErrMessages, i, err)
		}
		out = append(out, m)
	}
	if _, err := dec.Token(); err != nil {
		return nil, syntax(err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%w: unexpected data after the list of messages (at byte %d)", ErrMessages, dec.InputOffset())
	}
	if out == nil {
		out = []Message{}
	}
	return out, nil
}

// invalidUTF8At is the offset of the first byte of b that is not UTF-8.
func invalidUTF8At(b []byte) int {
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n <= 1 {
			return i
		}
		i += n
	}
	return len(b)
}

func parseMessage(raw json.RawMessage, now time.Time) (Message, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		return Message{}, errors.New("not a JSON object")
	}
	var m Message
	str := func(key string) (string, error) {
		v, ok := obj[key]
		if !ok || string(v) == "null" {
			return "", nil
		}
		var s string
		if err := json.Unmarshal(v, &s); err != nil {
			return "", fmt.Errorf("%s must be a string", key)
		}
		return s, nil
	}
	var err error
	if m.Role, err = str("role"); err != nil {
		return m, err
	}
	switch m.Role {
	case "user", "assistant", "system":
	case "":
		return m, errors.New("role is required (user, assistant or system)")
	default:
		return m, fmt.Errorf("role %q is not user, assistant or system", m.Role)
	}
	if m.Name, err = str("name"); err != nil {
		return m, err
	}
	if m.Name == "" {
		m.Name = m.Role
	}
	content, err := parseContent(obj["content"])
	if err != nil {
		return m, err
	}
	m.Content = content
	if md, ok := obj["metadata"]; ok && string(md) != "null" {
		if len(md) == 0 || md[0] != '{' {
			return m, errors.New("metadata must be an object")
		}
		m.Metadata = md
	}
	if m.CreatedAt, err = messageTime(obj, "created_at"); err != nil {
		return m, err
	}
	if m.CreatedAt == "" {
		var meta map[string]json.RawMessage
		_ = json.Unmarshal(m.Metadata, &meta)
	aliases:
		for _, src := range []map[string]json.RawMessage{obj, meta} {
			for _, k := range timestampAliases {
				v, err := messageTime(src, k)
				if err != nil {
					return m, err
				}
				if v != "" {
					m.CreatedAt = v
					break aliases
				}
			}
		}
	}
	if m.CreatedAt == "" {
		m.CreatedAt = now.Format("2006-01-02T15:04:05.000000")
	}
	if m.ID, err = str("id"); err != nil {
		return m, err
	}
	if m.ID == "" {
		m.ID = deriveID(m)
	}
	m.Usage = obj["usage"]
	m.FinishedAt = obj["finished_at"]
	m.FinishedReason = obj["finished_reason"]
	m.StructuredOutput = obj["structured_output"]
	m.Error = obj["error"]
	return m, nil
}

// messageTime reads a timestamp field and checks that it is a date or a
// time: an impossible one ("2026-02-30") would otherwise date the card
// today without a word.
func messageTime(obj map[string]json.RawMessage, key string) (string, error) {
	v, err := timestampField(obj, key)
	if err != nil || v == "" {
		return v, err
	}
	if _, ok := MessageDay(v, time.UTC); !ok {
		return "", fmt.Errorf("%s %q is not a date or time (use ISO 8601 such as 2026-06-20T09:14:00+08:00, or a Unix time)", key, v)
	}
	return v, nil
}

// timestampField reads a timestamp given as a string or as a Unix time in
// seconds or milliseconds.
func timestampField(obj map[string]json.RawMessage, key string) (string, error) {
	v, ok := obj[key]
	if !ok || string(v) == "null" {
		return "", nil
	}
	var s string
	if json.Unmarshal(v, &s) == nil {
		return strings.TrimSpace(s), nil
	}
	var f float64
	if json.Unmarshal(v, &f) == nil {
		if t, ok := unixTime(f); ok {
			return t.UTC().Format(time.RFC3339), nil
		}
	}
	return "", fmt.Errorf("%s must be a string or a Unix time", key)
}

// maxUnixSeconds is 10000-01-01T00:00:00Z: later times have no four-digit
// year, and converting them to nanoseconds would overflow int64.
const maxUnixSeconds = 253402300800

// unixTime reads a Unix time in seconds, or in milliseconds above 1e12.
func unixTime(f float64) (time.Time, bool) {
	if math.IsNaN(f) || f <= 0 {
		return time.Time{}, false
	}
	if f > 1e12 {
		f /= 1000
	}
	if f >= maxUnixSeconds {
		return time.Time{}, false
	}
	sec, frac := math.Modf(f)
	return time.Unix(int64(sec), int64(frac*1e9)), true
}

func parseContent(raw json.RawMessage) ([]json.RawMessage, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return []json.RawMessage{}, nil
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, errors.New("content must be a string or a list of blocks")
		}
		// The string goes into the block as written, escapes included, so
		// that nothing (not even a lone surrogate) is replaced on the way.
		b := make([]byte, 0, len(raw)+24)
		b = append(b, `{"type":"text","text":`...) // AgentScope's key order
		b = append(b, raw...)
		b = append(b, '}')
		return []json.RawMessage{b}, nil
	}
	var blocks []json.RawMessage
	if err := json.Unmarshal(raw, &blocks); err != nil {
		return nil, errors.New("content must be a string or a list of blocks")
	}
	for i, b := range blocks {
		var head struct {
			Type string `json:"type"`
		}
		if err := json.Unmarshal(b, &head); err != nil || head.Type == "" {
			return nil, fmt.Errorf("content block %d is not an object with a type", i)
		}
		blocks[i] = compactJSON(b)
	}
	return blocks, nil
}

func compactJSON(b json.RawMessage) json.RawMessage {
	var buf bytes.Buffer
	if json.Compact(&buf, b) != nil {
		return b
	}
	return buf.Bytes()
}

// deriveID makes a stable id from what the message says, so that sending
// the same conversation again does not duplicate it.
func deriveID(m Message) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00%s\x00", m.Role, m.Name, m.CreatedAt)
	for _, c := range m.Content {
		h.Write(c)
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))[:32]
}

// SanitizeForSave prepares a message for its session file. Tool results
// and base64 payloads are dropped: recalled output and binary data must not
// later pass for what the user said. Every other block becomes one that
// AgentScope's message model (which ReMe reads the file with) accepts for
// the message's role, or is dropped, so that ReMe never discards the line:
//   - text: kept (a block without a string text is dropped);
//   - tool_use (Anthropic) and tool_call: a tool_call with id, name and the
//     input as a JSON string, in assistant messages only;
//   - thinking and hint: assistant messages only;
//   - data, and image/audio/video blocks (mapped to data): a URL source in
//     user and assistant messages (base64 is dropped, see above);
//   - anything else (redacted_thinking, document, server tools …) is
//     dropped, as is every non-text block of a system message.
//
// A message left empty keeps its envelope.
func SanitizeForSave(m Message) Message {
	out := m
	out.Content = make([]json.RawMessage, 0, len(m.Content))
	for i, raw := range m.Content {
		if b, ok := saveBlock(m.Role, m.ID, i, raw); ok {
			out.Content = append(out.Content, b)
		}
	}
	return out
}

// urlSource is AgentScope's URL source of a data block.
type urlSource struct {
	Type      string `json:"type"`
	URL       string `json:"url"`
	MediaType string `json:"media_type"`
}

// saveBlock maps one content block for SanitizeForSave. Only the fields
// that decide are decoded, so that an odd value elsewhere cannot let a
// dropped kind through; kept blocks stay byte for byte unless mapped.
func saveBlock(role, msgID string, index int, raw json.RawMessage) (json.RawMessage, bool) {
	var b struct {
		Type   string          `json:"type"`
		Text   *string         `json:"text"`
		ID     string          `json:"id"`
		Name   string          `json:"name"`
		Input  json.RawMessage `json:"input"`
		Source json.RawMessage `json:"source"`
	}
	if json.Unmarshal(raw, &b) != nil {
		return nil, false
	}
	var src struct {
		Type string `json:"type"`
	}
	if len(b.Source) > 0 && json.Unmarshal(b.Source, &src) == nil && src.Type == "base64" {
		return nil, false
	}
	switch b.Type {
	case "text":
		return raw, b.Text != nil
	case "thinking", "hint":
		return raw, role == "assistant"
	case "tool_use", "tool_call":
		if role != "assistant" || b.Name == "" {
			return nil, false
		}
		input := string(bytes.TrimSpace(b.Input))
		var s string
		switch {
		case input == "" || input == "null":
			input = "{}"
		case input[0] == '"' && json.Unmarshal(b.Input, &s) == nil:
			input = s // already the JSON string AgentScope keeps
		default:
			input = string(compactJSON(b.Input))
		}
		if b.Type == "tool_call" && input == s && b.ID != "" {
			return raw, true
		}
		id := b.ID
		if id == "" {
			id = fmt.Sprintf("call-%s-%d", msgID, index)
		}
		out, err := MarshalNoEscape(struct {
			Type  string `json:"type"`
			ID    string `json:"id"`
			Name  string `json:"name"`
			Input string `json:"input"`
		}{"tool_call", id, b.Name, input})
		return out, err == nil
	case "data", "image", "audio", "video":
		if role == "system" || src.Type != "url" {
			return nil, false
		}
		if b.Type == "data" {
			return raw, true
		}
		var u urlSource
		if json.Unmarshal(b.Source, &u) != nil || u.URL == "" {
			return nil, false
		}
		u.Type = "url"
		if u.MediaType == "" {
			u.MediaType = b.Type + "/*"
		}
		out, err := MarshalNoEscape(struct {
			Type   string    `json:"type"`
			Source urlSource `json:"source"`
		}{"data", u})
		return out, err == nil
	}
	return nil, false
}

// MarshalLine renders a message as one JSONL line.
func (m Message) MarshalLine() ([]byte, error) {
	type line Message
	l := line(m)
	if l.Content == nil {
		l.Content = []json.RawMessage{}
	}
	if l.Metadata == nil {
		l.Metadata = json.RawMessage("{}")
	}
	return MarshalNoEscape(l)
}

// MarshalNoEscape encodes like json.Marshal but leaves < > & as they are,
// as Python writes them, so that a session file ReMe wrote can be appended
// to rather than rewritten (and a settings file another tool wrote keeps
// its text).
func MarshalNoEscape(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

// DialogPath is the source conversation file of a session.
func DialogPath(sessionID string) string { return SessionDir + "/dialog/" + sessionID + ".jsonl" }

// SaveResult reports how a session file changed.
type SaveResult struct {
	Path     string
	Messages []Message // the whole conversation after the merge
	New      int       // messages not seen before
	Replaced int       // messages whose content changed
	Written  bool
	// SetAside is set when the file ended in a torn line (a crash or a full
	// disk during an earlier write) that was moved out of the way first.
	SetAside *SetAside
}

// SaveDialog merges messages into session/dialog/<session_id>.jsonl: by id
// (a new version replaces the old), sorted by created_at. When the old file
// is a prefix of the result only the new lines are appended (all or
// nothing); otherwise the file is rewritten atomically. Messages are
// sanitised first. A torn last line is set aside (see RepairTail) so that a
// crash never blocks the session; any other line that is not a message is
// an error, and the file is left as it is.
func (w *Workspace) SaveDialog(rel string, incoming []Message) (*SaveResult, error) {
	rel, raw, err := w.readOptional(rel)
	if err != nil {
		return nil, err
	}
	res := &SaveResult{Path: rel}
	if raw, res.SetAside, err = w.repairTail(rel, raw, isMessageLine); err != nil {
		return nil, err
	}
	existing, err := parseDialog(rel, raw)
	if err != nil {
		return nil, err
	}
	pos := map[string]int{}
	merged := append([]Message{}, existing...)
	for i, m := range merged {
		pos[m.ID] = i
	}
	for _, m := range incoming {
		m = SanitizeForSave(m)
		if w.RedactSessions {
			m = RedactMessage(m)
		}
		if i, ok := pos[m.ID]; ok {
			a, _ := merged[i].MarshalLine()
			b, _ := m.MarshalLine()
			if !bytes.Equal(a, b) {
				merged[i] = m
				res.Replaced++
			}
			continue
		}
		pos[m.ID] = len(merged)
		merged = append(merged, m)
		res.New++
	}
	sort.SliceStable(merged, func(i, j int) bool { return merged[i].CreatedAt < merged[j].CreatedAt })
	res.Messages = merged
	if res.New == 0 && res.Replaced == 0 && raw != nil {
		return res, nil
	}
	var all bytes.Buffer
	for _, m := range merged {
		b, err := m.MarshalLine()
		if err != nil {
			return nil, err
		}
		all.Write(b)
		all.WriteByte('\n')
	}
	if len(raw) > 0 && raw[len(raw)-1] == '\n' && bytes.HasPrefix(all.Bytes(), raw) {
		if err := w.AppendFile(rel, all.Bytes()[len(raw):]); err != nil {
			return nil, err
		}
	} else if err := w.WriteFile(rel, all.Bytes()); err != nil {
		return nil, err
	}
	res.Written = true
	return res, nil
}

// RedactMessage masks secrets in the string values of a message's content
// blocks. The id stays: it was derived from what the caller sent, so a
// repeated call still finds the message.
func RedactMessage(m Message) Message {
	out := m
	out.Content = make([]json.RawMessage, len(m.Content))
	for i, b := range m.Content {
		red, _ := RedactJSONStrings(b)
		out.Content[i] = red
	}
	return out
}

// SessionLine is a JSON line of a session file as it is saved: with
// RedactSessions, secrets in its string values are masked (RedactJSONStrings),
// as in the messages SaveDialog saves; otherwise the line as it is. The
// copies of agent transcripts (session/claude_code/, session/codex/) are
// saved through it.
func (w *Workspace) SessionLine(line []byte) []byte {
	if !w.RedactSessions {
		return line
	}
	red, _ := RedactJSONStrings(line)
	return red
}

// AppendFile appends data to an existing workspace file, all or nothing:
// when the write or its fsync fails (a full disk, a quota, an I/O error)
// the file is cut back to its old length, so that no partial record stays
// behind. Appenders of one file must hold a common lock.
func (w *Workspace) AppendFile(rel string, data []byte) error {
	rel, err := w.Rel(rel)
	if err != nil {
		return err
	}
	if err := appendAllOrNothing(w.Abs(rel), data, false); err != nil {
		return fmt.Errorf("append %s: %w", rel, err)
	}
	return nil
}

func appendAllOrNothing(abs string, data []byte, create bool) error {
	flag := os.O_WRONLY | os.O_APPEND
	if create {
		flag |= os.O_CREATE
	}
	f, err := os.OpenFile(abs, flag, 0o644)
	if err != nil {
		return err
	}
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = errors.New("not a regular file")
	}
	if err == nil {
		err = appendOrCut(f, fi.Size(), data)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// SetAside describes the torn end of a file moved into a .corrupt file.
type SetAside struct {
	Path  string `json:"path"`  // the repaired file
	To    string `json:"to"`    // where the bytes went: Path + ".corrupt"
	Line  int    `json:"line"`  // the line the torn record started on
	Bytes int    `json:"bytes"` // how many bytes were moved
}

// String says what happened, for a warning.
func (s *SetAside) String() string {
	return fmt.Sprintf("%s ended in an incomplete line %d (%d bytes, left by a crash or a full disk); moved it to %s", s.Path, s.Line, s.Bytes, s.To)
}

// CorruptSuffix is appended to a file's name for the bytes set aside from it.
const CorruptSuffix = ".corrupt"

// RepairTail sets aside the torn end of a line-oriented file: bytes after
// the last newline that isRecord rejects, which is what a crash or a full
// disk leaves in the middle of an append. They are appended to
// <rel>.corrupt (nothing is deleted) and the file is cut to its last
// complete line. A complete record that merely lacks its newline is kept.
// It returns nil when there was nothing to repair. Callers hold the file's
// lock.
func (w *Workspace) RepairTail(rel string, isRecord func(line []byte) bool) (*SetAside, error) {
	rel, raw, err := w.readOptional(rel)
	if err != nil {
		return nil, err
	}
	_, s, err := w.repairTail(rel, raw, isRecord)
	return s, err
}

func (w *Workspace) repairTail(rel string, raw []byte, isRecord func([]byte) bool) ([]byte, *SetAside, error) {
	if len(raw) == 0 || raw[len(raw)-1] == '\n' {
		return raw, nil, nil
	}
	cut := bytes.LastIndexByte(raw, '\n') + 1
	tail := raw[cut:]
	if len(bytes.TrimSpace(tail)) == 0 || isRecord(tail) {
		return raw, nil, nil // blank, or complete without its newline
	}
	s := &SetAside{Path: rel, To: rel + CorruptSuffix, Line: bytes.Count(raw[:cut], []byte("\n")) + 1, Bytes: len(tail)}
	// The torn bytes go to the side file first: a crash between the two
	// steps leaves them in both places, never in neither.
	if err := appendAllOrNothing(w.Abs(s.To), append(append([]byte{}, tail...), '\n'), true); err != nil {
		return nil, nil, fmt.Errorf("set aside the torn end of %s into %s: %w", rel, s.To, err)
	}
	if err := syncDir(filepath.Dir(w.Abs(s.To))); err != nil {
		return nil, nil, err
	}
	if err := truncateSync(w.Abs(rel), int64(cut)); err != nil {
		return nil, nil, fmt.Errorf("cut the torn end of %s: %w", rel, err)
	}
	return raw[:cut], s, nil
}

func truncateSync(abs string, size int64) error {
	f, err := os.OpenFile(abs, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	err = f.Truncate(size)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// isMessageLine reports whether a session line holds a stored message.
func isMessageLine(line []byte) bool {
	var m Message
	return json.Unmarshal(line, &m) == nil && m.ID != ""
}

// readOptional validates rel and reads the file; a missing file is nil.
func (w *Workspace) readOptional(rel string) (string, []byte, error) {
	rel, err := w.Rel(rel)
	if err != nil {
		return "", nil, err
	}
	raw, err := os.ReadFile(w.Abs(rel))
	if errors.Is(err, fs.ErrNotExist) {
		return rel, nil, nil
	}
	if err != nil {
		return "", nil, fmt.Errorf("read %s: %w", rel, err)
	}
	return rel, raw, nil
}

// ReadDialog loads a session file; a missing file is an empty session.
// Blank lines are skipped. A line that is not a message (not a JSON object
// of that shape, or without an id) is an error naming the line, so that
// SaveDialog never rewrites, and silently drops, what it cannot read.
func (w *Workspace) ReadDialog(rel string) ([]Message, []byte, error) {
	rel, raw, err := w.readOptional(rel)
	if err != nil || raw == nil {
		return nil, nil, err
	}
	out, err := parseDialog(rel, raw)
	if err != nil {
		return nil, nil, err
	}
	return out, raw, nil
}

func parseDialog(rel string, raw []byte) ([]Message, error) {
	var out []Message
	for i, line := range bytes.Split(raw, []byte("\n")) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var m Message
		if err := json.Unmarshal(line, &m); err != nil || m.ID == "" {
			return nil, fmt.Errorf("%s line %d is not a message; fix or move the file before adding to this session", rel, i+1)
		}
		out = append(out, m)
	}
	return out, nil
}

// MessageDay is the calendar day of a message timestamp in loc: zone-aware
// stamps are converted, naive ones taken as written. ok is false for a
// stamp that is not a date.
func MessageDay(ts string, loc *time.Location) (string, bool) {
	ts = strings.TrimSpace(ts)
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999Z0700", "2006-01-02 15:04:05.999999999Z07:00", "2006-01-02 15:04:05.999999999Z0700"} {
		if t, err := time.Parse(layout, ts); err == nil {
			return t.In(loc).Format(time.DateOnly), true
		}
	}
	if len(ts) >= 10 && IsDate(ts[:10]) {
		return ts[:10], true
	}
	if n, err := strconv.ParseFloat(ts, 64); err == nil {
		if t, ok := unixTime(n); ok {
			return t.In(loc).Format(time.DateOnly), true
		}
	}
	return "", false
}
