package index

import (
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/reme-dev/reme/store"
	"golang.org/x/text/unicode/norm"
)

// Tokens are what the index holds and what a query is matched and scored
// by. reme makes them in Go and gives FTS5 the finished tokens separated by
// spaces (its ascii tokenizer then splits on exactly those spaces), so that
// the same function decides what the index contains, what a query asks for
// and which lines of a note match it:
//
//   - a word is a run of letters, digits and combining marks (an apostrophe
//     between letters is part of it); it is lower-cased, accents are taken
//     off Latin letters, a possessive 's is dropped, English stop words are
//     left out and ASCII words are Porter-stemmed;
//   - a run of CJK characters (written without spaces) becomes its
//     overlapping pairs of characters plus the run's last character alone,
//     so that every two-character word is one token and every single
//     character is the prefix of a token.
//
// Every token is either ASCII [a-z0-9] or contains non-ASCII bytes, never
// ASCII punctuation, which FTS5's ascii tokenizer would split on.

// maxTokenBytes drops longer tokens (base64 and other blobs) from the index.
const maxTokenBytes = 64

// tokenizer reuses its buffers from one call to the next; it is not safe
// for concurrent use.
type tokenizer struct {
	word  []byte
	cjk   []rune
	stems map[string][]byte // word → stem, for the words seen so far
	// counting (see count)
	slots   map[string]*countSlot
	gen     uint32
	counted []termFreq
	// keepStop also emits stop words (with stop set), for query parsing.
	keepStop bool
	// noTail leaves out the lone last character of CJK runs of two or
	// more, for phrases typed in a query.
	noTail bool
}

// tokenizers keeps tokenizers (and the stems they remember) for the
// workers that index notes.
var tokenizers = sync.Pool{New: func() any { return &tokenizer{} }}

// tokenFunc receives each token; tok is only valid during the call and
// must not be changed. stop
// marks a stop word (only with keepStop); tail marks the lone last
// character of a CJK run, which repeats the end of the pair before it.
type tokenFunc func(tok []byte, stop, tail bool)

// each calls fn for every token of s in order.
func (tk *tokenizer) each(s string, fn tokenFunc) {
	tk.word = tk.word[:0]
	tk.cjk = tk.cjk[:0]
	apos := false // the word ends in an apostrophe that may join the next letter
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			i++
			switch {
			case 'a' <= c && c <= 'z', '0' <= c && c <= '9':
			case 'A' <= c && c <= 'Z':
				c += 'a' - 'A'
			case c == '\'' && len(tk.word) > 0 && !apos:
				tk.flushCJK(fn)
				apos = true
				continue
			default:
				tk.flushWord(fn)
				tk.flushCJK(fn)
				apos = false
				continue
			}
			tk.flushCJK(fn)
			if apos {
				tk.word = append(tk.word, '\'')
				apos = false
			}
			tk.word = append(tk.word, c)
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		switch {
		case store.IsCJK(r):
			tk.flushWord(fn)
			apos = false
			tk.cjk = append(tk.cjk, r)
		case r == '’' && len(tk.word) > 0 && !apos:
			tk.flushCJK(fn)
			apos = true
		case unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r):
			tk.flushCJK(fn)
			if apos {
				tk.word = append(tk.word, '\'')
				apos = false
			}
			tk.word = appendFolded(tk.word, r)
		default:
			tk.flushWord(fn)
			tk.flushCJK(fn)
			apos = false
		}
	}
	tk.flushWord(fn)
	tk.flushCJK(fn)
}

// appendFolded appends r lower-cased, without the accent of a Latin letter
// (combining accents after a Latin letter are dropped).
func appendFolded(b []byte, r rune) []byte {
	if 0x300 <= r && r <= 0x36F {
		return b // combining diacritical marks
	}
	if f, ok := latinFold()[r]; ok {
		return append(b, f...)
	}
	return utf8.AppendRune(b, unicode.ToLower(r))
}

