package index

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func searchResp(t testing.TB, ix *Index, opt SearchOptions) *SearchResponse {
	t.Helper()
	if opt.Limit == 0 {
		opt.Limit = 50
	}
	res, err := ix.Search(context.Background(), opt)
	if err != nil {
		t.Fatalf("search %q: %v", opt.Query, err)
	}
	return res
}

// A word found in most cards keeps a real, positive score (FTS5's bm25 gives
// it an idf of 1e-6, which prints as 0.0000), so that --min-score means
// what it means in ReMe.
func TestCommonWordsKeepPositiveScores(t *testing.T) {
	files := map[string]string{}
	for i := 0; i < 20; i++ {
		body := fmt.Sprintf("## Notes\nThe release went out on day %d.\n", i)
		if i%2 == 0 {
			body += "Postgres was upgraded too.\n"
		}
		files[fmt.Sprintf("daily/2026-01-%02d/n%d.md", i+1, i)] = card(fmt.Sprintf("n%d", i), "a note", body)
	}
	ws := newWorkspace(t, files)
	for _, frequent := range []int{3, DefaultFrequentTerms} {
		ix := openIndex(t, ws, Options{FrequentTerms: frequent})
		if _, err := ix.Rebuild(ctx, nil); err != nil {
			t.Fatal(err)
		}
		for _, q := range []string{"release", "postgres", "release postgres"} {
			res := searchResp(t, ix, SearchOptions{Query: q, Limit: 30})
			if len(res.Results) == 0 {
				t.Fatalf("%q: nothing found", q)
			}
			for _, r := range res.Results {
				if s := fmt.Sprintf("%.4f", r.Score); s == "0.0000" || r.Score <= 0 {
					t.Errorf("%q: %s scored %v", q, r.Path, r.Score)
				}
			}
		}
		// a word in every chunk: idf = ln(1 + 0.5/20.5), positive
		res := searchResp(t, ix, SearchOptions{Query: "release"})
		if want := idf(20, 20); res.Results[0].Score < want || res.Results[0].Score > want*2.2 {
			t.Errorf("release scored %v, want about %v (idf) times BM25's tf part", res.Results[0].Score, want)
		}
		min := searchResp(t, ix, SearchOptions{Query: "release postgres", MinScore: res.Results[0].Score * 1.5, Limit: 30})
		for _, r := range min.Results {
			if r.Score < res.Results[0].Score*1.5 {
				t.Errorf("--min-score kept %v", r.Score)
			}
		}
		if len(min.Results) != 10 {
			t.Errorf("--min-score kept %d results, want the 10 with postgres", len(min.Results))
		}
		ix.Close()
	}
}

// The window score is BM25 computed the way FTS5 computes it (same k1, b,
// weights and lengths), with ReMe's idf: for a window that is the whole
// chunk, reme's score equals FTS5's bm25 with its idf swapped for ReMe's.
func TestScoreMatchesFTS5BM25(t *testing.T) {
	files := map[string]string{}
	for i := 0; i < 30; i++ {
		body := strings.Repeat("filler words here. ", i%5) + "\n"
		if i%3 == 0 {
			body += "the gateway latency budget " + strings.Repeat("gateway ", i%4) + "\n"
		}
		files[fmt.Sprintf("daily/2026-02-%02d/c%d.md", i%28+1, i)] = card(fmt.Sprintf("c%d", i), "card", body)
	}
	ws := newWorkspace(t, files)
	ix := openIndex(t, ws, Options{})
	mustSync(t, ix)
	st, err := readStats(ctx, ix.db)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := ix.db.Query(`SELECT n.path, -bm25(chunk_fts, 4, 2, 1) FROM chunk_fts f JOIN chunks c ON c.id = f.rowid
		JOIN notes n ON n.id = c.note_id WHERE chunk_fts MATCH '"gatewai"'`)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{}
	for rows.Next() {
		var p string
		var s float64
		if err := rows.Scan(&p, &s); err != nil {
			t.Fatal(err)
		}
		want[p] = s / ftsIDF(int(st.chunks), 10) * idf(int(st.chunks), 10)
	}
	rows.Close()
	res := searchResp(t, ix, SearchOptions{Query: "gateway", MaxLines: 50, Context: 50})
	if len(res.Results) != 10 || len(want) != 10 {
		t.Fatalf("got %d results, FTS5 %d", len(res.Results), len(want))
	}
	for _, r := range res.Results {
		if d := r.Score - want[r.Path]; d > 1e-4 || d < -1e-4 {
			t.Errorf("%s: reme %v, FTS5 with ReMe's idf %v", r.Path, r.Score, want[r.Path])
		}
	}
}

