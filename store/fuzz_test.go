package store

import (
	"bytes"
	"reflect"
	"sort"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/encoding/simplifiedchinese"
)

var noteSeeds = []string{
	"",
	"body only\n",
	"---\nname: x\ndescription: y\n---\n\nbody [[digest/a.md]]\n",
	"---\n---\n",
	"---\nname: x\n---",
	"---  \nname: x\n---\t\nbody",
	"---\r\nname: x\r\n---\r\n\r\nbody\r\n",
	"---\nname: [broken\n---\nbody\n",
	"---\n- a\n- b\n---\n",
	"---\nname: x\nunclosed\n",
	"\xEF\xBB\xBF---\nname: bom\n---\n",
	"---\n# comment\nname: no   # c\ndate: 2026-06-20\nn: 010\nlist: [a, b]\nm: {k: v}\n---\n\n# Title\n",
	"---\na: &a [1, 2]\nb: *a\n---\n",
	"---\ndescription: |\n  multi\n  line\n---\n",
	"---\nkey: \"---\"\n---\nbody\n",
	"---\n? complex\n: value\n---\n",
	"---\nname: 登录流程\n---\n\n正文\n",
	"\x80\x81---\n",
}

// FuzzSplitFrontmatter checks the splitter's invariants: it never panics,
// the body is a suffix of the input, and bodyLine is the body's line.
func FuzzSplitFrontmatter(f *testing.F) {
	for _, s := range noteSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		y, body, line, ok := SplitFrontmatter(text)
		if !ok {
			if body != text || y != "" || line != 1 {
				t.Fatalf("no fence: (%q, %q, %d)", y, body, line)
			}
			return
		}
		if !strings.HasSuffix(text, body) || !strings.Contains(text, y) {
			t.Fatalf("yaml %q / body %q not taken from %q", y, body, text)
		}
		if line < 3 {
			t.Fatalf("bodyLine %d < 3 with a fence", line)
		}
		if body != "" {
			head := text[:len(text)-len(body)]
			if want := strings.Count(head, "\n") + 1; line != want {
				t.Fatalf("bodyLine = %d, want %d", line, want)
			}
		}
		// The YAML text holds no closing fence line.
		for _, l := range strings.Split(y, "\n") {
			if strings.TrimSpace(l) == "---" {
				t.Fatalf("fence line inside yaml %q", y)
			}
		}
	})
}

// FuzzParseNote: ParseNote never panics; an unedited note is written back
// exactly; editing the frontmatter of a note whose header parses gives a
// note that parses back to the same values and body.
func FuzzParseNote(f *testing.F) {
	for _, s := range noteSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		n := ParseNote("digest/x.md", raw)
		if n.FM == nil {
			t.Fatal("nil FM")
		}
		_ = n.FM.Map()
		_ = n.FM.JSON()
		_ = DailyListLine(DailyNote{Path: n.Path, FM: n.FM})
		_ = ParseLinks(n.Body, n.BodyLine)
		b, err := n.Bytes()
		if utf8.Valid(raw) || n.Encoding == UTF8BOM {
			if err != nil {
				t.Fatalf("Bytes: %v", err)
			}
			if !bytes.Equal(b, raw) {
				t.Fatalf("unedited note changed:\n got %q\nwant %q", b, raw)
			}
			s, _ := n.Text()
			text, _ := DecodeText(raw)
			if s != text {
				t.Fatalf("Text() = %q, want %q", s, text)
			}
		}
		if n.FMErr != nil || !utf8.Valid(raw) {
			return
		}
		// Edit the frontmatter; the rest must survive a write and re-read.
		before := n.FM.Map()
		content := n.Content()
		if !n.HasFM {
			// The header is new: a body starting with a blank line already
			// has the separator, which Content() then strips.
			content = strings.TrimPrefix(content, "\n")
		}
		if err := n.FM.Set("name", "fuzz-name"); err != nil {
			t.Fatal(err)
		}
		out, err := n.Text()
		if err != nil {
			return // rendering refused; nothing written
		}
		back := ParseNote(n.Path, []byte(out))
		if back.FMErr != nil {
			t.Fatalf("re-parse of %q: %v", out, back.FMErr)
		}
		if back.Name() != "fuzz-name" {
			t.Fatalf("name = %q after edit; text %q", back.Name(), out)
		}
		if got := back.Content(); got != content {
			t.Fatalf("content changed by a frontmatter edit:\n got %q\nwant %q\ntext %q", got, content, out)
		}
		after := back.FM.Map()
		for k, v := range before {
			if k == "name" {
				continue
			}
			if _, ok := after[k]; !ok {
				t.Fatalf("key %q lost (had %v); text %q", k, v, out)
			}
		}
	})
}

