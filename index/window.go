package index

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// A result is the best window of lines around the hits in a chunk, not the
// whole chunk: a few lines of context on each side, never across a
// heading, at most MaxLines long. Each window is scored as a small
// document of its own (its lines, the headings above it and the note's name
// and description) with the collection's statistics.

// Window defaults.
const (
	DefaultContext  = 1
	DefaultMaxLines = 10
)

// Match rungs, from the strictest: the exact phrase of the question, all of
// its words, any of them, words as prefixes. dateRung is a question that
// only named a date.
const (
	rungVector = iota // found by meaning only (hybrid search)
	rungPrefix
	rungAny
	rungAll
	rungPhrase
	rungDate
)

var rungNames = map[int]string{rungVector: "vector", rungPrefix: "prefix", rungAny: "any", rungAll: "all", rungPhrase: "phrase", rungDate: "date"}

// lineToken is a token of a line; tail marks the lone last character of a
// CJK run, which phrase matching skips.
type lineToken struct {
	tok  string
	tail bool
}

// noteText is a candidate note read from disk, split into lines with the
// structure a window needs.
type noteText struct {
	path     string
	bodyLine int      // file line of lines[0]
	lines    []string // the body, one entry per line
	heading  []int8   // heading level of each line (0 none)
	nameToks []string
	descToks []string
}

// newNoteText prepares a note's body for windowing.
func newNoteText(path, body string, bodyLine int, name, desc string) *noteText {
	raw := strings.Split(strings.TrimRight(body, "\n"), "\n")
	cls := classify(raw)
	nt := &noteText{path: path, bodyLine: bodyLine, lines: raw, heading: make([]int8, len(raw))}
	for i, l := range cls {
		nt.lines[i] = l.text
		if l.heading > 0 {
			nt.heading[i] = int8(l.heading)
		}
	}
	nt.nameToks = tokenStrings(name)
	nt.descToks = tokenStrings(desc)
	return nt
}

// crumbs are the heading lines above line i, outermost first.
func (nt *noteText) crumbs(i int) []int {
	var out []int
	level := int8(7)
	if h := nt.heading[i]; h > 0 {
		level = h // a heading's ancestors are the headings above it of a higher level
	}
	for j := i - 1; j >= 0 && level > 1; j-- {
		if h := nt.heading[j]; h > 0 && h < level {
			out = append(out, j)
			level = h
		}
	}
	for a, b := 0, len(out)-1; a < b; a, b = a+1, b-1 {
		out[a], out[b] = out[b], out[a]
	}
	return out
}

// speaker returns the folded name of who says a line such as
// "Caroline: …", "**Caroline**: …", "- [10:02] Caroline Smith: …", and
// where the words said start; "" when the line is not a line of dialogue.
func speaker(line string) (string, int) {
	s := strings.TrimLeft(line, " \t")
	s = strings.TrimPrefix(s, "- ")
	s = strings.TrimPrefix(s, "* ")
	if strings.HasPrefix(s, "[") {
		if i := strings.IndexByte(s, ']'); i > 0 && i < 24 {
			s = strings.TrimLeft(s[i+1:], " ")
		}
	}
	i := strings.IndexAny(s, ":：")
	if i <= 0 || i > 40 {
		return "", 0
	}
	name := strings.Trim(s[:i], "* ")
	rest := s[i:]
	if !strings.HasPrefix(rest, ": ") && !strings.HasPrefix(rest, "：") && rest != ":" {
		return "", 0
	}
	words := strings.Fields(name)
	if len(words) == 0 || len(words) > 3 {
		return "", 0
	}
	for _, w := range words {
		r := firstRune(w)
		if !unicode.IsUpper(r) && !(r > 0x2E80 && unicode.IsLetter(r)) {
			return "", 0
		}
		for _, r := range w {
			if !unicode.IsLetter(r) && r != '-' && r != '.' && r != '\'' {
				return "", 0
			}
		}
	}
	_, size := utf8.DecodeRuneInString(rest)
	return strings.Join(tokenStrings(name), " "), len(line) - len(rest) + size
}

