package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/reme-dev/reme/index"
	"github.com/reme-dev/reme/store"
)

const noResults = "No relevant information was found for the given query."

type searchCmd struct {
	Query      []string `arg:"" optional:"" help:"A question, words, \"an exact phrase\", -excluded, prefix*."`
	Limit      *int     `help:"Number of results (default 5; config search.limit, env REME_SEARCH_LIMIT)."`
	MinScore   float64  `name:"min-score" help:"Drop results scoring below this BM25 score." placeholder:"SCORE"`
	StartDate  string   `name:"start-date" help:"Only notes dated on or after this day (date from the path)." placeholder:"YYYY-MM-DD"`
	EndDate    string   `name:"end-date" help:"Only notes dated on or before this day." placeholder:"YYYY-MM-DD"`
	StrictDate bool     `name:"strict-date" help:"With a date bound, also leave out undated notes such as digest/."`
	Tag        []string `help:"Only notes with this memory tag (repeatable: any of them)." placeholder:"TAG"`
	Path       []string `help:"Only paths starting with this prefix (repeatable)." placeholder:"PREFIX"`
	Context    *int     `help:"Lines shown around the hits (default 1; config search.context)." placeholder:"N"`
	Full       bool     `help:"Show the whole section around the hits instead of a window."`
	Links      bool     `help:"Also list the notes each result links to and is linked from."`
	Literal    bool     `help:"Take the query as words only: no dates understood from it."`
}

func (c *searchCmd) Help() string {
	return `Words are matched with English stemming, stop words are ignored and results
are ranked by BM25 with a note's name and description weighted above its body.
Chinese, Japanese and Korean text matches by character pairs, so any two-character
word is found. Every search first picks up notes edited since the last command.

A result is the window of lines around the hits (never across a heading), with its
path and exact line range. Results that have the exact phrase of the query come
first, then those with all of its words, then any of them; when no word is found,
words are tried as prefixes. Dates in the question ("yesterday", "last week",
"in May 2026", "昨天", "上周") limit the search to those days, counted in the
workspace time zone, and a name that speaks lines ("Caroline: …") weighs on them.

The score is BM25 (k1 1.2, b 0.75) of the window with ReMe's idf, which stays
positive for words found in most notes: ln(1 + (N - df + 0.5) / (df + 0.5)) over
the N indexed chunks. --min-score compares with it.`
}

func (c *searchCmd) Run(ctx context.Context, app *App) error {
	query := strings.TrimSpace(strings.Join(c.Query, " "))
	if query == "" {
		return answerError{"query cannot be empty"}
	}
	cfg, err := app.Config()
	if err != nil {
		return err
	}
	loc, err := cfg.Location()
	if err != nil {
		return err
	}
	opt := index.SearchOptions{Query: query, Limit: cfg.Search.Limit, MinScore: c.MinScore, StrictDate: c.StrictDate, Tags: c.Tag,
		PathPrefixes: c.Path, Context: cfg.Search.Context, MaxLines: cfg.Search.MaxLines, Full: c.Full, Links: c.Links,
		Literal: c.Literal, Now: app.Now(), Location: loc}
	if c.Limit != nil {
		if *c.Limit <= 0 {
			return usageError{fmt.Errorf("--limit must be greater than 0, not %d", *c.Limit)}
		}
		opt.Limit = *c.Limit
	}
	if c.Context != nil {
		if *c.Context < 0 {
			return usageError{fmt.Errorf("--context must be 0 or more, not %d", *c.Context)}
		}
		opt.Context = *c.Context
	}
	for _, d := range []struct {
		flag string
		in   string
		out  *string
	}{{"--start-date", c.StartDate, &opt.StartDate}, {"--end-date", c.EndDate, &opt.EndDate}} {
		if d.in == "" {
			continue
		}
		v, err := store.NormalizeDate(d.in)
		if err != nil {
			return usageError{fmt.Errorf("%s: %v", d.flag, err)}
		}
		*d.out = v
	}
	if opt.StartDate != "" && opt.EndDate != "" && opt.StartDate > opt.EndDate {
		return usageError{fmt.Errorf("--start-date %s is after --end-date %s", opt.StartDate, opt.EndDate)}
	}
	for i, p := range opt.PathPrefixes {
		opt.PathPrefixes[i] = strings.TrimPrefix(p, "./")
	}
	ix, err := app.Index(ctx, false)
	if err != nil {
		return err
	}
	resp, rep, err := ix.SearchFresh(ctx, opt)
	if rep != nil {
		app.warnProblems(rep)
	}
	if errors.Is(err, index.ErrNoValidTags) {
		return answerError{err.Error()}
	}
	if err != nil {
		return err
	}
	for _, w := range resp.Warnings {
		app.Log.Warn(w)
	}
	if app.Globals.JSON {
		return app.printJSON(resp)
	}
	var b strings.Builder
	if len(resp.Results) == 0 {
		b.WriteString(noResults + "\n")
		if resp.Message != "" {
			b.WriteString(resp.Message + "\n")
		}
	} else if resp.Message != "" {
		b.WriteString(resp.Message + "\n")
	}
	for _, r := range resp.Results {
		writeResult(&b, r, c.Links)
	}
	_, err = fmt.Fprint(app.Stdout, b.String())
	return err
}

// writeResult renders one result: ReMe's header line (with the section
// and the rung it matched), then the window's lines as they are in the file.
func writeResult(b *strings.Builder, r index.Result, links bool) {
	fmt.Fprintf(b, "========== %s:%d-%d ", r.Path, r.StartLine, r.EndLine)
	switch {
	case r.Match == "date":
		fmt.Fprintf(b, "[date %s]", r.Date)
	case r.Scores.Vector != nil && r.Scores.Keyword != nil:
		fmt.Fprintf(b, "[score=%.4f vector=%.4f keyword=%.4f match=%s]", r.Score, *r.Scores.Vector, *r.Scores.Keyword, r.Match)
	case r.Scores.Vector != nil:
		fmt.Fprintf(b, "[score=%.4f vector=%.4f keyword=- match=%s]", r.Score, *r.Scores.Vector, r.Match)
	default:
		fmt.Fprintf(b, "[score=%.4f match=%s]", r.Score, r.Match)
	}
	if len(r.Breadcrumb) > 0 {
		fmt.Fprintf(b, " § %s", strings.Join(r.Breadcrumb, " › "))
	}
	b.WriteString(" ==========\n")
	if r.Text != "" {
		b.WriteString(r.Text)
		b.WriteByte('\n')
	} else {
		fmt.Fprintf(b, "name: %s\ndescription: %s\n", r.Name, r.Description)
	}
	if links {
		writeNeighbors(b, "outlinks", "→", r.Outlinks)
		writeNeighbors(b, "inlinks", "←", r.Inlinks)
	}
}

func writeNeighbors(b *strings.Builder, label, arrow string, ns []index.Neighbor) {
	if len(ns) == 0 {
		return
	}
	fmt.Fprintf(b, "  %s (%d):\n", label, len(ns))
	for _, n := range ns {
		meta := "(no meta)"
		if n.Indexed {
			meta = fmt.Sprintf("name=%q  description=%q", n.Name, n.Description)
		}
		fmt.Fprintf(b, "    %s %s  %s\n", arrow, n.Path, meta)
		for _, a := range n.Anchors {
			fmt.Fprintf(b, "        via anchor=#%s\n", a)
		}
	}
}
