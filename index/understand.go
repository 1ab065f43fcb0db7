package index

import (
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"
)

// DateRange is a span of days, both ends included (YYYY-MM-DD).
type DateRange struct {
	Start string `json:"start"`
	End   string `json:"end"`
	// Text is the words of the question that named it.
	Text string `json:"text"`
}

// A question often says when: "what did we decide last week", "昨天的会议".
// understandDates finds the first such expression (English or Chinese,
// relative ones counted from now in the workspace time zone), and returns
// the question without it, so that "week" or "昨天" are not searched as
// words.
func understandDates(q string, now time.Time) (string, *DateRange) {
	if !mayNameDate(q) {
		return q, nil // most questions: no pattern to compile or run
	}
	today := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, now.Location())
	best := -1
	var bestLoc []int
	var bestRange [2]time.Time
	for _, p := range datePatterns() {
		for _, loc := range p.re.FindAllStringSubmatchIndex(q, -1) {
			m := make([]string, len(loc)/2)
			for i := range m {
				if loc[2*i] >= 0 {
					m[i] = q[loc[2*i]:loc[2*i+1]]
				}
			}
			from, to, ok := p.resolve(m, today)
			if !ok {
				continue
			}
			if best < 0 || loc[0] < best {
				best, bestLoc, bestRange = loc[0], loc[:2], [2]time.Time{from, to}
			}
			break
		}
	}
	if best < 0 {
		return q, nil
	}
	text := strings.TrimSpace(q[bestLoc[0]:bestLoc[1]])
	rest := strings.Join(strings.Fields(q[:bestLoc[0]]+" "+q[bestLoc[1]:]), " ")
	return rest, &DateRange{
		Start: bestRange[0].Format(time.DateOnly),
		End:   bestRange[1].Format(time.DateOnly),
		Text:  text,
	}
}

type datePattern struct {
	re      *regexp.Regexp
	resolve func(m []string, today time.Time) (from, to time.Time, ok bool)
}

func day(t time.Time) (time.Time, time.Time, bool) { return t, t, true }

// weekOf is the Monday-to-Sunday week holding t.
func weekOf(t time.Time) (time.Time, time.Time) {
	off := (int(t.Weekday()) + 6) % 7 // days since Monday
	mon := t.AddDate(0, 0, -off)
	return mon, mon.AddDate(0, 0, 6)
}

func monthOf(t time.Time) (time.Time, time.Time) {
	first := time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, t.Location())
	return first, first.AddDate(0, 1, -1)
}

func yearOf(y int, loc *time.Location) (time.Time, time.Time) {
	return time.Date(y, 1, 1, 0, 0, 0, 0, loc), time.Date(y, 12, 31, 0, 0, 0, 0, loc)
}

// upTo cuts a range that runs past today.
func upTo(from, to, today time.Time) (time.Time, time.Time, bool) {
	if to.After(today) {
		to = today
	}
	return from, to, !from.After(to)
}

var monthNames = map[string]time.Month{
	"january": 1, "jan": 1, "february": 2, "feb": 2, "march": 3, "mar": 3, "april": 4, "apr": 4,
	"may": 5, "june": 6, "jun": 6, "july": 7, "jul": 7, "august": 8, "aug": 8, "september": 9,
	"sep": 9, "sept": 9, "october": 10, "oct": 10, "november": 11, "nov": 11, "december": 12, "dec": 12,
}

var weekdayNames = map[string]time.Weekday{
	"sunday": 0, "monday": 1, "tuesday": 2, "wednesday": 3, "thursday": 4, "friday": 5, "saturday": 6,
	"日": 0, "天": 0, "一": 1, "二": 2, "三": 3, "四": 4, "五": 5, "六": 6,
}

// cnNumber reads 1-99 in digits or Chinese numerals (一, 十二, 二十五, 两).
func cnNumber(s string) (int, bool) {
	if n, err := strconv.Atoi(s); err == nil {
		return n, true
	}
	digits := map[rune]int{'一': 1, '二': 2, '两': 2, '三': 3, '四': 4, '五': 5, '六': 6, '七': 7, '八': 8, '九': 9}
	rs := []rune(s)
	switch {
	case len(rs) == 1 && rs[0] == '十':
		return 10, true
	case len(rs) == 1:
		n, ok := digits[rs[0]]
		return n, ok
	case len(rs) == 2 && rs[0] == '十':
		n, ok := digits[rs[1]]
		return 10 + n, ok
	case len(rs) == 2 && rs[1] == '十':
		n, ok := digits[rs[0]]
		return 10 * n, ok
	case len(rs) == 3 && rs[1] == '十':
		a, ok1 := digits[rs[0]]
		b, ok2 := digits[rs[2]]
		return 10*a + b, ok1 && ok2
	}
	return 0, false
}

