package index

// The Porter stemmer (M.F. Porter, "An algorithm for suffix stripping",
// 1980), the algorithm SQLite's porter tokenizer implements. reme stems in Go
// and gives FTS5 the stems, so that the index, the query and the scoring of
// result lines all see the same tokens.

// porterStem stems a lower-case ASCII word in place and returns the stem
// (a prefix of b, sometimes with its last letters changed). Words shorter
// than three letters are returned as they are.
func porterStem(b []byte) []byte {
	if len(b) < 3 {
		return b
	}
	s := stemmer{b: b}
	s.step1ab()
	if len(s.b) > 1 {
		s.step1c()
		s.step2()
		s.step3()
		s.step4()
		s.step5()
	}
	return s.b
}

type stemmer struct {
	b []byte
	j int // end of the stem when a suffix matched (exclusive)
}

// cons reports whether b[i] is a consonant.
func (s *stemmer) cons(i int) bool {
	switch s.b[i] {
	case 'a', 'e', 'i', 'o', 'u':
		return false
	case 'y':
		return i == 0 || !s.cons(i-1)
	}
	return true
}

// m measures the number of consonant-vowel sequences in b[:j].
func (s *stemmer) m() int {
	n, i := 0, 0
	for {
		if i >= s.j {
			return n
		}
		if !s.cons(i) {
			break
		}
		i++
	}
	i++
	for {
		for {
			if i >= s.j {
				return n
			}
			if s.cons(i) {
				break
			}
			i++
		}
		i++
		n++
		for {
			if i >= s.j {
				return n
			}
			if !s.cons(i) {
				break
			}
			i++
		}
		i++
	}
}

// vowelInStem reports a vowel in b[:j].
func (s *stemmer) vowelInStem() bool {
	for i := 0; i < s.j; i++ {
		if !s.cons(i) {
			return true
		}
	}
	return false
}

// doubleCons reports a double consonant ending at i.
func (s *stemmer) doubleCons(i int) bool {
	return i >= 1 && s.b[i] == s.b[i-1] && s.cons(i)
}

// cvc reports consonant-vowel-consonant ending at i, the last not w, x or y.
func (s *stemmer) cvc(i int) bool {
	if i < 2 || !s.cons(i) || s.cons(i-1) || !s.cons(i-2) {
		return false
	}
	switch s.b[i] {
	case 'w', 'x', 'y':
		return false
	}
	return true
}

// ends reports whether b ends with suffix and sets j to the stem's end.
func (s *stemmer) ends(suffix string) bool {
	n := len(suffix)
	if n > len(s.b) || string(s.b[len(s.b)-n:]) != suffix {
		return false
	}
	s.j = len(s.b) - n
	return true
}

// setTo replaces b[j:] with r.
func (s *stemmer) setTo(r string) { s.b = append(s.b[:s.j], r...) }

// r replaces the suffix when the stem's measure is positive.
func (s *stemmer) r(r string) {
	if s.m() > 0 {
		s.setTo(r)
	}
}

func (s *stemmer) step1ab() {
	if s.b[len(s.b)-1] == 's' {
		switch {
		case s.ends("sses"):
			s.b = s.b[:len(s.b)-2]
		case s.ends("ies"):
			s.setTo("i")
		case len(s.b) >= 2 && s.b[len(s.b)-2] != 's':
			s.b = s.b[:len(s.b)-1]
		}
	}
	if s.ends("eed") {
		if s.m() > 0 {
			s.b = s.b[:len(s.b)-1]
		}
		return
	}
	if (s.ends("ed") || s.ends("ing")) && s.vowelInStem() {
		s.b = s.b[:s.j]
		s.j = len(s.b)
		switch {
		case s.ends("at"):
			s.setTo("ate")
		case s.ends("bl"):
			s.setTo("ble")
		case s.ends("iz"):
			s.setTo("ize")
		case s.doubleCons(len(s.b) - 1):
			switch s.b[len(s.b)-1] {
			case 'l', 's', 'z':
			default:
				s.b = s.b[:len(s.b)-1]
			}
		default:
			s.j = len(s.b)
			if s.m() == 1 && s.cvc(len(s.b)-1) {
				s.b = append(s.b, 'e')
			}
		}
	}
}

func (s *stemmer) step1c() {
	if s.ends("y") && s.vowelInStem() {
		s.b[len(s.b)-1] = 'i'
	}
}

// step2 maps double suffixes to single ones.
func (s *stemmer) step2() {
	if len(s.b) < 2 {
		return
	}
	for _, p := range step2Rules[s.b[len(s.b)-2]] {
		if s.ends(p[0]) {
			s.r(p[1])
			return
		}
	}
}

var step2Rules = map[byte][][2]string{
	'a': {{"ational", "ate"}, {"tional", "tion"}},
	'c': {{"enci", "ence"}, {"anci", "ance"}},
	'e': {{"izer", "ize"}},
	'l': {{"bli", "ble"}, {"alli", "al"}, {"entli", "ent"}, {"eli", "e"}, {"ousli", "ous"}},
	'o': {{"ization", "ize"}, {"ation", "ate"}, {"ator", "ate"}},
	's': {{"alism", "al"}, {"iveness", "ive"}, {"fulness", "ful"}, {"ousness", "ous"}},
	't': {{"aliti", "al"}, {"iviti", "ive"}, {"biliti", "ble"}},
	'g': {{"logi", "log"}},
}

func (s *stemmer) step3() {
	for _, p := range step3Rules[s.b[len(s.b)-1]] {
		if s.ends(p[0]) {
			s.r(p[1])
			return
		}
	}
}

var step3Rules = map[byte][][2]string{
	'e': {{"icate", "ic"}, {"ative", ""}, {"alize", "al"}},
	'i': {{"iciti", "ic"}},
	'l': {{"ical", "ic"}, {"ful", ""}},
	's': {{"ness", ""}},
}

func (s *stemmer) step4() {
	if len(s.b) < 2 {
		return
	}
	matched := false
	for _, suf := range step4Rules[s.b[len(s.b)-2]] {
		if s.ends(suf) {
			matched = true
			if suf == "ion" && !(s.j > 0 && (s.b[s.j-1] == 's' || s.b[s.j-1] == 't')) {
				return
			}
			break
		}
	}
	if matched && s.m() > 1 {
		s.b = s.b[:s.j]
	}
}

var step4Rules = map[byte][]string{
	'a': {"al"},
	'c': {"ance", "ence"},
	'e': {"er"},
	'i': {"ic"},
	'l': {"able", "ible"},
	'n': {"ant", "ement", "ment", "ent"},
	'o': {"ion", "ou"},
	's': {"ism"},
	't': {"ate", "iti"},
	'u': {"ous"},
	'v': {"ive"},
	'z': {"ize"},
}

func (s *stemmer) step5() {
	s.j = len(s.b)
	if s.b[len(s.b)-1] == 'e' {
		s.j = len(s.b) - 1
		a := s.m()
		if a > 1 || (a == 1 && !s.cvc(len(s.b)-2)) {
			s.b = s.b[:len(s.b)-1]
		}
	}
	s.j = len(s.b)
	if s.b[len(s.b)-1] == 'l' && s.doubleCons(len(s.b)-1) && s.m() > 1 {
		s.b = s.b[:len(s.b)-1]
	}
}
