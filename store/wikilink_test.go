package store

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// lk is a compact expected link: target, anchor, alias, embed, line.
type lk struct {
	Target, Anchor, Alias string
	Embed                 bool
	Line                  int
}

func simplify(links []Link) []lk {
	out := make([]lk, 0, len(links))
	for _, l := range links {
		out = append(out, lk{l.Target, l.Anchor, l.Alias, l.Embed, l.Line})
	}
	return out
}

func TestParseLinks(t *testing.T) {
	tests := []struct {
		name      string
		body      string
		firstLine int
		want      []lk
	}{
		{"none", "no links here", 1, nil},
		{"plain", "see [[digest/a.md]].", 1, []lk{{"digest/a.md", "", "", false, 1}}},
		{"anchor", "[[digest/a.md#Heading 2]]", 1, []lk{{"digest/a.md", "Heading 2", "", false, 1}}},
		{"line anchor", "[[daily/2026-06-20/x.md#L9-L10]]", 1, []lk{{"daily/2026-06-20/x.md", "L9-L10", "", false, 1}}},
		{"alias", "[[digest/a.md|the A note]]", 1, []lk{{"digest/a.md", "", "the A note", false, 1}}},
		{"anchor and alias", "[[daily/2026-06-20/x.md#h|alias]]", 1, []lk{{"daily/2026-06-20/x.md", "h", "alias", false, 1}}},
		{"embed", "![[resource/a.png]]", 1, []lk{{"resource/a.png", "", "", true, 1}}},
		{"embed with alias", "x ![[resource/a.png|300]] y", 1, []lk{{"resource/a.png", "", "300", true, 1}}},
		{"spaces trimmed", "[[  digest/a b.md  ]]", 1, []lk{{"digest/a b.md", "", "", false, 1}}},
		{"spaces before anchor", "[[ digest/a.md #h]]", 1, []lk{{"digest/a.md", "h", "", false, 1}}},
		{"chinese path", "参见 [[digest/登录流程.md]] 和 [[daily/2026-06-20/会议.md#要点|会议]]", 1, []lk{
			{"digest/登录流程.md", "", "", false, 1},
			{"daily/2026-06-20/会议.md", "要点", "会议", false, 1},
		}},
		{"several per line", "[[a.md]][[b.md]] and ![[c.png]] [[d.md|D]]", 1, []lk{
			{"a.md", "", "", false, 1}, {"b.md", "", "", false, 1}, {"c.png", "", "", true, 1}, {"d.md", "", "D", false, 1},
		}},
		{"no extension kept literal", "[[solar]] [[topics/Alice]]", 1, []lk{{"solar", "", "", false, 1}, {"topics/Alice", "", "", false, 1}}},
		{"line numbers with offset", "line\n[[a.md]]\n\nx [[b.md]]\n", 7, []lk{{"a.md", "", "", false, 8}, {"b.md", "", "", false, 10}}},
		{"crlf lines", "a\r\n[[a.md]]\r\n[[b.md]]\r\n", 1, []lk{{"a.md", "", "", false, 2}, {"b.md", "", "", false, 3}}},
		{"inline code", "`[[no.md]]` [[yes.md]]", 1, []lk{{"yes.md", "", "", false, 1}}},
		{"double backtick code", "``x ` [[no.md]]`` [[yes.md]]", 1, []lk{{"yes.md", "", "", false, 1}}},
		{"unmatched backtick", "`[[yes.md]]", 1, []lk{{"yes.md", "", "", false, 1}}},
		{"mismatched backtick runs", "``[[yes.md]]`", 1, []lk{{"yes.md", "", "", false, 1}}},
		{"code span does not span lines", "`x\n[[yes.md]]`", 1, []lk{{"yes.md", "", "", false, 2}}},
		{"fenced backticks", "[[a.md]]\n```\n[[no.md]]\n```\n[[b.md]]", 1, []lk{{"a.md", "", "", false, 1}, {"b.md", "", "", false, 5}}},
		{"fenced with info", "```go\n[[no.md]]\n```\n[[b.md]]", 1, []lk{{"b.md", "", "", false, 4}}},
		{"fenced tildes", "~~~\n[[no.md]]\n~~~\n[[b.md]]", 1, []lk{{"b.md", "", "", false, 4}}},
		{"indented fence", "   ```\n[[no.md]]\n   ```\n[[b.md]]", 1, []lk{{"b.md", "", "", false, 4}}},
		{"longer fence needs longer close", "````\n[[no.md]]\n```\n[[no2.md]]\n````\n[[b.md]]", 1, []lk{{"b.md", "", "", false, 6}}},
		{"tilde does not close backticks", "```\n~~~\n[[no.md]]\n```\n[[b.md]]", 1, []lk{{"b.md", "", "", false, 5}}},
		{"close with text is not a close", "```\n``` x\n[[no.md]]\n```\n[[b.md]]", 1, []lk{{"b.md", "", "", false, 5}}},
		{"unclosed fence", "[[a.md]]\n```\n[[no.md]]\n[[no2.md]]", 1, []lk{{"a.md", "", "", false, 1}}},
		{"two backticks is not a fence", "``\n[[a.md]]\n``", 1, []lk{{"a.md", "", "", false, 2}}},
		{"four-space indent is not a fence", "    ```\n[[a.md]]", 1, []lk{{"a.md", "", "", false, 2}}},
		{"empty target", "[[]] [[ ]] [[#x]] [[|y]]", 1, nil},
		{"unclosed", "[[a.md and more", 1, nil},
		{"unclosed then closed", "[[a [[b.md]]", 1, []lk{{"b.md", "", "", false, 1}}},
		{"single bracket close", "[[a.md]", 1, nil},
		{"newline inside", "[[a\n.md]]", 1, nil},
		{"triple brackets", "[[[a.md]]]", 1, []lk{{"a.md", "", "", false, 1}}},
		{"markdown link ignored", "[x](digest/a.md) [x]([[no]]) ", 1, []lk{{"no", "", "", false, 1}}},
		{"plain markdown link only", "[label](digest/a.md) and ![img](a.png)", 1, nil},
		{"legacy related", "related:: [[digest/p.md]]", 1, []lk{{"digest/p.md", "", "", false, 1}}},
		{"legacy list related", "- related:: [[digest/p.md]]", 1, []lk{{"digest/p.md", "", "", false, 1}}},
		{"legacy bracket related", "[related:: [[digest/p.md]]]", 1, []lk{{"digest/p.md", "", "", false, 1}}},
		{"anchor may contain hash", "[[a.md#x#y]]", 1, []lk{{"a.md", "x#y", "", false, 1}}},
		{"alias may contain pipe", "[[a.md|x|y]]", 1, []lk{{"a.md", "", "x|y", false, 1}}},
		{"session link", "[[session/dialog/abc-123.jsonl]]", 1, []lk{{"session/dialog/abc-123.jsonl", "", "", false, 1}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ParseLinks(tt.body, tt.firstLine)
			if diff := cmp.Diff(tt.want, simplify(got), cmpopts.EquateEmpty()); diff != "" {
				t.Fatalf("ParseLinks(%q) (-want +got):\n%s", tt.body, diff)
			}
			checkLinkOffsets(t, tt.body, got)
		})
	}
}