// FuzzFrontmatterSetString: any UTF-8 string written with Set is read back
// unchanged, and never breaks the fence.
func FuzzFrontmatterSetString(f *testing.F) {
	for _, s := range []string{"", "no", "2026-06-20", "010", "a\n---\nb", "---", "  ---  ", "a: b", "#x", "[[a.md]]", "x\r\ny", " lead", "trail ", "line\n", "\t", "...", "a\n...\nb", "'q'", "\"dq\"", "登录\n---\n流程"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		if !utf8.ValidString(v) {
			return
		}
		for _, start := range []string{"", "---\n# c\nname: old # keep\nlist: [x, y]\nblock:\n  - z\n---\n\nbody [[digest/a.md]]\n"} {
			n := NewNote("digest/x.md", nil, "body [[digest/a.md]]")
			if start != "" {
				n = ParseNote("digest/x.md", []byte(start))
			}
			if err := n.FM.Set("name", "n"); err != nil {
				t.Fatal(err)
			}
			if err := n.FM.Set("description", v); err != nil {
				t.Fatal(err)
			}
			if err := n.FM.Set("list", []string{v, "b"}); err != nil {
				t.Fatal(err)
			}
			if err := n.FM.Set("block", []any{v}); err != nil {
				t.Fatal(err)
			}
			if err := n.FM.Set("after", "kept"); err != nil {
				t.Fatal(err)
			}
			out, err := n.Text()
			if err != nil {
				t.Fatal(err)
			}
			back := ParseNote(n.Path, []byte(out))
			if back.FMErr != nil {
				t.Fatalf("re-parse %q: %v", out, back.FMErr)
			}
			if back.Description() != v || back.FM.String("after") != "kept" || back.Name() != "n" {
				t.Fatalf("description %q -> %q (after=%q); text %q", v, back.Description(), back.FM.String("after"), out)
			}
			if l := back.FM.Strings("list"); len(l) != 2 || l[0] != v || l[1] != "b" {
				t.Fatalf("list = %q; text %q", l, out)
			}
			if l := back.FM.Value("block"); !reflect.DeepEqual(l, []any{v}) {
				t.Fatalf("block = %#v; text %q", l, out)
			}
			if back.Content() != "body [[digest/a.md]]\n" {
				t.Fatalf("content = %q; text %q", back.Content(), out)
			}
		}
	})
}

var linkSeeds = []string{
	"",
	"[[a.md]]",
	"![[a.png|100]] [[b.md#h|x]]",
	"[[ spaced.md ]]",
	"`[[code.md]]` [[real.md]]",
	"```\n[[fenced.md]]\n```\n[[after.md]]",
	"~~~~\n[[x]]\n~~~\n[[y]]\n~~~~",
	"[[]] [[#x]] [[a",
	"[[[a]]]",
	"[x](y) related:: [[p.md]]",
	"参见 [[digest/登录.md#要点|会议]]",
	"``a`[[b]]``",
	"   ```\n[[c]]",
	"[[a|b|c]] [[a#b#c]]",
}

