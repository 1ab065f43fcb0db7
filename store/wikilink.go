package store

import (
	"fmt"
	"net/url"
	"reflect"
	"strings"
	"unicode/utf8"

	"gopkg.in/yaml.v3"
)

// Link is one link in a note: a wikilink `[[target#anchor|alias]]` or
// embed `![[target]]`, or a markdown link `[text](target#anchor)` or image
// `![alt](target)` to a file of the workspace. ResolveLink says which file
// it leads to.
type Link struct {
	Target   string // as written; for a markdown link, percent-decoded
	Anchor   string
	Alias    string // a markdown link's text
	Embed    bool
	Markdown bool
	Angle    bool // a markdown destination written in <angle brackets>
	Line     int  // 1-based line in the file
	// byte offsets in the text: the whole link (with `!`), and the target
	// as written (for a markdown link, the path before any #anchor, still
	// percent-encoded)
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

// ParseNoteLinks extracts every link of a body that Obsidian follows: the
// wikilinks and the markdown links to workspace files (not URLs, not
// same-note #anchors), in order. Code is skipped.
func ParseNoteLinks(body string, firstLine int) []Link {
	var links []Link
	scanText(body, func(seg string, off, line int) {
		if strings.IndexByte(seg, '[') < 0 {
			return
		}
		wiki := appendLinks(nil, seg, off, line+firstLine-1)
		md := appendMarkdownLinks(nil, seg, off, line+firstLine-1)
		// merge by position; a markdown match overlapping a wikilink
		// (`[[a]](b)`) is Obsidian's wikilink followed by text
		i := 0
		for _, m := range md {
			for i < len(wiki) && wiki[i].End <= m.Start {
				links = append(links, wiki[i])
				i++
			}
			if i < len(wiki) && wiki[i].Start < m.End {
				continue
			}
			links = append(links, m)
		}
		links = append(links, wiki[i:]...)
	})
	return links
}

// appendMarkdownLinks finds inline markdown links in one line of prose.
func appendMarkdownLinks(links []Link, seg string, off, line int) []Link {
	if !strings.Contains(seg, "](") {
		return links
	}
	for i := 0; i < len(seg); i++ {
		if seg[i] != '[' || escaped(seg, i) {
			continue
		}
		l, end, ok := parseMarkdownLinkAt(seg, i)
		if !ok {
			continue
		}
		links = append(links, l.at(off, line))
		i = end - 1
	}
	return links
}

func escaped(s string, i int) bool {
	n := 0
	for j := i - 1; j >= 0 && s[j] == '\\'; j-- {
		n++
	}
	return n%2 == 1
}

// parseMarkdownLinkAt parses `[text](destination "title")` at s[k] (a
// CommonMark inline link on one line). It returns the link and the offset
// after it; only links to workspace files count.
func parseMarkdownLinkAt(s string, k int) (Link, int, bool) {
	// the text: brackets balance, backslash escapes
	depth, i := 0, k
	for ; i < len(s); i++ {
		switch {
		case s[i] == '\\':
			i++
		case s[i] == '[':
			depth++
		case s[i] == ']':
			depth--
		}
		if depth == 0 {
			break
		}
	}
	if i >= len(s) || i+1 >= len(s) || s[i+1] != '(' {
		return Link{}, 0, false
	}
	l := Link{Start: k, Markdown: true, Alias: s[k+1 : i]}
	if k > 0 && s[k-1] == '!' {
		l.Embed, l.Start = true, k-1
	}
	j := skipBlanks(s, i+2)
	var dest string
	var ds, de int
	if j < len(s) && s[j] == '<' {
		e := j + 1
		for e < len(s) && s[e] != '>' && s[e] != '<' {
			if s[e] == '\\' {
				e++
			}
			e++
		}
		if e >= len(s) || s[e] != '>' {
			return Link{}, 0, false
		}
		l.Angle, ds, de = true, j+1, e
		j = e + 1
	} else {
		parens, e := 0, j
		for ; e < len(s); e++ {
			c := s[e]
			if c == '\\' && e+1 < len(s) {
				e++
				continue
			}
			if c == ' ' || c == '\t' || c < 0x20 {
				break
			}
			if c == '(' {
				parens++
			}
			if c == ')' {
				if parens == 0 {
					break
				}
				parens--
			}
		}
		ds, de, j = j, e, e
	}
	dest = s[ds:de]
	j = skipBlanks(s, j)
	if j < len(s) && (s[j] == '"' || s[j] == '\'' || s[j] == '(') && j > de {
		closer := s[j]
		if closer == '(' {
			closer = ')'
		}
		e := j + 1
		for e < len(s) && s[e] != closer {
			if s[e] == '\\' {
				e++
			}
			e++
		}
		if e >= len(s) {
			return Link{}, 0, false
		}
		j = skipBlanks(s, e+1)
	}
	if j >= len(s) || s[j] != ')' {
		return Link{}, 0, false
	}
	l.End = j + 1
	// the path: up to the #anchor (or a ?query), percent-decoded
	pathEnd := len(dest)
	if h := strings.IndexAny(dest, "#?"); h >= 0 {
		pathEnd = h
		if dest[h] == '#' {
			l.Anchor = decodeDest(dest[h+1:])
		}
	}
	raw := dest[:pathEnd]
	l.Target = strings.TrimSpace(decodeDest(raw))
	l.TargetStart, l.TargetEnd = ds, ds+pathEnd
	if l.Target == "" || !utf8.ValidString(l.Target) || !isFileDest(l.Target) {
		return Link{}, 0, false
	}
	return l, l.End, true
}

func skipBlanks(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	return i
}

// decodeDest undoes backslash escapes and percent-encoding; text that is
// not valid percent-encoding stays as written, as browsers leave it.
func decodeDest(s string) string {
	if strings.IndexByte(s, '\\') >= 0 {
		var b strings.Builder
		for i := 0; i < len(s); i++ {
			if s[i] == '\\' && i+1 < len(s) && isASCIIPunct(s[i+1]) {
				i++
			}
			b.WriteByte(s[i])
		}
		s = b.String()
	}
	if d, err := url.PathUnescape(s); err == nil && utf8.ValidString(d) {
		return d
	}
	return s
}

func isASCIIPunct(c byte) bool {
	return c >= '!' && c <= '/' || c >= ':' && c <= '@' || c >= '[' && c <= '`' || c >= '{' && c <= '~'
}

// isFileDest refuses URLs (a scheme such as https: or mailto:, or //host)
// and same-note anchors.
func isFileDest(d string) bool {
	if strings.HasPrefix(d, "//") || strings.HasPrefix(d, "#") {
		return false
	}
	for i := 0; i < len(d); i++ {
		c := d[i]
		switch {
		case c == ':':
			return i == 0
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
		case i > 0 && (c >= '0' && c <= '9' || c == '+' || c == '.' || c == '-'):
		default:
			return true
		}
	}
	return true
}

// EncodeMarkdownDest writes a workspace path as a markdown link destination
// in the style of like, the destination it replaces: in <angle brackets>
// when like was, otherwise percent-encoded where a bare destination needs
// it (spaces, parentheses, %, #, ?), and non-ASCII encoded only when like
// encoded it.
func EncodeMarkdownDest(p string, angle bool, like string) string {
	if angle {
		return strings.NewReplacer("<", "%3C", ">", "%3E").Replace(p)
	}
	encodeNonASCII := false
	for i := 0; i+2 < len(like); i++ {
		if like[i] == '%' && (like[i+1] >= '8' && like[i+1] <= '9' || like[i+1] >= 'A' && like[i+1] <= 'F' || like[i+1] >= 'a' && like[i+1] <= 'f') {
			encodeNonASCII = true
			break
		}
	}
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		c := p[i]
		if c <= ' ' || c == 0x7f || strings.IndexByte(`()<>%#?"\`+"`", c) >= 0 || (c >= 0x80 && encodeNonASCII) {
			fmt.Fprintf(&b, "%%%02X", c)
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
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
		links = append(links, l.at(off, line))
		i = l.End
	}
}

// at places a link parsed in a piece of text: offsets shifted by off, on
// line.
func (l Link) at(off, line int) Link {
	l.Line = line
	l.Start += off
	l.End += off
	l.TargetStart += off
	l.TargetEnd += off
	return l
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
	if strings.TrimSpace(t) != t {
		// a link's target is read trimmed: [[a ]] names "a"
		return fmt.Errorf("%w: %q cannot be a link target (it begins or ends with a space)", ErrInvalidPath, t)
	}
	if strings.ContainsAny(t, "[]#|\n`") {
		// a backtick could open a code span that hides the rest of the line
		return fmt.Errorf("%w: %q cannot be a link target (contains [ ] # | ` or a newline)", ErrInvalidPath, t)
	}
	return nil
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

// FrontmatterLink is a wikilink inside a frontmatter value
// (`related: "[[daily/2026-06-19/x.md]]"`): Obsidian follows links in
// properties, and ReMe's provenance keys hold them.
type FrontmatterLink struct {
	Key string // the top-level key holding it
	Link
}

// FrontmatterLinks lists the wikilinks in the note's frontmatter string
// values, in key order. Line is the file line of the value.
func (n *Note) FrontmatterLinks() []FrontmatterLink {
	var out []FrontmatterLink
	m := n.FM.mapping()
	for i := 0; i+1 < len(m.Content); i += 2 {
		key := m.Content[i].Value
		eachString(m.Content[i+1], 0, func(v *yaml.Node) {
			line := 0
			if n.HasFM && v.Line > 0 {
				line = v.Line + 1 // after the opening fence
			}
			for _, l := range ParseLinks(v.Value, 1) {
				l.Line = line
				out = append(out, FrontmatterLink{Key: key, Link: l})
			}
		})
	}
	return out
}

// eachString calls fn for every string scalar under v (not through
// aliases, which repeat a value found elsewhere).
func eachString(v *yaml.Node, depth int, fn func(*yaml.Node)) {
	if v == nil || depth > 64 {
		return
	}
	switch v.Kind {
	case yaml.ScalarNode:
		if v.ShortTag() == "!!str" && strings.Contains(v.Value, "[[") {
			fn(v)
		}
	case yaml.SequenceNode, yaml.MappingNode:
		for _, c := range v.Content {
			eachString(c, depth+1, fn)
		}
	}
}

// RetargetFrontmatterLinks rewrites wikilinks in frontmatter values with
// repl (as ReplaceLinks does). The header text is edited in place when that
// gives exactly the intended values, so quoting and layout stay as they
// were; otherwise the changed keys are rewritten. It returns the count.
func (n *Note) RetargetFrontmatterLinks(repl func(Link, string) (string, bool)) (int, error) {
	if !n.HasFM || n.FMErr != nil {
		return 0, nil
	}
	// the intended values: each string rewritten
	want := n.FM.Clone()
	count := 0
	changedKeys := map[string]*yaml.Node{}
	wm := want.mapping()
	for i := 0; i+1 < len(wm.Content); i += 2 {
		key := wm.Content[i].Value
		eachString(wm.Content[i+1], 0, func(v *yaml.Node) {
			out, k := ReplaceLinks(v.Value, ParseLinks(v.Value, 1), repl)
			if k > 0 {
				v.Value = out
				count += k
				changedKeys[key] = wm.Content[i+1]
			}
		})
	}
	if count == 0 {
		return 0, nil
	}
	if !n.FM.Dirty() && n.fmText != "" {
		text, k := ReplaceLinks(n.fmText, ParseLinks(n.fmText, 1), repl)
		if k > 0 {
			if fm, err := ParseFrontmatter(text); err == nil && reflect.DeepEqual(fm.Map(), want.Map()) {
				n.FM, n.fmText = fm, text
				return count, nil
			}
		}
	}
	for _, key := range n.FM.Keys() {
		if v, ok := changedKeys[key]; ok {
			n.FM.setNode(key, v)
		}
	}
	return count, nil
}
