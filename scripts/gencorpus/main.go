// Command gencorpus writes a synthetic ReMe workspace for benchmarks and load
// tests: N daily memory cards spread over consecutive days, plus the day index
// page of every day that has cards. The output is a pure function of the flags,
// so two runs with the same seed write the same bytes.
//
//	go run ./scripts/gencorpus -n 10000 -out DIR [-seed 1] [-days 365] [-start 2025-01-01]
//	go run ./scripts/gencorpus -locomo FILE.json [-conversations 10] [-seed 1]
//
// With -locomo it writes synthetic conversations with questions in LoCoMo's
// public JSON shape instead, for reme eval (see locomo.go).
package main

import (
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode"
	"unicode/utf8"
)

const (
	// Card size bounds: 2 KB ± 25 %.
	sizeMin = 1536
	sizeMax = 2560
	// Fill targets sit inside the bounds because filling stops only after the
	// sentence that reaches the target.
	targetMin = 1650
	targetMax = 2250

	linksPerCard   = 5
	maxWords       = 28  // longest English sentence, keeps a card's last sentence from overshooting
	swapRate       = 0.2 // share of content words replaced by a vocabulary draw
	figureRate     = 0.12
	zhNameRate     = 0.10
	zhBlockRate    = 0.14 // CJK paragraphs in English cards...
	zhBlockRateZh  = 0.75 // ...and in Chinese cards, about 20 % overall
	zhSentenceRate = 0.6  // Chinese sentences after the first one in a CJK paragraph
	descMinRunes   = 150
	descMaxRunes   = 250
	nearLinkRate   = 0.6 // links mostly point to cards of nearby days, like real notes
	nearLinkSpan   = 200
)

type options struct {
	n     int
	out   string
	seed  uint64
	days  int
	start time.Time
}

type stats struct {
	cards    int
	dayPages int
	bytes    int64
}

func main() {
	os.Exit(run(os.Args[1:], os.Stderr))
}

func run(args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("gencorpus", flag.ContinueOnError)
	fs.SetOutput(stderr)
	n := fs.Int("n", 10000, "number of cards to write")
	out := fs.String("out", "", "workspace directory to write into (required)")
	seed := fs.Uint64("seed", 1, "random seed; the same seed writes the same bytes")
	days := fs.Int("days", 365, "number of consecutive days the cards are spread over")
	start := fs.String("start", "2025-01-01", "first day, YYYY-MM-DD")
	entries := fs.Int("entries", 0, "long-term entries to write under memory/entries (a few duplicated, renamed, expired or past due, for maintain)")
	locomo := fs.String("locomo", "", "write synthetic conversational QA data in LoCoMo's JSON shape to this file instead")
	convs := fs.Int("conversations", 10, "with -locomo: number of conversations")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *locomo != "" {
		if *convs < 1 {
			fmt.Fprintln(stderr, "gencorpus: -conversations must be at least 1")
			return 2
		}
		f, err := os.Create(*locomo)
		if err != nil {
			fmt.Fprintf(stderr, "gencorpus: %v\n", err)
			return 1
		}
		n, err := generateLocomo(f, locomoOptions{conversations: *convs, seed: *seed})
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			fmt.Fprintf(stderr, "gencorpus: %v\n", err)
			return 1
		}
		fmt.Fprintf(stderr, "gencorpus: %d conversations, %d questions in %s\n", *convs, n, *locomo)
		return 0
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "gencorpus: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	day, err := time.Parse(time.DateOnly, *start)
	if err != nil {
		fmt.Fprintf(stderr, "gencorpus: -start must be YYYY-MM-DD, got %q\n", *start)
		return 2
	}
	switch {
	case *out == "":
		fmt.Fprintln(stderr, "gencorpus: -out is required")
		return 2
	case *n < 1:
		fmt.Fprintln(stderr, "gencorpus: -n must be at least 1")
		return 2
	case *days < 1:
		fmt.Fprintln(stderr, "gencorpus: -days must be at least 1")
		return 2
	}
	began := time.Now()
	st, err := generate(options{n: *n, out: *out, seed: *seed, days: *days, start: day})
	if err != nil {
		fmt.Fprintf(stderr, "gencorpus: %v\n", err)
		return 1
	}
	fmt.Fprintf(stderr, "gencorpus: %d cards, %d day pages over %d days, %d bytes in %s\n",
		st.cards, st.dayPages, *days, st.bytes, time.Since(began).Round(time.Millisecond))
	if *entries > 0 {
		if err := writeEntries(*out, *entries, day); err != nil {
			fmt.Fprintf(stderr, "gencorpus: %v\n", err)
			return 1
		}
		fmt.Fprintf(stderr, "gencorpus: %d entries\n", *entries)
	}
	return 0
}