// FuzzFrontmatterRewrite: rewriting one key of any header leaves every
// other key's value as it was, and the result parses.
func FuzzFrontmatterRewrite(f *testing.F) {
	for _, s := range []string{
		"a: 1\nb: >-\n  folded\n  text\nc:\n- x\n- y\n",
		"# c\nname: n   # k\n\n# head\nlist: [a, b]\n",
		"a: |\n  keep\n\n# not a comment inside?\nb: 2\n",
		"k: v\r\nl:\r\n  - 1\r\n",
		"? complex\n: key\nb: 1\n",
		"{a: 1, b: 2}\n",
		"a: &x 1\nb: *x\n",
	} {
		f.Add(s, "b")
	}
	f.Fuzz(func(t *testing.T, header, key string) {
		if !utf8.ValidString(header) || !utf8.ValidString(key) || strings.ContainsAny(header, "\x00") {
			return
		}
		raw := "---\n" + header
		if !strings.HasSuffix(raw, "\n") {
			raw += "\n"
		}
		raw += "---\nbody\n"
		n := ParseNote("digest/x.md", []byte(raw))
		if n.FMErr != nil || !n.HasFM {
			return
		}
		before, body := n.FM.Map(), n.Body
		if err := n.FM.Set(key, []string{"new", key}); err != nil {
			return
		}
		out, err := n.Text()
		if err != nil {
			t.Fatal(err)
		}
		back := ParseNote(n.Path, []byte(out))
		if back.FMErr != nil {
			t.Fatalf("rewrite of %q does not parse: %v\n%s", raw, back.FMErr, out)
		}
		after := back.FM.Map()
		if got := back.FM.Strings(key); len(got) != 2 || got[0] != "new" || got[1] != key {
			t.Fatalf("%s = %q\n%s", key, got, out)
		}
		delete(before, key)
		delete(after, key)
		if !reflect.DeepEqual(before, after) {
			t.Fatalf("other keys changed:\n%#v\n%#v\n%s", before, after, out)
		}
		if back.Body != body {
			t.Fatalf("body %q, want %q", back.Body, body)
		}
	})
}

// FuzzParseLinks: never panics and every offset points at the link text.
func FuzzParseLinks(f *testing.F) {
	for _, s := range linkSeeds {
		f.Add(s, 1)
	}
	f.Add("x\n[[a.md]]", 10)
	f.Fuzz(func(t *testing.T, body string, firstLine int) {
		if firstLine < 1 || firstLine > 1<<20 {
			firstLine = 1
		}
		links := ParseLinks(body, firstLine)
		prevEnd, prevLine := 0, firstLine
		for _, l := range links {
			if l.Start < prevEnd || l.Start >= l.End || l.End > len(body) {
				t.Fatalf("link %+v: span outside body of %d bytes (prev end %d)", l, len(body), prevEnd)
			}
			if l.TargetStart < l.Start || l.TargetEnd > l.End || l.TargetStart >= l.TargetEnd {
				t.Fatalf("link %+v: target span outside the link", l)
			}
			if body[l.TargetStart:l.TargetEnd] != l.Target {
				t.Fatalf("link %+v: body[target] = %q", l, body[l.TargetStart:l.TargetEnd])
			}
			if l.Target != strings.TrimSpace(l.Target) || l.Target == "" || strings.ContainsAny(l.Target, "[]|#\n") {
				t.Fatalf("link %+v: bad target", l)
			}
			raw := body[l.Start:l.End]
			if !strings.HasSuffix(raw, "]]") || !strings.HasPrefix(strings.TrimPrefix(raw, "!"), "[[") || strings.HasPrefix(raw, "!") != l.Embed {
				t.Fatalf("link %+v: raw %q", l, raw)
			}
			if want := firstLine + strings.Count(body[:l.Start], "\n"); l.Line != want {
				t.Fatalf("link %+v: line %d, want %d", l, l.Line, want)
			}
			if l.Line < prevLine {
				t.Fatalf("lines out of order")
			}
			prevEnd, prevLine = l.End, l.Line
		}
	})
}

// FuzzReplaceLinks: retargeting src -> dst -> src restores the body when dst did not
// occur in it, and the count matches the links to src.
func FuzzReplaceLinks(f *testing.F) {
	for _, s := range linkSeeds {
		f.Add(s, "a.md", "moved/a.md")
	}
	f.Add("[[digest/Alice.md]] [[Alice]] ![[digest/Alice.md#h|A]]", "digest/Alice.md", "digest/people/Alice.md")
	f.Add("`[[a.md]]` [[a.md]]", "a.md", "b.md")
	f.Fuzz(func(t *testing.T, body, src, dst string) {
		if ValidateLinkTarget(src) != nil || ValidateLinkTarget(dst) != nil ||
			strings.Contains(dst, "`") { // a backtick in dst can open a code span
			return
		}
		want := 0
		for _, l := range ParseLinks(body, 1) {
			if l.Target == src {
				want++
			}
		}
		out, n := retargetLiteral(body, src, dst)
		if src == dst {
			if out != body || n != 0 {
				t.Fatalf("src == dst changed the body")
			}
			return
		}
		if n != want {
			t.Fatalf("retarget count = %d, want %d", n, want)
		}
		if n == 0 && out != body {
			t.Fatalf("no link changed but body did")
		}
		// Every link to src now points to dst; nothing else moved.
		before, after := ParseLinks(body, 1), ParseLinks(out, 1)
		if len(before) != len(after) {
			t.Fatalf("link count %d -> %d: %q -> %q", len(before), len(after), body, out)
		}
		for i := range before {
			b, a := before[i], after[i]
			wantTarget := b.Target
			if b.Target == src {
				wantTarget = dst
			}
			if a.Target != wantTarget || a.Anchor != b.Anchor || a.Alias != b.Alias || a.Embed != b.Embed || a.Line != b.Line {
				t.Fatalf("link %d: %+v -> %+v", i, b, a)
			}
		}
		if strings.Contains(body, dst) {
			return
		}
		back, m := retargetLiteral(out, dst, src)
		if back != body || m != n {
			t.Fatalf("round trip:\n body %q\n out  %q\n back %q (%d vs %d)", body, out, back, n, m)
		}
	})
}

