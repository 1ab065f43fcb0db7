package index

import (
	"fmt"
	"strings"
)

// Chunking follows ReMe's markdown chunker: one whole section per chunk when
// it fits, small sibling sections packed together, big sections split into
// subsections, then blocks, then lines. A chunk that starts inside a section
// carries the headings above it (its breadcrumb). Line numbers are 1-based
// and absolute in the file.

const (
	maxChunkBytes   = 10000
	maxASTSections  = 100
	overlapBytes    = 100
	partPrefixFirst = "[Part "
)

// Chunk is a searchable piece of a note.
type Chunk struct {
	StartLine int
	EndLine   int
	Text      string // breadcrumb + the lines, as shown in results
}

type mdLine struct {
	text    string
	heading int // 0 = not a heading, -1 = setext underline, else level 1-6
	fence   fenceKind
}

type fenceKind uint8

const (
	noFence fenceKind = iota
	fenceOpen
	fenceInside
	fenceClose
)

type section struct {
	level    int
	heading  string // the heading line(s) as written
	start    int    // index of the first line (the heading) in lines
	end      int    // exclusive
	children []*section
}

// ChunkMarkdown splits a body whose first line is file line firstLine.
func ChunkMarkdown(body string, firstLine int, maxBytes int) []Chunk {
	if maxBytes <= 0 {
		maxBytes = maxChunkBytes
	}
	raw := strings.Split(strings.TrimRight(body, "\n"), "\n")
	lines := classify(raw)
	c := &chunker{lines: lines, first: firstLine, max: maxBytes}
	headings := 0
	for _, l := range lines {
		if l.heading > 0 {
			headings++
		}
	}
	if headings > maxASTSections {
		c.windows(0, len(lines))
		return c.out
	}
	root := buildTree(lines)
	c.section(root, nil)
	return c.out
}

// classify marks headings (ATX and setext) outside fenced code.
func classify(raw []string) []mdLine {
	lines := make([]mdLine, len(raw))
	var fenceChar byte
	fenceLen := 0
	for i, t := range raw {
		t = strings.TrimSuffix(t, "\r")
		lines[i].text = t
		if ch, n, ok := fenceMarker(t); ok {
			switch {
			case fenceLen == 0:
				fenceChar, fenceLen = ch, n
				lines[i].fence = fenceOpen
				continue
			case ch == fenceChar && n >= fenceLen && strings.Trim(strings.TrimSpace(t), string(ch)) == "":
				fenceLen = 0
				lines[i].fence = fenceClose
				continue
			}
		}
		if fenceLen > 0 {
			lines[i].fence = fenceInside
			continue
		}
		if lvl := atxLevel(t); lvl > 0 {
			lines[i].heading = lvl
			continue
		}
		if i > 0 && lines[i-1].heading == 0 && lines[i-1].fence == noFence && strings.TrimSpace(lines[i-1].text) != "" && !isListItem(lines[i-1].text) {
			if lvl := setextLevel(t); lvl > 0 {
				// The heading is the text line above; the underline belongs to it.
				lines[i-1].heading = lvl
				lines[i].heading = -1
			}
		}
	}
	return lines
}

func fenceMarker(t string) (byte, int, bool) {
	s := strings.TrimLeft(t, " ")
	if len(t)-len(s) > 3 || len(s) < 3 || (s[0] != '`' && s[0] != '~') {
		return 0, 0, false
	}
	n := 0
	for n < len(s) && s[n] == s[0] {
		n++
	}
	if n < 3 || (s[0] == '`' && strings.ContainsRune(s[n:], '`')) {
		return 0, 0, false
	}
	return s[0], n, true
}

func atxLevel(t string) int {
	s := strings.TrimLeft(t, " ")
	if len(t)-len(s) > 3 {
		return 0
	}
	n := 0
	for n < len(s) && s[n] == '#' {
		n++
	}
	if n == 0 || n > 6 || (n < len(s) && s[n] != ' ' && s[n] != '\t') {
		return 0
	}
	return n
}

func setextLevel(t string) int {
	s := strings.TrimSpace(t)
	if s == "" || len(t)-len(strings.TrimLeft(t, " ")) > 3 {
		return 0
	}
	if strings.Trim(s, "=") == "" {
		return 1
	}
	if strings.Trim(s, "-") == "" && len(s) >= 2 {
		return 2
	}
	return 0
}

func isListItem(t string) bool {
	s := strings.TrimLeft(t, " ")
	if len(s) >= 2 && strings.ContainsRune("-*+", rune(s[0])) && s[1] == ' ' {
		return true
	}
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return i > 0 && i+1 < len(s) && (s[i] == '.' || s[i] == ')') && s[i+1] == ' '
}

