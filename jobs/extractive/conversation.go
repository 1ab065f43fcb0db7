// Package extractive distils cards without a model: it is what
// `reme auto_memory` and `reme auto_resource` use when no model is
// configured, or when the model failed and the fallback is extractive. It never
// paraphrases: what the user said is copied verbatim (one line each), so a
// newcomer gets exact numbers, names and wording without an API key. The
// output is a pure function of its input (same messages, link and zone ->
// same bytes).
//
// The body always has exactly this shape:
//
//	## Key statements
//
//	- [2026-06-20 09:14] I want rate limiting on the public API: 100 requests per second per key, burst of 200.
//	- [2026-06-20 09:20] Use Retry-After in the 429 response.
//
//	## Assistant notes
//
//	- [2026-06-20 09:15] First sentence(s) of a substantive assistant reply.
//
//	## Source
//
//	Extracted without a model from [[session/dialog/abc.jsonl]].
//
// Key statements are the user's messages (text blocks only), in
// conversation order, each on one line; small talk ("hi", "thanks", "ok",
// 你好, 好的, 谢谢 ...) is dropped, exact repeats are kept once, and a
// message longer than extMaxStatement runes is cut at a sentence boundary
// with "…". Assistant notes are the first sentence(s) of at most
// extMaxNotes substantive assistant replies, each at most extMaxNote runes
// (code blocks, headings and tables left out). The time prefix is the
// message's created_at in the workspace zone ("YYYY-MM-DD HH:MM"): a
// zone-aware stamp is converted, a naive one is taken as written, a bare
// date stays a date, and an unparsable one gives no prefix. A section with
// nothing to list holds a placeholder line (extNoStatements, extNoNotes)
// so the shape stays the same; the link line is "Extracted without a
// model." when there is no link.
package extractive

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/reme-dev/reme/store"
)

// Card is a card distilled without a model.
type Card struct {
	// Name is the file-name stem: lowercase-hyphenated salient terms of
	// the user's messages ("rate-limiting-public-api"), or for a mostly
	// CJK conversation the leading words of the first user request
	// ("登录流程重构"). It always passes store.ValidateName, is at most
	// extMaxName runes, holds no date (no part of it starts with a digit),
	// and falls back to "conversation-<8 hex of a hash of the messages>".
	Name string
	// Description is the first substantive user request, whitespace
	// collapsed, a leading greeting clause dropped, cut at a word or CJK
	// boundary to at most extMaxDescription runes with "…". Never empty.
	Description string
	// Body is the markdown body described above, ending in one newline.
	Body string
}

const (
	extKeyTitle    = "Key statements"
	extNotesTitle  = "Assistant notes"
	extSourceTitle = "Source"

	extMaxStatement   = 500 // runes per key statement, "…" included
	extMaxNote        = 300 // runes per assistant note
	extNoteTarget     = 120 // an assistant note stops growing once this long
	extMaxNotes       = 3
	extMaxDescription = 200
	extMaxName        = 60
	extMaxNameTerms   = 4
	extMaxCJKName     = 12 // CJK characters in a CJK name

	extNoStatements = "_No substantive user statements._"
	extNoNotes      = "_No substantive assistant replies._"
)

// extItem is one bullet: a time prefix (possibly empty) and one line of text.
type extItem struct {
	stamp string // "2026-06-20 09:14", "2023-01-19" or ""
	text  string
}

func (it extItem) line() string {
	if it.stamp == "" {
		return "- " + it.text
	}
	return "- [" + it.stamp + "] " + it.text
}

// Extract builds the card from a conversation. loc is the workspace time zone
// (for rendering message times; nil means UTC), sessionLink the source
// conversation wikilink such as "[[session/dialog/abc.jsonl]]".
func Conversation(msgs []store.Message, sessionLink string, loc *time.Location) Card {
	if loc == nil {
		loc = time.UTC
	}
	return Card{
		Name:        extName(msgs),
		Description: extDescription(msgs),
		Body:        extRenderBody(extStatements(msgs, loc), extNotes(msgs, loc), sessionLink),
	}
}

// Merge updates an existing extractive card body with a newer
// conversation: statements already present are kept once, new ones are
// added in time order; returns the new body.
//
// Existing bullets are matched by their normalised text, ignoring the time
// prefix, so the whole conversation can be passed again. The existing body
// is otherwise left as it is: hand-edited bullets, extra lines and unknown
// sections stay verbatim in place; only a known section that gains a
// bullet is re-laid out. A new bullet goes after the last existing bullet
// whose time is not later than its own (new bullets keep their relative
// order). Assistant notes are topped up to extMaxNotes. A missing known
// section is added before the next known section that exists, else at the
// end; the source link line is added when the link is not mentioned yet.
// Merging the same conversation twice changes nothing the second time.
func Merge(existingBody string, msgs []store.Message, sessionLink string, loc *time.Location) string {
	if loc == nil {
		loc = time.UTC
	}
	stmts, notes := extStatements(msgs, loc), extNotes(msgs, loc)
	if strings.TrimSpace(existingBody) == "" {
		return extRenderBody(stmts, notes, sessionLink)
	}
	doc := extParseDoc(existingBody)
	doc.section(extKeyTitle).mergeItems(stmts, 0, extNoStatements)
	doc.section(extNotesTitle).mergeItems(notes, extMaxNotes, extNoNotes)
	doc.ensureSource(extOneLine(sessionLink))
	return doc.render()
}