// FuzzValidateName: a name that passes is a single clean component that
// Rel accepts unchanged.
func FuzzValidateName(f *testing.F) {
	for _, s := range []string{"a", "CON", "com1.md", "a.", " a", "a/b", "..", "登录", "x\x00"} {
		f.Add(s)
	}
	w := &Workspace{Root: f.TempDir()}
	f.Fuzz(func(t *testing.T, s string) {
		if ValidateName(s) != nil {
			return
		}
		if s == "" || s == "." || s == ".." || strings.ContainsAny(s, `/\<>:"|?*`) || strings.TrimSpace(s) != s || strings.HasSuffix(s, ".") {
			t.Fatalf("ValidateName accepted %q", s)
		}
		if strings.HasPrefix(s, "~") {
			return
		}
		got, err := w.Rel(s)
		if err != nil || got != s {
			t.Fatalf("Rel(%q) = %q, %v", s, got, err)
		}
	})
}

// FuzzRel: a path Rel accepts is clean, relative and inside the workspace.
func FuzzRel(f *testing.F) {
	w := &Workspace{Root: f.TempDir()}
	for _, s := range []string{"daily/2026-05-18/x.md", "./a", "../a", "a/../b", w.Root + "/a/b", "/etc", "~/x", "a//b", "CON/x", "a\\b", "登录/流程.md", " a", "a/."} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		got, err := w.Rel(p)
		if err != nil {
			return
		}
		if got == "" || strings.HasPrefix(got, "/") || strings.Contains(got, "\\") {
			t.Fatalf("Rel(%q) = %q", p, got)
		}
		for _, part := range strings.Split(got, "/") {
			if part == ".." || ValidateName(part) != nil {
				t.Fatalf("Rel(%q) = %q: bad component %q", p, got, part)
			}
		}
		if !within(w.Root, w.Abs(got)) {
			t.Fatalf("Rel(%q) = %q leads outside", p, got)
		}
	})
}

// FuzzNormalizeTag: an accepted tag has no whitespace, is case-folded and
// is stable under normalisation.
func FuzzNormalizeTag(f *testing.F) {
	for _, s := range []string{"go", " new energy ", "C++", "---", "Straße", strings.Repeat("a", 65), "登录", "ǅ"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tag, ok := NormalizeTag(s)
		if !ok {
			return
		}
		if tag == "" || strings.ContainsFunc(tag, unicode.IsSpace) {
			t.Fatalf("NormalizeTag(%q) = %q", s, tag)
		}
		// The length is checked before folding, as ReMe does; folding can
		// lengthen a tag ("ß" -> "ss"), so only a short one must round-trip.
		if utf8.RuneCountInString(tag) <= MaxTagLength {
			if again, ok := NormalizeTag(tag); !ok || again != tag {
				t.Fatalf("not idempotent: %q -> %q, %v", tag, again, ok)
			}
		}
		if got := NormalizeTags([]string{s, strings.ToUpper(s), s}, 0); len(got) < 1 || got[0] != tag {
			t.Fatalf("NormalizeTags = %q", got)
		}
	})
}

