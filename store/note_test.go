package store

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestNoteRoundTripUnchanged(t *testing.T) {
	tests := []struct {
		name string
		in   string
	}{
		{"empty", ""},
		{"body only", "just a body\n"},
		{"body no newline", "just a body"},
		{"basic", "---\nname: x\ndescription: y\n---\n\nbody\n"},
		{"comments and odd spacing", "---\n# a comment\nname:    spaced   # trailing comment\n\n\ndescription:   'single quoted'\nlist:\n    -   a\n    -   b\nz:   {k:  v}\n---\n\n\n  body with leading spaces\n\n"},
		{"sorted keys python style", "---\ndescription: d\nname: n\nsession_id: s\nsource_conversation: '[[session/dialog/s.jsonl]]'\n---\n\n# Title\n\nText [[digest/a.md]]\n"},
		{"empty header", "---\n---\nbody\n"},
		{"closing fence at EOF", "---\nname: x\n---"},
		{"closing fence then nothing", "---\nname: x\n---\n"},
		{"trailing spaces on fences", "---  \nname: x\n---\t\n\nbody\n"},
		{"crlf", "---\r\nname: x\r\ndescription: y\r\n---\r\n\r\nbody\r\nline 2\r\n"},
		{"invalid yaml", "---\nname: [unclosed\n---\n\nbody\n"},
		{"non-mapping yaml", "---\n- a\n- b\n---\nbody\n"},
		{"unclosed fence", "---\nname: x\nbody\n"},
		{"no final newline", "---\nname: x\n---\n\nbody"},
		{"chinese", "---\nname: 登录流程\ndescription: 用户登录\n---\n\n正文 [[digest/登录.md]]\n"},
		{"fence in body", "---\na: 1\n---\nbody\n---\nb: 2\n---\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := ParseNote("digest/x.md", []byte(tt.in))
			got, err := n.Text()
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.in {
				t.Fatalf("Text() changed an unedited note:\n got %q\nwant %q", got, tt.in)
			}
			b, err := n.Bytes()
			if err != nil || !bytes.Equal(b, []byte(tt.in)) {
				t.Fatalf("Bytes() = %q, %v", b, err)
			}
		})
	}
}

func TestNoteRoundTripEncodings(t *testing.T) {
	src := "---\nname: 登录流程\n# 注释\ndescription: 用户登录的步骤\n---\n\n第一步 [[digest/登录.md]]\n"
	tests := []struct {
		name string
		raw  []byte
		enc  Encoding
	}{
		{"utf8", []byte(src), UTF8},
		{"bom", append([]byte{0xEF, 0xBB, 0xBF}, src...), UTF8BOM},
		{"gbk", gbk(t, src), GBK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := ParseNote("digest/登录流程.md", tt.raw)
			if n.Encoding != tt.enc {
				t.Fatalf("Encoding = %v, want %v", n.Encoding, tt.enc)
			}
			if n.Name() != "登录流程" || n.Description() != "用户登录的步骤" {
				t.Fatalf("name/description = %q/%q", n.Name(), n.Description())
			}
			b, err := n.Bytes()
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(b, tt.raw) {
				t.Fatalf("Bytes() = %x\nwant %x", b, tt.raw)
			}
			// A body edit keeps the encoding and the header bytes.
			n.Body = strings.Replace(n.Body, "第一步", "第二步", 1)
			b, err = n.Bytes()
			if err != nil {
				t.Fatal(err)
			}
			text, enc := DecodeText(b)
			if enc != tt.enc {
				t.Fatalf("re-decoded encoding %v, want %v", enc, tt.enc)
			}
			want := strings.Replace(src, "第一步", "第二步", 1)
			if text != want {
				t.Fatalf("after body edit:\n got %q\nwant %q", text, want)
			}
			// A frontmatter edit keeps the encoding too.
			if err := n.FM.Set("description", "新的描述"); err != nil {
				t.Fatal(err)
			}
			b, err = n.Bytes()
			if err != nil {
				t.Fatal(err)
			}
			if text, enc = DecodeText(b); enc != tt.enc || !strings.Contains(text, "description: 新的描述\n") || !strings.Contains(text, "# 注释\n") {
				t.Fatalf("after frontmatter edit (%v): %q", enc, text)
			}
		})
	}
}

