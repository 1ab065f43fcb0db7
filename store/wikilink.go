package store

import (
	"fmt"
	"strings"
)

// Link is one wikilink in a note body: `[[target#anchor|alias]]`, or an
// embed `![[target]]`. Targets are literal workspace paths: no `.md` is
// appended and no basename search happens.
type Link struct {
	Target string
	Anchor string
	Alias  string
	Embed  bool
	Line   int // 1-based line in the file
	// byte offsets in the body: the whole link (with `!`) and the target text
	Start, End             int
	TargetStart, TargetEnd int
}

// ParseLinks extracts the wikilinks of a body, skipping fenced code blocks
// and inline code spans. firstLine is the file line of the body's first line.
func ParseLinks(body string, firstLine int) []Link {
	var links []Link
	scanText(body, func(seg string, off, line int) {
		links = appendLinks(links, seg, off, line+firstLine-1)
	})
	return links
}

// scanText calls fn for each piece of body that is prose (not code), with
// its byte offset and 1-based line within body. Pieces never span lines.
func scanText(body string, fn func(seg string, off, line int)) {
	var fenceChar byte
	fenceLen := 0
	off := 0
	for line := 1; ; line++ {
		end := strings.IndexByte(body[off:], '\n')
		next := len(body)
		text := body[off:]
		if end >= 0 {
			text = body[off : off+end]
			next = off + end + 1
		}
		if c, n, ok := fenceOpen(text); ok {
			switch {
			case fenceLen == 0:
				fenceChar, fenceLen = c, n
			case c == fenceChar && n >= fenceLen && fenceOnly(text):
				fenceLen = 0
			}
		} else if fenceLen == 0 {
			scanCodeSpans(text, off, line, fn)
		}
		if end < 0 {
			break
		}
		off = next
	}
}

// fenceOpen recognises a code fence line: up to three spaces, then three or
// more backticks or tildes.
func fenceOpen(line string) (byte, int, bool) {
	i := 0
	for i < len(line) && i < 3 && line[i] == ' ' {
		i++
	}
	if i >= len(line) || (line[i] != '`' && line[i] != '~') {
		return 0, 0, false
	}
	c := line[i]
	n := 0
	for i+n < len(line) && line[i+n] == c {
		n++
	}
	if n < 3 {
		return 0, 0, false
	}
	if c == '`' && strings.IndexByte(line[i+n:], '`') >= 0 {
		return 0, 0, false // a backtick info string is inline code, not a fence
	}
	return c, n, true
}

func fenceOnly(line string) bool {
	t := strings.TrimSpace(line)
	return strings.Trim(t, string(t[0])) == ""
}

// scanCodeSpans splits one line around `code spans` (a run of n backticks
// closed by a run of exactly n).
func scanCodeSpans(text string, off, line int, fn func(string, int, int)) {
	start := 0
	i := 0
	for i < len(text) {
		if text[i] != '`' {
			i++
			continue
		}
		n := 0
		for i+n < len(text) && text[i+n] == '`' {
			n++
		}
		closeAt := findRun(text, i+n, n)
		if closeAt < 0 {
			i += n
			continue
		}
		if i > start {
			fn(text[start:i], off+start, line)
		}
		i = closeAt + n
		start = i
	}
	if start < len(text) {
		fn(text[start:], off+start, line)
	}
}

func findRun(s string, from, n int) int {
	for i := from; i < len(s); {
		if s[i] != '`' {
			i++
			continue
		}
		j := i
		for j < len(s) && s[j] == '`' {
			j++
		}
		if j-i == n {
			return i
		}
		i = j
	}
	return -1
}

func appendLinks(links []Link, seg string, off, line int) []Link {
	for i := 0; ; {
		k := strings.Index(seg[i:], "[[")
		if k < 0 {
			return links
		}
		k += i
		l, ok := parseLinkAt(seg, k)
		if !ok {
			i = k + 1
			continue
		}
		l.Line = line
		l.Start += off
		l.End += off
		l.TargetStart += off
		l.TargetEnd += off
		links = append(links, l)
		i = l.End - off
	}
}

// parseLinkAt parses `[[...]]` starting at s[k]; a preceding `!` makes it
// an embed.
func parseLinkAt(s string, k int) (Link, bool) {
	l := Link{Start: k}
	if k > 0 && s[k-1] == '!' {
		l.Embed, l.Start = true, k-1
	}
	i := k + 2
	ts := i
	for i < len(s) && !strings.ContainsRune("[]|#\n", rune(s[i])) {
		i++
	}
	te := i
	if i < len(s) && s[i] == '#' {
		i++
		as := i
		for i < len(s) && !strings.ContainsRune("[]|\n", rune(s[i])) {
			i++
		}
		l.Anchor = s[as:i]
	}
	if i < len(s) && s[i] == '|' {
		i++
		as := i
		for i < len(s) && !strings.ContainsRune("[]\n", rune(s[i])) {
			i++
		}
		l.Alias = s[as:i]
	}
	if !strings.HasPrefix(s[i:], "]]") {
		return Link{}, false
	}
	raw := s[ts:te]
	trimmed := strings.TrimSpace(raw)
	if trimmed == "" {
		return Link{}, false
	}
	lead := strings.Index(raw, trimmed)
	l.Target = trimmed
	l.TargetStart, l.TargetEnd = ts+lead, ts+lead+len(trimmed)
	l.End = i + 2
	return l, true
}

// ValidateLinkTarget refuses a target that cannot be written inside `[[ ]]`.
func ValidateLinkTarget(t string) error {
	if strings.TrimSpace(t) == "" {
		return fmt.Errorf("%w: empty link target", ErrInvalidPath)
	}
	if strings.ContainsAny(t, "[]#|\n`") {
		// a backtick could open a code span that hides the rest of the line
		return fmt.Errorf("%w: %q cannot be a link target (contains [ ] # | ` or a newline)", ErrInvalidPath, t)
	}
	return nil
}

// RetargetLinks rewrites every link whose target is exactly src to dst,
// keeping `!`, `#anchor`, `|alias` and the surrounding text. Short forms
// and paths without extension are not matched.
func RetargetLinks(body, src, dst string) (string, int) {
	if src == dst {
		return body, 0
	}
	links := ParseLinks(body, 1)
	var b strings.Builder
	last, n := 0, 0
	for _, l := range links {
		if l.Target != src {
			continue
		}
		b.WriteString(body[last:l.TargetStart])
		b.WriteString(dst)
		last = l.TargetEnd
		n++
	}
	if n == 0 {
		return body, 0
	}
	b.WriteString(body[last:])
	return b.String(), n
}

// LinkTo formats a wikilink to a workspace path, as stored in provenance
// frontmatter (`[[session/dialog/x.jsonl]]`).
func LinkTo(rel string) string { return "[[" + rel + "]]" }

// LinkTarget extracts the path from a frontmatter link value such as
// "[[resource/a.md]]"; a bare path is returned as is.
func LinkTarget(v string) string {
	v = strings.TrimSpace(v)
	if strings.HasPrefix(v, "[[") && strings.HasSuffix(v, "]]") {
		v = strings.TrimSpace(v[2 : len(v)-2])
		if i := strings.IndexAny(v, "#|"); i >= 0 {
			v = v[:i]
		}
	}
	return v
}