// writeEntries writes n long-term entries in the shape of memory/entries
// (type, name, description, created, updated, due, expires). Every 50th is
// an exact duplicate of the one before, every 50th (offset 10) reuses the
// previous one's name, every 50th (offset 20) expired, every 50th (offset
// 30) a project milestone long past due.
func writeEntries(out string, n int, start time.Time) error {
	dir := filepath.Join(out, "memory", "entries")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create entries directory: %w", err)
	}
	types := []string{"user", "feedback", "project", "reference"}
	topics := []string{"deploy", "search", "billing", "login", "oncall", "roadmap", "editor", "review", "backup", "alerts"}
	for i := 0; i < n; i++ {
		typ, name, body := types[i%4], fmt.Sprintf("entry %04d", i), ""
		topic := topics[i%len(topics)]
		switch typ {
		case "feedback":
			body = fmt.Sprintf("Prefer %s answers of style %d.\nWhy: said so on day %d.\nHow to apply: use style %d for %s.\n", topic, i, i%97, i, topic)
		default:
			body = fmt.Sprintf("The %s fact number %d: look at page %d of the %s runbook.\n", topic, i, i*7%101, topic)
		}
		created := start.AddDate(0, 0, i%300).Format(time.DateOnly)
		extra := ""
		switch i % 50 {
		case 1:
			body = fmt.Sprintf("The %s fact number %d: look at page %d of the %s runbook.\n", topics[(i-1)%len(topics)], i-1, (i-1)*7%101, topics[(i-1)%len(topics)])
			if types[(i-1)%4] == "feedback" {
				body = fmt.Sprintf("Prefer %s answers of style %d.\nWhy: said so on day %d.\nHow to apply: use style %d for %s.\n", topics[(i-1)%len(topics)], i-1, (i-1)%97, i-1, topics[(i-1)%len(topics)])
			}
		case 11:
			name = fmt.Sprintf("entry %04d", i-1)
		case 21:
			extra = "expires: " + start.AddDate(0, 0, 10).Format(time.DateOnly) + "\n"
		case 31:
			typ = "project"
			extra = "due: " + start.AddDate(0, 0, 20).Format(time.DateOnly) + "\n"
		}
		text := fmt.Sprintf("---\ntype: %s\nname: %s\ndescription: %s note %d\ncreated: %s\nupdated: %s\n%s---\n\n%s",
			typ, name, topic, i, created, created, extra, body)
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("entry-%04d.md", i)), []byte(text), 0o644); err != nil {
			return fmt.Errorf("write entry: %w", err)
		}
	}
	return nil
}

// card is one planned memory card; desc is filled in when it is rendered.
type card struct {
	date     string
	name     string
	zh       bool
	title    string
	headings [3]string
	sid      string
	tags     [2]string
	desc     string
}

func (c *card) path() string { return "daily/" + c.date + "/" + c.name + ".md" }