// FuzzInlineTags: every tag found is a valid normalised tag that occurs in
// the body after a "#", and none comes from inside a code span.
func FuzzInlineTags(f *testing.F) {
	for _, s := range []string{"#go and #Go", "`#code` #real", "# Heading\n#tag/nested", "a#b #1984 #y1984", "```\n#no\n```\n#yes", "#登录 #ß"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		tags := InlineTags(body)
		seen := map[string]bool{}
		for _, tag := range tags {
			if seen[tag] {
				t.Fatalf("InlineTags(%q) repeats %q", body, tag)
			}
			seen[tag] = true
			if strings.ContainsAny(tag, "# \t\n`") {
				t.Fatalf("InlineTags(%q) = %q", body, tags)
			}
			if !strings.Contains(folder().String(body), "#"+tag) {
				t.Fatalf("InlineTags(%q): %q is not in the body", body, tag)
			}
		}
		if !strings.Contains(body, "`") && !strings.Contains(body, "~~~") {
			if got := InlineTags(strings.ReplaceAll(body, "#", "`#`")); len(got) != 0 {
				t.Fatalf("tags inside code spans: %q", got)
			}
		}
	})
}

// FuzzDecodeText: decoding then encoding gives the bytes back whenever the
// encoder accepts the text, so an edit never changes untouched bytes; bytes
// that are no encoding lose only a cut last character, or show as U+FFFD.
func FuzzDecodeText(f *testing.F) {
	f.Add([]byte("hello"))
	f.Add([]byte("\xEF\xBB\xBF登录"))
	f.Add(gbk(f, "登录流程"))
	f.Add([]byte{0x80, 0xff, 0x81})
	f.Fuzz(func(t *testing.T, b []byte) {
		s, enc := DecodeText(b)
		out, err := EncodeText(s, enc)
		if err != nil {
			if enc != GBK {
				t.Fatalf("EncodeText(%v): %v", enc, err)
			}
			return
		}
		if enc == GBK {
			// x/text's GBK decoder maps a few legacy codes onto characters
			// whose canonical code differs (A3A0 -> U+3000 -> A1A1): the
			// text survives, not necessarily those bytes.
			if back, err := simplifiedchinese.GBK.NewDecoder().Bytes(out); err != nil || string(back) != s {
				t.Fatalf("gbk round trip: %x -> %q -> %x -> %q", b, s, out, back)
			}
			return
		}
		if enc == UTF8 && !utf8.Valid(b) {
			if !bytes.HasPrefix(b, out) && !strings.ContainsRune(s, utf8.RuneError) {
				t.Fatalf("invalid bytes %x decoded as %q without a mark", b, s)
			}
			if bytes.HasPrefix(b, out) && len(b)-len(out) >= utf8.UTFMax {
				t.Fatalf("invalid bytes %x lost more than a cut character: %q", b, s)
			}
			return
		}
		if !bytes.Equal(out, b) {
			t.Fatalf("%v round trip: %x -> %q -> %x", enc, b, s, out)
		}
	})
}

// FuzzNormalizeDate: whatever is accepted is a strict date, and strict
// dates are accepted unchanged.
func FuzzNormalizeDate(f *testing.F) {
	for _, s := range []string{"2024-1-5", "2026-08-20T10:00:00", "2024-+1-5", "garbage", "2024-02-30", " 2024-12-31 "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := NormalizeDate(s)
		if err != nil {
			return
		}
		if !IsDate(got) {
			t.Fatalf("NormalizeDate(%q) = %q, not a date", s, got)
		}
		if again, err := ParseDate(got); err != nil || again != got {
			t.Fatalf("ParseDate(%q) = %q, %v", got, again, err)
		}
		if IsDate(strings.TrimSpace(s)) && got != strings.TrimSpace(s) {
			t.Fatalf("NormalizeDate(%q) = %q", s, got)
		}
	})
}