// englishNumber reads "a", "one" … "twelve" or digits.
func englishNumber(s string) (int, bool) {
	words := map[string]int{"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
		"seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12}
	if n, ok := words[strings.ToLower(s)]; ok {
		return n, true
	}
	n, err := strconv.Atoi(s)
	return n, err == nil && n >= 0
}

func validDate(y, m, d int, loc *time.Location) (time.Time, bool) {
	if m < 1 || m > 12 || d < 1 || d > 31 {
		return time.Time{}, false
	}
	t := time.Date(y, time.Month(m), d, 0, 0, 0, 0, loc)
	return t, t.Day() == d
}

// recentMonth is the latest month m that is not after today's month.
func recentMonth(m time.Month, today time.Time) int {
	if m > today.Month() {
		return today.Year() - 1
	}
	return today.Year()
}

const (
	wb  = `(?i)(?:^|\b)`
	we  = `(?:\b|$)`
	num = `(\d+|a|an|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)`
	mon = `(january|february|march|april|may|june|july|august|september|october|november|december|jan|feb|mar|apr|jun|jul|aug|sept|sep|oct|nov|dec)`
	wkd = `(monday|tuesday|wednesday|thursday|friday|saturday|sunday)`
	cnN = `(\d+|[一二两三四五六七八九十]+)`
)

// mayNameDate is a quick test for a word every date pattern needs: a
// digit, a CJK date character, or an English date word.
func mayNameDate(q string) bool {
	for _, r := range q {
		if r >= '0' && r <= '9' || strings.ContainsRune("天周月年前昨今星期礼拜", r) {
			return true
		}
	}
	for _, w := range strings.FieldsFunc(strings.ToLower(q), func(r rune) bool { return !unicode.IsLetter(r) }) {
		if dateWords()[w] {
			return true
		}
	}
	return false
}

// Built on the first search, like datePatterns.
var dateWords = sync.OnceValue(func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`yesterday today tonight ago week weeks month months year years day days morning
		afternoon evening monday tuesday wednesday thursday friday saturday sunday`) {
		m[w] = true
	}
	for w := range monthNames {
		m[w] = true
	}
	return m
})