// The frequent-terms table holds exactly the words found in at least
// FrequentTerms chunks with their exact document frequency, however the
// index got there; its lists only name chunks that hold the word.
func TestFrequentTermsStayExact(t *testing.T) {
	words := strings.Fields("alpha beta gamma delta epsilon zeta eta theta iota kappa lambda 登录 流程")
	rng := rand.New(rand.NewPCG(7, 7))
	note := func(i int) string {
		var b strings.Builder
		for s := 0; s < 1+rng.IntN(3); s++ {
			fmt.Fprintf(&b, "## S%d\n", s)
			for k := 0; k < 1+rng.IntN(4); k++ {
				b.WriteString(words[rng.IntN(len(words))] + " " + words[rng.IntN(len(words))] + "\n")
			}
		}
		return card(fmt.Sprintf("n%d", i), words[rng.IntN(len(words))], b.String())
	}
	files := map[string]string{}
	for i := 0; i < 40; i++ {
		files[fmt.Sprintf("daily/2026-03-%02d/n%d.md", i%28+1, i)] = note(i)
	}
	ws := newWorkspace(t, files)
	ix := openIndex(t, ws, Options{FrequentTerms: 8})
	mustSync(t, ix)
	check := func(step string) {
		t.Helper()
		got := map[string]int{}
		rows, err := ix.db.Query(`SELECT term, df, top FROM frequent_terms`)
		if err != nil {
			t.Fatal(err)
		}
		tops := map[string][]topEntry{}
		for rows.Next() {
			var term string
			var df int
			var blob []byte
			if err := rows.Scan(&term, &df, &blob); err != nil {
				t.Fatal(err)
			}
			got[term] = df
			if tops[term], err = decodeTop(blob); err != nil {
				t.Fatal(err)
			}
		}
		rows.Close()
		want := map[string]int{}
		vocab := map[string]bool{}
		for _, w := range words {
			for _, tok := range tokenStrings(w + " n1 n2 a note") {
				vocab[tok] = true
			}
		}
		for i := 0; i < 60; i++ {
			vocab[fmt.Sprintf("n%d", i)] = true
			vocab[fmt.Sprintf("s%d", i)] = true
		}
		for term := range vocab {
			var n int
			if err := ix.db.QueryRow(`SELECT count(*) FROM chunk_fts WHERE chunk_fts MATCH ?`, ftsPhrase(term)).Scan(&n); err != nil {
				t.Fatal(err)
			}
			if n >= 8 {
				want[term] = n
			}
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("%s: frequent terms (-exact +table):\n%s", step, diff)
		}
		// every chunk's list names exactly the frequent words it holds
		ids := map[int64]string{}
		rows, err = ix.db.Query(`SELECT id, term FROM frequent_terms`)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var id int64
			var term string
			rows.Scan(&id, &term)
			ids[id] = term
		}
		rows.Close()
		listed := map[string][]int64{}
		rows, err = ix.db.Query(`SELECT id, terms FROM chunk_terms ORDER BY id`)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var cid int64
			var blob []byte
			rows.Scan(&cid, &blob)
			tids, err := decodeIDs(nil, blob)
			if err != nil {
				t.Fatal(err)
			}
			for _, tid := range tids {
				if term, ok := ids[tid]; ok {
					listed[term] = append(listed[term], cid)
				}
			}
		}
		rows.Close()
		holders := map[string][]int64{}
		for term := range want {
			rows, err := ix.db.Query(`SELECT rowid FROM chunk_fts WHERE chunk_fts MATCH ? ORDER BY rowid`, ftsPhrase(term))
			if err != nil {
				t.Fatal(err)
			}
			for rows.Next() {
				var cid int64
				rows.Scan(&cid)
				holders[term] = append(holders[term], cid)
			}
			rows.Close()
		}
		if diff := cmp.Diff(holders, listed); diff != "" {
			t.Fatalf("%s: chunks of frequent terms (-FTS5 +lists):\n%s", step, diff)
		}
		for term, top := range tops {
			if len(top) == 0 {
				t.Errorf("%s: %s has an empty list", step, term)
			}
			for i, e := range top {
				var n int
				if err := ix.db.QueryRow(`SELECT count(*) FROM chunk_fts WHERE chunk_fts MATCH ? AND rowid = ?`, ftsPhrase(term), e.id).Scan(&n); err != nil {
					t.Fatal(err)
				}
				if n != 1 {
					t.Errorf("%s: %s lists chunk %d, which does not hold it", step, term, e.id)
				}
				if i > 0 && topLess(e, top[i-1]) {
					t.Errorf("%s: %s list out of order at %d", step, term, i)
				}
			}
		}
	}
	check("first sync")
	for round := 0; round < 6; round++ {
		for k := 0; k < 5; k++ {
			i := rng.IntN(60)
			p := fmt.Sprintf("daily/2026-03-%02d/n%d.md", i%28+1, i)
			if rng.IntN(3) == 0 {
				os.Remove(ws.Abs(p))
			} else {
				writeFile(t, ws, p, note(i))
			}
		}
		mustSync(t, ix)
		check(fmt.Sprintf("round %d", round))
	}
	// Many deletions at once.
	for i := 0; i < 60; i += 2 {
		os.Remove(ws.Abs(fmt.Sprintf("daily/2026-03-%02d/n%d.md", i%28+1, i)))
	}
	mustSync(t, ix)
	check("mass deletion")
	// Words stop being frequent, then become frequent again (new ids; the
	// old ones stay in lists, ignored).
	for i := 5; i < 60; i++ {
		os.Remove(ws.Abs(fmt.Sprintf("daily/2026-03-%02d/n%d.md", i%28+1, i)))
	}
	mustSync(t, ix)
	check("few notes left")
	var frequent int
	ix.db.QueryRow(`SELECT count(*) FROM frequent_terms`).Scan(&frequent)
	if frequent != 0 {
		t.Fatalf("%d frequent terms among 5 notes", frequent)
	}
	for i := 5; i < 45; i++ {
		writeFile(t, ws, fmt.Sprintf("daily/2026-03-%02d/n%d.md", i%28+1, i), note(i))
	}
	mustSync(t, ix)
	check("notes back")
	incremental, err := ix.Dump(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ix.Rebuild(ctx, nil); err != nil {
		t.Fatal(err)
	}
	check("rebuild")
	rebuilt, err := ix.Dump(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(rebuilt, incremental); diff != "" {
		t.Errorf("incremental index differs from a rebuild (-rebuilt +incremental):\n%s", diff)
	}
}

// Candidates from the frequent-term lists give the same answers as ranking
// every match.
func TestFrequentListsGiveTheSameAnswers(t *testing.T) {
	files := map[string]string{}
	rng := rand.New(rand.NewPCG(3, 9))
	topics := strings.Fields("deploy rollback canary latency budget gateway postgres cache release token")
	for i := 0; i < 80; i++ {
		var b strings.Builder
		b.WriteString("## Log\n")
		for k := 0; k < 6; k++ {
			fmt.Fprintf(&b, "- %s %s and %s.\n", topics[rng.IntN(len(topics))], topics[rng.IntN(len(topics))], topics[rng.IntN(len(topics))])
		}
		files[fmt.Sprintf("daily/2026-04-%02d/c%d.md", i%28+1, i)] = card(fmt.Sprintf("c%d-%s", i, topics[i%len(topics)]), "log", b.String())
	}
	ws := newWorkspace(t, files)
	exact := openIndex(t, ws, Options{})
	mustSync(t, exact)
	ws2 := newWorkspace(t, files)
	lists := openIndex(t, ws2, Options{FrequentTerms: 4})
	mustSync(t, lists)
	var n int
	lists.db.QueryRow(`SELECT count(*) FROM frequent_terms`).Scan(&n)
	if n < len(topics) {
		t.Fatalf("only %d frequent terms", n)
	}
	for _, q := range append(topics, "deploy rollback", "gateway latency budget", "release token cache") {
		a := searchResp(t, exact, SearchOptions{Query: q, Limit: 5, Context: 1})
		b := searchResp(t, lists, SearchOptions{Query: q, Limit: 5, Context: 1})
		// Both pick candidates before scoring windows exactly; the lists
		// must find windows as good as ranking every match does.
		if len(a.Results) != len(b.Results) || len(b.Results) == 0 {
			t.Fatalf("%q: %d results from every match, %d from the lists", q, len(a.Results), len(b.Results))
		}
		var sa, sb float64
		for i := range a.Results {
			sa += a.Results[i].Score
			sb += b.Results[i].Score
		}
		if sb < 0.97*sa || b.Results[0].Score < 0.97*a.Results[0].Score {
			t.Errorf("%q: the lists found windows scoring %.3f in all (best %.3f), every match %.3f (best %.3f)",
				q, sb, b.Results[0].Score, sa, a.Results[0].Score)
		}
	}
}

func TestWindows(t *testing.T) {
	body := strings.Join([]string{
		"# Meeting",            // 6
		"",                     // 7
		"## Agenda",            // 8
		"- one",                // 9
		"- two",                // 10
		"- the gondola budget", // 11
		"- three",              // 12
		"- four",               // 13
		"- five",               // 14
		"- six",                // 15
		"- seven",              // 16
		"- eight",              // 17
		"- a gondola again",    // 18
		"## Next",              // 19
		"- gondola follow-up",  // 20
		"- done",               // 21
	}, "\n") + "\n"
	ws := newWorkspace(t, map[string]string{"daily/2026-05-01/m.md": card("m", "minutes", body)})
	ix := openIndex(t, ws, Options{})
	mustSync(t, ix)
	spans := func(rs []Result) []string {
		var out []string
		for _, r := range rs {
			out = append(out, fmt.Sprintf("%d-%d %s", r.StartLine, r.EndLine, strings.Join(r.Breadcrumb, ">")))
		}
		sort.Strings(out)
		return out
	}
	tests := []struct {
		name string
		opt  SearchOptions
		want []string
	}{
		{"context 1: three windows, none across a heading", SearchOptions{Context: 1},
			[]string{"10-12 Meeting>Agenda", "17-18 Meeting>Agenda", "19-21 Meeting"}},
		{"context 0", SearchOptions{Context: 0}, []string{"11-11 Meeting>Agenda", "18-18 Meeting>Agenda", "20-20 Meeting>Next"}},
		{"context 4 joins the two hits, cut to max lines", SearchOptions{Context: 4, MaxLines: 10},
			[]string{"19-21 Meeting", "9-18 Meeting>Agenda"}},
		{"wide context stays in the section", SearchOptions{Context: 5, MaxLines: 20}, []string{"19-21 Meeting", "8-18 Meeting"}},
		{"full", SearchOptions{Full: true}, []string{"19-21 Meeting", "8-18 Meeting"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.opt.Query = "gondola"
			got := spans(searchResp(t, ix, tt.opt).Results)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("windows (-want +got):\n%s", diff)
			}
		})
	}
	r := searchResp(t, ix, SearchOptions{Query: "gondola budget", Context: 0, Limit: 1}).Results[0]
	if r.Text != "- the gondola budget" || r.StartLine != 11 || r.Match != "phrase" {
		t.Errorf("best window %+v", r)
	}
}

