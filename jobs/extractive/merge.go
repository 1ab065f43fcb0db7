package extractive

import (
	"strings"

	"github.com/reme-dev/reme/store"
)

// Parsing and updating an existing extractive body for Merge.
// A body is read as a preamble and "## " sections; lines are kept as
// they are unless a section has to change. Code fences are not tracked: a
// line starting with "## " always opens a section, which keeps the parse
// stable from one merge to the next.

var (
	extHeadingRe = store.LazyRegexp(`^##(?:[ \t]+(.*?))?[ \t]*$`)
	extBulletRe  = store.LazyRegexp(`^[-*+][ \t]+`)
	extStampRe   = store.LazyRegexp(`^\[(\d{4}-\d{2}-\d{2}(?:[ T]\d{2}:\d{2}(?::\d{2})?)?)\][ \t]*`)
)

// extCanonical is the order of the known sections.
var extCanonical = []string{extKeyTitle, extNotesTitle, extSourceTitle}

type extSection struct {
	title   string   // "" for the preamble
	lines   []string // raw lines, the heading first (none for the preamble)
	known   bool     // one of extCanonical
	changed bool     // re-laid out on render
	entries []extEntry
}

// extEntry is a bullet (with its indented continuation lines) or any
// other single line of a section.
type extEntry struct {
	lines  []string
	bullet bool
	stamp  string
	key    string
}

type extDoc struct {
	secs []*extSection
}

func extParseDoc(body string) *extDoc {
	body = strings.ReplaceAll(body, "\r\n", "\n")
	body = strings.TrimSuffix(body, "\n")
	doc := &extDoc{secs: []*extSection{{}}}
	for _, line := range strings.Split(body, "\n") {
		line = strings.TrimRight(line, "\r")
		if m := extHeadingRe().FindStringSubmatch(line); m != nil {
			title := strings.TrimSpace(m[1])
			if t := strings.TrimRight(title, "#"); t == "" || strings.HasSuffix(t, " ") || strings.HasSuffix(t, "\t") {
				title = strings.TrimSpace(t) // closing sequence: "## Source ##"
			}
			sec := &extSection{title: title, lines: []string{line}}
			for _, c := range extCanonical {
				if strings.EqualFold(title, c) && doc.find(c) == nil {
					sec.title, sec.known = c, true
				}
			}
			doc.secs = append(doc.secs, sec)
			continue
		}
		cur := doc.secs[len(doc.secs)-1]
		cur.lines = append(cur.lines, line)
	}
	return doc
}

func (d *extDoc) find(title string) *extSection {
	for _, s := range d.secs {
		if s.known && s.title == title {
			return s
		}
	}
	return nil
}

// section returns the known section title, adding it when it is missing:
// before the next known section that exists, else at the end.
func (d *extDoc) section(title string) *extSection {
	if s := d.find(title); s != nil {
		return s
	}
	sec := &extSection{title: title, lines: []string{"## " + title}, known: true, changed: true}
	at := len(d.secs)
	after := false
	for _, c := range extCanonical {
		if c == title {
			after = true
			continue
		}
		if !after {
			continue
		}
		if next := d.find(c); next != nil {
			for i, s := range d.secs {
				if s == next {
					at = i
				}
			}
			break
		}
	}
	d.secs = append(d.secs[:at], append([]*extSection{sec}, d.secs[at:]...)...)
	return sec
}

func (s *extSection) parseEntries() {
	s.entries = nil
	for _, line := range s.lines[1:] {
		n := len(s.entries)
		if n > 0 && s.entries[n-1].bullet && strings.TrimSpace(line) != "" && (line[0] == ' ' || line[0] == '\t') {
			e := &s.entries[n-1]
			e.lines = append(e.lines, line)
			e.stamp, e.key = extBulletKey(e.lines)
			continue
		}
		e := extEntry{lines: []string{line}}
		if extBulletRe().MatchString(line) {
			e.bullet = true
			e.stamp, e.key = extBulletKey(e.lines)
		}
		s.entries = append(s.entries, e)
	}
}

// extBulletKey reads a bullet's time prefix and comparison key.
func extBulletKey(lines []string) (stamp, key string) {
	parts := make([]string, len(lines))
	for i, l := range lines {
		parts[i] = strings.TrimSpace(l)
	}
	text := extBulletRe().ReplaceAllString(strings.Join(parts, " "), "")
	stamp, text = extSplitStamp(text)
	return stamp, extKey(text)
}