var datePatterns = sync.OnceValue(func() []datePattern {
	return []datePattern{
		// ISO dates and months: 2026-05-03, 2026/5/3, 2026-05.
		{regexp.MustCompile(`\b(\d{4})[-/](\d{1,2})[-/](\d{1,2})\b`), func(m []string, t time.Time) (time.Time, time.Time, bool) {
			y, _ := strconv.Atoi(m[1])
			mo, _ := strconv.Atoi(m[2])
			d, _ := strconv.Atoi(m[3])
			v, ok := validDate(y, mo, d, t.Location())
			return v, v, ok
		}},
		{regexp.MustCompile(`\b(\d{4})-(\d{1,2})\b`), func(m []string, t time.Time) (time.Time, time.Time, bool) {
			y, _ := strconv.Atoi(m[1])
			mo, _ := strconv.Atoi(m[2])
			v, ok := validDate(y, mo, 1, t.Location())
			if !ok {
				return v, v, false
			}
			a, b := monthOf(v)
			return a, b, true
		}},
		// Chinese absolute dates: 2026年5月3日, 2026年5月, 5月3日, 5月3号, 5月.
		{regexp.MustCompile(`(\d{4})年(\d{1,2})月(?:(\d{1,2})[日号])?`), func(m []string, t time.Time) (time.Time, time.Time, bool) {
			y, _ := strconv.Atoi(m[1])
			mo, _ := strconv.Atoi(m[2])
			if m[3] != "" {
				d, _ := strconv.Atoi(m[3])
				v, ok := validDate(y, mo, d, t.Location())
				return v, v, ok
			}
			v, ok := validDate(y, mo, 1, t.Location())
			a, b := monthOf(v)
			return a, b, ok
		}},
		{regexp.MustCompile(`(\d{1,2})月(?:(\d{1,2})[日号])?`), func(m []string, t time.Time) (time.Time, time.Time, bool) {
			mo, _ := strconv.Atoi(m[1])
			if mo < 1 || mo > 12 {
				return t, t, false
			}
			y := recentMonth(time.Month(mo), t)
			if m[2] != "" {
				d, _ := strconv.Atoi(m[2])
				v, ok := validDate(y, mo, d, t.Location())
				return v, v, ok
			}
			a, b := monthOf(time.Date(y, time.Month(mo), 1, 0, 0, 0, 0, t.Location()))
			return a, b, true
		}},
		// Chinese relative days, weeks, months, years.
		{regexp.MustCompile(`大前天|前天|昨天|昨日|今天|今日|今早|今晚`), func(m []string, t time.Time) (time.Time, time.Time, bool) {
			switch m[0] {
			case "大前天":
				return day(t.AddDate(0, 0, -3))
			case "前天":
				return day(t.AddDate(0, 0, -2))
			case "昨天", "昨日":
				return day(t.AddDate(0, 0, -1))
			}
			return day(t)
		}},
		{regexp.MustCompile(cnN + `(天|周|个星期|星期|个礼拜|个月|年)前`), func(m []string, t time.Time) (time.Time, time.Time, bool) {
			n, ok := cnNumber(m[1])
			if !ok {
				return t, t, false
			}
			switch m[2] {
			case "天":
				return day(t.AddDate(0, 0, -n))
			case "个月":
				a, b := monthOf(t.AddDate(0, -n, 0))
				return a, b, true
			case "年":
				a, b := yearOf(t.Year()-n, t.Location())
				return a, b, true
			}
			a, b := weekOf(t.AddDate(0, 0, -7*n))
			return a, b, true
		}},
		{regexp.MustCompile(`(上|这|本)(?:个)?(?:周|星期|礼拜)([一二三四五六日天])?`), func(m []string, t time.Time) (time.Time, time.Time, bool) {
			base := t
			if m[1] == "上" {
				base = t.AddDate(0, 0, -7)
			}
			mon, sun := weekOf(base)
			if m[2] != "" {
				wd := weekdayNames[m[2]]
				return day(mon.AddDate(0, 0, (int(wd)+6)%7))
			}
			return upTo(mon, sun, t)
		}},
		{regexp.MustCompile(`(?:周|星期|礼拜)([一二三四五六日天])`), func(m []string, t time.Time) (time.Time, time.Time, bool) {
			return day(lastWeekday(t, weekdayNames[m[1]], true))
		}},
		{regexp.MustCompile(`上个?月|这个月|本月|去年|今年|前年`), func(m []string, t time.Time) (time.Time, time.Time, bool) {
			switch m[0] {
			case "上个月", "上月":
				a, b := monthOf(t.AddDate(0, -1, 0))
				return a, b, true
			case "这个月", "本月":
				a, _ := monthOf(t)
				return a, t, true
			case "去年":
				a, b := yearOf(t.Year()-1, t.Location())
				return a, b, true
			case "前年":
				a, b := yearOf(t.Year()-2, t.Location())
				return a, b, true
			}
			a, _ := yearOf(t.Year(), t.Location())
			return a, t, true
		}},
		// English: "May 3, 2026", "3 May 2026", "May 3rd", "in May 2026", "in May".
		{regexp.MustCompile(wb + mon + `\.?\s+(\d{1,2})(?:st|nd|rd|th)?(?:,?\s+(\d{4}))?` + we), func(m []string, t time.Time) (time.Time, time.Time, bool) {
			return monthDay(m[1], m[2], m[3], t)
		}},
		{regexp.MustCompile(wb + `(\d{1,2})(?:st|nd|rd|th)?\s+(?:of\s+)?` + mon + `(?:,?\s+(\d{4}))?` + we), func(m []string, t time.Time) (time.Time, time.Time, bool) {
			return monthDay(m[2], m[1], m[3], t)
		}},
		{regexp.MustCompile(wb + `(?:in|during|from|of)\s+` + mon + `(?:,?\s+(\d{4}))?` + we), func(m []string, t time.Time) (time.Time, time.Time, bool) {
			mo := monthNames[strings.ToLower(m[1])]
			y := recentMonth(mo, t)
			if m[2] != "" {
				y, _ = strconv.Atoi(m[2])
			}
			a, b := monthOf(time.Date(y, mo, 1, 0, 0, 0, 0, t.Location()))
			return a, b, true
		}},
		{regexp.MustCompile(wb + mon + `\s+(\d{4})` + we), func(m []string, t time.Time) (time.Time, time.Time, bool) {
			mo := monthNames[strings.ToLower(m[1])]
			y, _ := strconv.Atoi(m[2])
			a, b := monthOf(time.Date(y, mo, 1, 0, 0, 0, 0, t.Location()))
			return a, b, true
		}},
		// English relative expressions.
		{regexp.MustCompile(wb + `(?:the\s+)?day\s+before\s+yesterday` + we), func(m []string, t time.Time) (time.Time, time.Time, bool) {
			return day(t.AddDate(0, 0, -2))
		}},
		{regexp.MustCompile(wb + `(yesterday|today|tonight|this\s+(?:morning|afternoon|evening))` + we), func(m []string, t time.Time) (time.Time, time.Time, bool) {
			if strings.EqualFold(m[1], "yesterday") {
				return day(t.AddDate(0, 0, -1))
			}
			return day(t)
		}},
		{regexp.MustCompile(wb + num + `\s+(day|week|month|year)s?\s+ago` + we), func(m []string, t time.Time) (time.Time, time.Time, bool) {
			n, ok := englishNumber(m[1])
			if !ok {
				return t, t, false
			}
			switch strings.ToLower(m[2]) {
			case "day":
				return day(t.AddDate(0, 0, -n))
			case "week":
				a, b := weekOf(t.AddDate(0, 0, -7*n))
				return a, b, true
			case "month":
				a, b := monthOf(t.AddDate(0, -n, 0))
				return a, b, true
			}
			a, b := yearOf(t.Year()-n, t.Location())
			return a, b, true
		}},
		{regexp.MustCompile(wb + `(?:in\s+)?the\s+(?:last|past)\s+` + num + `\s+(day|week|month)s?` + we), func(m []string, t time.Time) (time.Time, time.Time, bool) {
			n, ok := englishNumber(m[1])
			if !ok || n == 0 {
				return t, t, false
			}
			switch strings.ToLower(m[2]) {
			case "day":
				return t.AddDate(0, 0, -n+1), t, true
			case "week":
				return t.AddDate(0, 0, -7*n+1), t, true
			}
			return t.AddDate(0, -n, 1), t, true
		}},
		{regexp.MustCompile(wb + `(?:in\s+)?the\s+(?:last|past)\s+(week|month|year)` + we), func(m []string, t time.Time) (time.Time, time.Time, bool) {
			switch strings.ToLower(m[1]) {
			case "week":
				return t.AddDate(0, 0, -6), t, true
			case "month":
				return t.AddDate(0, -1, 1), t, true
			}
			return t.AddDate(-1, 0, 1), t, true
		}},
		{regexp.MustCompile(wb + `(last|this|previous|past)\s+(week|month|year)` + we), func(m []string, t time.Time) (time.Time, time.Time, bool) {
			this := strings.EqualFold(m[1], "this")
			switch strings.ToLower(m[2]) {
			case "week":
				if this {
					a, b := weekOf(t)
					return upTo(a, b, t)
				}
				a, b := weekOf(t.AddDate(0, 0, -7))
				return a, b, true
			case "month":
				if this {
					a, _ := monthOf(t)
					return a, t, true
				}
				a, b := monthOf(time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, t.Location()).AddDate(0, -1, 0))
				return a, b, true
			}
			if this {
				a, _ := yearOf(t.Year(), t.Location())
				return a, t, true
			}
			a, b := yearOf(t.Year()-1, t.Location())
			return a, b, true
		}},
		// A bare weekday is left alone: "Sunday brunch" is more often a topic.
		{regexp.MustCompile(wb + `(last|this|on)\s+` + wkd + we), func(m []string, t time.Time) (time.Time, time.Time, bool) {
			wd := weekdayNames[strings.ToLower(m[2])]
			if strings.EqualFold(m[1], "last") {
				return day(lastWeekday(t, wd, false))
			}
			return day(lastWeekday(t, wd, true))
		}},
	}
})

// lastWeekday is the latest day with weekday wd up to today (or before
// today when today is excluded).
func lastWeekday(today time.Time, wd time.Weekday, includeToday bool) time.Time {
	back := (int(today.Weekday()) - int(wd) + 7) % 7
	if back == 0 && !includeToday {
		back = 7
	}
	return today.AddDate(0, 0, -back)
}

// monthDay is the day named by an English month, a day of the month and
// maybe a year (else the most recent such month).
func monthDay(month, day, year string, t time.Time) (time.Time, time.Time, bool) {
	mo := monthNames[strings.ToLower(month)]
	d, _ := strconv.Atoi(day)
	y := recentMonth(mo, t)
	if year != "" {
		y, _ = strconv.Atoi(year)
	}
	v, ok := validDate(y, int(mo), d, t.Location())
	return v, v, ok
}