// A word with an apostrophe is one token without it (o'brien is obrien), so
// the quick line test must not look for the bare word in the raw line.
func TestWindowOnApostropheWord(t *testing.T) {
	body := "## Notes\nThe weather was grey.\nWe walked to town.\nWe met O'Brien at the cafe.\nThen home.\n"
	ws := newWorkspace(t, map[string]string{"daily/2026-05-02/o.md": card("o", "a walk", body)})
	ix := openIndex(t, ws, Options{})
	mustSync(t, ix)
	for _, q := range []string{"O'Brien", "obrien"} {
		res := searchResp(t, ix, SearchOptions{Query: q, Context: 0, Limit: 1})
		if len(res.Results) != 1 {
			t.Fatalf("%q: %d results", q, len(res.Results))
		}
		r := res.Results[0]
		if r.Text != "We met O'Brien at the cafe." || r.Match != "all" || r.Score <= 0 {
			t.Errorf("%q: window %q match %q score %v", q, r.Text, r.Match, r.Score)
		}
	}
}

func TestLadderAndMessages(t *testing.T) {
	ws := newWorkspace(t, map[string]string{
		"daily/2026-06-01/a.md": card("a", "release notes", "## Notes\nThe canary deploy went fine.\nRollback was not needed.\n"),
		"daily/2026-06-02/b.md": card("b", "other", "## Notes\nA deploy of the canary build.\n"),
		"digest/wiki/k.md":      card("k", "kubernetes", "Kubernetes clusters everywhere.\n"),
	})
	ix := openIndex(t, ws, Options{})
	mustSync(t, ix)
	tests := []struct {
		opt     SearchOptions
		match   string
		first   string
		message string
	}{
		{SearchOptions{Query: "canary deploy"}, "phrase", "daily/2026-06-01/a.md", ""},
		// stop words are not indexed: "deploy of the canary" is the phrase "deploy canary"
		{SearchOptions{Query: "deploy canary"}, "phrase", "daily/2026-06-02/b.md", ""},
		{SearchOptions{Query: "fine canary"}, "all", "daily/2026-06-01/a.md", ""},
		{SearchOptions{Query: "rollback gondola"}, "any", "daily/2026-06-01/a.md", ""},
		{SearchOptions{Query: "kuber"}, "prefix", "digest/wiki/k.md", ""},
		{SearchOptions{Query: "gondola"}, "", "", "No note contains any of: gondola."},
		{SearchOptions{Query: "what is it"}, "", "", "The query has only common words (what, is, it), which are not searched."},
		{SearchOptions{Query: "rollback", StartDate: "2026-06-02", StrictDate: true}, "", "",
			"1 note(s) contain rollback, but the filters (--start-date 2026-06-02) left all of them out."},
		{SearchOptions{Query: "canary -rollback -build"}, "", "", "Every note with canary also has an excluded word (-rollback -build)."},
		{SearchOptions{Query: "canary", MinScore: 1000}, "", "", "2 result(s) matched canary but scored below --min-score 1000."},
	}
	for _, tt := range tests {
		res := searchResp(t, ix, tt.opt)
		if res.Match != tt.match || res.Message != tt.message {
			t.Errorf("%q: match %q message %q, want %q %q", tt.opt.Query, res.Match, res.Message, tt.match, tt.message)
		}
		if tt.first != "" && (len(res.Results) == 0 || res.Results[0].Path != tt.first) {
			t.Errorf("%q: first result %v, want %s", tt.opt.Query, paths(res.Results), tt.first)
		}
	}
	empty := openIndex(t, newWorkspace(t, nil), Options{})
	mustSync(t, empty)
	if res := searchResp(t, empty, SearchOptions{Query: "anything"}); res.Message != "The index is empty: there are no notes under daily/, digest/, memory/, archive/ or MEMORY.md." {
		t.Errorf("empty index: %q", res.Message)
	}
}

