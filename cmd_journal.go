package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/reme-dev/reme/store"
)

type historyCmd struct {
	Since string `help:"Only runs since then: a date (2026-06-20), a time (RFC 3339) or a duration back from now (24h, 7d)." placeholder:"WHEN"`
	Path  string `help:"Only changes to this workspace path (a file, or a folder and everything in it)." placeholder:"P"`
	RunID string `name:"run" help:"Only this run." placeholder:"ID"`
	Limit int    `help:"Show at most this many runs, newest last (0: all)." default:"0"`
}

func (historyCmd) Help() string {
	return `Lists what reme changed in the workspace, run by run: every automated change
(auto_memory, auto_resource, watch, move, delete, maintain, auto_dream, undo)
is journaled in metadata/journal/ with the file's hash before and after and its
old bytes, so that "reme undo RUN" can restore it.`
}

// historyRun is one run as history prints it.
type historyRun struct {
	*store.RunSummary
	Shown []store.Entry `json:"changes"`
}

func (c *historyCmd) Run(ctx context.Context, app *App) error {
	return app.emit(c.answer(ctx, app))
}

// historyAnswer is the runs history lists.
type historyAnswer struct {
	Runs []historyRun `json:"runs"`
	loc  *time.Location
}

func (h *historyAnswer) jsonValue() any { return h.Runs }

func (h *historyAnswer) text() string {
	if len(h.Runs) == 0 {
		return "No changes journaled.\n"
	}
	loc := h.loc
	var b strings.Builder
	for _, h := range h.Runs {
		line := fmt.Sprintf("%s  %s  %s  %s  %s  %d change(s)", h.ID, h.Time.In(loc).Format("2006-01-02 15:04:05"),
			h.Command, h.Trigger, h.Status, len(h.Changes))
		if h.Undoes != "" {
			line += "  undoes " + h.Undoes
		}
		if h.Model != "" {
			line += "  model " + h.Model
		}
		if h.Skipped > 0 {
			line += fmt.Sprintf("  (%d unreadable line(s))", h.Skipped)
		}
		b.WriteString(line + "\n")
		if h.Error != "" {
			fmt.Fprintf(&b, "  error: %s\n", h.Error)
		}
		for _, e := range h.Shown {
			target := e.Path
			if e.From != "" {
				target = e.From + " → " + e.Path
			}
			l := fmt.Sprintf("  %-7s %s", e.Action, target)
			if e.Reason != "" {
				l += "  (" + e.Reason + ")"
			}
			b.WriteString(l + "\n")
		}
	}
	return b.String()
}

func (c *historyCmd) answer(ctx context.Context, app *App) (*historyAnswer, error) {
	ix, err := app.Index(ctx, false)
	if err != nil {
		return nil, err
	}
	var since time.Time
	if c.Since != "" {
		if since, err = app.parseSince(c.Since); err != nil {
			return nil, usageError{err}
		}
	}
	var prefix string
	if c.Path != "" {
		if prefix, err = ix.Workspace().Rel(c.Path); err != nil {
			return nil, usageError{err}
		}
	}
	var runs []*store.RunSummary
	if c.RunID != "" {
		s, err := ix.Journal().FindRun(c.RunID)
		if err != nil {
			return nil, err
		}
		runs = []*store.RunSummary{s}
	} else if runs, err = ix.Journal().Runs(); err != nil {
		return nil, err
	}
	var out []historyRun
	for _, s := range runs {
		if !since.IsZero() && s.Time.Before(since) {
			continue
		}
		h := historyRun{RunSummary: s, Shown: s.Changes}
		if prefix != "" {
			h.Shown = nil
			for _, e := range s.Changes {
				if underPath(e.Path, prefix) || e.From != "" && underPath(e.From, prefix) {
					h.Shown = append(h.Shown, e)
				}
			}
			if len(h.Shown) == 0 {
				continue
			}
		}
		if h.Shown == nil {
			h.Shown = []store.Entry{}
		}
		out = append(out, h)
	}
	if c.Limit > 0 && len(out) > c.Limit {
		out = out[len(out)-c.Limit:]
	}
	if out == nil {
		out = []historyRun{}
	}
	return &historyAnswer{Runs: out, loc: app.location()}, nil
}