// buildTree nests sections by heading level under a level-0 root.
func buildTree(lines []mdLine) *section {
	root := &section{level: 0, start: 0, end: len(lines)}
	stack := []*section{root}
	for i, l := range lines {
		if l.heading <= 0 {
			continue
		}
		for len(stack) > 1 && stack[len(stack)-1].level >= l.heading {
			stack[len(stack)-1].end = i
			stack = stack[:len(stack)-1]
		}
		h := strings.TrimSpace(l.text)
		if i+1 < len(lines) && lines[i+1].heading == -1 {
			h = strings.TrimSpace(l.text) + "\n" + strings.TrimSpace(lines[i+1].text)
		}
		s := &section{level: l.heading, heading: h, start: i, end: len(lines)}
		parent := stack[len(stack)-1]
		parent.children = append(parent.children, s)
		stack = append(stack, s)
	}
	return root
}

type chunker struct {
	lines []mdLine
	first int
	max   int
	out   []Chunk
}

func (c *chunker) size(from, to int) int {
	n := 0
	for i := from; i < to; i++ {
		n += len(c.lines[i].text) + 1
	}
	return n
}

func (c *chunker) blank(i int) bool { return strings.TrimSpace(c.lines[i].text) == "" }

// emit adds lines [from, to) as one chunk, blank lines at both ends trimmed
// so that the line range points at content.
func (c *chunker) emit(from, to int, crumbs []string, prefix string) {
	for from < to && c.blank(from) {
		from++
	}
	for to > from && c.blank(to-1) {
		to--
	}
	if from >= to {
		return
	}
	var b strings.Builder
	for _, h := range crumbs {
		b.WriteString(h)
		b.WriteString("\n\n")
	}
	b.WriteString(prefix)
	b.WriteString(c.join(from, to))
	c.out = append(c.out, Chunk{StartLine: c.first + from, EndLine: c.first + to - 1, Text: b.String()})
}