func generate(o options) (stats, error) {
	daily := filepath.Join(o.out, "daily")
	// Mixing two corpora in one directory would leave day pages that do not
	// match the cards, so refuse instead of overwriting.
	if ents, err := os.ReadDir(daily); err == nil && len(ents) > 0 {
		return stats{}, fmt.Errorf("%s is not empty; remove it or choose another -out", daily)
	}
	m := buildModel()
	cards := plan(o)

	dates := make([]string, 0, o.days)
	for i := range cards {
		if i == 0 || cards[i].date != cards[i-1].date {
			dates = append(dates, cards[i].date)
		}
	}
	for _, d := range dates {
		if err := os.MkdirAll(filepath.Join(daily, d), 0o755); err != nil {
			return stats{}, fmt.Errorf("create day directory: %w", err)
		}
	}

	// Each card has its own random stream, so rendering in parallel stays deterministic.
	var (
		next    atomic.Int64
		total   atomic.Int64
		wg      sync.WaitGroup
		errOnce sync.Once
		werr    error
	)
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			var g gen
			for {
				i := int(next.Add(1) - 1)
				if i >= len(cards) {
					return
				}
				data := g.render(o.seed, i, cards, m)
				if err := os.WriteFile(filepath.Join(o.out, filepath.FromSlash(cards[i].path())), data, 0o644); err != nil {
					errOnce.Do(func() { werr = fmt.Errorf("write card: %w", err) })
					return
				}
				total.Add(int64(len(data)))
			}
		})
	}
	wg.Wait()
	if werr != nil {
		return stats{}, werr
	}

	lo := 0
	for _, d := range dates {
		hi := lo
		for hi < len(cards) && cards[hi].date == d {
			hi++
		}
		page := dayPage(d, cards[lo:hi])
		if err := os.WriteFile(filepath.Join(daily, d+".md"), page, 0o644); err != nil {
			return stats{}, fmt.Errorf("write day page: %w", err)
		}
		total.Add(int64(len(page)))
		lo = hi
	}
	return stats{cards: len(cards), dayPages: len(dates), bytes: total.Load()}, nil
}

// dayPage renders daily/<date>.md as ReMe's refresh_day_index does: one line per
// card sorted by path, session_id and source_conversation hidden. The date is
// quoted as PyYAML writes it, because YAML 1.1 readers (PyYAML, yaml.v3 into an
// interface) would otherwise turn the name into a timestamp.
func dayPage(date string, cards []card) []byte {
	var b strings.Builder
	b.WriteString("---\nname: '" + date + "'\ndescription: " + strconv.Itoa(len(cards)) + " note(s) today.\n---\n\n")
	b.WriteString("<!-- notes:auto -->\n")
	for i := range cards {
		c := &cards[i]
		b.WriteString("- [[" + c.path() + "]] name: " + c.name + " description: " + c.desc +
			" memory_tags: [" + c.tags[0] + ", " + c.tags[1] + "]\n")
	}
	b.WriteString("<!-- /notes:auto -->\n")
	return []byte(b.String())
}

var (
	nameTopics = []string{"retrieval", "login", "deploy", "rollback", "cache", "migration", "oncall",
		"alert", "quota", "index", "latency", "schema", "token", "session", "billing", "export", "sync",
		"roadmap", "incident", "upgrade", "flaky-test", "rate-limit", "backup", "restore", "storage",
		"cost", "search", "ranking", "embedding", "tokenizer", "chunker", "release", "canary", "hotfix",
		"onboarding", "hiring", "budget", "vendor", "pricing", "security", "audit", "permissions", "sso",
		"tenant", "webhook", "queue", "worker", "scheduler", "dashboard", "metrics", "tracing", "logging",
		"postgres", "redis", "sqlite", "dns", "certificate", "docs", "api", "frontend"}
	nameKinds = []string{"decision", "investigation", "regression", "plan", "review", "discussion", "fix",
		"debugging", "proposal", "meeting", "benchmark", "notes", "runbook", "retro", "design", "followup"}
	headingsEn = []string{"Context", "Decisions", "Current state", "Next steps", "Timeline", "Root cause",
		"Findings", "Open questions", "Rejected alternatives", "Risks", "Results", "Setup", "Symptoms",
		"Fix", "Follow-ups", "Background", "Summary", "Action items", "Notes", "Lessons learned"}
	headingsZh = []string{"背景", "结论", "下一步", "现状", "时间线", "原因", "决定", "风险", "待办",
		"结果", "问题", "方案对比", "复盘", "讨论记录"}
	tagPool = []string{"search", "deploy", "auth", "ci", "testing", "infra", "perf", "db", "api",
		"oncall", "incident", "release", "migration", "monitoring", "roadmap", "planning", "security",
		"billing", "cache", "k8s", "logging", "regression", "benchmark", "decision", "refactor", "cjk",
		"embedding", "ranking", "storage", "backup", "cost", "latency", "frontend", "docs", "onboarding",
		"postgres", "redis", "sqlite", "queue", "scheduler", "network", "compliance", "privacy",
		"vendor", "market", "design", "ux", "i18n", "hiring", "budget", "weekly-report", "preferences",
		"runbook", "tokenizer", "chunking", "sso", "user:alice", "user:bob", "user:chenwei", "user:priya"}
)