func checkLinkOffsets(t *testing.T, body string, links []Link) {
	t.Helper()
	prevEnd := 0
	for _, l := range links {
		if l.Start < prevEnd || l.Start >= l.End || l.End > len(body) {
			t.Fatalf("link %+v: bad span in body of %d bytes (prev end %d)", l, len(body), prevEnd)
		}
		if l.TargetStart < l.Start || l.TargetEnd > l.End || l.TargetStart >= l.TargetEnd {
			t.Fatalf("link %+v: target span outside link", l)
		}
		if body[l.TargetStart:l.TargetEnd] != l.Target {
			t.Fatalf("link %+v: body[target] = %q", l, body[l.TargetStart:l.TargetEnd])
		}
		raw := body[l.Start:l.End]
		if !strings.HasSuffix(raw, "]]") || !strings.HasPrefix(strings.TrimPrefix(raw, "!"), "[[") || strings.HasPrefix(raw, "!") != l.Embed {
			t.Fatalf("link %+v: raw %q", l, raw)
		}
		prevEnd = l.End
	}
}

func TestParseLinksOffsets(t *testing.T) {
	body := "ab ![[ x.md #h|al ]] cd"
	links := ParseLinks(body, 1)
	if len(links) != 1 {
		t.Fatalf("links = %+v", links)
	}
	l := links[0]
	if l.Start != 3 || l.End != len(body)-3 || body[l.Start:l.End] != "![[ x.md #h|al ]]" {
		t.Fatalf("span %d..%d = %q", l.Start, l.End, body[l.Start:l.End])
	}
	if l.Anchor != "h" || l.Alias != "al " || l.Target != "x.md" {
		t.Fatalf("link = %+v", l)
	}
}

// retargetLiteral is ReMe's retarget: links whose target is exactly src.
func retargetLiteral(body, src, dst string) (string, int) {
	if src == dst {
		return body, 0
	}
	return ReplaceLinks(body, ParseLinks(body, 1), func(l Link, _ string) (string, bool) { return dst, l.Target == src })
}