// latinFold maps Latin letters with accents (U+00C0-U+024F) to their plain
// lower-case letters, as FTS5's remove_diacritics does.
var latinFold = sync.OnceValue(func() map[rune]string {
	m := map[rune]string{}
	for r := rune(0xC0); r <= 0x24F; r++ {
		d := norm.NFD.String(string(r))
		base, _ := utf8.DecodeRuneInString(d)
		if base < utf8.RuneSelf && unicode.IsLetter(base) && d != string(r) {
			m[r] = string(unicode.ToLower(base))
		}
	}
	return m
})

func (tk *tokenizer) flushWord(fn tokenFunc) {
	w := tk.word
	if len(w) == 0 {
		return
	}
	tk.word = tk.word[:0]
	if n := len(w); n > 2 && w[n-2] == '\'' && w[n-1] == 's' {
		w = w[:n-2] // possessive
	}
	stop := indexStop[string(w)]
	if stop && !tk.keepStop {
		return
	}
	// Apostrophes have done their job (don't is a stop word, o'brien one
	// word); the token itself keeps only letters and digits.
	ascii, letters := true, true
	k := 0
	for _, c := range w {
		if c == '\'' {
			continue
		}
		if c >= utf8.RuneSelf {
			ascii = false
		} else if c < 'a' {
			letters = false
		}
		w[k] = c
		k++
	}
	w = w[:k]
	if len(w) == 0 || len(w) > maxTokenBytes {
		return
	}
	if ascii && letters && len(w) > 2 {
		// Most words come again: remember their stems.
		if st, ok := tk.stems[string(w)]; ok {
			fn(st, stop, false)
			return
		}
		if tk.stems == nil {
			tk.stems = map[string][]byte{}
		}
		if len(tk.stems) < 1<<16 {
			word := string(w)
			w = porterStem(w)
			tk.stems[word] = append([]byte(nil), w...)
		} else {
			w = porterStem(w)
		}
	}
	fn(w, stop, false)
}

func (tk *tokenizer) flushCJK(fn tokenFunc) {
	rs := tk.cjk
	if len(rs) == 0 {
		return
	}
	tk.cjk = tk.cjk[:0]
	var buf [8]byte
	for i := 0; i+1 < len(rs); i++ {
		b := utf8.AppendRune(buf[:0], rs[i])
		b = utf8.AppendRune(b, rs[i+1])
		fn(b, false, false)
	}
	if len(rs) == 1 || !tk.noTail {
		fn(utf8.AppendRune(buf[:0], rs[len(rs)-1]), false, len(rs) > 1)
	}
}

// ftsText renders s as FTS5 column text: its tokens separated by spaces.
// It also returns the number of tokens.
func (tk *tokenizer) ftsText(dst []byte, s string) ([]byte, int) {
	n := 0
	tk.each(s, func(tok []byte, _, _ bool) {
		if n > 0 {
			dst = append(dst, ' ')
		}
		dst = append(dst, tok...)
		n++
	})
	return dst, n
}

// tokenStrings returns the tokens of s (stop words left out).
func tokenStrings(s string) []string {
	var tk tokenizer
	var out []string
	tk.each(s, func(tok []byte, _, _ bool) { out = append(out, string(tok)) })
	return out
}

// StopWord reports an English function word that the index leaves out
// (lower case).
func StopWord(w string) bool { return indexStop[w] }

// indexStop are the English function words the index leaves out: they are
// in nearly every note and tell nothing about it. (Query parsing drops a
// few more words that questions are made of; see queryStop.)
var indexStop = store.WordSet(`a about above after again against all also am an and any are aren't as at be because been
before being below between both but by can can't cannot could couldn't did didn't do does doesn't doing don't down
during each either else ever few for from further had hadn't has hasn't have haven't having he he'd
he'll he's her here here's hers herself him himself his how how's i i'd i'll i'm i've if in into is isn't it it's
its itself just let's may me might more most must mustn't my myself neither no nor not of off on once only or
other ought our ours ourselves out over own same shall shan't she she'd she'll she's should shouldn't so some
such than that that's the their theirs them themselves then there there's these they they'd they'll they're they've
this those through to too under until up upon us very was wasn't we we'd we'll we're we've were weren't what what's
when when's where where's whether which while who who's whom whose why why's will with won't would wouldn't yet you
you'd you'll you're you've your yours yourself yourselves`)
