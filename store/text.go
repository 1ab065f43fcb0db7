package store

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/encoding/simplifiedchinese"
)

// Encoding is how a text file was stored, so that edits can keep it.
type Encoding int

const (
	UTF8 Encoding = iota
	UTF8BOM
	GBK
)

func (e Encoding) String() string {
	switch e {
	case UTF8BOM:
		return "utf-8-sig"
	case GBK:
		return "gbk"
	}
	return "utf-8"
}

var bom = []byte{0xEF, 0xBB, 0xBF}

// DecodeText decodes file bytes as ReMe does: UTF-8 (a BOM is stripped),
// else GBK, which is what Chinese Windows tools write. A file that is
// UTF-8 but for a character cut at its very end (a truncated download, a
// log cut at a byte count) is UTF-8: the cut character is left out. Bytes
// that are neither keep what UTF-8 can make of them.
func DecodeText(b []byte) (string, Encoding) {
	if bytes.HasPrefix(b, bom) {
		return string(b[len(bom):]), UTF8BOM
	}
	if utf8.Valid(b) {
		return string(b), UTF8
	}
	if n := cutRuneTail(b); n > 0 && utf8.Valid(b[:len(b)-n]) {
		return string(b[:len(b)-n]), UTF8
	}
	out, err := simplifiedchinese.GBK.NewDecoder().Bytes(b)
	// The decoder turns bytes that are not GBK into U+FFFD, which GBK
	// cannot encode: one in the output means the input was not GBK.
	if err != nil || bytes.ContainsRune(out, utf8.RuneError) {
		return string(bytes.ToValidUTF8(b, []byte("\uFFFD"))), UTF8
	}
	return string(out), GBK
}

// cutRuneTail is the length of an incomplete UTF-8 sequence at the end of
// b (the start of a character whose remaining bytes are missing), or 0.
func cutRuneTail(b []byte) int {
	for n := 1; n < utf8.UTFMax && n <= len(b); n++ {
		c := b[len(b)-n]
		if utf8.RuneStart(c) {
			if c >= 0xC0 && !utf8.FullRune(b[len(b)-n:]) {
				return n
			}
			return 0
		}
	}
	return 0
}

// EncodeText encodes s back into the file's original encoding.
func EncodeText(s string, enc Encoding) ([]byte, error) {
	switch enc {
	case UTF8BOM:
		return append(append([]byte{}, bom...), s...), nil
	case GBK:
		out, err := simplifiedchinese.GBK.NewEncoder().Bytes([]byte(s))
		if err != nil {
			return nil, fmt.Errorf("encode as gbk: %w", err)
		}
		return out, nil
	}
	return []byte(s), nil
}

// IsCJK reports Han, kana and Hangul letters: scripts written without
// spaces between words.
func IsCJK(r rune) bool {
	if r < 0x1100 {
		return false
	}
	return unicode.Is(unicode.Han, r) || unicode.Is(unicode.Hiragana, r) ||
		unicode.Is(unicode.Katakana, r) || unicode.Is(unicode.Hangul, r)
}

// WordSet makes a set of the space-separated words of s.
func WordSet(s string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(s) {
		m[w] = true
	}
	return m
}

// TruncateRunes keeps the first n characters of s; when something was cut,
// mark (such as "…") is appended.
func TruncateRunes(s string, n int, mark string) string {
	if n < 0 {
		n = 0
	}
	i := 0
	for k := range s {
		if i == n {
			return s[:k] + mark
		}
		i++
	}
	return s
}

// TruncateBytes keeps the longest prefix of s of at most n bytes that does
// not split a character.
func TruncateBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	if n <= 0 {
		return ""
	}
	end := n
	for end > 0 && !utf8.RuneStart(s[end]) {
		end--
	}
	return s[:end]
}

// LazyRegexp compiles pattern on first use, so that a command that never
// needs it does not pay for it at start.
func LazyRegexp(pattern string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(pattern) })
}
