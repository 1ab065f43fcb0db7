package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/reme-dev/reme/index"
	"github.com/reme-dev/reme/store"
)

type readCmd struct {
	Path      string `arg:"" help:"Workspace path (a path without extension gets .md)."`
	StartLine string `name:"start-line" help:"First line, 1-based." placeholder:"N"`
	EndLine   string `name:"end-line" help:"Last line, inclusive." placeholder:"M"`
}

func (readCmd) Help() string {
	return `Prints a text file of the workspace. Output over 50 KiB is cut with a notice
saying where to continue. Session files (session/dialog/*.jsonl) are shown one
message per line as [speaker @ time] text. Errors are worded as ReMe words them.`
}

func (c *readCmd) Run(ctx context.Context, app *App) error {
	return app.emit(c.answer(ctx, app))
}

// readAnswer is the lines a read returned.
type readAnswer store.ReadResult

func (r *readAnswer) jsonValue() any { return (*store.ReadResult)(r) }

func (r *readAnswer) text() string {
	if r.Text == "" {
		return ""
	}
	return r.Text + "\n"
}

func (c *readCmd) answer(ctx context.Context, app *App) (*readAnswer, error) {
	start, err := lineArg("start_line", c.StartLine)
	if err != nil {
		return nil, err
	}
	end, err := lineArg("end_line", c.EndLine)
	if err != nil {
		return nil, err
	}
	// As ReMe: the range starts at line 1 at the earliest, and a given end
	// before the start is refused before the file is read.
	s := 1
	if start != nil && *start > 1 {
		s = *start
	}
	e := 0 // to the end
	if end != nil {
		if *end < s {
			return nil, answerError{fmt.Sprintf("start_line (%d) > end_line (%d)", s, *end)}
		}
		e = *end
	}
	if strings.TrimSpace(c.Path) == "" {
		return nil, answerError{"`path` is required"}
	}
	ws, err := app.Workspace(false)
	if err != nil {
		return nil, err
	}
	res, err := ws.Read(c.Path, s, e)
	if err != nil {
		return nil, readError(ws, c.Path, err)
	}
	return (*readAnswer)(res), nil
}

// lineArg parses a line number the way ReMe reports a bad one.
func lineArg(name, v string) (*int, error) {
	if strings.TrimSpace(v) == "" {
		return nil, nil
	}
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil {
		return nil, answerError{fmt.Sprintf("%s must be an integer, got '%s'", name, v)}
	}
	return &n, nil
}

// readError words a read failure as ReMe does: the file by its absolute
// path, "does not exist", "is not a file", the line range.
func readError(ws *store.Workspace, p string, err error) error {
	switch {
	case errors.Is(err, store.ErrOutsideWorkspace):
		return answerError{"`path` must stay inside the workspace"}
	case errors.Is(err, store.ErrInvalidPath):
		return usageError{err}
	case errors.Is(err, store.ErrLineRange):
		return err
	}
	rel, rerr := ws.Rel(p)
	if rerr != nil {
		return err
	}
	probed, _ := store.ResolveMarkdown(rel)
	abs := ws.Abs(probed)
	if errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("file %s does not exist", abs)
	}
	if fi, serr := os.Stat(abs); serr == nil && !fi.Mode().IsRegular() {
		return fmt.Errorf("path %s is not a file", abs)
	}
	return err
}

type dailyListCmd struct {
	Date string `arg:"" optional:"" help:"Day to list (default today in the workspace time zone)." placeholder:"YYYY-MM-DD"`
}

func (c *dailyListCmd) Run(ctx context.Context, app *App) error {
	return app.emit(c.answer(ctx, app))
}

// dailyListAnswer is a day's cards with their frontmatter.
type dailyListAnswer struct {
	Date  string           `json:"date"`
	Count int              `json:"count"`
	Notes []map[string]any `json:"notes"`
	lines []string
}

func (d *dailyListAnswer) jsonValue() any { return d }

func (d *dailyListAnswer) text() string {
	if d.Count == 0 {
		return fmt.Sprintf("No notes found for %s\n", d.Date)
	}
	return strings.Join(d.lines, "\n") + "\n"
}