func TestNoteBodyEditKeepsHeaderBytes(t *testing.T) {
	header := "---\n# keep this comment\nname:   odd   # spacing\ndescription: \"quoted\"\nextra: [1,2]\n---\n"
	n := ParseNote("digest/x.md", []byte(header+"\nold body\n"))
	if n.BodyLine != 7 || n.Content() != "old body\n" {
		t.Fatalf("BodyLine=%d Content=%q", n.BodyLine, n.Content())
	}
	n.Body = "\nnew body\n"
	got, err := n.Text()
	if err != nil {
		t.Fatal(err)
	}
	if want := header + "\nnew body\n"; got != want {
		t.Fatalf("got %q\nwant %q", got, want)
	}
}

func TestNoteInvalidYAML(t *testing.T) {
	header := "---\nname: [unclosed\ndescription: x\n---\n"
	n := ParseNote("digest/x.md", []byte(header+"\nbody\n"))
	if n.FMErr == nil || !errors.Is(n.FMErr, ErrFrontmatter) {
		t.Fatalf("FMErr = %v", n.FMErr)
	}
	if !n.HasFM || n.FM == nil || n.FM.Len() != 0 {
		t.Fatalf("HasFM=%v FM=%v", n.HasFM, n.FM)
	}
	if n.Content() != "body\n" || n.BodyLine != 5 {
		t.Fatalf("Content=%q BodyLine=%d", n.Content(), n.BodyLine)
	}
	n.Body = "\nedited\n"
	got, err := n.Text()
	if err != nil {
		t.Fatal(err)
	}
	if got != header+"\nedited\n" {
		t.Fatalf("body edit lost the header: %q", got)
	}
	if err := n.FM.Set("name", "fixed"); err != nil {
		t.Fatal(err)
	}
	if _, err := n.Text(); err == nil || !errors.Is(err, ErrFrontmatter) {
		t.Fatalf("Text() after a frontmatter change on broken YAML = %v, want ErrFrontmatter", err)
	}
	if _, err := n.Bytes(); err == nil {
		t.Fatal("Bytes() after a frontmatter change on broken YAML succeeded")
	}
	w := newWorkspace(t)
	if err := w.WriteNote(n); err == nil {
		t.Fatal("WriteNote wrote a note whose broken header was edited")
	}
	if w.Exists("digest/x.md") {
		t.Fatal("file created")
	}
}

func TestNewNoteLayout(t *testing.T) {
	fm := NewFrontmatter()
	if err := fm.Set("name", "login-flow"); err != nil {
		t.Fatal(err)
	}
	if err := fm.Set("description", "How login works"); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		fm      *Frontmatter
		content string
		want    string
	}{
		{"with header", fm, "\n\n  # Login\n\nSteps.\n\n\n", "---\nname: login-flow\ndescription: How login works\n---\n\n# Login\n\nSteps.\n"},
		{"nil header", nil, "body", "body\n"},
		{"empty header", NewFrontmatter(), "  body  ", "body\n"},
		{"empty body", nil, "  \n", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := NewNote("digest/login-flow.md", tt.fm, tt.content)
			got, err := n.Text()
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Fatalf("Text() = %q, want %q", got, tt.want)
			}
			// Parsing the result gives back the same note.
			p := ParseNote(n.Path, []byte(got))
			if p.Content() != n.Content() || p.Name() != n.Name() {
				t.Fatalf("re-parse: content %q name %q", p.Content(), p.Name())
			}
		})
	}
}

func TestNoteRemoveAllKeysDropsFence(t *testing.T) {
	n := ParseNote("digest/x.md", []byte("---\nname: x\ndescription: y\n---\n\nbody\n"))
	n.FM.Delete("name")
	n.FM.Delete("description")
	got, err := n.Text()
	if err != nil {
		t.Fatal(err)
	}
	if got != "body\n" {
		t.Fatalf("Text() = %q, want %q", got, "body\n")
	}
}

