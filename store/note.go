package store

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
)

// Note is a markdown file split into frontmatter and body.
type Note struct {
	Path     string // workspace-relative
	Encoding Encoding
	FM       *Frontmatter // never nil; empty when absent or invalid
	FMErr    error        // invalid YAML: the note stays readable with empty frontmatter
	HasFM    bool         // the file starts with a fenced block
	Body     string       // everything after the closing fence (or the whole text)
	BodyLine int          // 1-based line of Body's first line in the file
	fmText   string       // the header as found, written back unchanged unless FM is edited
	fmOpen   string       // the opening fence line as found (with its line ending); "" if none
	fmClose  string       // the closing fence line as found (with its line ending, if any)
}

// NoteBody returns a note's body and the file line it starts on, without
// parsing the frontmatter (for readers that only need the text).
func NoteBody(raw []byte) (body string, bodyLine int) {
	text, _ := DecodeText(raw)
	s := splitFrontmatter(text)
	return s.body, s.bodyLine
}

// ParseNote splits and parses a note's bytes. It never fails: broken YAML
// leaves FM empty and sets FMErr.
func ParseNote(path string, raw []byte) *Note {
	text, enc := DecodeText(raw)
	n := &Note{Path: path, Encoding: enc}
	s := splitFrontmatter(text)
	n.Body, n.BodyLine, n.HasFM, n.fmText = s.body, s.bodyLine, s.ok, s.yaml
	n.fmOpen, n.fmClose = s.open, s.close
	n.FM = NewFrontmatter()
	if s.ok {
		fm, err := ParseFrontmatter(s.yaml)
		if err != nil {
			n.FMErr = err
		} else {
			n.FM = fm
		}
	}
	return n
}

// NewNote builds a note the way ReMe's write does: body stripped, one
// trailing newline, a blank line after the header.
func NewNote(path string, fm *Frontmatter, content string) *Note {
	if fm == nil {
		fm = NewFrontmatter()
	}
	body := strings.TrimSpace(content)
	if body != "" {
		body += "\n"
	}
	n := &Note{Path: path, FM: fm, Body: body, BodyLine: 1}
	if fm.Len() > 0 {
		n.HasFM = true
		n.Body = "\n" + body
		fm.dirty = true
	}
	return n
}

// Name is the frontmatter name.
func (n *Note) Name() string { return n.FM.String("name") }

// Description is the frontmatter description.
func (n *Note) Description() string { return n.FM.String("description") }

// Content is the body without the blank line that separates it from the
// header.
func (n *Note) Content() string {
	if n.HasFM {
		return strings.TrimPrefix(n.Body, "\n")
	}
	return n.Body
}

// Text renders the note. An unedited header is written back byte for byte;
// a header with invalid YAML is never rewritten.
func (n *Note) Text() (string, error) {
	if n.FMErr != nil && n.FM.Dirty() {
		return "", fmt.Errorf("%s: cannot change frontmatter that does not parse: %w", n.Path, n.FMErr)
	}
	if !n.FM.Dirty() && n.HasFM && n.fmOpen != "" {
		// Unedited parsed header: the fences and the YAML exactly as found.
		closing := n.fmClose
		if n.Body != "" && !strings.HasSuffix(closing, "\n") {
			closing += "\n"
		}
		return n.fmOpen + n.fmText + closing + n.Body, nil
	}
	var header string
	switch {
	case n.FM.Dirty():
		r, err := n.FM.Render()
		if err != nil {
			return "", err
		}
		header = r
	case n.HasFM:
		header = n.fmText
	}
	if header == "" && !n.HasFM {
		return n.Body, nil
	}
	if header == "" && n.FM.Dirty() {
		// Every key was removed: drop the fence too.
		return strings.TrimPrefix(n.Body, "\n"), nil
	}
	if !strings.HasSuffix(header, "\n") && header != "" {
		header += "\n"
	}
	body := n.Body
	if n.fmOpen == "" && body != "" && !strings.HasPrefix(body, "\n") {
		// A header added to a note that had none: keep ReMe's layout, a
		// blank line between the header and the body.
		body = "\n" + body
	}
	open, closing := "---\n", "---\n"
	if n.fmOpen != "" {
		// the fences as found ("---\r\n", trailing blanks)
		open, closing = n.fmOpen, n.fmClose
		if !strings.HasSuffix(closing, "\n") && body != "" {
			closing += "\n"
		}
	}
	return open + header + closing + body, nil
}

// Bytes renders the note in its original encoding.
func (n *Note) Bytes() ([]byte, error) {
	s, err := n.Text()
	if err != nil {
		return nil, err
	}
	return EncodeText(s, n.Encoding)
}

// ReadNote reads and parses a note at a validated workspace-relative path.
func (w *Workspace) ReadNote(rel string) (*Note, error) {
	raw, err := os.ReadFile(w.Abs(rel))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s: %w", rel, ErrNotFound)
		}
		return nil, fmt.Errorf("read %s: %w", rel, err)
	}
	return ParseNote(rel, raw), nil
}

// WriteNote renders and atomically writes a note.
func (w *Workspace) WriteNote(n *Note) error {
	b, err := n.Bytes()
	if err != nil {
		return err
	}
	return w.WriteFile(n.Path, b)
}
