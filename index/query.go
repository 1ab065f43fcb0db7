package index

import (
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/reme-dev/reme/store"
)

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
	Terms    []Term // a chunk matches when it has any of them
	Excluded []Term // a chunk with any of them is left out
	// Phrase is the query's words in order, as tokens: a window that has
	// them next to each other matches the exact phrase.
	Phrase []string
	// Stops are the words left out as too common to search for.
	Stops []string
}

// Term is one thing to find: a token, or tokens next to each other (a
// phrase), or a token prefix.
type Term struct {
	Text   string // as typed, e.g. login, "rate limit", 登录
	Tokens []string
	Prefix bool
	Quoted bool // a "quoted phrase"
}

// queryStop are words questions are made of that the index keeps but a
// query does not look for (compared as stems), built on the first search
// rather than when every command starts.
var queryStop = sync.OnceValue(func() map[string]bool {
	m := map[string]bool{}
	for w := range store.WordSet(`tell know knows remember anything something thing things everything please happen happened happening`) {
		m[string(porterStem([]byte(w)))] = true
	}
	return m
})

// ParseQuery turns a natural-language question into terms, using the
// index's own tokenizer (lower case, no accents, Porter stems): stop words
// dropped, CJK runs split into overlapping character pairs (a single CJK
// character is a prefix), quoted phrases kept as written, -term excluded,
// a trailing * for prefixes.
func ParseQuery(q string) Query {
	var out Query
	var stopTerms []Term
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
		var terms, cjkStops []Term
		var phrase, stops []string
		if quoted {
			terms, phrase = quotedTerms(word)
		} else {
			terms, cjkStops, phrase, stops = wordTerms(word)
		}
		if neg {
			out.Excluded = append(out.Excluded, terms...)
			out.Excluded = append(out.Excluded, cjkStops...)
			continue
		}
		out.Terms = append(out.Terms, terms...)
		out.Phrase = append(out.Phrase, phrase...)
		out.Stops = append(out.Stops, stops...)
		stopTerms = append(stopTerms, cjkStops...)
	}
	if len(out.Terms) == 0 {
		// CJK function words are indexed: a query of nothing else looks for them.
		out.Terms = stopTerms
	}
	out.Terms = dedupeTerms(out.Terms)
	out.Excluded = dedupeTerms(out.Excluded)
	return out
}

func dedupeTerms(ts []Term) []Term {
	seen := map[string]bool{}
	out := ts[:0]
	for _, t := range ts {
		k := t.key()
		if seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, t)
	}
	return out
}

func (t Term) key() string {
	k := strings.Join(t.Tokens, " ")
	if t.Prefix {
		k += "*"
	}
	return k
}

// queryTokens tokenizes query text: stop words reported, CJK runs as
// pairs only (a lone character is kept).
func queryTokens(s string, fn func(tok string, stop bool)) {
	tk := tokenizer{keepStop: true, noTail: true}
	tk.each(s, func(tok []byte, stop, _ bool) { fn(string(tok), stop) })
}

// quotedTerms makes one phrase term of a quoted phrase. Stop words are not
// in the index, so they are not in the phrase either. A phrase is cut after
// each CJK run, whose last character the index holds apart: the pieces
// must all match.
func quotedTerms(s string) (terms []Term, phrase []string) {
	var cur []string
	flush := func() {
		if len(cur) > 0 {
			terms = append(terms, Term{Text: strings.TrimSpace(s), Tokens: cur, Quoted: true})
			cur = nil
		}
	}
	prevCJK := false
	queryTokens(s, func(tok string, stop bool) {
		if stop {
			return
		}
		cjk := store.IsCJK(firstRune(tok))
		if prevCJK && !cjk {
			flush()
		}
		prevCJK = cjk
		cur = append(cur, tok)
		phrase = append(phrase, tok)
	})
	flush()
	return terms, phrase
}