// Substantive reports whether any user message says more than small
// talk; a caller may skip writing a card when it does not.
func Substantive(msgs []store.Message) bool {
	return len(extUserTexts(msgs, true)) > 0
}

func extSourceLine(link string) string {
	if link == "" {
		return "Extracted without a model."
	}
	return "Extracted without a model from " + link + "."
}

func extRenderBody(stmts, notes []extItem, sessionLink string) string {
	var b strings.Builder
	list := func(title string, items []extItem, placeholder string) {
		b.WriteString("## " + title + "\n\n")
		if len(items) == 0 {
			b.WriteString(placeholder + "\n")
		}
		for _, it := range items {
			b.WriteString(it.line() + "\n")
		}
		b.WriteString("\n")
	}
	list(extKeyTitle, stmts, extNoStatements)
	list(extNotesTitle, notes, extNoNotes)
	b.WriteString("## " + extSourceTitle + "\n\n" + extSourceLine(extOneLine(sessionLink)) + "\n")
	return b.String()
}

// extUserTexts returns the one-line texts of the user messages, only the
// substantive ones when substantive is set.
func extUserTexts(msgs []store.Message, substantive bool) []string {
	var out []string
	for i := range msgs {
		if msgs[i].Role != "user" {
			continue
		}
		t := extOneLine(msgs[i].Text())
		if t == "" || (substantive && extIsSmallTalk(t)) {
			continue
		}
		out = append(out, t)
	}
	return out
}

// extStatements lists the user's substantive messages, verbatim on one
// line, repeats dropped.
func extStatements(msgs []store.Message, loc *time.Location) []extItem {
	var out []extItem
	seen := map[string]bool{}
	for i := range msgs {
		m := &msgs[i]
		if m.Role != "user" {
			continue
		}
		t := extOneLine(m.Text())
		if t == "" || extIsSmallTalk(t) {
			continue
		}
		t = extCutSentence(t, extMaxStatement)
		k := extKey(t)
		if seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, extItem{stamp: extStamp(m.CreatedAt, loc), text: t})
	}
	return out
}

// extNotes lists the opening sentences of the first substantive assistant
// replies.
func extNotes(msgs []store.Message, loc *time.Location) []extItem {
	var out []extItem
	seen := map[string]bool{}
	for i := range msgs {
		m := &msgs[i]
		if m.Role != "assistant" {
			continue
		}
		t := extNoteText(m.Text())
		if t == "" {
			continue
		}
		k := extKey(t)
		if seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, extItem{stamp: extStamp(m.CreatedAt, loc), text: t})
		if len(out) == extMaxNotes {
			break
		}
	}
	return out
}

var (
	extFenceRe  = store.LazyRegexp("^\\s*(```|~~~)")
	extMarkerRe = store.LazyRegexp(`^\s*(?:>\s*|[-*+]\s+|\d{1,3}[.)]\s+)+`)
	extRuleRe   = store.LazyRegexp(`^\s*(?:[-*_]\s*){3,}$`)
)

// extNoteText is the opening of an assistant reply: prose lines only (code
// blocks, headings, tables and rules left out), leading small-talk
// sentences ("Sure!", "Great question.") skipped, then whole sentences
// until extNoteTarget runes, never more than extMaxNote.
func extNoteText(raw string) string {
	var units []string
	inFence := false
	for _, line := range strings.Split(raw, "\n") {
		if extFenceRe().MatchString(line) {
			inFence = !inFence
			continue
		}
		trimmed := strings.TrimSpace(line)
		if inFence || trimmed == "" || strings.HasPrefix(trimmed, "#") || strings.HasPrefix(trimmed, "|") || extRuleRe().MatchString(trimmed) {
			continue
		}
		line = extOneLine(extMarkerRe().ReplaceAllString(line, ""))
		if line != "" {
			units = append(units, extSentences(line)...)
		}
	}
	for len(units) > 0 && extIsSmallTalk(units[0]) {
		units = units[1:]
	}
	if len(units) == 0 {
		return ""
	}
	acc := ""
	for _, u := range units {
		next := u
		if acc != "" {
			next = extJoin(acc, u)
		}
		if utf8.RuneCountInString(next) > extMaxNote {
			break
		}
		acc = next
		if utf8.RuneCountInString(acc) >= extNoteTarget {
			break
		}
	}
	if acc == "" {
		acc = extCutWords(units[0], extMaxNote)
	}
	return acc
}