func TestQuestionDatesAndSpeakers(t *testing.T) {
	ws := newWorkspace(t, map[string]string{
		"daily/2026-06-22/s1.md": card("session-1", "chat", "## Chat\nMelanie: Caroline, how is the pottery class going?\nCaroline: I love it, I made a bowl.\nMelanie: I tried pottery once.\n"),
		"daily/2026-06-15/s2.md": card("session-2", "chat", "## Chat\nCaroline: The pottery studio was closed.\nMelanie: Too bad.\n"),
		"digest/wiki/pottery.md": card("pottery", "a wiki page", "Pottery is shaping clay.\n"),
	})
	ix := openIndex(t, ws, Options{})
	mustSync(t, ix)
	now := time.Date(2026, 6, 24, 9, 0, 0, 0, time.UTC)
	res := searchResp(t, ix, SearchOptions{Query: "what did Caroline say about pottery yesterday", Now: now, Context: 0})
	if res.Dates == nil || res.Dates.Start != "2026-06-23" {
		t.Fatalf("dates %+v", res.Dates)
	}
	// nothing on the 23rd: the date is dropped and said so
	if !strings.HasPrefix(res.Message, "Nothing from 2026-06-23 matches") {
		t.Errorf("message %q", res.Message)
	}
	res = searchResp(t, ix, SearchOptions{Query: "what did Caroline say about pottery last week", Now: now, Context: 0})
	// a question about a time leaves undated notes out
	if got := paths(res.Results); !cmp.Equal(got, []string{"daily/2026-06-15/s2.md"}) {
		t.Errorf("last week: %v", got)
	}
	// Caroline's own line about pottery ranks above Melanie's line naming her.
	res = searchResp(t, ix, SearchOptions{Query: "Caroline pottery", Now: now, Context: 0})
	if len(res.Results) < 3 || res.Results[0].Text != "Caroline: The pottery studio was closed." && res.Results[0].Text != "Caroline: I love it, I made a bowl." {
		t.Errorf("speaker: %+v", res.Results)
	}
	// a question of only a date lists that day's notes
	res = searchResp(t, ix, SearchOptions{Query: "what happened on 2026-06-22", Now: now})
	if res.Match != "date" || len(res.Results) != 1 || res.Results[0].Path != "daily/2026-06-22/s1.md" {
		t.Errorf("date only: %+v", res)
	}
	// Literal: the same words, no date
	res = searchResp(t, ix, SearchOptions{Query: "pottery last week", Now: now, Literal: true})
	if res.Dates != nil || len(res.Results) < 3 {
		t.Errorf("literal: %+v", res)
	}
}

