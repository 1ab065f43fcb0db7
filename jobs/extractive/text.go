package extractive

import (
	"math"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/reme-dev/reme/store"
)

// Text helpers of the extractive distiller: small talk, stop words,
// cutting at boundaries, time prefixes. The word lists are built on first
// use: most commands never distil.

// extSmallTalkWords are the words a message may consist of and still be
// small talk ("Hi there!", "ok thanks", "Sure, happy to help.").
var extSmallTalkWords = sync.OnceValue(func() map[string]bool {
	return store.WordSet(`hi hello hey hiya howdy yo greetings thanks thank thx ty tysm you
	ok okay k kk cool great good nice perfect awesome fine excellent wonderful lovely bye goodbye cya cheers
	yes yeah yep yup ya no nope nah sure alright right got it morning afternoon evening night day see later
	welcome you're youre much very a lot so np sounds lol haha hahaha hmm um uh oh ah wow there all everyone
	again too indeed certainly absolutely of course problem question happy glad help to be i i'd i'm am
	please done agreed gotcha understood noted will do sir ma'am that's thats
	how can may what assist anything else is with your you'd today`)
})

// extCJKSmallTalk are the CJK phrases (and particles) a small-talk message
// is made of.
var extCJKSmallTalk = sync.OnceValue(func() []string {
	return extByLength(strings.Fields(`你好 您好 哈喽 嗨 谢谢 谢谢你 谢谢您 多谢 感谢 谢啦 好的 好滴 好吧 好嘞 好
	嗯嗯 嗯 哦 噢 喔 行 可以 没问题 收到 明白了 明白 知道了 了解 懂了 再见 拜拜 晚安 早上好 早安 早 下午好 晚上好
	不客气 哈哈哈 哈哈 是的 是 对的 对 没错 棒 太棒了 很好 不错 辛苦了 辛苦 啊 呀 吧 呢 啦 了 的 哇 吗 嘛 非常 很 太
	你 您 大家 们 有什么可以帮你的 有什么可以帮您的 有什么可以帮你 有什么可以帮您 有什么需要 帮忙 乐意效劳 很高兴
	こんにちは ありがとう 안녕하세요 감사합니다`))
})

// extStopWords are left out of salient terms: common English function
// words, conversational fillers, contraction stems and URL parts.
var extStopWords = sync.OnceValue(func() map[string]bool {
	return store.WordSet(`a about above after again against all also am an and any are as at be because been
	before being below between both but by can cannot could did do does doing down during each few for from
	further had has have having he her here hers herself him himself his how i if in into is it its itself me
	more most my myself no nor not of off on once only or other ought our ours ourselves out over own same she
	should so some such than that the their theirs them themselves then there these they this those through to
	too under until up very was we were what when where which while who whom why with would you your yours
	yourself yourselves don doesn didn isn aren wasn weren won wouldn couldn shouldn haven hasn hadn mustn shan
	let ll ve re
	hi hello hey thanks thank please okay yes yeah sure ok
	want wants wanted need needs needed like use using used make makes made help know think get gets got just
	really maybe thing things something anything everything way lot much many well good great new now also
	still even every via per etc tell show give keep see look try going goes done able actually currently
	will shall might must may one two three first second last next another today tomorrow yesterday tonight
	time times day days week weeks month months year years hour hours minute minutes seconds
	across along among around behind beside beyond within without upon toward towards onto since though
	although unless whether yet either neither instead
	http https www com org net html`)
})

// extCJKRunEnd is the end of the run of CJK characters that starts at i.
func extCJKRunEnd(rs []rune, i int) int {
	for i < len(rs) && store.IsCJK(rs[i]) {
		i++
	}
	return i
}

// extIsSmallTalk reports whether a message is only greetings, thanks and
// acknowledgements (in English or CJK); a message without any letter or
// digit (an emoji, "...") is small talk too.
func extIsSmallTalk(s string) bool {
	rs := []rune(s)
	for i := 0; i < len(rs); {
		r := rs[i]
		switch {
		case store.IsCJK(r):
			j := extCJKRunEnd(rs, i)
			if !extAllPhrases(string(rs[i:j]), extCJKSmallTalk()) {
				return false
			}
			i = j
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			j := i
			for j < len(rs) && (unicode.IsLetter(rs[j]) || unicode.IsDigit(rs[j]) || rs[j] == '\'' || rs[j] == '’') && !store.IsCJK(rs[j]) {
				j++
			}
			w := strings.Trim(strings.ReplaceAll(strings.ToLower(string(rs[i:j])), "’", "'"), "'")
			if !extSmallTalkWords()[w] {
				return false
			}
			i = j
		default:
			i++
		}
	}
	return true
}

// extAllPhrases reports whether s is a concatenation of phrases (longest
// match first).
func extAllPhrases(s string, phrases []string) bool {
	for s != "" {
		matched := false
		for _, p := range phrases {
			if rest, ok := strings.CutPrefix(s, p); ok {
				s, matched = rest, true
				break
			}
		}
		if !matched {
			return false
		}
	}
	return true
}

// extIsCJKPunct reports CJK and full-width punctuation (，。！？、：；「」…).
func extIsCJKPunct(r rune) bool {
	return (r >= 0x3000 && r <= 0x303F) || (r >= 0xFF00 && r <= 0xFFEF && !unicode.IsLetter(r) && !unicode.IsDigit(r))
}

