package index

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/reme-dev/reme/store"
)

// ftsText prepares text for the FTS5 columns: every CJK character becomes
// its own token by surrounding it with spaces. Where CJK text is broken by
// punctuation or space, a boundary token goes in, so that a two-character
// query does not match across "，" (FTS5 phrases ignore separators). Other
// text is left to the porter/unicode61 tokenizer.
func ftsText(s string) string {
	hasCJK := false
	for i := 0; i < len(s); i++ {
		if s[i] >= 0xE1 { // lead bytes of U+1100 and above
			hasCJK = true
			break
		}
	}
	if !hasCJK {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + len(s)/2)
	afterCJK := false // the last token written was a CJK character
	for _, r := range s {
		switch {
		case store.IsCJK(r):
			b.WriteByte(' ')
			b.WriteRune(r)
			b.WriteByte(' ')
			afterCJK = true
		case unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r):
			b.WriteRune(r)
			afterCJK = false
		default:
			if afterCJK {
				b.WriteString(boundaryToken)
				afterCJK = false
			}
			b.WriteRune(r)
		}
	}
	return b.String()
}

// boundaryToken is a private-use character, which unicode61 treats as a
// token character and no query ever contains.
const boundaryToken = " \uE000 "

// linkWords replaces each wikilink with the words a reader sees: its alias,
// or else the file name without folders, date and extension. Otherwise
// every link would add "daily", "2026" and "md" to the searchable text.
func linkWords(text string) string {
	if !strings.Contains(text, "[[") {
		return text
	}
	links := store.ParseLinks(text, 1)
	if len(links) == 0 {
		return text
	}
	var b strings.Builder
	last := 0
	for _, l := range links {
		b.WriteString(text[last:l.Start])
		if l.Alias != "" {
			b.WriteString(l.Alias)
		} else {
			stem := l.Target[strings.LastIndexByte(l.Target, '/')+1:]
			if i := strings.LastIndexByte(stem, '.'); i > 0 {
				stem = stem[:i]
			}
			b.WriteString(stem)
		}
		if l.Anchor != "" {
			b.WriteString(" " + l.Anchor)
		}
		last = l.End
	}
	b.WriteString(text[last:])
	return b.String()
}

// Query is a parsed search query.
type Query struct {
	Terms    []Term // OR-ed
	Excluded []Term
}

// Term is one FTS5 phrase: its tokens are matched next to each other.
type Term struct {
	Text   string // display form, e.g. login, "rate limit", 登录
	Tokens []string
	Prefix bool
	Exact  bool // a quoted phrase or a whole CJK run (boosts exact matches)
}

// ParseQuery turns a natural-language question into terms: lower-cased,
// stop words dropped, CJK runs split into overlapping bigrams (so a
// two-character word such as 登录 always matches), quoted phrases kept as
// written, -term excluded, a trailing * for prefixes.
func ParseQuery(q string) Query {
	var out Query
	var stopped []Term // stop-word terms, used if nothing else is left
	rest := q
	for {
		rest = strings.TrimLeftFunc(rest, unicode.IsSpace)
		if rest == "" {
			break
		}
		neg := false
		if rest[0] == '-' && len(rest) > 1 && !unicode.IsSpace(rune(rest[1])) {
			neg = true
			rest = rest[1:]
		}
		var word string
		quoted := false
		if rest[0] == '"' {
			end := strings.IndexByte(rest[1:], '"')
			if end < 0 {
				word, rest = rest[1:], ""
			} else {
				word, rest = rest[1:end+1], rest[end+2:]
			}
			quoted = true
		} else {
			end := strings.IndexFunc(rest, unicode.IsSpace)
			if end < 0 {
				end = len(rest)
			}
			word, rest = rest[:end], rest[end:]
		}
		var terms, stops []Term
		if quoted {
			if t, ok := phraseTerm(word); ok {
				t.Exact = true
				terms = append(terms, t)
			}
		} else {
			terms, stops = wordTerms(word)
		}
		if neg {
			out.Excluded = append(out.Excluded, terms...)
			out.Excluded = append(out.Excluded, stops...)
			continue
		}
		out.Terms = append(out.Terms, terms...)
		stopped = append(stopped, stops...)
	}
	if len(out.Terms) == 0 {
		out.Terms = stopped
	}
	out.Terms = dedupeTerms(out.Terms)
	out.Excluded = dedupeTerms(out.Excluded)
	return out
}

func dedupeTerms(ts []Term) []Term {
	seen := map[string]bool{}
	out := ts[:0]
	for _, t := range ts {
		k := strings.Join(t.Tokens, " ")
		if t.Prefix {
			k += "*"
		}
		if seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, t)
	}
	return out
}

