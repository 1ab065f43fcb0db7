package extractive

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/reme-dev/reme/store"
)

// Without a model, only what the user explicitly asked to remember across
// sessions becomes a long-term entry, in the user's own words: "remember
// that …", "don't forget …", "from now on …", "记住…", "别忘了…", "以后…".
// The model, when there is one, decides everything else.

// Remembered is one explicit request, ready to be written as an entry.
type Remembered struct {
	Type        string
	Name        string
	Description string
	Content     string
	Due         string
	// MessageID is the message the request was made in.
	MessageID string
}

// rememberCue finds a request at the start of a sentence: the cue, then
// the statement. keep says whether the cue is part of the statement ("from
// now on, …", "以后…" say when it applies).
var rememberCues = sync.OnceValue(func() []rememberCue {
	return []rememberCue{
		{regexp.MustCompile(`(?i)^(?:please\s+|and\s+|also\s+)?(?:remember|memorize|note down)\b(?:\s+(?:this|that))?\s*[:,：，-]?\s*(?:that\s+)?`), false},
		{regexp.MustCompile(`(?i)^(?:please\s+|and\s+)?(?:don'?t|do not|never) forget\b(?:\s+(?:this|that))?\s*[:,：，-]?\s*(?:that\s+)?`), false},
		{regexp.MustCompile(`(?i)^(?:please\s+)?keep in mind\b\s*[:,：，-]?\s*(?:that\s+)?`), false},
		{regexp.MustCompile(`(?i)^(?:from now on|going forward|in (?:the )?future)\b\s*[:,：，-]?\s*`), true},
		{regexp.MustCompile(`^(?:请|请你|麻烦)?(?:记住|记下|记得|牢记)(?:这个|这点|这一点|一下)?\s*[:：,，]?\s*`), false},
		{regexp.MustCompile(`^(?:请)?(?:别忘了|不要忘了|别忘记|不要忘记)\s*[:：,，]?\s*`), false},
		{regexp.MustCompile(`^(?:以后|今后|往后|从现在起|从今以后)\s*[:：,，]?\s*`), true},
	}
})

type rememberCue struct {
	re   *regexp.Regexp
	keep bool
}

// becauseCue splits off the reason of a preference.
var becauseCue = store.LazyRegexp(`(?i)(?:[,，;；]?\s*\b(?:because|since|as)\b\s+|[,，;；]?\s*(?:因为|由于)\s*)`)

var (
	isoDate      = store.LazyRegexp(`\b(\d{4}-\d{2}-\d{2})\b`)
	userCues     = store.LazyRegexp(`(?i)^(?:i am|i'm|i have been|i've been|i work|my name|call me|我是|我叫|我在|我做|我的|叫我)`)
	feedbackCues = store.LazyRegexp(`(?i)\b(?:prefer|preference|always|never|don'?t|do not|please|answer|reply|respond|format|use|avoid|instead)\b|不要|别|请|用|喜欢|偏好|回答|回复|格式|避免|以后|今后`)
	projectCues  = store.LazyRegexp(`(?i)\b(?:deadline|due|launch|release|milestone|ship|decided|decision)\b|截止|上线|发布|里程碑|决定|定了`)
	refCues      = store.LazyRegexp(`(?i)\b(?:see|look (?:at|in|up)|check|wiki|docs?|documentation|runbook|url|link)\b|https?://|看|查|文档|链接|手册|章节`)
)

// Requests finds the explicit requests in the user's messages, at most one
// per sentence, in order; today dates a reason-less feedback entry.
func Requests(msgs []store.Message, today string) []Remembered {
	var out []Remembered
	for _, m := range msgs {
		if m.Role != "user" {
			continue
		}
		for _, line := range strings.Split(m.Text(), "\n") {
			for _, s := range extSentences(strings.TrimSpace(line)) {
				if r, ok := request(s, today); ok {
					r.MessageID = m.ID
					out = append(out, r)
				}
			}
		}
	}
	return out
}

func request(sentence, today string) (Remembered, bool) {
	s := strings.TrimLeft(sentence, " \t-*>•")
	var stmt string
	found := false
	for _, c := range rememberCues() {
		loc := c.re.FindStringIndex(s)
		if loc == nil {
			continue
		}
		stmt = s[loc[1]:]
		if c.keep {
			stmt = s
		}
		found = true
		break
	}
	stmt = strings.TrimSpace(strings.TrimRight(strings.TrimSpace(stmt), ".。!！"))
	if !found || len([]rune(stmt)) < 4 {
		return Remembered{}, false
	}
	// "I prefer bullets, because paragraphs are hard to scan": the reason
	// is the Why of a preference
	what, why := stmt, ""
	if loc := becauseCue().FindStringIndex(stmt); loc != nil && loc[0] > 0 {
		what, why = strings.TrimSpace(stmt[:loc[0]]), strings.TrimSpace(stmt[loc[1]:])
	}
	r := Remembered{Type: classify(what), Description: extCutWords(extOneLine(stmt), 150)}
	r.Name = entryName(what)
	switch r.Type {
	case "feedback":
		if why == "" {
			why = fmt.Sprintf("the user asked to remember it (%s).", today)
		}
		r.Content = fmt.Sprintf("%s\n\nWhy: %s\nHow to apply: %s\n", upperFirst(what), upperFirst(why), upperFirst(what))
	case "project":
		if d := isoDate().FindString(stmt); d != "" {
			if _, err := store.ParseDate(d); err == nil {
				r.Due = d
			}
		}
		r.Content = upperFirst(stmt) + "\n"
	default:
		r.Content = upperFirst(stmt) + "\n"
	}
	return r, true
}

// classify picks an entry type by the statement's own words. It is the
// fallback of a run without a model only: with one, the model decides.
func classify(s string) string {
	switch {
	case userCues().MatchString(s):
		return "user"
	case isoDate().MatchString(s) || projectCues().MatchString(s):
		return "project"
	case refCues().MatchString(s):
		return "reference"
	case feedbackCues().MatchString(s):
		return "feedback"
	}
	return "user"
}

// entryName is the entry's stable name: the salient words of the
// statement (the same statement always gives the same name, so that a
// repeated request updates its entry).
func entryName(s string) string {
	if n := extNameOf([]string{s}); n != "" {
		return n
	}
	sum := sha256.Sum256([]byte(extKey(s)))
	return "memory-" + hex.EncodeToString(sum[:4])
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	r := []rune(s)
	if r[0] >= 'a' && r[0] <= 'z' {
		r[0] -= 'a' - 'A'
	}
	return string(r)
}
