package index

import (
	"errors"
	"flag"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

// fuzzing reports whether the test binary runs with -fuzz (as a fuzzing
// worker), rather than replaying the seed corpus under plain go test.
func fuzzing() bool {
	f := flag.Lookup("test.fuzz")
	return f != nil && f.Value.String() != ""
}

// FuzzParseQuery: whatever the user typed, the match expression is one
// FTS5 accepts. While fuzzing, the expression is checked against the
// grammar MatchExpr writes (checkMatchExpr): running it through SQLite
// would put the whole instrumented SQLite engine under the fuzzer, which
// then spends its time minimising inputs that reach new SQLite code
// instead of trying new queries. Under plain go test, the seeds and every
// saved crasher also run through SQLite, which checks the checker.
func FuzzParseQuery(f *testing.F) {
	for _, s := range []string{"login flow", `"a b" -c d*`, "登录流程", `AND OR NOT NEAR(a b) "`, "-", `""`, "*", "a\"b\"c", "ﾛｸﾞｲﾝ", "\x00\xff", "a*b*", `-"x y" z`, "x -y -z", "登录 -流程", "\u200b\u00a0a"} {
		f.Add(s)
	}
	var ix *Index
	if !fuzzing() {
		ws := newWorkspace(f, map[string]string{"daily/2026-01-01/a.md": card("a", "login flow", "body 登录 text")})
		ix = openIndex(f, ws, Options{})
		mustSync(f, ix)
	}
	f.Fuzz(func(t *testing.T, q string) {
		if ix != nil {
			// so are the prefix expressions a search falls back to
			for _, pt := range prefixTerms(ParseQuery(q)) {
				rows, err := ix.db.Query(`SELECT rowid FROM chunk_fts WHERE chunk_fts MATCH ?`, pt.expr())
				if err != nil {
					t.Fatalf("query %q gave prefix expression %s, which FTS5 refuses: %v", q, pt.expr(), err)
				}
				rows.Close()
			}
		}
		expr := ParseQuery(q).MatchExpr()
		if expr == "" {
			return
		}
		if err := checkMatchExpr(expr); err != nil {
			t.Fatalf("query %q gave expression %s: %v", q, expr, err)
		}
		if ix == nil {
			return
		}
		rows, err := ix.db.Query(`SELECT rowid FROM chunk_fts WHERE chunk_fts MATCH ?`, expr)
		if err != nil {
			t.Fatalf("query %q gave expression %s, which FTS5 refuses: %v", q, expr, err)
		}
		rows.Close()
	})
}

// checkMatchExpr accepts exactly the expressions MatchExpr builds:
//
//	expr   = terms | "(" terms ")" (" NOT " phrase)+
//	terms  = phrase (" OR " phrase)*
//	phrase = '"' text '"' ["*"]   text: valid UTF-8, no NUL, '"' doubled,
//	                              at least one letter or digit
func checkMatchExpr(expr string) error {
	rest := expr
	phrase := func() error {
		if !strings.HasPrefix(rest, `"`) {
			return fmt.Errorf("phrase expected at %q", rest)
		}
		var text strings.Builder
		i := 1
		for {
			if i >= len(rest) {
				return errors.New("unterminated phrase")
			}
			if rest[i] == '"' {
				if i+1 < len(rest) && rest[i+1] == '"' {
					text.WriteByte('"')
					i += 2
					continue
				}
				break
			}
			text.WriteByte(rest[i])
			i++
		}
		s := text.String()
		switch {
		case !utf8.ValidString(s):
			return fmt.Errorf("phrase %q is not UTF-8", s)
		case strings.ContainsRune(s, 0):
			return fmt.Errorf("phrase %q holds a NUL", s)
		case strings.TrimSpace(s) == "":
			return fmt.Errorf("empty phrase")
		}
		rest = rest[i+1:]
		rest = strings.TrimPrefix(rest, "*")
		return nil
	}
	terms := func() error {
		if err := phrase(); err != nil {
			return err
		}
		for strings.HasPrefix(rest, " OR ") {
			rest = rest[len(" OR "):]
			if err := phrase(); err != nil {
				return err
			}
		}
		return nil
	}
	if strings.HasPrefix(rest, "(") {
		rest = rest[1:]
		if err := terms(); err != nil {
			return err
		}
		if !strings.HasPrefix(rest, ")") {
			return fmt.Errorf("')' expected at %q", rest)
		}
		rest = rest[1:]
		if !strings.HasPrefix(rest, " NOT ") {
			return fmt.Errorf("NOT expected after a group, at %q", rest)
		}
		for strings.HasPrefix(rest, " NOT ") {
			rest = rest[len(" NOT "):]
			if err := phrase(); err != nil {
				return err
			}
		}
	} else if err := terms(); err != nil {
		return err
	}
	if rest != "" {
		return fmt.Errorf("trailing %q", rest)
	}
	return nil
}

func TestCheckMatchExpr(t *testing.T) {
	for _, ok := range []string{`"a"`, `"a b"*`, `"a" OR "b"`, `("a" OR "b") NOT "c" NOT "d"*`, `"say ""hi"""`, `"登 录"`} {
		if err := checkMatchExpr(ok); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
	for _, bad := range []string{``, `a`, `"a`, `"a" OR`, `"a" "b"`, `("a")`, `("a" NOT "b"`, `""`, `" "`, "\"a\x00\"", "\"\xff\"", `"a"**`, `"a" AND "b"`} {
		if err := checkMatchExpr(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// FuzzChunkMarkdown: chunking never panics, every chunk's line range lies
// in the body, every line with text is in some chunk that shows it, and
// chunks of UTF-8 text are UTF-8 (long lines are cut on rune boundaries).
// A chunk may be blank where a line of spaces longer than the limit is cut.
func FuzzChunkMarkdown(f *testing.F) {
	for _, s := range []string{
		"",
		"plain text\n",
		"# A\nintro\n## B\nbody\n### C\ndeep\n## D\nlast\n",
		"```go\n# not a heading\ncode\n```\nafter\n",
		"| a | b |\n|---|---|\n| 1 | 2 |\n| 3 | 4 |\n",
		"Title\n=====\n\ntext\n\nSub\n---\nmore\n",
		strings.Repeat("long line 登录 ", 300) + "\n",
		strings.Repeat("## h\nx\n", 120),
		"~~~\nunclosed fence\n# h\n",
		"\n\n\n",
		"- item\n- item\n  - nested\n",
	} {
		f.Add(s, uint16(0), uint8(1))
		f.Add(s, uint16(300), uint8(5))
	}
	f.Fuzz(func(t *testing.T, body string, max uint16, first uint8) {
		firstLine := int(first)
		chunks := ChunkMarkdown(body, firstLine, int(max))
		lines := strings.Split(strings.TrimRight(body, "\n"), "\n")
		last := firstLine + len(lines) - 1
		limit := int(max)
		if limit <= 0 {
			limit = maxChunkBytes
		}
		for i, c := range chunks {
			if c.StartLine < firstLine || c.EndLine < c.StartLine || c.EndLine > last {
				t.Fatalf("chunk %d covers lines %d-%d of %d-%d", i, c.StartLine, c.EndLine, firstLine, last)
			}
			if utf8.ValidString(body) && !utf8.ValidString(c.Text) {
				t.Fatalf("chunk %d text is not UTF-8: %q", i, c.Text)
			}
		}
		for n, l := range lines {
			if strings.TrimSpace(l) == "" {
				continue
			}
			shown := false
			for _, c := range chunks {
				if c.StartLine <= firstLine+n && firstLine+n <= c.EndLine && (len(l) > limit/2 || strings.Contains(c.Text, strings.TrimSpace(l))) {
					shown = true
					break
				}
			}
			if !shown {
				t.Fatalf("line %d %q is in no chunk", firstLine+n, l)
			}
		}
	})
}

// TestChunkOversizedEdgeBlocks: found by FuzzChunkMarkdown. A code block
// whose fence lines alone exceed the limit is still chunked (it vanished),
// and an oversized run of blank lines yields no blank chunk.
func TestChunkOversizedEdgeBlocks(t *testing.T) {
	fence := "```" + strings.Repeat("x", 300) + "\n```\nafter\n"
	got := ChunkMarkdown(fence, 1, 100)
	if len(got) == 0 || got[0].StartLine != 1 || !strings.Contains(got[0].Text, "xxx") {
		t.Errorf("fence-only block: %+v", got)
	}
	blank := "para one\n" + strings.Repeat(" ", 300) + "\npara two\n"
	for _, c := range ChunkMarkdown(blank, 1, 100) {
		if strings.TrimSpace(c.Text) == "" {
			t.Errorf("blank chunk %d-%d", c.StartLine, c.EndLine)
		}
	}
}