// tokens splits text into lower-cased letter/digit runs, each CJK character
// on its own.
func tokens(s string) []string {
	var out []string
	start := -1
	flush := func(i int) {
		if start >= 0 {
			out = append(out, strings.ToLower(s[start:i]))
			start = -1
		}
	}
	for i, r := range s {
		switch {
		case store.IsCJK(r):
			flush(i)
			out = append(out, string(r))
		case unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r):
			if start < 0 {
				start = i
			}
		default:
			flush(i)
		}
	}
	flush(len(s))
	return out
}

func phraseTerm(s string) (Term, bool) {
	toks := tokens(s)
	if len(toks) == 0 {
		return Term{}, false
	}
	return Term{Text: strings.TrimSpace(s), Tokens: toks}, true
}

// wordTerms handles one whitespace-separated word. Latin words joined by
// punctuation (foo-bar, v1.2, recall@10) stay one phrase; CJK runs become
// bigrams. Stop words are returned separately.
func wordTerms(w string) (terms, stops []Term) {
	prefix := strings.HasSuffix(w, "*")
	w = strings.TrimRight(w, "*")
	w = strings.TrimFunc(w, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	if w == "" {
		return nil, nil
	}
	// split into CJK and non-CJK runs
	var runs []struct {
		text string
		cjk  bool
	}
	cur, curCJK := strings.Builder{}, false
	for _, r := range w {
		c := store.IsCJK(r)
		if cur.Len() > 0 && c != curCJK {
			runs = append(runs, struct {
				text string
				cjk  bool
			}{cur.String(), curCJK})
			cur.Reset()
		}
		curCJK = c
		cur.WriteRune(r)
	}
	runs = append(runs, struct {
		text string
		cjk  bool
	}{cur.String(), curCJK})
	for i, run := range runs {
		if run.cjk {
			t, s := cjkTerms(run.text)
			terms, stops = append(terms, t...), append(stops, s...)
			continue
		}
		toks := tokens(run.text)
		if len(toks) == 0 {
			continue
		}
		t := Term{Text: run.text, Tokens: toks, Prefix: prefix && i == len(runs)-1}
		if len(toks) == 1 && englishStop[toks[0]] && !t.Prefix {
			stops = append(stops, t)
			continue
		}
		terms = append(terms, t)
	}
	return terms, stops
}

// cjkTerms makes overlapping bigrams of a CJK run, dropping function-word
// bigrams; a run of three or more characters also goes in whole, so notes
// containing the exact wording rank first.
func cjkTerms(run string) (terms, stops []Term) {
	rs := []rune(run)
	if len(rs) == 1 {
		t := Term{Text: run, Tokens: []string{run}}
		if cjkStopChars[rs[0]] {
			return nil, []Term{t}
		}
		return []Term{t}, nil
	}
	if len(rs) >= 3 && !cjkStopWords[run] {
		toks := make([]string, len(rs))
		for i, r := range rs {
			toks[i] = string(r)
		}
		terms = append(terms, Term{Text: run, Tokens: toks, Exact: true})
	}
	for i := 0; i+1 < len(rs); i++ {
		bg := string(rs[i : i+2])
		t := Term{Text: bg, Tokens: []string{string(rs[i]), string(rs[i+1])}}
		if cjkStopWords[bg] || cjkStopChars[rs[i]] || cjkStopChars[rs[i+1]] {
			stops = append(stops, t)
			continue
		}
		terms = append(terms, t)
	}
	return terms, stops
}

// MatchExpr renders the query as an FTS5 MATCH expression. Every token is a
// double-quoted string, so user text never reaches the FTS5 grammar.
func (q Query) MatchExpr() string {
	if len(q.Terms) == 0 {
		return ""
	}
	parts := make([]string, len(q.Terms))
	for i, t := range q.Terms {
		parts[i] = t.expr()
	}
	expr := strings.Join(parts, " OR ")
	if len(q.Excluded) > 0 {
		expr = "(" + expr + ")"
		for _, t := range q.Excluded {
			expr += " NOT " + t.expr()
		}
	}
	return expr
}

func (t Term) expr() string {
	s := `"` + strings.ReplaceAll(strings.Join(t.Tokens, " "), `"`, `""`) + `"`
	if t.Prefix {
		s += "*"
	}
	return s
}

// Highlights are the strings a snippet looks for.
func (q Query) Highlights() []string {
	var out []string
	for _, t := range q.Terms {
		if len(t.Tokens) == 0 {
			continue
		}
		if store.IsCJK(firstRune(t.Tokens[0])) {
			out = append(out, strings.Join(t.Tokens, ""))
		} else {
			out = append(out, strings.Join(t.Tokens, " "), t.Tokens[0])
		}
	}
	return out
}

func firstRune(s string) rune {
	r, _ := utf8.DecodeRuneInString(s)
	return r
}