func TestReplaceLinksLiteral(t *testing.T) {
	const src, dst = "digest/people/Alice.md", "digest/people/Alice Smith.md"
	tests := []struct {
		name, body, want string
		n                int
	}{
		{"plain", "see [[digest/people/Alice.md]].", "see [[digest/people/Alice Smith.md]].", 1},
		{"embed anchor alias", "x ![[digest/people/Alice.md#Bio|A]] y", "x ![[digest/people/Alice Smith.md#Bio|A]] y", 1},
		{"anchor only", "[[digest/people/Alice.md#L9-L10]]", "[[digest/people/Alice Smith.md#L9-L10]]", 1},
		{"padded target", "[[ digest/people/Alice.md ]]", "[[ digest/people/Alice Smith.md ]]", 1},
		{"several", "[[digest/people/Alice.md]]\n- related:: [[digest/people/Alice.md|her]]\n[[digest/b.md]]", "[[digest/people/Alice Smith.md]]\n- related:: [[digest/people/Alice Smith.md|her]]\n[[digest/b.md]]", 2},
		{"short form untouched", "[[Alice]] [[Alice.md]] [[people/Alice.md]]", "[[Alice]] [[Alice.md]] [[people/Alice.md]]", 0},
		{"no extension untouched", "[[digest/people/Alice]]", "[[digest/people/Alice]]", 0},
		{"prefix untouched", "[[digest/people/Alice.md.bak]] [[x/digest/people/Alice.md]]", "[[digest/people/Alice.md.bak]] [[x/digest/people/Alice.md]]", 0},
		{"plain text untouched", "digest/people/Alice.md and [x](digest/people/Alice.md)", "digest/people/Alice.md and [x](digest/people/Alice.md)", 0},
		{"code untouched", "`[[digest/people/Alice.md]]`\n```\n[[digest/people/Alice.md]]\n```\n[[digest/people/Alice.md]]", "`[[digest/people/Alice.md]]`\n```\n[[digest/people/Alice.md]]\n```\n[[digest/people/Alice Smith.md]]", 1},
		{"empty body", "", "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, n := retargetLiteral(tt.body, src, dst)
			if got != tt.want || n != tt.n {
				t.Fatalf("retarget:\n got %q, %d\nwant %q, %d", got, n, tt.want, tt.n)
			}
		})
	}
	body := "[[a.md]] [[a.md]]"
	if got, n := retargetLiteral(body, "a.md", "a.md"); got != body || n != 0 {
		t.Fatalf("src==dst: %q, %d", got, n)
	}
	if got, n := retargetLiteral("[[a.md]] ![[a.md#x]]", "a.md", "b/c.md"); got != "[[b/c.md]] ![[b/c.md#x]]" || n != 2 {
		t.Fatalf("count: %q, %d", got, n)
	}
}

func TestValidateLinkTarget(t *testing.T) {
	ok := []string{"digest/a.md", "a b.md", "登录.md", "session/dialog/x.jsonl", "a(1).md", "a!.md"}
	bad := []string{"", "  ", "a[b", "a]b", "a#b", "a|b", "a\nb", "[[a]]",
		".M ", " a.md", "a.md\t"} // a link is read trimmed: [[.M ]] names ".M"
	for _, s := range ok {
		if err := ValidateLinkTarget(s); err != nil {
			t.Errorf("ValidateLinkTarget(%q) = %v", s, err)
		}
	}
	for _, s := range bad {
		if err := ValidateLinkTarget(s); !errors.Is(err, ErrInvalidPath) {
			t.Errorf("ValidateLinkTarget(%q) = %v, want ErrInvalidPath", s, err)
		}
	}
}

func TestLinkToAndTarget(t *testing.T) {
	if got := LinkTo("session/dialog/x.jsonl"); got != "[[session/dialog/x.jsonl]]" {
		t.Fatalf("LinkTo = %q", got)
	}
	tests := map[string]string{
		"[[resource/a.md]]":        "resource/a.md",
		" [[ resource/a.md ]] ":    "resource/a.md",
		"[[resource/a.md#h]]":      "resource/a.md",
		"[[resource/a.md|alias]]":  "resource/a.md",
		"[[resource/a.md#h|x]]":    "resource/a.md",
		"resource/a.md":            "resource/a.md",
		"  resource/a.md  ":        "resource/a.md",
		"[[unclosed":               "[[unclosed",
		"":                         "",
		LinkTo("session/dialog/y"): "session/dialog/y",
	}
	for in, want := range tests {
		if got := LinkTarget(in); got != want {
			t.Errorf("LinkTarget(%q) = %q, want %q", in, got, want)
		}
	}
}
