package store

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestNormalizeTag(t *testing.T) {
	tests := []struct {
		in         string
		label, key string
		ok         bool
	}{
		{"go", "go", "go", true},
		{"  SQLite  ", "SQLite", "sqlite", true},
		{"new energy", "new_energy", "new_energy", true},
		{"new \t\n energy  solar", "new_energy_solar", "new_energy_solar", true},
		{"C++", "C++", "c++", true},
		{"user:alice", "user:alice", "user:alice", true},
		{"登录", "登录", "登录", true},
		{"v2", "v2", "v2", true},
		{"2026", "2026", "2026", true},
		{"Straße", "Straße", "strasse", true},
		{"a\u00a0b", "a_b", "a_b", true},
		{"_x_", "_x_", "_x_", true},
		{strings.Repeat("a", 64), strings.Repeat("a", 64), strings.Repeat("a", 64), true},
		{strings.Repeat("登", 64), strings.Repeat("登", 64), strings.Repeat("登", 64), true},
		{strings.Repeat("a", 65), "", "", false},
		{strings.Repeat("登", 65), "", "", false},
		{"", "", "", false},
		{"   ", "", "", false},
		{"---", "", "", false},
		{"#", "", "", false},
		{"_ _", "", "", false},
		{"!?", "", "", false},
	}
	for _, tt := range tests {
		got, ok := NormalizeTag(tt.in)
		if ok != tt.ok || got.Label != tt.label || got.Key != tt.key {
			t.Errorf("NormalizeTag(%q) = %+v, %v; want {%q %q}, %v", tt.in, got, ok, tt.key, tt.label, tt.ok)
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
		{"dedup keeps first spelling", []string{"SQLite", "sqlite", "SQLITE", "go"}, 3, []string{"SQLite", "go"}},
		{"dedup after whitespace join", []string{"new energy", "New_Energy", "new  energy"}, 3, []string{"new energy"}},
		{"invalid dropped before counting", []string{"", "!!", "a", "  ", "b", "c", "d"}, 3, []string{"a", "b", "c"}},
		{"max 3", []string{"a", "b", "c", "d", "e"}, MaxTagsPerNote, []string{"a", "b", "c"}},
		{"max 0 keeps all", []string{"a", "b", "c", "d", "A"}, 0, []string{"a", "b", "c", "d"}},
		{"casefold", []string{"Straße", "STRASSE"}, 3, []string{"Straße"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := TagLabels(NormalizeTags(tt.in, tt.max))
			var want []string
			for _, s := range tt.want {
				tag, _ := NormalizeTag(s)
				want = append(want, tag.Label)
			}
			if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Fatalf("(-want +got):\n%s", diff)
			}
		})
	}
	if got := TagLabels(nil); len(got) != 0 {
		t.Fatalf("TagLabels(nil) = %v", got)
	}
}
