package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/reme-dev/reme/index"
	"github.com/reme-dev/reme/store"
)

type evalCmd struct {
	Data    string `arg:"" help:"Conversational QA data in LoCoMo's JSON shape." placeholder:"DATA.json"`
	Budget  int    `default:"20" help:"Turns an agent reads per question (default ${default})." placeholder:"TURNS"`
	Keep    string `help:"Keep the scratch workspaces in this folder (one per conversation)." placeholder:"DIR"`
	Context *int   `help:"Lines of context around the hits (default: config search.context)." placeholder:"N"`
}

func (evalCmd) Help() string {
	return `Measures how much of the evidence a search finds. DATA.json holds conversations in
LoCoMo's public shape: a list of samples, each with "conversation" (speaker_a,
speaker_b, session_N_date_time and session_N: turns with "speaker", "dia_id" and
"text") and "qa" (question, evidence: the dia_ids that answer it, category).

For each conversation reme writes a scratch workspace with one card per session
(one line per turn, dated by the session), indexes it and asks every question
through the same search as "reme search". Reading results in order, it counts the
turns until the budget is spent and reports which share of the evidence turns were
among them, overall and per category, next to plain BM25 over single turns (ReMe's
formula and tokenizer, no stemming) computed in the same run. No model is used.`
}

// evalTurn is one line of a LoCoMo session.
type evalTurn struct {
	Speaker     string `json:"speaker"`
	DiaID       string `json:"dia_id"`
	Text        string `json:"text"`
	BlipCaption string `json:"blip_caption"`
}

type evalQA struct {
	Question string          `json:"question"`
	Evidence json.RawMessage `json:"evidence"`
	Category json.RawMessage `json:"category"`
}

type evalSample struct {
	SampleID     string                     `json:"sample_id"`
	Conversation map[string]json.RawMessage `json:"conversation"`
	QA           []evalQA                   `json:"qa"`
}

// evalSession is a session ready to become a card.
type evalSession struct {
	n     int
	date  string // YYYY-MM-DD
	when  string // as written
	turns []evalTurn
}

var categoryNames = map[int]string{1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}

// evalScore accumulates recall.
type evalScore struct {
	Category  int     `json:"category"`
	Name      string  `json:"name"`
	Questions int     `json:"questions"`
	Reme      float64 `json:"reme_recall"`
	Baseline  float64 `json:"bm25_recall"`
}

type evalReport struct {
	Budget        int         `json:"budget_turns"`
	Conversations int         `json:"conversations"`
	Sessions      int         `json:"sessions"`
	Questions     int         `json:"questions"`
	Skipped       int         `json:"skipped_questions"` // without usable evidence
	Overall       evalScore   `json:"overall"`
	Categories    []evalScore `json:"categories"`
}

func (c *evalCmd) Run(ctx context.Context, app *App) error {
	if c.Budget < 1 {
		return usageError{fmt.Errorf("--budget must be at least 1, not %d", c.Budget)}
	}
	raw, err := os.ReadFile(c.Data)
	if err != nil {
		return fmt.Errorf("read %s: %w", c.Data, err)
	}
	samples, err := parseEvalData(raw)
	if err != nil {
		return fmt.Errorf("%s: %w", c.Data, err)
	}
	rep := &evalReport{Budget: c.Budget}
	byCat := map[int]*evalScore{}
	for i, s := range samples {
		if err := ctx.Err(); err != nil {
			return err
		}
		sessions, err := evalSessions(s)
		if err != nil {
			return fmt.Errorf("%s: sample %d (%s): %w", c.Data, i+1, s.SampleID, err)
		}
		rep.Conversations++
		rep.Sessions += len(sessions)
		if err := c.evalSample(ctx, app, i, s, sessions, rep, byCat); err != nil {
			return err
		}
		app.Log.Info("eval", "conversation", s.SampleID, "sessions", len(sessions), "questions", rep.Questions)
	}
	if rep.Questions == 0 {
		return fmt.Errorf("%s: no question with evidence to ask", c.Data)
	}
	cats := make([]int, 0, len(byCat))
	for k := range byCat {
		cats = append(cats, k)
	}
	sort.Ints(cats)
	for _, k := range cats {
		sc := byCat[k]
		rep.Overall.Reme += sc.Reme
		rep.Overall.Baseline += sc.Baseline
		sc.Reme /= float64(sc.Questions)
		sc.Baseline /= float64(sc.Questions)
		rep.Categories = append(rep.Categories, *sc)
	}
	rep.Overall.Name, rep.Overall.Questions = "all", rep.Questions
	rep.Overall.Reme /= float64(rep.Questions)
	rep.Overall.Baseline /= float64(rep.Questions)
	if app.Globals.JSON {
		return app.printJSON(rep)
	}
	w := app.Stdout
	fmt.Fprintf(w, "%d conversation(s), %d session(s), %d question(s); evidence recall within %d turns read\n",
		rep.Conversations, rep.Sessions, rep.Questions, rep.Budget)
	if rep.Skipped > 0 {
		fmt.Fprintf(w, "(%d question(s) without usable evidence left out)\n", rep.Skipped)
	}
	fmt.Fprintf(w, "%-16s %9s %8s %13s %8s\n", "category", "questions", "reme", "bm25 (turns)", "diff")
	for _, sc := range append(rep.Categories, rep.Overall) {
		label := sc.Name
		if sc.Category > 0 {
			label = fmt.Sprintf("%d %s", sc.Category, sc.Name)
		}
		fmt.Fprintf(w, "%-16s %9d %8.3f %13.3f %+8.3f\n", label, sc.Questions, sc.Reme, sc.Baseline, sc.Reme-sc.Baseline)
	}
	return nil
}