// plan draws every card's date, unique name, headings, session and tags, then
// sorts the cards by path so card indices follow dates.
func plan(o options) []card {
	r := rand.New(rand.NewPCG(o.seed, 0))
	tagZipf := rand.NewZipf(r, 1.2, 4, uint64(len(tagPool)-1))
	used := make(map[string]bool, o.n)
	cards := make([]card, o.n)
	for i := range cards {
		c := &cards[i]
		c.date = o.start.AddDate(0, 0, r.IntN(o.days)).Format(time.DateOnly)
		c.zh = r.Float64() < zhNameRate
		for {
			var base string
			if c.zh {
				base = pick(r, zhNouns) + pick(r, zhVerbs)
			} else {
				base = pick(r, nameTopics)
				if t := pick(r, nameTopics); r.IntN(2) == 0 && t != base {
					base += "-" + t
				}
				base += "-" + pick(r, nameKinds)
			}
			c.name = base + "-" + strconv.Itoa(1000+r.IntN(9000))
			if !used[c.date+"/"+c.name] {
				used[c.date+"/"+c.name] = true
				if r.IntN(2) == 0 {
					c.title = titleOf(base, c.zh)
				}
				break
			}
		}
		pool := headingsEn
		if c.zh {
			pool = headingsZh
		}
		for j, k := range r.Perm(len(pool))[:3] {
			c.headings[j] = pool[k]
		}
		c.sid = uuid(r)
		c.tags[0] = tagPool[tagZipf.Uint64()]
		for {
			c.tags[1] = tagPool[tagZipf.Uint64()]
			if c.tags[1] != c.tags[0] {
				break
			}
		}
	}
	slices.SortFunc(cards, func(a, b card) int {
		if c := strings.Compare(a.date, b.date); c != 0 {
			return c
		}
		return strings.Compare(a.name+".md", b.name+".md")
	})
	return cards
}

func titleOf(base string, zh bool) string {
	if zh {
		return base
	}
	s := strings.ReplaceAll(base, "-", " ")
	return strings.ToUpper(s[:1]) + s[1:]
}

func uuid(r *rand.Rand) string {
	a, b := r.Uint64(), r.Uint64()
	// Version 4 and variant bits, so the ids look like the ones agent hosts send.
	a = a&^0xf000 | 0x4000
	b = b&^(0xc<<60) | 0x8<<60
	return fmt.Sprintf("%08x-%04x-%04x-%04x-%012x", a>>32, a>>16&0xffff, a&0xffff, b>>48, b&0xffffffffffff)
}

func pick(r *rand.Rand, s []string) string { return s[r.IntN(len(s))] }

// model is a bigram sentence model over the embedded prose plus a
// frequency-ranked vocabulary for word swaps.
type model struct {
	words   []string
	next    [][]int32
	starts  []int32
	content []bool
	vocab   []string // most frequent first, so a Zipf draw over ranks gives a Zipf-like distribution
	svcs    []string
	idents  []string
	vers    []string
	hosts   []string
	codes   []string
}

const (
	tokComma = 0
	tokStop  = 1
)