func (c *dailyListCmd) answer(ctx context.Context, app *App) (*dailyListAnswer, error) {
	date, err := app.dateOrToday(c.Date)
	if err != nil {
		return nil, err
	}
	ws, err := app.Workspace(false)
	if err != nil {
		return nil, err
	}
	notes, err := ws.DailyNotes(date)
	if err != nil {
		return nil, err
	}
	out := &dailyListAnswer{Date: date, Count: len(notes), Notes: make([]map[string]any, 0, len(notes))}
	for _, n := range notes {
		if n.FMErr != nil {
			app.Log.Warn("frontmatter does not parse", "path", n.Path, "err", n.FMErr)
		}
		out.Notes = append(out.Notes, n.Fields())
		out.lines = append(out.lines, store.DailyListLine(n))
	}
	return out, nil
}

// dateOrToday validates an explicit date strictly, or returns today.
func (a *App) dateOrToday(d string) (string, error) {
	if d == "" {
		return a.Today()
	}
	v, err := store.ParseDate(d)
	if err != nil {
		return "", answerError{store.ErrInvalidDate.Error()}
	}
	return v, nil
}

type dailyReindexCmd struct {
	Date string `arg:"" optional:"" help:"Day to rebuild (default today)." placeholder:"YYYY-MM-DD"`
}

func (dailyReindexCmd) Help() string {
	return `Rewrites the block between <!-- notes:auto --> and <!-- /notes:auto --> in
daily/DATE.md from the day's cards. Text outside the markers is kept.`
}

func (c *dailyReindexCmd) Run(ctx context.Context, app *App) error {
	date, err := app.dateOrToday(c.Date)
	if err != nil {
		return err
	}
	ix, err := app.Index(ctx, false)
	if err != nil {
		return err
	}
	var res *store.DayIndexResult
	err = ix.Locked(ctx, func() error {
		var err error
		if res, err = ix.Workspace().RefreshDayIndex(date); err != nil {
			return err
		}
		if res.Changed {
			return ix.UpdatePaths(ctx, res.Path)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if app.Globals.JSON {
		return app.printJSON(map[string]any{"date": res.Date, "path": res.Path, "created": res.Created, "changed": res.Changed, "notes_count": len(res.Notes)})
	}
	fmt.Fprintf(app.Stdout, "Reindexed %s (%d note(s))\n", res.Path, len(res.Notes))
	return nil
}

type listTagsCmd struct {
	Page     int    `default:"1" help:"Page number, from 1."`
	PageSize int    `name:"page-size" default:"100" help:"Tags per page (default ${default}, at most 1000)."`
	OrderBy  string `name:"order-by" default:"tag" enum:"tag,file_count" help:"Sort by tag or file_count."`
	Order    string `default:"" enum:",asc,desc" help:"asc or desc (default asc for tag, desc for file_count)."`
}

func (c *listTagsCmd) Run(ctx context.Context, app *App) error {
	return app.emit(c.answer(ctx, app))
}

// tagsAnswer is one page of tags with their note counts.
type tagsAnswer index.TagPage

func (t *tagsAnswer) jsonValue() any { return (*index.TagPage)(t) }

func (t *tagsAnswer) text() string {
	if t.TotalTags == 0 {
		return "No tags.\n"
	}
	var b strings.Builder
	for _, it := range t.Items {
		fmt.Fprintf(&b, "%s\t%d\n", it[0], it[1])
	}
	fmt.Fprintf(&b, "(tags %d-%d of %d, page %d of %d)\n", t.Range[0], t.Range[1], t.TotalTags, t.Page, t.TotalPages)
	return b.String()
}

func (c *listTagsCmd) answer(ctx context.Context, app *App) (*tagsAnswer, error) {
	ix, err := app.FreshIndex(ctx)
	if err != nil {
		return nil, err
	}
	page, err := ix.ListTags(ctx, index.TagListOptions{Page: c.Page, PageSize: c.PageSize, OrderBy: c.OrderBy, Order: c.Order})
	if err != nil {
		return nil, usageError{err}
	}
	return (*tagsAnswer)(page), nil
}
