package index

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseQueryMatchExpr(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{"What did we decide about the login flow?", `"decid" OR "login" OR "flow"`},
		{`"rate limit" -oauth`, `("rate limit") NOT "oauth"`},
		{"foo-bar v1.2 recall@10", `"foo bar" OR "v1 2" OR "recal 10"`},
		{"Deploy*", `"deploy"*`},
		{"deployments*", `"deployments"*`},
		{"登录", `"登录"`},
		{"登录流程", `"登录" OR "录流" OR "流程"`},
		{"我们的登录", `"登录"`},
		{"登", `"登"*`},
		{"the", ``},
		{"login login LOGIN", `"login"`},
		{`AND OR NEAR( * "`, `"near"`},
		{`a"b`, `"b"`},
		{"登录 timeout", `"登录" OR "timeout"`},
		{"Caroline's café", `"carolin" OR "cafe"`},
		{`"使用OAuth登录"`, `"使用" OR "oauth 登录"`},
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
	q := ParseQuery(`"Exact Phrase" -skip 部署 what is it`)
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
	if !q.Terms[0].Quoted {
		t.Error("a quoted phrase is quoted")
	}
	if diff := cmp.Diff([]string{"exact", "phrase", "部署"}, q.Phrase); diff != "" {
		t.Errorf("phrase (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"what", "is", "it"}, q.Stops); diff != "" {
		t.Errorf("stops (-want +got):\n%s", diff)
	}
}

func TestLinkWords(t *testing.T) {
	in := "see [[daily/2026-06-20/login-refactor.md#Decisions|the decision]] and [[digest/wiki/solar.md]] `[[x.md]]`"
	want := "see the decision Decisions and solar `[[x.md]]`"
	if got := linkWords(in); got != want {
		t.Errorf("linkWords = %q, want %q", got, want)
	}
}