// mergeItems adds the items whose text is not there yet, keeping at most
// max bullets in all when max > 0. An added item goes after the last
// bullet whose time (an untimed bullet takes its predecessor's) is not
// later than its own, and after the item added before it.
func (s *extSection) mergeItems(items []extItem, max int, placeholder string) {
	s.parseEntries()
	have := map[string]bool{}
	bullets := 0
	for _, e := range s.entries {
		if e.bullet {
			have[e.key] = true
			bullets++
		}
	}
	var add []extItem
	for _, it := range items {
		k := extKey(it.text)
		if have[k] {
			continue
		}
		if max > 0 && bullets+len(add) >= max {
			break
		}
		have[k] = true
		add = append(add, it)
	}
	if len(add) == 0 {
		if s.changed && bullets == 0 && !s.hasText() {
			s.entries = append(s.entries, extEntry{lines: []string{placeholder}})
		}
		return
	}
	s.changed = true
	kept := s.entries[:0]
	for _, e := range s.entries {
		if !e.bullet && strings.TrimSpace(e.lines[0]) == placeholder {
			continue
		}
		kept = append(kept, e)
	}
	s.entries = extTrimBlank(kept)
	floor := -1 // index of the entry added last
	for _, it := range add {
		pos, first, last := -1, -1, -1
		eff := ""
		for j, e := range s.entries {
			if !e.bullet {
				continue
			}
			if first < 0 {
				first = j
			}
			last = j
			if e.stamp != "" {
				eff = e.stamp
			}
			if it.stamp != "" && eff <= it.stamp {
				pos = j + 1
			}
		}
		switch {
		case it.stamp == "" && floor >= 0:
			pos = floor + 1
		case it.stamp == "" && last >= 0:
			pos = last + 1
		case pos < 0 && first >= 0:
			pos = first
		case pos < 0:
			pos = len(s.entries)
		}
		if pos <= floor {
			pos = floor + 1
		}
		e := extEntry{lines: []string{it.line()}, bullet: true, stamp: it.stamp, key: extKey(it.text)}
		s.entries = append(s.entries[:pos], append([]extEntry{e}, s.entries[pos:]...)...)
		floor = pos
	}
}

func (s *extSection) hasText() bool {
	for _, e := range s.entries {
		for _, l := range e.lines {
			if strings.TrimSpace(l) != "" {
				return true
			}
		}
	}
	return false
}

func extTrimBlank(es []extEntry) []extEntry {
	blank := func(e extEntry) bool { return !e.bullet && strings.TrimSpace(e.lines[0]) == "" }
	for len(es) > 0 && blank(es[0]) {
		es = es[1:]
	}
	for len(es) > 0 && blank(es[len(es)-1]) {
		es = es[:len(es)-1]
	}
	return es
}

// ensureSource adds the source section, or the link line when the
// section does not mention the conversation yet.
func (d *extDoc) ensureSource(link string) {
	s := d.section(extSourceTitle)
	s.parseEntries()
	if s.changed && !s.hasText() {
		s.entries = []extEntry{{lines: []string{extSourceLine(link)}}}
		return
	}
	target := strings.TrimSuffix(strings.TrimPrefix(link, "[["), "]]")
	if link == "" || strings.Contains(strings.Join(s.lines[1:], "\n"), target) {
		return
	}
	s.changed = true
	s.entries = extTrimBlank(s.entries)
	if len(s.entries) > 0 {
		s.entries = append(s.entries, extEntry{lines: []string{""}})
	}
	s.entries = append(s.entries, extEntry{lines: []string{extSourceLine(link)}})
}

// render writes unchanged sections byte for byte and changed ones as
// heading, blank line, entries, blank line.
func (d *extDoc) render() string {
	var out []string
	for _, s := range d.secs {
		if !s.changed {
			out = append(out, s.lines...)
			continue
		}
		if n := len(out); n > 0 && strings.TrimSpace(out[n-1]) != "" {
			out = append(out, "")
		}
		out = append(out, s.lines[0], "")
		for _, e := range extTrimBlank(s.entries) {
			out = append(out, e.lines...)
		}
		out = append(out, "")
	}
	return strings.TrimRight(strings.Join(out, "\n"), " \t\n") + "\n"
}