// evalSample indexes one conversation and asks its questions.
func (c *evalCmd) evalSample(ctx context.Context, app *App, i int, s evalSample, sessions []evalSession, rep *evalReport, byCat map[int]*evalScore) error {
	var dir string
	if c.Keep != "" {
		dir = fmt.Sprintf("%s/%02d-%s", c.Keep, i+1, evalSlug(s.SampleID))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	} else {
		var err error
		if dir, err = os.MkdirTemp("", "reme-eval-"); err != nil {
			return err
		}
		defer os.RemoveAll(dir)
	}
	ws, err := store.OpenWorkspace(dir)
	if err != nil {
		return err
	}
	if err := ws.Init(); err != nil {
		return err
	}
	lines, last, err := writeEvalCards(ws, s, sessions)
	if err != nil {
		return err
	}
	ix, err := index.Open(ctx, ws, schemaSQL, index.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return err
	}
	defer ix.Close()
	if _, err := ix.Rebuild(ctx, nil); err != nil {
		return err
	}
	cfg, err := app.Config()
	if err != nil {
		return err
	}
	context := cfg.Search.Context
	if c.Context != nil {
		context = *c.Context
	}
	base := newTurnBM25(sessions)
	now := last.Add(36 * time.Hour)
	for _, qa := range s.QA {
		evidence := parseEvidence(qa.Evidence)
		cat := parseCategory(qa.Category)
		if strings.TrimSpace(qa.Question) == "" || len(evidence) == 0 {
			rep.Skipped++
			continue
		}
		known := 0
		for id := range evidence {
			if _, ok := base.index[id]; ok {
				known++
			}
		}
		if known == 0 {
			rep.Skipped++
			continue
		}
		res, err := ix.Search(ctx, index.SearchOptions{Query: qa.Question, Limit: c.Budget, Context: context,
			MaxLines: cfg.Search.MaxLines, Now: now, Location: time.UTC})
		if err != nil {
			if errors.Is(err, index.ErrEmptyQuery) {
				rep.Skipped++
				continue
			}
			return fmt.Errorf("question %q: %w", qa.Question, err)
		}
		var got []string
		seen := map[string]bool{}
	results:
		for _, r := range res.Results {
			for l := r.StartLine; l <= r.EndLine; l++ {
				id, ok := lines[r.Path][l]
				if !ok || seen[id] {
					continue
				}
				seen[id] = true
				got = append(got, id)
				if len(got) == c.Budget {
					break results
				}
			}
		}
		sc := byCat[cat]
		if sc == nil {
			sc = &evalScore{Category: cat, Name: categoryNames[cat]}
			byCat[cat] = sc
		}
		sc.Questions++
		rep.Questions++
		sc.Reme += recall(got, evidence)
		sc.Baseline += recall(base.top(qa.Question, c.Budget), evidence)
	}
	return nil
}

// evalSlug makes a sample id safe as part of a file name.
func evalSlug(id string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(id) {
		if r < unicode.MaxASCII && (unicode.IsLetter(r) || unicode.IsDigit(r)) {
			b.WriteRune(r)
		} else {
			b.WriteByte('-')
		}
	}
	if s := strings.Trim(b.String(), "-"); s != "" {
		return s
	}
	return "conversation"
}

func recall(got []string, evidence map[string]bool) float64 {
	hit := 0
	for _, id := range got {
		if evidence[id] {
			hit++
		}
	}
	return float64(hit) / float64(len(evidence))
}