// extJoin joins two sentences, without a space after CJK text.
func extJoin(a, b string) string {
	last, _ := utf8.DecodeLastRuneInString(a)
	if store.IsCJK(last) || extIsCJKPunct(last) {
		return a + b
	}
	return a + " " + b
}

// extDescription is the first substantive user request; failing that the
// first user text, then the first text of any message.
func extDescription(msgs []store.Message) string {
	d := ""
	if texts := extUserTexts(msgs, true); len(texts) > 0 {
		d = extDropGreeting(texts[0])
	} else if texts := extUserTexts(msgs, false); len(texts) > 0 {
		d = texts[0]
	} else {
		for i := range msgs {
			if t := extOneLine(msgs[i].Text()); t != "" {
				d = t
				break
			}
		}
	}
	if d == "" {
		return "Conversation without text."
	}
	return extCutWords(d, extMaxDescription)
}

// extDropGreeting removes leading small-talk clauses ("Hi! ", "你好，")
// when something follows them.
func extDropGreeting(s string) string {
	for range 3 {
		i := strings.IndexFunc(s, extIsClauseEnd)
		if i < 0 {
			break
		}
		rest := strings.TrimLeftFunc(s[i:], func(r rune) bool { return extIsClauseEnd(r) || unicode.IsSpace(r) })
		if rest == "" || !extIsSmallTalk(s[:i]) {
			break
		}
		s = rest
	}
	return s
}

func extIsClauseEnd(r rune) bool {
	return strings.ContainsRune(",.!?;:~…，。！？；：、～", r)
}

// extName picks the card's file-name stem.
func extName(msgs []store.Message) string {
	if n := extNameOf(extUserTexts(msgs, true)); n != "" {
		return n
	}
	return extFallbackName(msgs)
}

// extNameOf is a file-name stem made of texts: their salient terms, or the
// lead of the first CJK request, whichever suits the script; "" when
// neither makes a file name.
func extNameOf(texts []string) string {
	tries := []func([]string) string{extTermsName, extCJKName}
	if extMostlyCJK(texts) {
		tries[0], tries[1] = tries[1], tries[0]
	}
	for _, try := range tries {
		if n := try(texts); n != "" && store.ValidateName(n) == nil {
			return n
		}
	}
	return ""
}

func extFallbackName(msgs []store.Message) string {
	h := sha256.New()
	for i := range msgs {
		fmt.Fprintf(h, "%s\x00%s\x00", msgs[i].Role, msgs[i].CreatedAt)
		for _, c := range msgs[i].Content {
			h.Write(c)
			h.Write([]byte{0})
		}
		h.Write([]byte{'\n'})
	}
	return "conversation-" + hex.EncodeToString(h.Sum(nil))[:8]
}

// extMostlyCJK weighs CJK characters (about two to a word) against other
// letters (about five to a word).
func extMostlyCJK(texts []string) bool {
	cjk, latin := 0, 0
	for _, t := range texts {
		for _, r := range t {
			switch {
			case store.IsCJK(r):
				cjk++
			case unicode.IsLetter(r):
				latin++
			}
		}
	}
	return cjk > 0 && 5*cjk > 2*latin
}

// extTermsName joins the most frequent salient terms of the user's
// messages: words of at least three letters that are not stop words or
// numbers, counted with a plural "s" folded, ranked by count then first
// appearance. The first two are always taken; a third and fourth only when
// they occur at least half as often as the first.
func extTermsName(texts []string) string {
	type term struct {
		form  string
		count int
	}
	var terms []*term
	index := map[string]*term{}
	for _, t := range texts {
		for _, w := range extWords(t) {
			w = strings.ToLower(w)
			if utf8.RuneCountInString(w) < 3 || extStopWords()[w] || !unicode.IsLetter([]rune(w)[0]) {
				continue
			}
			k := w
			if len(k) > 3 && strings.HasSuffix(k, "s") && !strings.HasSuffix(k, "ss") {
				k = k[:len(k)-1]
			}
			if tm := index[k]; tm != nil {
				tm.count++
				continue
			}
			tm := &term{form: w, count: 1}
			index[k] = tm
			terms = append(terms, tm)
		}
	}
	if len(terms) == 0 {
		return ""
	}
	sort.SliceStable(terms, func(i, j int) bool { return terms[i].count > terms[j].count })
	name := store.TruncateRunes(terms[0].form, extMaxName, "")
	for i := 1; i < len(terms) && i < extMaxNameTerms; i++ {
		if i >= 2 && 2*terms[i].count < terms[0].count {
			break
		}
		next := name + "-" + terms[i].form
		if utf8.RuneCountInString(next) > extMaxName {
			break
		}
		name = next
	}
	return name
}