func buildModel() *model {
	m := &model{words: []string{",", "."}, next: make([][]int32, 2)}
	ids := map[string]int32{",": tokComma, ".": tokStop}
	freq := map[string]int{}
	var order []string
	id := func(w string) int32 {
		if v, ok := ids[w]; ok {
			return v
		}
		v := int32(len(m.words))
		ids[w] = v
		m.words = append(m.words, w)
		m.next = append(m.next, nil)
		return v
	}
	prev := int32(tokStop)
	for _, f := range strings.Fields(prose) {
		var punct int32 = -1
		switch {
		case strings.HasSuffix(f, "."):
			f, punct = f[:len(f)-1], tokStop
		case strings.HasSuffix(f, ","):
			f, punct = f[:len(f)-1], tokComma
		}
		t := id(f)
		if prev == tokStop {
			m.starts = append(m.starts, t)
		} else {
			m.next[prev] = append(m.next[prev], t)
		}
		prev = t
		if lw := strings.ToLower(f); lw == f && len(f) >= 4 && !stopwords[f] {
			if freq[f] == 0 {
				order = append(order, f)
			}
			freq[f]++
		}
		if punct >= 0 {
			m.next[prev] = append(m.next[prev], punct)
			prev = punct
		}
	}
	m.content = make([]bool, len(m.words))
	for w, i := range ids {
		m.content[i] = freq[w] > 0
	}
	// Stable sort keeps first-appearance order among equal counts, so the
	// vocabulary does not depend on map iteration.
	slices.SortStableFunc(order, func(a, b string) int { return freq[b] - freq[a] })
	seen := make(map[string]bool, 4096)
	add := func(w string) {
		if !seen[w] {
			seen[w] = true
			m.vocab = append(m.vocab, w)
		}
	}
	for _, w := range order {
		add(w)
	}
	for _, w := range strings.Fields(glossary) {
		add(w)
	}

	// Generated tokens are fixed for all seeds: they are the team's vocabulary,
	// not part of what a seed varies.
	r := rand.New(rand.NewPCG(0x7e57, 0xc0de))
	for _, p := range svcPrefixes {
		for _, s := range svcSuffixes {
			m.svcs = append(m.svcs, p+"-"+s)
		}
	}
	for _, v := range identVerbs {
		for _, n := range identNouns {
			m.idents = append(m.idents, v+n)
		}
	}
	for range 300 {
		m.vers = append(m.vers, fmt.Sprintf("v%d.%d.%d", r.IntN(4), r.IntN(30), r.IntN(12)))
		m.codes = append(m.codes, fmt.Sprintf("E%d", 1000+r.IntN(9000)))
	}
	for _, e := range hostEnvs {
		for _, g := range regions {
			for k := 1; k <= 4; k++ {
				m.hosts = append(m.hosts, fmt.Sprintf("%s-%s-%d", e, g, k))
			}
		}
	}
	var tail []string
	tail = append(tail, m.svcs...)
	for _, s := range m.idents {
		tail = append(tail, "`"+s+"`")
	}
	for _, p := range metricParts {
		for _, s := range metricSuffixes {
			tail = append(tail, "`"+p+"_"+s+"`")
		}
	}
	for _, p := range svcPrefixes {
		for _, k := range configKeys {
			tail = append(tail, "`"+p+"."+k+"`")
		}
	}
	for _, v := range identVerbs {
		for _, e := range fileExts {
			tail = append(tail, "`"+v+"_"+strings.ToLower(pick(r, identNouns))+e+"`")
		}
	}
	tail = append(tail, m.vers...)
	tail = append(tail, m.codes...)
	tail = append(tail, m.hosts...)
	r.Shuffle(len(tail), func(i, j int) { tail[i], tail[j] = tail[j], tail[i] })
	for _, w := range tail {
		add(w)
	}
	return m
}

// gen renders one card; it is reused by a worker across cards.
type gen struct {
	r    *rand.Rand
	zipf *rand.Zipf
	m    *model
}

type block struct {
	list  bool
	zh    bool
	items [][]string
}

type section struct {
	heading string
	blocks  []*block
}