// wordTerms handles one whitespace-separated word. Latin words joined by
// punctuation (foo-bar, v1.2, recall@10) stay one phrase; CJK runs become
// their character pairs; a lone CJK character and a word ending in * are
// prefixes.
func wordTerms(w string) (terms, cjkStops []Term, phrase, stops []string) {
	prefix := strings.HasSuffix(w, "*")
	w = strings.TrimRight(w, "*")
	w = strings.TrimFunc(w, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	if w == "" {
		return nil, nil, nil, nil
	}
	var latin []string // tokens of the current non-CJK part
	var latinText strings.Builder
	flushLatin := func(last bool) {
		if len(latin) > 0 {
			terms = append(terms, Term{Text: latinText.String(), Tokens: latin, Prefix: prefix && last})
		}
		latin = nil
		latinText.Reset()
	}
	// Walk the word in runs of CJK and other characters.
	for len(w) > 0 {
		r, _ := utf8.DecodeRuneInString(w)
		cjk := store.IsCJK(r)
		end := strings.IndexFunc(w, func(r rune) bool { return store.IsCJK(r) != cjk })
		if end < 0 {
			end = len(w)
		}
		part := w[:end]
		w = w[end:]
		last := w == ""
		if cjk {
			flushLatin(false)
			t, st, p := cjkTerms(part, prefix && last)
			terms = append(terms, t...)
			cjkStops = append(cjkStops, st...)
			phrase = append(phrase, p...)
			continue
		}
		type qtok struct {
			tok  string
			stop bool
		}
		var toks []qtok
		queryTokens(part, func(tok string, stop bool) { toks = append(toks, qtok{tok, stop}) })
		if prefix && last && len(toks) > 0 {
			// A prefix is matched as typed (lower case, no accents), not stemmed.
			i := strings.LastIndexFunc(part, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
			toks[len(toks)-1] = qtok{foldWord(part[i+1:]), false}
		}
		for _, t := range toks {
			if t.stop || queryStop()[t.tok] {
				stops = append(stops, t.tok)
				continue
			}
			latin = append(latin, t.tok)
			phrase = append(phrase, t.tok)
		}
		if len(latin) > 0 {
			latinText.WriteString(part)
		}
		flushLatin(last)
	}
	return terms, cjkStops, phrase, stops
}

// cjkTerms makes the character pairs of a CJK run, without pairs of
// function words; a lone character is a prefix (it also starts pairs).
func cjkTerms(run string, prefix bool) (terms, stops []Term, phrase []string) {
	rs := []rune(run)
	if len(rs) == 1 {
		t := []Term{{Text: run, Tokens: []string{run}, Prefix: true}}
		if cjkStopChars[rs[0]] && !prefix {
			return nil, t, nil
		}
		return t, nil, []string{run}
	}
	for i := 0; i+1 < len(rs); i++ {
		bg := string(rs[i : i+2])
		phrase = append(phrase, bg)
		t := Term{Text: bg, Tokens: []string{bg}}
		if cjkStopWords[bg] || cjkStopChars[rs[i]] || cjkStopChars[rs[i+1]] {
			stops = append(stops, t)
			continue
		}
		terms = append(terms, t)
	}
	if prefix {
		last := string(rs[len(rs)-1])
		terms = append(terms, Term{Text: last, Tokens: []string{last}, Prefix: true})
	}
	return terms, stops, phrase
}

// matchExpr renders terms as an FTS5 MATCH expression (any of them, none
// of the excluded). Every token is a double-quoted string, so user text
// never reaches the FTS5 grammar.
func matchExpr(terms, excluded []Term) string {
	if len(terms) == 0 {
		return ""
	}
	parts := make([]string, len(terms))
	for i, t := range terms {
		parts[i] = t.expr()
	}
	expr := strings.Join(parts, " OR ")
	if len(excluded) > 0 {
		expr = "(" + expr + ")"
		for _, t := range excluded {
			expr += " NOT " + t.expr()
		}
	}
	return expr
}

// MatchExpr renders the query as an FTS5 MATCH expression.
func (q Query) MatchExpr() string { return matchExpr(q.Terms, q.Excluded) }

func (t Term) expr() string {
	s := `"` + strings.ReplaceAll(strings.Join(t.Tokens, " "), `"`, `""`) + `"`
	if t.Prefix {
		s += "*"
	}
	return s
}

// foldWord lower-cases s and takes the accents off Latin letters, as the
// tokenizer does, without stemming.
func foldWord(s string) string {
	var b []byte
	for _, r := range s {
		if r != '\'' && r != '’' {
			b = appendFolded(b, r)
		}
	}
	return string(b)
}

func firstRune(s string) rune {
	r, _ := utf8.DecodeRuneInString(s)
	return r
}