// scoring is what scoring a window needs from the query and the index.
type scoring struct {
	terms    []scoredTerm
	excluded []Term
	phrase   []string // the question's tokens in order
	n        int      // chunks in the index
	avgdl    float64
	context  int
	maxLines int
	full     bool
	missing  bool     // some word of the query is in no note: no window has them all
	prefix   bool     // the prefix rung: every match counts as "prefix"
	probes   []string // what mayMatch looks for
	tk       *tokenizer
}

type scoredTerm struct {
	Term
	df       int
	idf      float64
	frequent bool // in the frequent-terms table
}

// matchAt reports whether term t matches the tokens starting at i (tails
// skipped inside phrases) and returns the token index after the match.
func (t *scoredTerm) matchAt(toks []lineToken, i int) bool {
	if t.Prefix && len(t.Tokens) == 1 {
		return strings.HasPrefix(toks[i].tok, t.Tokens[0])
	}
	if toks[i].tok != t.Tokens[0] {
		return false
	}
	j := i + 1
	for _, want := range t.Tokens[1:] {
		for j < len(toks) && toks[j].tail {
			j++
		}
		if j >= len(toks) {
			return false
		}
		if t.Prefix && want == t.Tokens[len(t.Tokens)-1] {
			if !strings.HasPrefix(toks[j].tok, want) {
				return false
			}
		} else if toks[j].tok != want {
			return false
		}
		j++
	}
	return true
}

// lineMatches counts each term's occurrences in a token list.
func (sc *scoring) count(toks []lineToken, into []float64, weight float64) {
	for i := range toks {
		for k := range sc.terms {
			if sc.terms[k].matchAt(toks, i) {
				into[k] += weight
			}
		}
	}
}

func plainTokens(ts []string) []lineToken {
	out := make([]lineToken, len(ts))
	for i, t := range ts {
		out[i] = lineToken{tok: t}
	}
	return out
}

func tokenizeLine(tk *tokenizer, s string) []lineToken {
	var out []lineToken
	tk.each(s, func(tok []byte, _, tail bool) { out = append(out, lineToken{tok: string(tok), tail: tail}) })
	return out
}

// window is a candidate result inside one chunk.
type window struct {
	from, to int // body line indexes, inclusive
	score    float64
	rung     int
	chunkID  int64
}

// chunkWindows finds and scores the windows of the chunk covering body lines
// [lo, hi]. It returns nothing when the chunk holds an excluded term.
func (sc *scoring) chunkWindows(nt *noteText, lo, hi int, chunkID int64) []window {
	if lo < 0 {
		lo = 0
	}
	if hi >= len(nt.lines) {
		hi = len(nt.lines) - 1
	}
	if lo > hi {
		return nil
	}
	// Links read as the words a reader sees; the whole chunk at once so that
	// code fences are known.
	plain := nt.lines[lo : hi+1]
	if text := strings.Join(plain, "\n"); strings.Contains(text, "[[") {
		if p := strings.Split(linkWords(text), "\n"); len(p) == len(plain) {
			plain = p
		}
	}
	if sc.tk == nil {
		sc.tk = &tokenizer{}
	}
	cl := &chunkLines{sc: sc, tk: sc.tk, plain: plain, toks: make([][]lineToken, len(plain)), done: make([]bool, len(plain))}
	if len(sc.excluded) > 0 {
		ex := &scoring{terms: make([]scoredTerm, len(sc.excluded))}
		for i, t := range sc.excluded {
			ex.terms[i] = scoredTerm{Term: t}
		}
		counts := make([]float64, len(ex.terms))
		ex.count(plainTokens(nt.nameToks), counts, 1)
		ex.count(plainTokens(nt.descToks), counts, 1)
		for i := range plain {
			if ex.mayMatch(plain[i]) {
				ex.count(cl.tokens(i), counts, 1)
			}
		}
		for _, c := range counts {
			if c > 0 {
				return nil
			}
		}
	}
	// Per line: term counts, including the speaker as a name-weighted hit.
	counts := make([][]float64, len(plain))
	hit := make([]bool, len(plain))
	for i := range plain {
		if !sc.mayMatch(plain[i]) {
			continue
		}
		// In a line of dialogue the words said make a hit; the speaker
		// weighs on the line like a name (the question is about them) but
		// alone is no hit, or every line someone says would be one.
		said := cl.tokens(i)
		sp, at := speaker(plain[i])
		if sp != "" {
			said = tokenizeLine(cl.tk, plain[i][at:])
		}
		c := make([]float64, len(sc.terms))
		sc.count(said, c, weightBody)
		for _, v := range c {
			if v > 0 {
				hit[i] = true
				break
			}
		}
		if sp != "" {
			sc.count(plainTokens(strings.Fields(sp)), c, weightName)
		}
		counts[i] = c
	}
	var spans [][2]int
	if sc.full {
		spans = sc.sections(nt, lo, hi, hit)
	} else {
		spans = sc.clusters(nt, lo, hi, hit)
	}
	if len(spans) == 0 {
		// Only the name or description matched: show the top of the chunk.
		to := lo + 2*sc.context
		if sc.full || to > hi {
			to = hi
		}
		if _, b := sectionBounds(nt, lo, hi, lo); to > b && !sc.full {
			to = b
		}
		from, to := trimBlank(nt, lo, to)
		spans = [][2]int{{from, to}}
	}
	var out []window
	for _, sp := range spans {
		out = append(out, sc.scoreWindow(nt, lo, sp[0], sp[1], cl, counts, chunkID))
	}
	return out
}

