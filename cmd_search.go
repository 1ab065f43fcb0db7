package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/reme-dev/reme/index"
	"github.com/reme-dev/reme/jobs/llm"
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
	Tag        []string `help:"Only notes with this tag: memory_tags, tags: or #tag, any case (repeatable: any of them)." placeholder:"TAG"`
	Path       []string `help:"Only paths starting with this prefix (repeatable)." placeholder:"PREFIX"`
	Archived   bool     `help:"Also search what maintain archived (archive/)."`
	Context    *int     `help:"Lines shown around the hits (default 1; config search.context)." placeholder:"N"`
	Full       bool     `help:"Show the whole section around the hits instead of a window."`
	Links      bool     `help:"Also list the notes each result links to and is linked from."`
	Literal    bool     `help:"Take the query as words only: no dates understood from it."`
	Hybrid     *bool    `negatable:"" help:"With a model configured, also search by meaning (default: config search.hybrid, true)."`
	Type       []string `help:"Only notes of this type (repeatable: any of them): user, feedback, project, reference (long-term entries of that type), entry, profile, memory_index (MEMORY.md, left out otherwise), card, digest." placeholder:"TYPE"`
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
	return app.emit(c.answer(ctx, app))
}

// searchAnswer is what a search found: ReMe's search metadata (results,
// link_expansion, counts) with reme's additions.
type searchAnswer index.SearchResponse

func (s *searchAnswer) jsonValue() any { return (*index.SearchResponse)(s) }

