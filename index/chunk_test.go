package index

import (
	"fmt"
	"strings"
	"testing"
)

func TestChunkSmallNoteIsOneChunk(t *testing.T) {
	body := "\n# Title\n\nintro\n\n## A\none\n\n## B\ntwo\n"
	got := ChunkMarkdown(body, 5, 0)
	if len(got) != 1 {
		t.Fatalf("got %d chunks, want 1: %+v", len(got), got)
	}
	// line 5 is the blank line after the header fence; content starts at 6
	if got[0].StartLine != 6 || got[0].EndLine != 14 {
		t.Errorf("lines %d-%d, want 6-14", got[0].StartLine, got[0].EndLine)
	}
	if !strings.HasPrefix(got[0].Text, "# Title") || !strings.HasSuffix(got[0].Text, "two") {
		t.Errorf("text %q", got[0].Text)
	}
}

func repeatLine(s string, n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "%s %d\n", s, i)
	}
	return b.String()
}

func TestChunkSectionsGetBreadcrumbs(t *testing.T) {
	a := repeatLine("alpha line of text that fills the section", 150) // ~6.7 KB
	b := repeatLine("beta line of text that fills the section", 150)
	body := "# Top\n\n## A\n" + a + "\n## B\n" + b
	got := ChunkMarkdown(body, 1, 0)
	if len(got) != 2 {
		t.Fatalf("got %d chunks, want 2", len(got))
	}
	if !strings.HasPrefix(got[0].Text, "# Top\n\n## A\nalpha") {
		t.Errorf("first chunk starts %q", got[0].Text[:30])
	}
	if !strings.HasPrefix(got[1].Text, "# Top\n\n## B\nbeta") {
		t.Errorf("second chunk should carry the # Top breadcrumb, starts %q", got[1].Text[:30])
	}
	if got[0].StartLine != 1 || got[1].StartLine != 155 {
		t.Errorf("start lines %d, %d", got[0].StartLine, got[1].StartLine)
	}
	lines := strings.Split(body, "\n")
	if lines[got[1].StartLine-1] != "## B" {
		t.Errorf("line %d is %q, want the ## B heading", got[1].StartLine, lines[got[1].StartLine-1])
	}
}

func TestChunkPacksSmallSiblings(t *testing.T) {
	var b strings.Builder
	b.WriteString("# Log\n")
	for i := 0; i < 30; i++ {
		fmt.Fprintf(&b, "## Day %d\n%s", i, repeatLine("entry", 40))
	}
	got := ChunkMarkdown(b.String(), 1, 0)
	if len(got) < 2 || len(got) > 6 {
		t.Fatalf("got %d chunks, want a few packed ones", len(got))
	}
	for i, c := range got {
		if len(c.Text) > maxChunkBytes+200 {
			t.Errorf("chunk %d is %d bytes", i, len(c.Text))
		}
		if i > 0 && c.StartLine != got[i-1].EndLine+1 {
			t.Errorf("chunk %d starts at %d, previous ended at %d", i, c.StartLine, got[i-1].EndLine)
		}
	}
}

func TestChunkSplitsLongSectionIntoParts(t *testing.T) {
	body := "## Notes\n" + repeatLine("a long paragraph line without any blank line between", 600)
	got := ChunkMarkdown(body, 1, 0)
	if len(got) < 3 {
		t.Fatalf("got %d chunks", len(got))
	}
	for i, c := range got {
		want := fmt.Sprintf("## Notes\n\n[Part %d/%d]\n\n", i+1, len(got))
		if !strings.HasPrefix(c.Text, want) {
			t.Errorf("chunk %d starts %q, want %q", i, c.Text[:40], want)
		}
		if len(c.Text) > maxChunkBytes+100 {
			t.Errorf("chunk %d has %d bytes", i, len(c.Text))
		}
	}
	if got[0].StartLine != 1 || got[len(got)-1].EndLine != 601 {
		t.Errorf("range %d..%d, want 1..601", got[0].StartLine, got[len(got)-1].EndLine)
	}
}

func TestChunkTableRepeatsHeader(t *testing.T) {
	var b strings.Builder
	b.WriteString("| id | value |\n|----|-------|\n")
	for i := 0; i < 800; i++ {
		fmt.Fprintf(&b, "| %d | some value in the table row |\n", i)
	}
	got := ChunkMarkdown(b.String(), 1, 0)
	if len(got) < 2 {
		t.Fatalf("got %d chunks", len(got))
	}
	for i, c := range got {
		if !strings.Contains(c.Text, "| id | value |\n|----|-------|\n| ") {
			t.Errorf("chunk %d lacks the table header", i)
		}
	}
}

func TestChunkCodeRepeatsFences(t *testing.T) {
	body := "```go\n" + repeatLine("fmt.Println(\"hello world, a line of code\")", 600) + "```\n"
	got := ChunkMarkdown(body, 1, 0)
	if len(got) < 2 {
		t.Fatalf("got %d chunks", len(got))
	}
	for i, c := range got {
		parts := strings.SplitN(c.Text, "\n\n", 2)
		code := parts[len(parts)-1]
		if !strings.HasPrefix(code, "```go\n") || !strings.HasSuffix(code, "\n```") {
			t.Errorf("chunk %d is not fenced: %q … %q", i, code[:10], code[len(code)-10:])
		}
	}
}

func TestChunkHeadingsInCodeAreNotSections(t *testing.T) {
	body := "# Real\ntext\n```\n# not a heading\n```\n"
	lines := classify(strings.Split(body, "\n"))
	if lines[3].heading != 0 {
		t.Error("a # line inside a fence was taken as a heading")
	}
	if lines[0].heading != 1 {
		t.Error("# Real is a heading")
	}
	set := classify([]string{"Title", "=====", "text", "Sub", "---"})
	if set[0].heading != 1 || set[3].heading != 2 {
		t.Errorf("setext headings not recognised: %+v", set)
	}
}

func TestChunkManyHeadingsFallsBackToWindows(t *testing.T) {
	var b strings.Builder
	for i := 0; i < 150; i++ {
		fmt.Fprintf(&b, "## H%d\n%s", i, repeatLine("text", 5))
	}
	body := b.String()
	got := ChunkMarkdown(body, 1, 2000)
	if len(got) < 3 {
		t.Fatalf("got %d chunks", len(got))
	}
	for i := 1; i < len(got); i++ {
		if got[i].StartLine > got[i-1].EndLine+1 {
			t.Errorf("gap between chunk %d and %d", i-1, i)
		}
		if got[i].StartLine > got[i-1].EndLine {
			t.Errorf("windows should overlap: chunk %d starts %d after %d", i, got[i].StartLine, got[i-1].EndLine)
		}
	}
}

func TestChunkTextMatchesFileLines(t *testing.T) {
	body := "\n## One\nalpha\n\n## Two\nbeta\n"
	for _, c := range ChunkMarkdown(body, 10, 12) {
		lines := strings.Split(body, "\n")
		first := lines[c.StartLine-10]
		if !strings.Contains(c.Text, first) {
			t.Errorf("chunk %d-%d text %q does not contain its first line %q", c.StartLine, c.EndLine, c.Text, first)
		}
	}
}

func TestChunkEmptyBody(t *testing.T) {
	if got := ChunkMarkdown("\n\n", 4, 0); len(got) != 0 {
		t.Errorf("empty body gave %d chunks", len(got))
	}
}