func TestNoteAddFrontmatterToPlainNote(t *testing.T) {
	n := ParseNote("digest/x.md", []byte("# Title\n\nbody\n"))
	if n.HasFM || n.FM.Len() != 0 {
		t.Fatal("plain note has frontmatter")
	}
	if err := n.FM.Set("name", "x"); err != nil {
		t.Fatal(err)
	}
	got, err := n.Text()
	if err != nil {
		t.Fatal(err)
	}
	if want := "---\nname: x\n---\n\n# Title\n\nbody\n"; got != want {
		t.Fatalf("Text() = %q, want %q", got, want)
	}
	if p := ParseNote(n.Path, []byte(got)); p.Content() != "# Title\n\nbody\n" || p.Name() != "x" {
		t.Fatalf("re-parse: %q %q", p.Name(), p.Content())
	}
}

func TestNoteFrontmatterEditKeepsBodyAndOrder(t *testing.T) {
	src := "---\nname: a\n# why\ndescription: b   # inline\nsession_id: s1\nkind: preference\n---\n\nBody [[x.md]]\n"
	n := ParseNote("daily/2026-01-01/a.md", []byte(src))
	if err := n.FM.Set("description", "c"); err != nil {
		t.Fatal(err)
	}
	if err := n.FM.Set(TagKey, []string{"t1"}); err != nil {
		t.Fatal(err)
	}
	got, err := n.Text()
	if err != nil {
		t.Fatal(err)
	}
	want := "---\nname: a\n# why\ndescription: c # inline\nsession_id: s1\nkind: preference\nmemory_tags: [t1]\n---\n\nBody [[x.md]]\n"
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
}

func TestWorkspaceReadWriteNote(t *testing.T) {
	w := newWorkspace(t)
	if _, err := w.ReadNote("digest/missing.md"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("ReadNote(missing) = %v", err)
	}
	fm := NewFrontmatter()
	_ = fm.Set("name", "n")
	n := NewNote("digest/wiki/n.md", fm, "hello")
	if err := w.WriteNote(n); err != nil {
		t.Fatal(err)
	}
	back, err := w.ReadNote("digest/wiki/n.md")
	if err != nil {
		t.Fatal(err)
	}
	if back.Name() != "n" || back.Content() != "hello\n" || back.BodyLine != 4 || back.Path != "digest/wiki/n.md" {
		t.Fatalf("read back name=%q content=%q line=%d path=%q", back.Name(), back.Content(), back.BodyLine, back.Path)
	}
	bad := NewNote("../escape.md", nil, "x")
	if err := w.WriteNote(bad); !errors.Is(err, ErrOutsideWorkspace) {
		t.Fatalf("WriteNote(../escape.md) = %v", err)
	}
}

func TestNoteBodyEditAfterFenceAtEOF(t *testing.T) {
	n := ParseNote("digest/x.md", []byte("---\nname: x\n---"))
	if n.Body != "" || !n.HasFM {
		t.Fatalf("Body=%q HasFM=%v", n.Body, n.HasFM)
	}
	n.Body = "new body\n"
	got, err := n.Text()
	if err != nil {
		t.Fatal(err)
	}
	if got != "---\nname: x\n---\nnew body\n" {
		t.Fatalf("Text() = %q", got)
	}
}

func TestNoteCRLFFrontmatterEdit(t *testing.T) {
	n := ParseNote("digest/x.md", []byte("---\r\nname: x\r\ndescription: y\r\n---\r\n\r\nbody\r\n"))
	if n.Name() != "x" || n.Description() != "y" {
		t.Fatalf("name=%q description=%q", n.Name(), n.Description())
	}
	if err := n.FM.Set("description", "z"); err != nil {
		t.Fatal(err)
	}
	got, err := n.Text()
	if err != nil {
		t.Fatal(err)
	}
	p := ParseNote(n.Path, []byte(got))
	if p.FMErr != nil || p.Name() != "x" || p.Description() != "z" || p.Content() != "\r\nbody\r\n" && p.Content() != "body\r\n" {
		t.Fatalf("after edit %q: name=%q description=%q content=%q err=%v", got, p.Name(), p.Description(), p.Content(), p.FMErr)
	}
}