func (g *gen) render(seed uint64, i int, cards []card, m *model) []byte {
	g.r = rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15^uint64(i+1)))
	g.zipf = rand.NewZipf(g.r, 1.07, 2, uint64(len(m.vocab)-1))
	g.m = m
	c := &cards[i]
	c.desc = g.description(c.zh)

	var fm strings.Builder
	fm.WriteString("---\nname: " + c.name + "\n")
	fm.WriteString("description: " + yamlScalar(c.desc) + "\n")
	fm.WriteString("session_id: " + c.sid + "\n")
	fm.WriteString("source_conversation: \"[[session/dialog/" + c.sid + ".jsonl]]\"\n")
	fm.WriteString("memory_tags: [" + c.tags[0] + ", " + c.tags[1] + "]\n---\n")

	size := fm.Len()
	if c.title != "" {
		size += len("\n# \n") + len(c.title)
	}
	secs := make([]section, 3)
	zhRate := zhBlockRate
	if c.zh {
		zhRate = zhBlockRateZh
	}
	for k := range secs {
		secs[k].heading = c.headings[k]
		size += len("\n## \n") + len(c.headings[k])
	}

	// Links are added last, into whichever paragraph they land in, so reserve
	// room for the longer of their two wordings now.
	links := g.links(i, cards)
	reserve := 0
	for _, l := range links {
		reserve += 1 + max(len(l.en), len(l.zh))
	}
	size += reserve

	newBlock := func() *block {
		return &block{list: g.r.IntN(5) < 2, zh: g.r.Float64() < zhRate}
	}
	for k := range secs {
		b := newBlock()
		s := g.sentence(b, true)
		b.items = [][]string{{s}}
		secs[k].blocks = append(secs[k].blocks, b)
		size += blockOpen(b) + len(s)
	}

	target := targetMin + g.r.IntN(targetMax-targetMin+1)
	for fails := 0; size < target && fails < 12; {
		sec := &secs[g.r.IntN(len(secs))]
		last := sec.blocks[len(sec.blocks)-1]
		switch x := g.r.IntN(10); {
		case x < 3 && len(sec.blocks) < 3:
			b := newBlock()
			s := g.sentence(b, true)
			if d := blockOpen(b) + len(s); size+d <= sizeMax {
				b.items = [][]string{{s}}
				sec.blocks = append(sec.blocks, b)
				size += d
				continue
			}
		case x < 5 && last.list && len(last.items) < 6:
			s := g.sentence(last, false)
			if d := len("\n- ") + len(s); size+d <= sizeMax {
				last.items = append(last.items, []string{s})
				size += d
				continue
			}
		default:
			b := sec.blocks[g.r.IntN(len(sec.blocks))]
			it := &b.items[g.r.IntN(len(b.items))]
			s := g.sentence(b, false)
			if d := 1 + len(s); size+d <= sizeMax {
				*it = append(*it, s)
				size += d
				continue
			}
		}
		fails++
	}
	for _, l := range links {
		sec := &secs[g.r.IntN(len(secs))]
		b := sec.blocks[g.r.IntN(len(sec.blocks))]
		it := &b.items[g.r.IntN(len(b.items))]
		if b.zh {
			*it = append(*it, l.zh)
		} else {
			*it = append(*it, l.en)
		}
	}

	var out strings.Builder
	out.Grow(sizeMax)
	out.WriteString(fm.String())
	if c.title != "" {
		out.WriteString("\n# " + c.title + "\n")
	}
	for _, sec := range secs {
		out.WriteString("\n## " + sec.heading + "\n")
		for _, b := range sec.blocks {
			out.WriteByte('\n')
			for k, it := range b.items {
				if b.list {
					if k > 0 {
						out.WriteByte('\n')
					}
					out.WriteString("- ")
				}
				writeSentences(&out, it)
			}
			out.WriteByte('\n')
		}
	}
	return []byte(out.String())
}

// writeSentences joins sentences with a space, except after a Chinese full
// stop before more Chinese, where Chinese text has none.
func writeSentences(out *strings.Builder, sentences []string) {
	for k, s := range sentences {
		if k > 0 && !(strings.HasSuffix(sentences[k-1], "。") && s[0] >= utf8.RuneSelf) {
			out.WriteByte(' ')
		}
		out.WriteString(s)
	}
}