// chunkLines tokenizes a chunk's lines when they are needed.
type chunkLines struct {
	sc    *scoring
	tk    *tokenizer // shared by the search: its stem cache fills once
	plain []string
	toks  [][]lineToken
	done  []bool
}

func (cl *chunkLines) tokens(i int) []lineToken {
	if !cl.done[i] {
		cl.toks[i] = tokenizeLine(cl.tk, cl.plain[i])
		cl.done[i] = true
	}
	return cl.toks[i]
}

// mayMatch is a quick test that a line could hold one of the terms: an
// ASCII line must contain the start of a term's first token (Porter changes
// only the ends of words). Other lines are always tokenized, and so are
// lines with an apostrophe, which the tokenizer drops from inside a word
// (O'Brien is the token obrien).
func (sc *scoring) mayMatch(line string) bool {
	for i := 0; i < len(line); i++ {
		if line[i] >= utf8.RuneSelf || line[i] == '\'' {
			return true
		}
	}
	if sc.probes == nil {
		for _, t := range sc.terms {
			p := t.Tokens[0]
			if !t.Prefix && len(p) > 3 {
				p = p[:len(p)-2]
			}
			sc.probes = append(sc.probes, p)
		}
	}
	for _, p := range sc.probes {
		if containsFold(line, p) {
			return true
		}
	}
	return false
}

// containsFold reports whether ASCII text contains the lower-case ASCII
// word w, in any letter case.
func containsFold(text, w string) bool {
	if w == "" {
		return true
	}
	first := w[0]
	for i := 0; i+len(w) <= len(text); i++ {
		c := text[i] | 0x20
		if c != first {
			continue
		}
		j := 1
		for ; j < len(w); j++ {
			if text[i+j]|0x20 != w[j] {
				break
			}
		}
		if j == len(w) {
			return true
		}
	}
	return false
}

// sectionBounds is the span of body lines (within [lo, hi]) between the
// headings around line i.
func sectionBounds(nt *noteText, lo, hi, i int) (int, int) {
	a := i
	for a > lo && nt.heading[a] == 0 {
		a--
	}
	b := i + 1
	for b <= hi && nt.heading[b] == 0 {
		b++
	}
	return a, b - 1
}

// anchors makes a window around each hit line: the context on each side,
// within its section. Windows that overlap a better one are dropped when
// results are chosen, so nearby hits end up in one window.
func (sc *scoring) anchors(nt *noteText, lo, hi int, hit []bool) [][2]int {
	var out [][2]int
	for i := lo; i <= hi; i++ {
		if !hit[i-lo] {
			continue
		}
		secLo, secHi := sectionBounds(nt, lo, hi, i)
		from, to := max(i-sc.context, secLo), min(i+sc.context, secHi)
		from, to = trimBlank(nt, from, to)
		out = append(out, [2]int{from, to})
	}
	return out
}

