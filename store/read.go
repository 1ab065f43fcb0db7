package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"strings"
)

// MaxReadBytes is how much one read returns before it is cut with a notice
// (ReMe's DEFAULT_MAX_BYTES).
const MaxReadBytes = 50 * 1024

// TruncationMarker starts the notice appended to a cut read.
const TruncationMarker = "<<TRUNCATION_NOTICE>>"

// ErrLineRange is returned (with ReMe's wording) for a line range that
// does not fit the file.
var ErrLineRange = errors.New("line range")

type lineRangeError string

func (e lineRangeError) Error() string        { return string(e) }
func (e lineRangeError) Is(target error) bool { return target == ErrLineRange }

// ReadResult is a line range of a text file.
type ReadResult struct {
	Path       string `json:"path"`
	Text       string `json:"text"`
	StartLine  int    `json:"start_line"`
	EndLine    int    `json:"end_line"`
	TotalLines int    `json:"total_lines"`
	Truncated  bool   `json:"truncated"`
	// ResolvedPath is set when ".md" was appended to a path without suffix.
	ResolvedPath string `json:"resolved_path,omitempty"`
}

// ResolveMarkdown appends ".md" to a path without a suffix, as ReMe's file
// tools do; it reports whether it did.
func ResolveMarkdown(rel string) (string, bool) {
	if path.Ext(rel) == "" {
		return rel + ".md", true
	}
	return rel, false
}

// Read returns lines start..end (1-based, inclusive; 0 means the first or
// last line) of a workspace text file. A trailing newline does not count as
// a line. Session dialog files are rendered one message per line.
func (w *Workspace) Read(rel string, start, end int) (*ReadResult, error) {
	rel, err := w.Rel(rel)
	if err != nil {
		return nil, err
	}
	probed, added := ResolveMarkdown(rel)
	if added {
		// The probed path is another file: it must pass the symlink check too.
		if _, err := w.Rel(probed); err != nil {
			return nil, err
		}
	}
	raw, err := os.ReadFile(w.Abs(probed))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s: %w", probed, ErrNotFound)
		}
		var pe *fs.PathError
		if errors.As(err, &pe) && strings.Contains(pe.Err.Error(), "directory") {
			return nil, fmt.Errorf("%s is a directory", probed)
		}
		return nil, fmt.Errorf("read %s: %w", probed, err)
	}
	text, _ := DecodeText(raw)
	if strings.HasPrefix(probed, SessionDir+"/dialog/") && strings.HasSuffix(probed, ".jsonl") {
		text = RenderDialog(text)
	}
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	if text == "" {
		lines = nil
	}
	total := len(lines)
	if start <= 0 {
		start = 1
	}
	if start > total && total > 0 || (total == 0 && start > 1) {
		return nil, lineRangeError(fmt.Sprintf("start_line %d exceeds file length (%d lines)", start, total))
	}
	if end > 0 && start > end {
		return nil, lineRangeError(fmt.Sprintf("start_line (%d) > end_line (%d)", start, end))
	}
	if end <= 0 || end > total {
		end = total
	}
	res := &ReadResult{Path: probed, StartLine: start, EndLine: end, TotalLines: total}
	if added {
		res.ResolvedPath = probed
	}
	if total == 0 {
		return res, nil
	}
	out := strings.Join(lines[start-1:end], "\n")
	if len(out) > MaxReadBytes {
		cut := MaxReadBytes
		for cut > 0 && out[cut]&0xC0 == 0x80 {
			cut--
		}
		if nl := strings.LastIndexByte(out[:cut], '\n'); nl > 0 {
			cut = nl
		}
		shown := out[:cut]
		res.EndLine = start + strings.Count(shown, "\n")
		res.Truncated = true
		out = shown + fmt.Sprintf("\n\n%s\nThe output above was truncated. The full content is saved to the file and contains %d lines in total. "+
			"This excerpt starts at line %d and covers the next %d bytes. If the current content is not enough, call `read` with file=%s start_line=%d to read more.",
			TruncationMarker, total, start, MaxReadBytes, probed, res.EndLine+1)
	}
	res.Text = out
	return res, nil
}

// RenderDialog renders a session JSONL as `[speaker @ created_at] text`
// lines; lines that are not messages are kept as they are.
func RenderDialog(jsonl string) string {
	if strings.TrimRight(jsonl, "\n") == "" {
		return "" // no messages: no lines
	}
	var b strings.Builder
	for _, line := range strings.Split(strings.TrimRight(jsonl, "\n"), "\n") {
		var m struct {
			Name      string          `json:"name"`
			Role      string          `json:"role"`
			CreatedAt string          `json:"created_at"`
			Content   json.RawMessage `json:"content"`
		}
		if err := json.Unmarshal([]byte(line), &m); err != nil || (m.Role == "" && m.Name == "") {
			b.WriteString(line + "\n")
			continue
		}
		who := m.Name
		if who == "" {
			who = m.Role
		}
		text := strings.ReplaceAll(ContentText(m.Content), "\n", " ")
		fmt.Fprintf(&b, "[%s @ %s] %s\n", who, m.CreatedAt, text)
	}
	return b.String()
}

// ContentText extracts the text of a message content: a string, or a list
// of blocks whose text blocks are joined; other blocks are summarised.
func ContentText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var blocks []map[string]any
	if json.Unmarshal(raw, &blocks) != nil {
		return ""
	}
	var parts []string
	for _, bl := range blocks {
		switch bl["type"] {
		case "text":
			if t, ok := bl["text"].(string); ok {
				parts = append(parts, t)
			}
		case "tool_use", "tool_call":
			parts = append(parts, fmt.Sprintf("[tool %v]", bl["name"]))
		case "data", "image":
			parts = append(parts, "[image]")
		}
	}
	return strings.Join(parts, "\n")
}