// blockOpen is the size of a new block's markup around its first sentence.
func blockOpen(b *block) int {
	if b.list {
		return len("\n- \n")
	}
	return len("\n\n")
}

type link struct{ en, zh string }

var (
	linkWordsEn = []string{"See %s for the details.", "This builds on %s.", "Background is in %s.",
		"Compare with %s.", "The earlier discussion is in %s.", "Related: %s."}
	linkWordsZh = []string{"详见 %s。", "背景见 %s。", "参考 %s。", "之前的讨论在 %s。", "对比 %s。", "相关记录：%s。"}
)

// links picks distinct other cards, mostly from nearby days, and words a
// wikilink to each with the literal workspace path, sometimes with an anchor
// naming one of the target's headings and sometimes with an alias.
func (g *gen) links(i int, cards []card) []link {
	want := min(linksPerCard, len(cards)-1)
	picked := make([]int, 0, want)
	for len(picked) < want {
		j := g.r.IntN(len(cards))
		if g.r.Float64() < nearLinkRate {
			j = min(max(i+g.r.IntN(2*nearLinkSpan+1)-nearLinkSpan, 0), len(cards)-1)
		}
		if j != i && !slices.Contains(picked, j) {
			picked = append(picked, j)
		}
	}
	out := make([]link, len(picked))
	for k, j := range picked {
		t := &cards[j]
		target := t.path()
		if g.r.IntN(10) < 3 {
			target += "#" + t.headings[g.r.IntN(len(t.headings))]
		}
		if g.r.IntN(10) < 3 {
			target += "|" + strings.ReplaceAll(strings.TrimRight(t.name, "0123456789-"), "-", " ")
		}
		w := g.r.IntN(len(linkWordsEn))
		out[k] = link{
			en: fmt.Sprintf(linkWordsEn[w], "[["+target+"]]"),
			zh: fmt.Sprintf(linkWordsZh[w], "[["+target+"]]"),
		}
	}
	return out
}

func (g *gen) sentence(b *block, first bool) string {
	if b.zh && (first || g.r.Float64() < zhSentenceRate) {
		return g.zhSentence()
	}
	if g.r.Float64() < figureRate {
		return g.figure()
	}
	return g.enSentence()
}

// enSentence walks the bigram model from a sentence start and swaps some
// content words for vocabulary draws, which gives the long Zipf tail.
func (g *gen) enSentence() string {
	m := g.m
	for {
		var b strings.Builder
		t := m.starts[g.r.IntN(len(m.starts))]
		n := 0
		for n < maxWords {
			switch t {
			case tokComma:
				b.WriteByte(',')
			case tokStop:
			default:
				if n > 0 {
					b.WriteByte(' ')
				}
				w := m.words[t]
				if n > 0 && m.content[t] && g.r.Float64() < swapRate {
					w = m.vocab[g.zipf.Uint64()]
				}
				b.WriteString(w)
				n++
			}
			succ := m.next[t]
			if t == tokStop || len(succ) == 0 {
				break
			}
			t = succ[g.r.IntN(len(succ))]
		}
		if n < 6 {
			continue
		}
		return strings.TrimSuffix(b.String(), ",") + "."
	}
}

var figureMetrics = []string{"recall@10", "nDCG@10", "MRR", "the error rate", "the cache hit ratio", "p99 latency"}