// extWords splits text into runs of letters and digits, leaving out CJK
// characters.
func extWords(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool {
		return !(unicode.IsLetter(r) || unicode.IsDigit(r)) || store.IsCJK(r)
	})
}

// extCJKName is made of the leading words of the first request that has
// CJK text: greetings and fillers such as 请/帮我/我们需要/把 dropped, then
// the CJK runs and latin words of the first clause, up to extMaxCJKName
// CJK characters, digits and date units (2026年6月) left out, trailing
// particles (一下/吧/了) trimmed.
func extCJKName(texts []string) string {
	for _, t := range texts {
		if strings.IndexFunc(t, store.IsCJK) >= 0 {
			return extCJKLead(t)
		}
	}
	return ""
}

func extCJKLead(s string) string {
	s = extStripFillers(s)
	rs := []rune(s)
	var segs []string
	han := 0
	for i := 0; i < len(rs) && han < extMaxCJKName; {
		r := rs[i]
		switch {
		case store.IsCJK(r):
			j := extCJKRunEnd(rs, i)
			run := rs[i:j]
			if room := extMaxCJKName - han; len(run) > room {
				run = extCutCJKRun(run, room)
			}
			segs = append(segs, string(run))
			han += len(run)
			i = j
		case unicode.IsDigit(r):
			for i < len(rs) && unicode.IsDigit(rs[i]) {
				i++
			}
			if i < len(rs) && strings.ContainsRune("年月日号號时時点點分秒", rs[i]) {
				i++
			}
		case unicode.IsLetter(r):
			j := i
			for j < len(rs) && (unicode.IsLetter(rs[j]) || unicode.IsDigit(rs[j])) && !store.IsCJK(rs[j]) {
				j++
			}
			if w := strings.ToLower(string(rs[i:j])); utf8.RuneCountInString(w) >= 2 && !extStopWords()[w] {
				segs = append(segs, w)
			}
			i = j
		default:
			if extIsClauseEnd(r) && han >= 2 {
				i = len(rs)
				break
			}
			i++
		}
	}
	if len(segs) > 0 {
		segs[0] = strings.TrimLeftFunc(segs[0], func(r rune) bool { return strings.ContainsRune("的了和与及之", r) })
	}
	for len(segs) > 0 {
		last := extTrimParticles(segs[len(segs)-1])
		if last != "" {
			segs[len(segs)-1] = last
			break
		}
		segs = segs[:len(segs)-1]
	}
	if han == 0 {
		return ""
	}
	name := ""
	for _, seg := range segs {
		next := seg
		if name != "" {
			next = name + "-" + seg
		}
		if utf8.RuneCountInString(next) > extMaxName {
			break
		}
		name = next
	}
	return name
}

// extCJKFillers are dropped from the start of a CJK request, longest first.
var extCJKFillers = sync.OnceValue(func() []string {
	return extByLength(strings.Fields(`你好 您好 哈喽 嗨 请问 请你 请帮我 请帮忙 请 麻烦你 麻烦 帮我们 帮我 帮忙
	为什么 怎么样 怎么 如何 什么是 我想要 我想 我要 我们需要 我们要 我们来 我们 咱们来 咱们 我需要 需要 想要 能不能 能否 可不可以 可以
	你能 你可以 一起 给我 给 为 把 关于 那个 嗯 哦 现在 今天 这次 另外 还有 然后`))
})

func extStripFillers(s string) string {
	for {
		s = strings.TrimLeftFunc(s, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
		cut := false
		for _, f := range extCJKFillers() {
			if rest, ok := strings.CutPrefix(s, f); ok && rest != "" {
				s, cut = rest, true
				break
			}
		}
		if !cut {
			return s
		}
	}
}

// extCutCJKRun shortens a CJK run to n characters, before a particle
// when one sits late enough.
func extCutCJKRun(run []rune, n int) []rune {
	for i := n; i >= 4 && i > n/2; i-- {
		if strings.ContainsRune("的和与及并在是把让对用以", run[i]) {
			return run[:i]
		}
	}
	return run[:n]
}

func extTrimParticles(s string) string {
	for {
		t := strings.TrimSuffix(s, "一下")
		t = strings.TrimRightFunc(t, func(r rune) bool {
			return strings.ContainsRune("吧吗呢啊了的呀嘛哦啦をがはにでとへも", r)
		})
		if t == s {
			return s
		}
		s = t
	}
}

func extByLength(words []string) []string {
	sort.SliceStable(words, func(i, j int) bool { return len(words[i]) > len(words[j]) })
	return words
}