func underPath(p, prefix string) bool {
	return p == prefix || strings.HasPrefix(p, strings.TrimSuffix(prefix, "/")+"/")
}

// parseSince reads a date (in the workspace time zone), an RFC 3339 time,
// or a duration back from now (24h, 7d).
func (a *App) parseSince(s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	if store.IsDate(s) {
		return time.ParseInLocation(time.DateOnly, s, a.location())
	}
	if n, ok := strings.CutSuffix(s, "d"); ok {
		if d, err := strconv.Atoi(n); err == nil && d >= 0 {
			return a.Now().AddDate(0, 0, -d), nil
		}
	}
	if d, err := time.ParseDuration(s); err == nil && d >= 0 {
		return a.Now().Add(-d), nil
	}
	return time.Time{}, fmt.Errorf("--since %q: want a date (2026-06-20), a time (2026-06-20T10:00:00+08:00) or a duration (24h, 7d)", s)
}

// location is the workspace time zone, or local time when the
// configuration cannot say.
func (a *App) location() *time.Location {
	if cfg, err := a.Config(); err == nil {
		if loc, err := cfg.Location(); err == nil {
			return loc
		}
	}
	return time.Local
}

type undoCmd struct {
	RunID string `arg:"" optional:"" name:"run_id" help:"The run to undo (see reme history)."`
	Last  bool   `help:"Undo the newest run."`
	Force bool   `help:"Restore files changed since the run too (their current bytes are journaled, so this undo can be undone)."`
}

func (undoCmd) Help() string {
	return `Restores every file a run touched to its bytes before the run, newest change
first: created files are removed, changed and deleted ones restored, renamed and
archived ones moved back; the index follows. A file changed since the run is
named and nothing is done, unless --force. The undo is journaled as a run of its
own, so "reme undo --last" right after it redoes the change.`
}

func (c *undoCmd) Run(ctx context.Context, app *App) error {
	if (c.RunID == "") == !c.Last {
		return usageError{errors.New("give a run id or --last")}
	}
	ix, err := app.Index(ctx, false)
	if err != nil {
		return err
	}
	var res *store.UndoResult
	err = ix.Locked(ctx, func() error {
		id := c.RunID
		if c.Last {
			if id, err = ix.Journal().LastRun(); err != nil {
				return err
			}
		}
		var uerr error
		res, uerr = ix.Journal().Undo(id, c.Force, app.trigger())
		if res != nil {
			// whatever was restored, even by an undo that then failed, is indexed
			if err := ix.UpdatePaths(ctx, res.Restored...); err != nil && uerr == nil {
				uerr = err
			}
		}
		return uerr
	})
	if err != nil {
		return err
	}
	if app.Globals.JSON {
		if res.Restored == nil {
			res.Restored = []string{}
		}
		return app.printJSON(res)
	}
	fmt.Fprintf(app.Stdout, "Undid run %s: %d file(s) restored (this undo is run %s)\n", res.Undone, len(res.Restored), res.Run)
	for _, p := range res.Restored {
		fmt.Fprintf(app.Stdout, "  %s\n", p)
	}
	for _, p := range res.Conflicts {
		fmt.Fprintf(app.Stdout, "overwrote %s, changed since the run (its bytes are in the journal)\n", p)
	}
	return nil
}

// trigger says what started this command, for the journal: REME_TRIGGER
// when set (cron lines set it), else what the command implies.
func (a *App) trigger() string {
	switch t := a.Getenv("REME_TRIGGER"); t {
	case store.TriggerCLI, store.TriggerHook, store.TriggerCron, store.TriggerWatch, store.TriggerMCP:
		return t
	}
	switch a.command {
	case "auto_memory_cc", "auto_memory_codex":
		return store.TriggerHook
	case "watch":
		return store.TriggerWatch
	case "mcp":
		return store.TriggerMCP
	}
	return store.TriggerCLI
}