// FuzzParseNoteLinks: links are in order and inside the text, a markdown
// target decodes from the text at its offsets, and writing every markdown
// target back with EncodeMarkdownDest gives the same links.
func FuzzParseNoteLinks(f *testing.F) {
	for _, s := range linkSeeds {
		f.Add(s)
	}
	for _, s := range []string{"[a](my%20note.md#H) [[b]] ![c](<x y.png> \"t\")", "[a [b]](c(1).md 'x')", "[[a]](b.md) [x](https://a.b)",
		`\[no](x.md) [y](a\)b.md)`, "[登](%E7%99%BB.md)", "[a](<b\\>c.md>)"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		links := ParseNoteLinks(body, 1)
		prevEnd := 0
		for _, l := range links {
			if l.Start < prevEnd || l.Start >= l.End || l.End > len(body) || l.TargetStart < l.Start || l.TargetEnd > l.End || l.TargetStart > l.TargetEnd {
				t.Fatalf("link %+v: bad spans in %q", l, body)
			}
			prevEnd = l.End
			if !l.Markdown {
				continue
			}
			if body[l.End-1] != ')' || (body[l.Start] != '[' && body[l.Start] != '!') {
				t.Fatalf("link %+v: %q is not a markdown link", l, body[l.Start:l.End])
			}
			if got := strings.TrimSpace(decodeDest(body[l.TargetStart:l.TargetEnd])); got != l.Target || got == "" || !isFileDest(got) {
				t.Fatalf("link %+v: target text %q decodes to %q", l, body[l.TargetStart:l.TargetEnd], got)
			}
		}
		out, _ := ReplaceLinks(body, links, func(l Link, written string) (string, bool) {
			// the #anchor stays as written: parentheses that balance across
			// it cannot be moved (planMove checks a rewrite before making it)
			if !l.Markdown || strings.ContainsAny(l.Target, "<>\\") || strings.Count(written, "(") != strings.Count(written, ")") {
				return "", false
			}
			return EncodeMarkdownDest(l.Target, l.Angle, written), true
		})
		again := ParseNoteLinks(out, 1)
		if len(again) != len(links) {
			t.Fatalf("%d links, %d after re-encoding:\n%q\n%q", len(links), len(again), body, out)
		}
		for i := range links {
			if again[i].Target != links[i].Target || again[i].Markdown != links[i].Markdown {
				t.Fatalf("link %d: %+v -> %+v\n%q\n%q", i, links[i], again[i], body, out)
			}
		}
	})
}

// FuzzResolveLink: a link resolves only to files that exist, an ambiguous
// one lists two or more, and a link to one file can be retargeted to any
// other in its own form or as a full path.
func FuzzResolveLink(f *testing.F) {
	f.Add("digest/wiki/solar.md\ndigest/a/solar.md\nMEMORY.md\nassets/x.png", "daily/2026-06-20/a.md", "solar", false, 1)
	f.Add("daily/2026-06-19/retro.md\ndaily/2026-06-20/b c.md", "daily/2026-06-20/a.md", "../2026-06-19/retro.md", true, 0)
	f.Add("a/b/c.md\nb/c.md\nc.md", "x/y.md", "b/c", false, 2)
	f.Add("Ab.md\nab.MD", "z.md", "/AB", false, 1)
	f.Fuzz(func(t *testing.T, listing, from, target string, markdown bool, pick int) {
		files := fileSet{}
		var list []string
		for _, p := range strings.Split(listing, "\n") {
			if c := cleanRel(p); c != "" && c == p && ValidateLinkTarget(p) == nil && !files[p] {
				files[p] = true
				list = append(list, p)
			}
		}
		if cleanRel(from) != from || from == "" || len(list) == 0 {
			return
		}
		l := Link{Target: target, Markdown: markdown}
		r := ResolveLink(from, l, files)
		switch r.Status {
		case LinkExact, LinkShort:
			if !files[r.Path] {
				t.Fatalf("%q resolved to %q, which does not exist", target, r.Path)
			}
		case LinkAmbiguous:
			if len(r.Candidates) < 2 || !sort.StringsAreSorted(r.Candidates) {
				t.Fatalf("ambiguous %q: %q", target, r.Candidates)
			}
			for _, c := range r.Candidates {
				if !files[c] {
					t.Fatalf("candidate %q does not exist", c)
				}
			}
		case LinkMissing:
		default:
			t.Fatalf("status %q", r.Status)
		}
		if !r.Status.Resolves() {
			return
		}
		if pick < 0 {
			pick = -pick
		}
		dst := list[pick%len(list)]
		text, ok := LinkTextFor(from, l, r, dst, files)
		if !ok {
			t.Fatalf("no link from %s to %s in the form of %q", from, dst, target)
		}
		back := ResolveLink(from, Link{Target: text, Markdown: markdown}, files)
		if !back.Status.Resolves() || back.Path != dst {
			t.Fatalf("%q written for %s resolves to %+v", text, dst, back)
		}
	})
}