// extOneLine makes text one line: invalid UTF-8 replaced, control
// characters dropped, runs of white space (newlines included) collapsed to
// one space.
func extOneLine(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) && !unicode.IsSpace(r) {
			return -1
		}
		return r
	}, s)
	return strings.Join(strings.Fields(s), " ")
}

// extKey is the text a bullet is compared by: no time prefix, case and
// white space folded, trailing punctuation ignored.
func extKey(s string) string {
	_, s = extSplitStamp(extOneLine(s))
	s = strings.ToLower(s)
	return strings.TrimRightFunc(s, func(r rune) bool {
		return unicode.IsSpace(r) || strings.ContainsRune(".!?。！？…", r)
	})
}

// extSentences splits one line of text after . ! ? followed by a space and
// after 。！？.
func extSentences(s string) []string {
	var out []string
	start := 0
	for i, r := range s {
		end := -1
		switch r {
		case '。', '！', '？':
			end = i + utf8.RuneLen(r)
		case '.', '!', '?':
			if j := i + 1; j == len(s) || s[j] == ' ' {
				end = j
			}
		}
		if end > start {
			if t := strings.TrimSpace(s[start:end]); t != "" {
				out = append(out, t)
			}
			start = end
		}
	}
	if t := strings.TrimSpace(s[start:]); t != "" {
		out = append(out, t)
	}
	return out
}

// extCutSentence shortens s to at most max runes ("…" included), after the
// last sentence that ends in the second half, else at a word boundary.
func extCutSentence(s string, max int) string {
	r := []rune(s)
	if len(r) <= max {
		return s
	}
	limit := max - 2 // room for " …"
	best := -1
	for i := max / 2; i <= limit; i++ { // cut after r[i-1]
		switch r[i-1] {
		case '。', '！', '？':
			best = i
		case '.', '!', '?':
			if unicode.IsSpace(r[i]) {
				best = i
			}
		}
	}
	if best < 0 {
		return extCutWords(s, max)
	}
	out := string(r[:best])
	if extIsCJKPunct(r[best-1]) {
		return out + "…"
	}
	return out + " …"
}

// extCutWords shortens s to at most max runes ("…" included), at a space
// or next to a CJK character in the second half, else hard.
func extCutWords(s string, max int) string {
	r := []rune(s)
	if len(r) <= max {
		return s
	}
	limit := max - 1 // room for "…"
	cut := limit
	for i := limit; i > limit/2 && i > 0; i-- { // cut before r[i]
		if unicode.IsSpace(r[i]) || store.IsCJK(r[i]) || store.IsCJK(r[i-1]) || extIsCJKPunct(r[i-1]) {
			cut = i
			break
		}
	}
	out := strings.TrimRightFunc(string(r[:cut]), func(c rune) bool {
		return unicode.IsSpace(c) || strings.ContainsRune(",;:，、；：-–—(（", c)
	})
	if out == "" {
		out = string(r[:limit])
	}
	return out + "…"
}

// Timestamps with a zone are converted to the workspace zone; naive ones
// are taken as written.
var (
	extZonedLayouts = []string{
		time.RFC3339, "2006-01-02T15:04:05Z0700", "2006-01-02 15:04:05Z07:00", "2006-01-02 15:04:05Z0700",
		"2006-01-02T15:04Z07:00", "2006-01-02 15:04Z07:00",
	}
	extNaiveLayouts = []string{"2006-01-02T15:04:05", "2006-01-02 15:04:05", "2006-01-02T15:04", "2006-01-02 15:04"}
)

// extStamp renders a message's created_at as "YYYY-MM-DD HH:MM" in loc
// (a bare date as "YYYY-MM-DD"); "" when it is not a time.
func extStamp(ts string, loc *time.Location) string {
	ts = strings.TrimSpace(ts)
	if ts == "" {
		return ""
	}
	const out = "2006-01-02 15:04"
	for _, layout := range extZonedLayouts {
		if t, err := time.Parse(layout, ts); err == nil {
			return t.In(loc).Format(out)
		}
	}
	for _, layout := range extNaiveLayouts {
		if t, err := time.Parse(layout, ts); err == nil {
			return t.Format(out)
		}
	}
	if t, err := time.Parse(time.DateOnly, ts); err == nil {
		return t.Format(time.DateOnly)
	}
	if n, err := strconv.ParseFloat(ts, 64); err == nil && n > 0 && !math.IsInf(n, 0) {
		if n > 1e12 {
			n /= 1000 // milliseconds
		}
		if n < 1e11 {
			return time.Unix(int64(n), 0).In(loc).Format(out)
		}
	}
	return ""
}

// extSplitStamp splits a leading "[YYYY-MM-DD HH:MM] " off a bullet's
// text; the stamp is normalised to the form extStamp writes.
func extSplitStamp(s string) (stamp, text string) {
	m := extStampRe().FindStringSubmatch(s)
	if m == nil {
		return "", s
	}
	stamp = strings.Replace(m[1], "T", " ", 1)
	if len(stamp) > len("2006-01-02 15:04") {
		stamp = stamp[:len("2006-01-02 15:04")]
	}
	return stamp, s[len(m[0]):]
}
