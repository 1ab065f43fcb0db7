package index

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseQueryMatchExpr(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{"What did we decide about the login flow?", `"decide" OR "login" OR "flow"`},
		{`"rate limit" -oauth`, `("rate limit") NOT "oauth"`},
		{"foo-bar v1.2 recall@10", `"foo bar" OR "v1 2" OR "recall 10"`},
		{"Deploy*", `"deploy"*`},
		{"登录", `"登 录"`},
		{"登录流程", `"登 录 流 程" OR "登 录" OR "录 流" OR "流 程"`},
		{"我们的登录", `"我 们 的 登 录" OR "登 录"`},
		{"the", `"the"`},
		{"login login LOGIN", `"login"`},
		{`AND OR NEAR( * "`, `"near"`},
		{`a"b`, `"a b"`},
		{"登录 timeout", `"登 录" OR "timeout"`},
		{"!!! ???", ``},
		{"-only", ``},
	}
	for _, tt := range tests {
		got := ParseQuery(tt.in).MatchExpr()
		if got != tt.want {
			t.Errorf("ParseQuery(%q).MatchExpr() = %s, want %s", tt.in, got, tt.want)
		}
	}
}

func TestParseQueryTerms(t *testing.T) {
	q := ParseQuery(`"Exact Phrase" -skip 部署`)
	var got []string
	for _, term := range q.Terms {
		got = append(got, term.Text)
	}
	if diff := cmp.Diff([]string{"Exact Phrase", "部署"}, got); diff != "" {
		t.Errorf("terms (-want +got):\n%s", diff)
	}
	if len(q.Excluded) != 1 || q.Excluded[0].Tokens[0] != "skip" {
		t.Errorf("excluded = %+v", q.Excluded)
	}
	if !q.Terms[0].Exact {
		t.Error("a quoted phrase is exact")
	}
}

func TestFTSText(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain ascii", "plain ascii"},
		{"登录流程", " 登  录  流  程 "},
		{"使用OAuth登录", " 使  用 OAuth 登  录 "},
		{"カタカナ", " カ  タ  カ  ナ "},
		{"한국어 텍스트", " 한  국  어  \uE000   텍  스  트 "},
		{"流程。时间", " 流  程  \uE000 。 时  间 "},
		{"naïve café", "naïve café"},
	}
	for _, tt := range tests {
		if got := ftsText(tt.in); got != tt.want {
			t.Errorf("ftsText(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestLinkWords(t *testing.T) {
	in := "see [[daily/2026-06-20/login-refactor.md#Decisions|the decision]] and [[digest/wiki/solar.md]] `[[x.md]]`"
	want := "see the decision Decisions and solar `[[x.md]]`"
	if got := linkWords(in); got != want {
		t.Errorf("linkWords = %q, want %q", got, want)
	}
}