func parseEvalData(raw []byte) ([]evalSample, error) {
	var samples []evalSample
	if err := json.Unmarshal(raw, &samples); err != nil {
		var one evalSample
		if err2 := json.Unmarshal(raw, &one); err2 != nil || one.Conversation == nil {
			return nil, fmt.Errorf("not LoCoMo-shaped JSON (a list of samples with conversation and qa): %v", err)
		}
		samples = []evalSample{one}
	}
	if len(samples) == 0 {
		return nil, errors.New("no conversation in the file")
	}
	for i := range samples {
		if samples[i].SampleID == "" {
			samples[i].SampleID = fmt.Sprintf("conv-%d", i+1)
		}
	}
	return samples, nil
}

var sessionKey = store.LazyRegexp(`^session_(\d+)$`)

// evalSessions reads the sessions of a sample in order, with their dates.
func evalSessions(s evalSample) ([]evalSession, error) {
	var out []evalSession
	for k, v := range s.Conversation {
		m := sessionKey().FindStringSubmatch(k)
		if m == nil {
			continue
		}
		n, _ := strconv.Atoi(m[1])
		var turns []evalTurn
		if err := json.Unmarshal(v, &turns); err != nil {
			return nil, fmt.Errorf("%s: %v", k, err)
		}
		var when string
		if raw, ok := s.Conversation[k+"_date_time"]; ok {
			json.Unmarshal(raw, &when)
		}
		out = append(out, evalSession{n: n, when: when, turns: turns})
	}
	if len(out) == 0 {
		return nil, errors.New("conversation has no session_N")
	}
	sort.Slice(out, func(i, j int) bool { return out[i].n < out[j].n })
	prev := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range out {
		t, ok := parseSessionTime(out[i].when)
		if !ok {
			t = prev.AddDate(0, 0, 1) // undated: the day after the session before
		}
		prev = t
		out[i].date = t.Format(time.DateOnly)
	}
	return out, nil
}

var sessionTimeRE = store.LazyRegexp(`(?i)(\d{1,2}):(\d{2})\s*(am|pm)\s+on\s+(\d{1,2})\s+([a-z]+),?\s+(\d{4})`)

// parseSessionTime reads LoCoMo's "1:56 pm on 8 May, 2023".
func parseSessionTime(s string) (time.Time, bool) {
	m := sessionTimeRE().FindStringSubmatch(s)
	if m == nil {
		return time.Time{}, false
	}
	month := strings.ToUpper(m[5][:1]) + strings.ToLower(m[5][1:])
	t, err := time.Parse("2 January 2006", m[4]+" "+month+" "+m[6])
	if err != nil {
		if t, err = time.Parse("2 Jan 2006", m[4]+" "+month+" "+m[6]); err != nil {
			return time.Time{}, false
		}
	}
	h, _ := strconv.Atoi(m[1])
	mi, _ := strconv.Atoi(m[2])
	if strings.EqualFold(m[3], "pm") && h < 12 {
		h += 12
	}
	if strings.EqualFold(m[3], "am") && h == 12 {
		h = 0
	}
	return t.Add(time.Duration(h)*time.Hour + time.Duration(mi)*time.Minute), true
}

// writeEvalCards writes one card per session and maps each card's lines
// to the dia_id said there. It returns the time of the last session.
func writeEvalCards(ws *store.Workspace, s evalSample, sessions []evalSession) (map[string]map[int]string, time.Time, error) {
	var speakers []string
	for _, k := range []string{"speaker_a", "speaker_b"} {
		var name string
		if raw, ok := s.Conversation[k]; ok && json.Unmarshal(raw, &name) == nil && name != "" {
			speakers = append(speakers, name)
		}
	}
	lines := map[string]map[int]string{}
	var last time.Time
	for _, ses := range sessions {
		name := fmt.Sprintf("%s-session-%d", evalSlug(s.SampleID), ses.n)
		rel := fmt.Sprintf("daily/%s/%s.md", ses.date, name)
		var b strings.Builder
		desc := fmt.Sprintf("Session %d of the conversation between %s.", ses.n, strings.Join(speakers, " and "))
		if ses.when != "" {
			desc = strings.TrimSuffix(desc, ".") + ", " + ses.when + "."
		}
		fm, _ := json.Marshal(desc)
		fmt.Fprintf(&b, "---\nname: %s\ndescription: %s\n---\n\n## Session %d\n\n", name, fm, ses.n)
		ids := map[int]string{}
		line := strings.Count(b.String(), "\n") + 1 // of the first turn
		for _, t := range ses.turns {
			text := strings.Join(strings.Fields(t.Text), " ")
			if t.BlipCaption != "" {
				text += " [shares a photo: " + strings.Join(strings.Fields(t.BlipCaption), " ") + "]"
			}
			ids[line] = normalizeDiaID(t.DiaID)
			line++
			fmt.Fprintf(&b, "%s: %s\n", strings.Join(strings.Fields(t.Speaker), " "), text)
		}
		if err := ws.WriteFile(rel, []byte(b.String())); err != nil {
			return nil, last, err
		}
		lines[rel] = ids
		if t, err := time.Parse(time.DateOnly, ses.date); err == nil && t.After(last) {
			last = t
		}
	}
	return lines, last, nil
}

