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
	MinScore   float64  `name:"min-score" help:"Drop results scoring below this." placeholder:"SCORE"`
	StartDate  string   `name:"start-date" help:"Only notes dated on or after this day (date from the path)." placeholder:"YYYY-MM-DD"`
	EndDate    string   `name:"end-date" help:"Only notes dated on or before this day." placeholder:"YYYY-MM-DD"`
	StrictDate bool     `name:"strict-date" help:"With a date bound, also leave out undated notes such as digest/."`
	Tag        []string `help:"Only notes with this tag: memory_tags, tags: or #tag, any case (repeatable: any of them)." placeholder:"TAG"`
	Path       []string `help:"Only paths starting with this prefix (repeatable)." placeholder:"PREFIX"`
	Archived   bool     `help:"Also search what maintain archived (archive/)."`
}

func (c *searchCmd) Help() string {
	return `Words are matched with English stemming, stop words are ignored and results
are ranked by BM25 with a note's name and description weighted above its body.
Chinese, Japanese and Korean text matches by character pairs, so any two-character
word is found. Every search first picks up notes edited since the last command.`
}

func (c *searchCmd) Run(ctx context.Context, app *App) error {
	return app.emit(c.answer(ctx, app))
}

// searchAnswer is what a search found.
type searchAnswer struct {
	Results []index.Result `json:"results"`
}

func (s *searchAnswer) jsonValue() any { return s.Results }

func (s *searchAnswer) text() string {
	if len(s.Results) == 0 {
		return noResults + "\n"
	}
	var b strings.Builder
	for _, r := range s.Results {
		writeResult(&b, r)
	}
	return b.String()
}

func (c *searchCmd) answer(ctx context.Context, app *App) (*searchAnswer, error) {
	query := strings.TrimSpace(strings.Join(c.Query, " "))
	if query == "" {
		return nil, answerError{"query cannot be empty"}
	}
	cfg, err := app.Config()
	if err != nil {
		return nil, err
	}
	opt := index.SearchOptions{Query: query, Limit: cfg.Search.Limit, MinScore: c.MinScore, StrictDate: c.StrictDate, Tags: c.Tag, PathPrefixes: c.Path, Archived: c.Archived}
	if c.Limit != nil {
		if *c.Limit <= 0 {
			return nil, usageError{fmt.Errorf("--limit must be greater than 0, not %d", *c.Limit)}
		}
		opt.Limit = *c.Limit
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
			return nil, usageError{fmt.Errorf("%s: %v", d.flag, err)}
		}
		*d.out = v
	}
	if opt.StartDate != "" && opt.EndDate != "" && opt.StartDate > opt.EndDate {
		return nil, usageError{fmt.Errorf("--start-date %s is after --end-date %s", opt.StartDate, opt.EndDate)}
	}
	for i, p := range opt.PathPrefixes {
		opt.PathPrefixes[i] = strings.TrimPrefix(p, "./")
	}
	ix, err := app.Index(ctx, false)
	if err != nil {
		return nil, err
	}
	res, rep, err := ix.SearchFresh(ctx, opt)
	if rep != nil {
		app.warnProblems(rep)
	}
	if errors.Is(err, index.ErrNoValidTags) {
		return nil, answerError{err.Error()}
	}
	if err != nil {
		return nil, err
	}
	if res == nil {
		res = []index.Result{}
	}
	return &searchAnswer{Results: res}, nil
}

// writeResult renders one result as ReMe's search answer block.
func writeResult(b *strings.Builder, r index.Result) {
	fmt.Fprintf(b, "========== %s:%d-%d [score=%.4f] ==========\n", r.Path, r.StartLine, r.EndLine, r.Score)
	if r.Text != "" {
		b.WriteString(r.Text)
		b.WriteByte('\n')
	} else {
		fmt.Fprintf(b, "name: %s\ndescription: %s\n", r.Name, r.Description)
	}
	writeNeighbors(b, "outlinks", "→", r.Outlinks)
	writeNeighbors(b, "inlinks", "←", r.Inlinks)
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