// figure writes a sentence with exact numbers, the kind of detail cards quote verbatim.
func (g *gen) figure() string {
	r, m := g.r, g.m
	switch r.IntN(7) {
	case 0:
		a := 50 + r.IntN(45)
		return fmt.Sprintf("%s dropped from 0.%02d to 0.%02d after %s %s shipped.",
			capital(pick(r, figureMetrics)), a, a-1-r.IntN(30), pick(r, m.svcs), pick(r, m.vers))
	case 1:
		a := 40 + r.IntN(400)
		return fmt.Sprintf("p99 latency of %s went from %d ms to %d ms.", pick(r, m.svcs), a, a/2+r.IntN(a))
	case 2:
		return fmt.Sprintf("The %s canary ran at %d%% of traffic for %d minutes.",
			pick(r, m.svcs), 1+r.IntN(25), 10+r.IntN(50))
	case 3:
		return fmt.Sprintf("We measured %d requests per second on %s with %s.",
			100+r.IntN(20000), pick(r, m.hosts), pick(r, m.vers))
	case 4:
		h := r.IntN(23)
		return fmt.Sprintf("Error %s appeared %d times in %s logs between %02d:%02d and %02d:%02d.",
			pick(r, m.codes), 2+r.IntN(900), pick(r, m.svcs), h, r.IntN(60), h+1, r.IntN(60))
	case 5:
		return fmt.Sprintf("`%s` now takes %d ms instead of %d ms.", pick(r, m.idents), 1+r.IntN(80), 90+r.IntN(900))
	default:
		return fmt.Sprintf("The %s job processed %d documents in %d.%d seconds.",
			pick(r, m.svcs), 1000+r.IntN(2000000), 1+r.IntN(300), r.IntN(10))
	}
}

func (g *gen) zhSentence() string {
	r := g.r
	unit := pick(r, zhUnits) // one unit per sentence, so "from X to Y" compares like with like
	var b strings.Builder
	for _, c := range pick(r, zhTemplates) {
		switch c {
		case 'N':
			b.WriteString(pick(r, zhNouns))
		case 'V':
			b.WriteString(pick(r, zhVerbs))
		case 'S':
			b.WriteString(pick(r, zhStates))
		case 'P':
			b.WriteString(pick(r, zhPeople))
		case 'T':
			b.WriteString(pick(r, zhTimes))
		case 'D':
			b.WriteString(strconv.Itoa(1+r.IntN(500)) + unit)
		case 'R':
			b.WriteString(strconv.Itoa(1+r.IntN(60)) + "%")
		default:
			b.WriteRune(c)
		}
	}
	return b.String()
}

// description joins whole sentences until the summary is 150 to 250 characters.
func (g *gen) description(zh bool) string {
	var parts []string
	n := 0
	for tries := 0; n < descMinRunes; tries++ {
		var s string
		if zh {
			s = g.zhSentence()
		} else {
			s = g.enSentence()
		}
		sn := utf8.RuneCountInString(s)
		if n > 0 && !zh {
			sn++ // joining space
		}
		if n+sn <= descMaxRunes {
			parts = append(parts, s)
			n += sn
			continue
		}
		if tries > 50 {
			// A run of long sentences: cut the next one at a word boundary.
			return truncate(joinDesc(append(parts, s), zh), descMaxRunes)
		}
	}
	return joinDesc(parts, zh)
}

func joinDesc(parts []string, zh bool) string {
	if zh {
		return strings.Join(parts, "")
	}
	return strings.Join(parts, " ")
}

func truncate(s string, limit int) string {
	rs := []rune(s)
	if len(rs) <= limit {
		return s
	}
	cut := limit - 1
	for cut > limit/2 && !unicode.IsSpace(rs[cut]) {
		cut--
	}
	return strings.TrimRight(string(rs[:cut]), " ,") + "."
}

func capital(s string) string {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// yamlScalar returns s as a plain YAML scalar when that reads back as the same
// string, and double-quoted otherwise.
func yamlScalar(s string) string {
	plain := s != "" && s == strings.TrimSpace(s) &&
		!strings.ContainsAny(s[:1], "-?:,[]{}#&*!|>'\"%@`") &&
		!strings.Contains(s, ": ") && !strings.Contains(s, " #") && !strings.HasSuffix(s, ":")
	if plain {
		return s
	}
	var b strings.Builder
	b.WriteByte('"')
	for _, c := range s {
		switch c {
		case '"', '\\':
			b.WriteByte('\\')
			b.WriteRune(c)
		case '\n':
			b.WriteString(`\n`)
		default:
			b.WriteRune(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}