var diaIDRE = store.LazyRegexp(`D\s*(\d+)\s*:\s*(\d+)`)

func normalizeDiaID(s string) string {
	if m := diaIDRE().FindStringSubmatch(s); m != nil {
		a, _ := strconv.Atoi(m[1])
		b, _ := strconv.Atoi(m[2])
		return fmt.Sprintf("D%d:%d", a, b)
	}
	return strings.TrimSpace(s)
}

// parseEvidence reads the evidence dia_ids, however the data spells them
// ("D1:3", "D1:3; D2:4", nested lists).
func parseEvidence(raw json.RawMessage) map[string]bool {
	out := map[string]bool{}
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case string:
			for _, m := range diaIDRE().FindAllStringSubmatch(x, -1) {
				out[normalizeDiaID(m[0])] = true
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	var v any
	if json.Unmarshal(raw, &v) == nil {
		walk(v)
	}
	return out
}

func parseCategory(raw json.RawMessage) int {
	var n float64
	if json.Unmarshal(raw, &n) == nil {
		return int(n)
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		v, _ := strconv.Atoi(strings.TrimSpace(s))
		return v
	}
	return 0
}

// turnBM25 is the baseline: BM25 over single turns as ReMe's keyword index
// computes it (k1 1.5, b 0.75, idf ln(1 + (N - df + 0.5)/(df + 0.5))), with
// ReMe's tokenizer: CJK characters one by one, other words of two or more
// letters or digits, lower case, stop words out, no stemming.
type turnBM25 struct {
	ids   []string
	docs  []map[string]int
	lens  []int
	df    map[string]int
	avg   float64
	index map[string]int
}

func newTurnBM25(sessions []evalSession) *turnBM25 {
	b := &turnBM25{df: map[string]int{}, index: map[string]int{}}
	total := 0
	for _, s := range sessions {
		for _, t := range s.turns {
			text := t.Speaker + ": " + t.Text
			if t.BlipCaption != "" {
				text += " [shares a photo: " + t.BlipCaption + "]"
			}
			tf := map[string]int{}
			n := 0
			for _, tok := range remeTokens(text) {
				tf[tok]++
				n++
			}
			for tok := range tf {
				b.df[tok]++
			}
			id := normalizeDiaID(t.DiaID)
			b.index[id] = len(b.ids)
			b.ids = append(b.ids, id)
			b.docs = append(b.docs, tf)
			b.lens = append(b.lens, n)
			total += n
		}
	}
	if len(b.ids) > 0 {
		b.avg = float64(total) / float64(len(b.ids))
	}
	return b
}

func (b *turnBM25) top(q string, k int) []string {
	const k1, bb = 1.5, 0.75
	terms := map[string]bool{}
	for _, t := range remeTokens(q) {
		terms[t] = true
	}
	n := float64(len(b.ids))
	type hit struct {
		i     int
		score float64
	}
	var hits []hit
	for i, tf := range b.docs {
		var s float64
		for t := range terms {
			f := float64(tf[t])
			if f == 0 {
				continue
			}
			df := float64(b.df[t])
			idf := math.Log(1 + (n-df+0.5)/(df+0.5))
			s += idf * f * (k1 + 1) / (f + k1*(1-bb+bb*float64(b.lens[i])/b.avg))
		}
		if s > 0 {
			hits = append(hits, hit{i, s})
		}
	}
	sort.SliceStable(hits, func(x, y int) bool { return hits[x].score > hits[y].score })
	var out []string
	for _, h := range hits {
		if len(out) == k {
			break
		}
		out = append(out, b.ids[h.i])
	}
	return out
}

// remeTokens is ReMe's regex tokenizer.
func remeTokens(s string) []string {
	var out []string
	var word []rune
	flush := func() {
		if len(word) >= 2 {
			w := strings.ToLower(string(word))
			if !index.StopWord(w) {
				out = append(out, w)
			}
		}
		word = word[:0]
	}
	for _, r := range s {
		switch {
		case store.IsCJK(r):
			flush()
			out = append(out, string(r))
		case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_':
			word = append(word, r)
		default:
			flush()
		}
	}
	flush()
	return out
}