// Archived notes are left out unless asked for, on every path a search
// takes: frequent words (lists), rare ones (FTS5) and with a filter.
func TestArchivedNotesLeftOut(t *testing.T) {
	files := map[string]string{}
	for i := 0; i < 30; i++ {
		// the archived copies weigh more: they would win every ranking
		files[fmt.Sprintf("archive/daily/2026-03-01/old%d.md", i)] = card(fmt.Sprintf("old%d", i), "release release", fmt.Sprintf("release notes release, version %d\n", i))
	}
	for i := 0; i < 3; i++ {
		files[fmt.Sprintf("daily/2026-03-02/new%d.md", i)] = card(fmt.Sprintf("new%d", i), "plans", fmt.Sprintf("the release is friday, week %d\n", i))
	}
	ws := newWorkspace(t, files)
	ix := openIndex(t, ws, Options{FrequentTerms: 4})
	mustSync(t, ix)
	for _, opt := range []SearchOptions{
		{Query: "release"},
		{Query: "release friday"},
		{Query: "release", StartDate: "2026-01-01"},
		{Query: "release", Tags: nil, PathPrefixes: []string{"daily/", "archive/"}},
	} {
		got := paths(search(t, ix, opt.Query, opt))
		if len(got) != 3 {
			t.Errorf("%+v: %v, want the three live notes", opt, got)
		}
		for _, p := range got {
			if strings.HasPrefix(p, "archive/") {
				t.Errorf("%+v: archived %s", opt, p)
			}
		}
		// the best chunks are all archived: the candidates are taken further down
		small := opt
		small.Limit = 2
		if got := searchResp(t, ix, small).Results; len(got) != 2 || strings.HasPrefix(got[0].Path, "archive/") || strings.HasPrefix(got[1].Path, "archive/") {
			t.Errorf("%+v: %v", small, paths(got))
		}
		opt.Archived = true
		if got := paths(search(t, ix, opt.Query, opt)); len(got) != 33 {
			t.Errorf("%+v: %d results, want the 30 archived notes too", opt, len(got))
		}
	}
}
