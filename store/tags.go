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

// ObsidianTagKeys are the frontmatter keys Obsidian reads tags from.
var ObsidianTagKeys = []string{"tags", "tag"}

// folder is built on first use: building its tables at start-up would
// slow every command, most of which never fold a tag.
var folder = sync.OnceValue(func() cases.Caser { return cases.Fold() })

// NormalizeTag returns a tag in ReMe's canonical form: trimmed, inner
// whitespace runs joined with "_", and case-folded (Python's
// str.casefold: "Straße" becomes "strasse"), which is how ReMe's tag
// index stores, lists and matches tags. Tags without a letter or digit or
// longer than MaxTagLength characters are refused.
func NormalizeTag(s string) (string, bool) {
	label := strings.Join(strings.Fields(s), "_")
	if label == "" || utf8.RuneCountInString(label) > MaxTagLength {
		return "", false
	}
	if strings.IndexFunc(label, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }) < 0 {
		return "", false
	}
	return foldCherokee(folder().String(label)), true
}

// foldCherokee finishes x/text's case folding the way Unicode's
// CaseFolding.txt (and Python's str.casefold) does for Cherokee: small
// letters fold to capitals, and capitals stay.
func foldCherokee(s string) string {
	if !strings.ContainsFunc(s, func(r rune) bool { return r >= 0x13A0 && r <= 0x13FD || r >= 0xAB70 && r <= 0xABBF }) {
		return s
	}
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 0xAB70 && r <= 0xABBF:
			return r - 0xAB70 + 0x13A0
		case r >= 0x13F8 && r <= 0x13FD:
			return r - 8
		}
		return r
	}, s)
}

// NormalizeTags normalises a list, drops invalid tags and duplicates
// (keeping the position of the first) and keeps at most max (0 = all).
func NormalizeTags(in []string, max int) []string {
	var out []string
	seen := map[string]bool{}
	for _, s := range in {
		t, ok := NormalizeTag(s)
		if !ok || seen[t] {
			continue
		}
		seen[t] = true
		out = append(out, t)
		if max > 0 && len(out) == max {
			break
		}
	}
	return out
}

// FrontmatterTags returns the tags of Obsidian's `tags:` (or `tag:`) key,
// normalised: a list, or a string of tags separated by commas or spaces;
// a leading "#" is dropped. Obsidian's own tags are never truncated.
func FrontmatterTags(fm *Frontmatter) []string {
	var raw []string
	for _, key := range ObsidianTagKeys {
		vals := fm.Strings(key)
		if !fm.IsList(key) {
			var split []string
			for _, v := range vals {
				split = append(split, strings.FieldsFunc(v, func(r rune) bool { return r == ',' || unicode.IsSpace(r) })...)
			}
			vals = split
		}
		for _, v := range vals {
			raw = append(raw, strings.TrimPrefix(strings.TrimSpace(v), "#"))
		}
	}
	return NormalizeTags(raw, 0)
}

// InlineTags returns the #tags of a body as Obsidian finds them, in order
// of first appearance, normalised: a "#" at the start of a line or after
// whitespace, then letters, digits, "_", "-" or "/" (nested tags), with at
// least one character that is not a digit ("#1984" is not a tag). Code
// blocks and code spans are skipped; "# Heading" is a heading.
func InlineTags(body string) []string {
	if strings.IndexByte(body, '#') < 0 {
		return nil
	}
	var raw []string
	scanText(body, func(seg string, off, _ int) {
		for i := strings.IndexByte(seg, '#'); i >= 0 && i < len(seg); i++ {
			if seg[i] != '#' {
				continue
			}
			if at := off + i; at > 0 {
				prev, _ := utf8.DecodeLastRuneInString(body[:at])
				if !unicode.IsSpace(prev) {
					continue
				}
			}
			j := i + 1
			nonDigit := false
			for j < len(seg) {
				r, size := utf8.DecodeRuneInString(seg[j:])
				if !isTagRune(r) {
					break
				}
				if !unicode.IsDigit(r) {
					nonDigit = true
				}
				j += size
			}
			if j > i+1 && nonDigit {
				raw = append(raw, seg[i+1:j])
			}
			i = j - 1
		}
	})
	return NormalizeTags(raw, 0)
}

func isTagRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r) || r == '_' || r == '-' || r == '/'
}
