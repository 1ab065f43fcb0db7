package store

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestNormalizeTag(t *testing.T) {
	tests := []struct {
		in  string
		tag string
		ok  bool
	}{
		{"go", "go", true},
		{"  SQLite  ", "sqlite", true},
		{"new energy", "new_energy", true},
		{"New \t\n Energy  Solar", "new_energy_solar", true},
		{"C++", "c++", true},
		{"user:Alice", "user:alice", true},
		{"登录", "登录", true},
		{"v2", "v2", true},
		{"2026", "2026", true},
		{"Straße", "strasse", true}, // Python's str.casefold, not just lower case
		{"ΣΊΣΥΦΟΣ", "σίσυφοσ", true},
		{"ꭸꮎ", "ᎨᎾ", true}, // Cherokee folds to capitals (as Python does)
		{"ᎨᎾ", "ᎨᎾ", true},
		{"a\u00a0b", "a_b", true},
		{"_x_", "_x_", true},
		{strings.Repeat("A", 64), strings.Repeat("a", 64), true},
		{strings.Repeat("登", 64), strings.Repeat("登", 64), true},
		{strings.Repeat("a", 65), "", false},
		{strings.Repeat("登", 65), "", false},
		{"", "", false},
		{"   ", "", false},
		{"---", "", false},
		{"#", "", false},
		{"_ _", "", false},
		{"!?", "", false},
	}
	for _, tt := range tests {
		got, ok := NormalizeTag(tt.in)
		if ok != tt.ok || got != tt.tag {
			t.Errorf("NormalizeTag(%q) = %q, %v; want %q, %v", tt.in, got, ok, tt.tag, tt.ok)
		}
	}
}

func TestNormalizeTags(t *testing.T) {
	tests := []struct {
		name string
		in   []string
		max  int
		want []string
	}{
		{"nil", nil, 3, nil},
		{"case variants are one tag, at the first one's place", []string{"SQLite", "go", "sqlite", "SQLITE"}, 3, []string{"sqlite", "go"}},
		{"dedup after whitespace join", []string{"new energy", "New_Energy", "new  energy"}, 3, []string{"new_energy"}},
		{"invalid dropped before counting", []string{"", "!!", "a", "  ", "b", "c", "d"}, 3, []string{"a", "b", "c"}},
		{"max 3", []string{"a", "b", "c", "d", "e"}, MaxTagsPerNote, []string{"a", "b", "c"}},
		{"max 0 keeps all (queries)", []string{"a", "b", "c", "d", "A"}, 0, []string{"a", "b", "c", "d"}},
		{"casefold", []string{"Straße", "STRASSE"}, 3, []string{"strasse"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := NormalizeTags(tt.in, tt.max)
			if diff := cmp.Diff(tt.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Fatalf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestFrontmatterTags(t *testing.T) {
	tests := []struct {
		yaml string
		want []string
	}{
		{"tags: [Project-X, \"#idea\", new energy]", []string{"project-x", "idea", "new_energy"}},
		{"tags:\n- a\n- b/c\n", []string{"a", "b/c"}},
		{"tags: a, b c,#d", []string{"a", "b", "c", "d"}},
		{"tag: single", []string{"single"}},
		{"tags: [x]\ntag: X", []string{"x"}},
		{"tags: []", nil},
		{"tags:", nil},
		{"tags: {a: 1}", nil},
		{"tags: [1984, \"!!\"]", []string{"1984"}},
		{"memory_tags: [a]", nil},
	}
	for _, tt := range tests {
		fm, err := ParseFrontmatter(tt.yaml)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tt.want, FrontmatterTags(fm), cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("%q (-want +got):\n%s", tt.yaml, diff)
		}
	}
}

func TestInlineTags(t *testing.T) {
	tests := []struct {
		body string
		want []string
	}{
		{"#Go and #go, #ml/nlp.", []string{"go", "ml/nlp"}},
		{"# Heading\n## Sub\n#tag at start", []string{"tag"}},
		{"issue #1984 but #y1984 and #2026-06", []string{"y1984", "2026-06"}},
		{"url https://x.org/a#frag and [[note#Head]] and a#b", nil},
		{"`#code` and ``x #code2 x`` then #real", []string{"real"}},
		{"```\n#fenced\n```\n\t#tabbed", []string{"tabbed"}},
		{"中文 #登录 #ÉTÉ", []string{"登录", "été"}},
		{"#", nil},
		{"##double", nil},
		{"(#paren) #-", nil},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, InlineTags(tt.body), cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("%q (-want +got):\n%s", tt.body, diff)
		}
	}
}