func (s *searchAnswer) text() string {
	var b strings.Builder
	if len(s.Results) == 0 {
		b.WriteString(noResults + "\n")
	}
	if s.Message != "" {
		b.WriteString(s.Message + "\n")
	}
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
	loc, err := cfg.Location()
	if err != nil {
		return nil, err
	}
	opt := index.SearchOptions{Query: query, Limit: cfg.Search.Limit, MinScore: c.MinScore, StrictDate: c.StrictDate, Tags: c.Tag,
		PathPrefixes: c.Path, Archived: c.Archived, Context: cfg.Search.Context, MaxLines: cfg.Search.MaxLines, Full: c.Full,
		Links: c.Links, Literal: c.Literal, Now: app.Now(), Location: loc, Types: c.Type}
	for _, t := range c.Type {
		if !store.IsSearchType(t) {
			return nil, usageError{fmt.Errorf("--type must be one of %s, not %q", strings.Join(store.SearchTypes, ", "), t)}
		}
	}
	if c.Limit != nil {
		if *c.Limit <= 0 {
			return nil, usageError{fmt.Errorf("--limit must be greater than 0, not %d", *c.Limit)}
		}
		opt.Limit = *c.Limit
	}
	if c.Context != nil {
		if *c.Context < 0 {
			return nil, usageError{fmt.Errorf("--context must be 0 or more, not %d", *c.Context)}
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
	if c.Hybrid != nil && !*c.Hybrid {
		app.keywordOnly = true
	}
	ix, err := app.Index(ctx, false)
	if err != nil {
		return nil, err
	}
	resp, rep, err := ix.SearchFresh(ctx, opt)
	if rep != nil {
		app.warnProblems(rep)
	}
	if errors.Is(err, index.ErrNoValidTags) {
		return nil, answerError{err.Error()}
	}
	if err != nil {
		return nil, err
	}
	for _, w := range resp.Warnings {
		app.Log.Warn(w)
	}
	return (*searchAnswer)(resp), nil
}

// writeResult renders one result: ReMe's header line (with the section
// and the rung it matched), then the window's lines as they are in the file,
// then its links when they were asked for.
func writeResult(b *strings.Builder, r index.Result) {
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

// searchModels are the embedding and rerank models of hybrid search, when
// a model is configured and search.hybrid is on. A model that cannot be
// set up is a warning: keyword search goes on.
//
// The clients are set up once per command, so that a warning about them is
// given once, however often they are asked for.
func (a *App) searchModels() (index.Embedder, index.Reranker) {
	if a.models == nil {
		a.models = &searchModelClients{}
		a.models.e, a.models.r = a.newSearchModels()
	}
	return a.models.e, a.models.r
}

// searchModelClients are the clients searchModels set up.
type searchModelClients struct {
	e index.Embedder
	r index.Reranker
}

func (a *App) newSearchModels() (index.Embedder, index.Reranker) {
	cfg, err := a.Config()
	if err != nil || !cfg.Search.Hybrid || a.keywordOnly {
		return nil, nil
	}
	var e index.Embedder
	var r index.Reranker
	if emb, err := a.Embedder(); err != nil {
		a.Log.Warn("search by meaning is off", "err", err)
	} else if emb != nil {
		e = newEmbedderAdapter(emb)
	}
	if rr, err := a.Reranker(); err != nil {
		a.Log.Warn("reranking is off", "err", err)
	} else if rr != nil && e != nil {
		r = rerankerAdapter{rr}
	}
	return e, r
}

// searchModelsSet reports an embedding model in use by the index.
func (a *App) searchModelsSet() bool {
	e, _ := a.searchModels()
	return e != nil
}

// embedderAdapter gives the index the model clients' embedder.
type embedderAdapter struct {
	e    llm.Embedder
	name string
}

// newEmbedderAdapter names the vectors by the model and the dimension
// known before any call (configured, or the model's own): a dimension
// learned from a reply would name them otherwise in the next process, and
// every chunk would be embedded again.
func newEmbedderAdapter(e llm.Embedder) embedderAdapter {
	name := e.Model()
	if d := e.Dimensions(); d > 0 {
		name = fmt.Sprintf("%s/%d", name, d)
	}
	return embedderAdapter{e: e, name: name}
}

func (a embedderAdapter) Embed(ctx context.Context, texts []string, query bool) ([][]float32, error) {
	input := llm.InputDocument
	if query {
		input = llm.InputQuery
	}
	return a.e.Embed(ctx, texts, input)
}

// Model names the model and the dimension asked for: a vector of another
// dimension is never compared.
func (a embedderAdapter) Model() string { return a.name }

type rerankerAdapter struct{ r llm.Reranker }

func (a rerankerAdapter) Rerank(ctx context.Context, query string, docs []string) ([]float64, error) {
	ranked, err := a.r.Rerank(ctx, query, docs, 0)
	if err != nil {
		return nil, err
	}
	scores := make([]float64, len(docs))
	for _, r := range ranked {
		if r.Index < 0 || r.Index >= len(docs) {
			return nil, fmt.Errorf("rerank: document %d of %d", r.Index, len(docs))
		}
		scores[r.Index] = r.Score
	}
	return scores, nil
}

// embedAfter gives the notes a command wrote their embeddings, once the
// command is done (never while it holds a lock): reindex and the jobs that
// write cards. A model that fails is a warning; the notes are still found
// by their words, and the next run tries again.
func (a *App) embedAfter(ctx context.Context) {
	switch a.command {
	case "reindex", "auto_memory", "auto-memory", "auto_resource", "auto-resource":
	default:
		return
	}
	if a.ix == nil {
		return
	}
	n, err := a.embedPending(ctx, a.ix)
	if err != nil {
		a.Log.Warn("embeddings not computed; keyword search still finds these notes", "err", err)
		return
	}
	if n > 0 {
		a.Log.Info("embeddings", "chunks", n)
	}
}

// embedPending computes the vectors ix lacks, reporting progress on stderr
// once it takes more than a second.
func (a *App) embedPending(ctx context.Context, ix *index.Index) (int, error) {
	start, last := time.Now(), time.Now()
	return ix.EmbedPending(ctx, func(done, pending int) {
		if pending > 0 && time.Since(start) > time.Second && time.Since(last) > time.Second {
			last = time.Now()
			fmt.Fprintf(a.Stderr, "reme: embedding: %d done, %d to go\n", done, pending)
		}
	})
}
