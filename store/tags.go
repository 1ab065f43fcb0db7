package store

import (
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/cases"
)

// Tagging follows ReMe's tag index: memory_tags holds at most three
// normalised tags per note.
const (
	TagKey         = "memory_tags"
	MaxTagsPerNote = 3
	MaxTagLength   = 64
)

// Tag is a normalised tag: Key is case-folded for matching, Label keeps the
// first spelling seen.
type Tag struct {
	Key   string
	Label string
}

// folder is built on first use: building its tables at start-up would
// slow every command, most of which never fold a tag.
var folder = sync.OnceValue(func() cases.Caser { return cases.Fold() })

// NormalizeTag trims, joins inner whitespace with "_", and refuses tags
// without a letter or digit or longer than MaxTagLength characters.
func NormalizeTag(s string) (Tag, bool) {
	label := strings.Join(strings.Fields(s), "_")
	if label == "" || utf8.RuneCountInString(label) > MaxTagLength {
		return Tag{}, false
	}
	if strings.IndexFunc(label, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }) < 0 {
		return Tag{}, false
	}
	return Tag{Key: folder().String(label), Label: label}, true
}

// NormalizeTags normalises a list, drops invalid and case-insensitive
// duplicates (keeping the first spelling) and keeps at most max (0 = all).
func NormalizeTags(in []string, max int) []Tag {
	var out []Tag
	seen := map[string]bool{}
	for _, s := range in {
		t, ok := NormalizeTag(s)
		if !ok || seen[t.Key] {
			continue
		}
		seen[t.Key] = true
		out = append(out, t)
		if max > 0 && len(out) == max {
			break
		}
	}
	return out
}

// TagLabels returns the labels of tags.
func TagLabels(tags []Tag) []string {
	out := make([]string, len(tags))
	for i, t := range tags {
		out[i] = t.Label
	}
	return out
}