func (c *chunker) join(from, to int) string {
	var b strings.Builder
	for i := from; i < to; i++ {
		b.WriteString(c.lines[i].text)
		if i < to-1 {
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// section emits s whole if it fits, else packs its intro and children.
func (c *chunker) section(s *section, crumbs []string) {
	if c.size(s.start, s.end) <= c.max {
		c.emit(s.start, s.end, crumbs, "")
		return
	}
	inner := crumbs
	if s.heading != "" {
		inner = append(append([]string{}, crumbs...), s.heading)
	}
	introEnd := s.end
	if len(s.children) > 0 {
		introEnd = s.children[0].start
	}
	type unit struct {
		from, to int
		sec      *section
	}
	units := []unit{{from: s.start, to: introEnd}}
	for _, ch := range s.children {
		units = append(units, unit{from: ch.start, to: ch.end, sec: ch})
	}
	packFrom, packTo := -1, -1
	flush := func() {
		if packFrom < 0 {
			return
		}
		cr := inner
		if packFrom == s.start {
			cr = crumbs // the pack starts with this section's own heading
		}
		c.emit(packFrom, packTo, cr, "")
		packFrom, packTo = -1, -1
	}
	for _, u := range units {
		if u.from >= u.to {
			continue
		}
		sz := c.size(u.from, u.to)
		if sz > c.max {
			flush()
			if u.sec != nil {
				c.section(u.sec, inner)
			} else {
				c.blocks(u.from, u.to, inner, u.from == s.start && s.heading != "")
			}
			continue
		}
		if packFrom >= 0 && c.size(packFrom, u.to) > c.max {
			flush()
		}
		if packFrom < 0 {
			packFrom = u.from
		}
		packTo = u.to
	}
	flush()
}

// blocks splits a run of lines without sub-sections: paragraphs, fenced
// code and tables are kept whole when they fit, packed greedily.
func (c *chunker) blocks(from, to int, crumbs []string, startsWithOwnHeading bool) {
	type block struct{ from, to int }
	var bs []block
	for i := from; i < to; {
		j := i + 1
		switch {
		case c.lines[i].fence == fenceOpen:
			for j < to && c.lines[j].fence != fenceClose && c.lines[j].fence != fenceOpen {
				j++
			}
			if j < to && c.lines[j].fence == fenceClose {
				j++
			}
		case isTableLine(c.lines[i].text):
			for j < to && isTableLine(c.lines[j].text) {
				j++
			}
		case strings.TrimSpace(c.lines[i].text) == "":
			for j < to && strings.TrimSpace(c.lines[j].text) == "" {
				j++
			}
		default:
			for j < to && strings.TrimSpace(c.lines[j].text) != "" && !isTableLine(c.lines[j].text) && c.lines[j].fence != fenceOpen {
				j++
			}
		}
		bs = append(bs, block{i, j})
		i = j
	}
	packFrom, packTo := -1, -1
	flush := func() {
		if packFrom >= 0 {
			cr := crumbs
			if startsWithOwnHeading && packFrom == from && len(crumbs) > 0 {
				cr = crumbs[:len(crumbs)-1]
			}
			c.emit(packFrom, packTo, cr, "")
		}
		packFrom, packTo = -1, -1
	}
	for _, b := range bs {
		if c.size(b.from, b.to) > c.max {
			flush()
			if !c.blank(b.from) { // a run of blank lines has nothing to show
				c.splitBlock(b.from, b.to, crumbs)
			}
			continue
		}
		if packFrom >= 0 && c.size(packFrom, b.to) > c.max {
			flush()
		}
		if packFrom < 0 {
			packFrom = b.from
		}
		packTo = b.to
	}
	flush()
}

func isTableLine(t string) bool {
	s := strings.TrimSpace(t)
	return len(s) > 1 && s[0] == '|'
}

// splitBlock cuts one oversized block into parts: tables repeat their header
// rows, code repeats its fences, anything else is split on lines (and a
// single huge line on bytes). Parts are numbered `[Part X/N]`.
func (c *chunker) splitBlock(from, to int, crumbs []string) {
	var head, tail []string
	body0, body1 := from, to
	switch {
	case isTableLine(c.lines[from].text) && to-from > 2:
		head = []string{c.lines[from].text, c.lines[from+1].text}
		body0 = from + 2
	case c.lines[from].fence == fenceOpen:
		head = []string{c.lines[from].text}
		body0 = from + 1
		if to-1 > from && c.lines[to-1].fence == fenceClose {
			tail = []string{c.lines[to-1].text}
			body1 = to - 1
		}
	}
	extra := 0
	for _, h := range append(append([]string{}, head...), tail...) {
		extra += len(h) + 1
	}
	budget := c.max - extra - 32
	if budget < 256 {
		budget = 256
	}
	type part struct {
		from, to int
		text     string
	}
	var parts []part
	var cur []string
	curFrom, curSize := body0, 0
	flush := func(end int) {
		if len(cur) == 0 {
			return
		}
		all := append(append(append([]string{}, head...), cur...), tail...)
		parts = append(parts, part{from: curFrom, to: end, text: strings.Join(all, "\n")})
		cur, curSize = nil, 0
	}
	for i := body0; i < body1; i++ {
		t := c.lines[i].text
		if len(t)+1 > budget {
			flush(i)
			for _, piece := range splitBytes(t, budget) {
				parts = append(parts, part{from: i, to: i + 1, text: strings.Join(append(append(append([]string{}, head...), piece), tail...), "\n")})
			}
			curFrom = i + 1
			continue
		}
		if curSize+len(t)+1 > budget {
			flush(i)
			curFrom = i
		}
		if len(cur) == 0 {
			curFrom = i
		}
		cur = append(cur, t)
		curSize += len(t) + 1
	}
	flush(body1)
	if len(parts) == 0 {
		// Only the fence lines, and they alone are over the limit: still
		// one chunk, or their text would not be searchable.
		parts = append(parts, part{from: from, to: to, text: strings.Join(append(head, tail...), "\n")})
	}
	for k, p := range parts {
		var b strings.Builder
		for _, h := range crumbs {
			b.WriteString(h + "\n\n")
		}
		if len(parts) > 1 {
			fmt.Fprintf(&b, "%s%d/%d]\n\n", partPrefixFirst, k+1, len(parts))
		}
		b.WriteString(p.text)
		start, end := p.from, p.to-1
		if k == 0 {
			start = from
		}
		if k == len(parts)-1 {
			end = to - 1
		}
		c.out = append(c.out, Chunk{StartLine: c.first + start, EndLine: c.first + end, Text: strings.TrimRight(b.String(), "\n ")})
	}
}

// splitBytes cuts s into pieces of at most n bytes on rune boundaries.
func splitBytes(s string, n int) []string {
	var out []string
	for len(s) > n {
		cut := n
		for cut > 0 && !isRuneStart(s[cut]) {
			cut--
		}
		if cut == 0 {
			cut = n
		}
		out = append(out, s[:cut])
		s = s[cut:]
	}
	return append(out, s)
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }

// windows is the fallback for notes with too many headings: line-aligned
// windows of at most max bytes that overlap by about overlapBytes.
func (c *chunker) windows(from, to int) {
	i := from
	for i < to {
		j, size := i, 0
		for j < to && (j == i || size+len(c.lines[j].text)+1 <= c.max) {
			size += len(c.lines[j].text) + 1
			j++
		}
		if size > c.max {
			// one huge line: split it on bytes
			for _, piece := range splitBytes(c.lines[i].text, c.max) {
				c.out = append(c.out, Chunk{StartLine: c.first + i, EndLine: c.first + i, Text: piece})
			}
		} else {
			c.emit(i, j, nil, "")
		}
		if j >= to {
			return
		}
		// step back over up to overlapBytes of trailing lines
		k, back := j, 0
		for k-1 > i && back+len(c.lines[k-1].text)+1 <= overlapBytes {
			back += len(c.lines[k-1].text) + 1
			k--
		}
		i = k
	}
}