// clusters groups hit lines into windows: hits closer than twice the
// context share a window, which never crosses a heading and is at most
// maxLines long.
func (sc *scoring) clusters(nt *noteText, lo, hi int, hit []bool) [][2]int {
	var out [][2]int
	ctx, max := sc.context, sc.maxLines
	i := lo
	for i <= hi {
		if !hit[i-lo] {
			i++
			continue
		}
		secLo, secHi := sectionBounds(nt, lo, hi, i)
		first, last := i, i
		for j := i + 1; j <= secHi && j-first < max; j++ {
			if j-last > 2*ctx+1 {
				break
			}
			if hit[j-lo] {
				last = j
			}
		}
		from, to := first-ctx, last+ctx
		if from < secLo {
			from = secLo
		}
		if to > secHi {
			to = secHi
		}
		for to-from+1 > max && to > last {
			to--
		}
		for to-from+1 > max && from < first {
			from++
		}
		from, to = trimBlank(nt, from, to)
		out = append(out, [2]int{from, to})
		i = last + 1
		if i <= to {
			i = to + 1
		}
	}
	return out
}

// sections gives, for --full, each section of the chunk that has a hit.
func (sc *scoring) sections(nt *noteText, lo, hi int, hit []bool) [][2]int {
	var out [][2]int
	for i := lo; i <= hi; i++ {
		if !hit[i-lo] {
			continue
		}
		a, b := sectionBounds(nt, lo, hi, i)
		a, b = trimBlank(nt, a, b)
		out = append(out, [2]int{a, b})
		i = b
	}
	return out
}

func trimBlank(nt *noteText, from, to int) (int, int) {
	for from < to && strings.TrimSpace(nt.lines[from]) == "" {
		from++
	}
	for to > from && strings.TrimSpace(nt.lines[to]) == "" {
		to--
	}
	return from, to
}

// scoreWindow scores body lines [from, to] as a document: name (weighted),
// description (weighted), the headings above it and its lines.
func (sc *scoring) scoreWindow(nt *noteText, lo, from, to int, cl *chunkLines, counts [][]float64, chunkID int64) window {
	f := make([]float64, len(sc.terms))
	sc.count(plainTokens(nt.nameToks), f, weightName)
	sc.count(plainTokens(nt.descToks), f, weightDescription)
	length := len(nt.nameToks) + len(nt.descToks)
	for _, h := range nt.crumbs(from) {
		ht := plainTokens(tokenStrings(nt.lines[h]))
		sc.count(ht, f, weightBody)
		length += len(ht)
	}
	var stream []lineToken
	for i := from; i <= to; i++ {
		if i < lo || i-lo >= len(cl.plain) {
			continue
		}
		for k, c := range counts[i-lo] { // nil for lines that cannot match
			f[k] += c
		}
		toks := cl.tokens(i - lo)
		length += len(toks)
		stream = append(stream, toks...)
	}
	w := window{from: from, to: to, chunkID: chunkID, rung: rungAll}
	if sc.missing {
		w.rung = rungAny
	}
	for k, t := range sc.terms {
		if f[k] <= 0 {
			w.rung = rungAny
			continue
		}
		w.score += t.idf * tfPart(f[k], float64(length), sc.avgdl)
	}
	if w.rung == rungAll && len(sc.phrase) >= 2 && hasPhrase(stream, sc.phrase) {
		w.rung = rungPhrase
	}
	if sc.prefix {
		w.rung = rungPrefix
	}
	return w
}

// hasPhrase reports the tokens of phrase next to each other in stream.
func hasPhrase(stream []lineToken, phrase []string) bool {
	var toks []string
	for _, t := range stream {
		if !t.tail {
			toks = append(toks, t.tok)
		}
	}
outer:
	for i := 0; i+len(phrase) <= len(toks); i++ {
		for j, p := range phrase {
			if toks[i+j] != p {
				continue outer
			}
		}
		return true
	}
	return false
}

// resultID is ReMe's chunk id: sha256 of "<path> <start> <end> <text>".
func resultID(path string, start, end int, text string) string {
	sum := sha256.Sum256([]byte(fmt.Sprintf("%s %d %d %s", path, start, end, text)))
	return hex.EncodeToString(sum[:])
}
