package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/reme-dev/reme/index"
	"github.com/reme-dev/reme/jobs"
	"github.com/reme-dev/reme/store"
)

// MaintainConfig holds reme maintain settings.
type MaintainConfig struct {
	// MaxChanges caps archive actions per run; MaxPercent caps them at a
	// share of each kind of note (never below one).
	MaxChanges int `yaml:"max_changes" json:"max_changes"`
	MaxPercent int `yaml:"max_percent" json:"max_percent"`
	// DueGraceDays: project milestones are archived this long after due.
	DueGraceDays int `yaml:"due_grace_days" json:"due_grace_days"`
	// DailyRetainDays: daily cards older than this move to archive/ (0 keeps them).
	DailyRetainDays int `yaml:"daily_retain_days" json:"daily_retain_days"`
	// UseLLM sends near-duplicate entries and milestones past due to the model.
	UseLLM bool `yaml:"use_llm" json:"use_llm"`
	// NearDuplicateThreshold is the word-shingle similarity from which two
	// entries are near-duplicates.
	NearDuplicateThreshold float64 `yaml:"near_duplicate_threshold" json:"near_duplicate_threshold"`
	// Dream runs auto_dream inside maintain when a model is configured.
	Dream bool `yaml:"dream" json:"dream"`
}

// JournalConfig holds change journal settings.
type JournalConfig struct {
	// KeepDays: preimages older than this are pruned by maintain.
	KeepDays int `yaml:"keep_days" json:"keep_days"`
}

func (c MaintainConfig) validate() error {
	switch {
	case c.MaxChanges < 1:
		return fmt.Errorf("maintain.max_changes must be at least 1")
	case c.MaxPercent < 1 || c.MaxPercent > 100:
		return fmt.Errorf("maintain.max_percent must be between 1 and 100")
	case c.DueGraceDays < 0 || c.DailyRetainDays < 0:
		return fmt.Errorf("maintain.due_grace_days and maintain.daily_retain_days cannot be negative")
	case c.NearDuplicateThreshold <= 0 || c.NearDuplicateThreshold > 1:
		return fmt.Errorf("maintain.near_duplicate_threshold must be in (0, 1]")
	}
	return nil
}

type maintainCmd struct {
	DryRun bool `name:"dry-run" help:"Print the plan and change nothing."`
	Wait   bool `help:"Wait for a maintain already running instead of exiting."`
}

func (maintainCmd) Help() string {
	return `Tidies the memory, for cron or by hand. Deterministic steps, each counted:
exact duplicates (entries, and one day's cards), same-name entries (the newest
stays), entries past "expires", project milestones past "due" plus
maintain.due_grace_days, digest nodes past "until", and daily cards older than
maintain.daily_retain_days when set. They are archived to archive/ (out of
default search, links retargeted), never deleted: at most maintain.max_changes
per run and maintain.max_percent % of each kind; the rest is reported pending.
Then index upkeep: reconcile, integrity check (a damaged index is rebuilt),
full-text optimize, temp files and unused locks of killed runs removed, day
pages refreshed, orphaned session images reported, journal preimages older
than journal.keep_days pruned. With a model and maintain.use_llm, similar
entries and milestones past due go to the model; with maintain.dream,
auto_dream runs too. One maintain runs at a time: a second one exits with
"already running" (exit code 1) unless --wait. Every change is one journaled
run: "reme undo RUN" reverses it. metadata/maintain/status.json holds the last
run, metadata/maintain/history.jsonl every run.`
}

func (c *maintainCmd) Run(ctx context.Context, app *App) error {
	cfg, err := app.Config()
	if err != nil {
		return err
	}
	if c.DryRun {
		// a dry run changes nothing, so it does not create the workspace
		if _, err := app.Workspace(false); err != nil {
			return err
		}
	} else if err := checkWritable(app.root); err != nil {
		return err
	}
	env, err := app.jobEnv(ctx)
	if err != nil {
		return err
	}
	ix := app.ix
	opt := jobs.MaintainOptions{
		DryRun: c.DryRun, Trigger: app.trigger(),
		MaxChanges: cfg.Maintain.MaxChanges, MaxPercent: cfg.Maintain.MaxPercent,
		DueGraceDays: cfg.Maintain.DueGraceDays, DailyRetainDays: cfg.Maintain.DailyRetainDays,
		KeepDays: cfg.Journal.KeepDays, UseLLM: cfg.Maintain.UseLLM, Dream: cfg.Maintain.Dream,
		NearDupThreshold: cfg.Maintain.NearDuplicateThreshold,
	}
	if env.Model != nil {
		opt.Dreamer = func(ctx context.Context, run *store.Run) (*jobs.DreamResult, error) {
			return jobs.AutoDream(ctx, env, jobIndex{ix}, jobs.DreamOptions{Run: run, Trigger: opt.Trigger})
		}
	}
	var res *jobs.MaintainResult
	for {
		res, err = jobs.Maintain(ctx, env, jobIndex{ix}, opt)
		if !errors.Is(err, jobs.ErrAlreadyRunning) || !c.Wait {
			break
		}
		app.Log.Info("waiting for the maintain already running")
		if err := sleepCtx(ctx); err != nil {
			return err
		}
	}
	if res == nil {
		return err
	}
	if app.Globals.JSON {
		if perr := app.printJSON(res); perr != nil {
			return perr
		}
	} else {
		printMaintain(app, res)
	}
	return err
}

func printMaintain(app *App, res *jobs.MaintainResult) {
	w := app.Stdout
	if res.DryRun {
		fmt.Fprintln(w, "Dry run: the plan below changes nothing.")
	} else {
		fmt.Fprintf(w, "Maintain run %s (%s)\n", res.Run, res.Trigger)
	}
	fmt.Fprintf(w, "Caps: %d change(s) per run; %d entr(ies), %d card(s), %d digest node(s)\n",
		res.Caps.MaxChanges, res.Caps.Entries, res.Caps.Cards, res.Caps.Digest)
	fmt.Fprintln(w, "Steps:")
	for _, s := range res.Steps {
		fmt.Fprintf(w, "  %-18s found %d, applied %d, pending %d, skipped %d, failed %d\n", s.Step, s.Found, s.Applied, s.Pending, s.Skipped, s.Failed)
	}
	groups := []struct{ title, status string }{
		{"Planned", jobs.StatusPlanned}, {"Done", jobs.StatusDone}, {"Pending (over the caps)", jobs.StatusPending},
		{"Skipped", jobs.StatusSkipped}, {"Failed", jobs.StatusFailed},
	}
	for _, g := range groups {
		var lines []string
		for _, a := range res.Actions {
			if a.Status != g.status {
				continue
			}
			l := fmt.Sprintf("  %s %s", a.Action, a.Path)
			if a.To != "" {
				l += " → " + a.To
			}
			l += "  (" + a.Step + ": " + a.Reason + ")"
			if a.Error != "" {
				l += ": " + a.Error
			}
			lines = append(lines, l)
		}
		if len(lines) > 0 {
			fmt.Fprintf(w, "%s:\n%s\n", g.title, strings.Join(lines, "\n"))
		}
	}
	hk := res.Housekeeping
	fmt.Fprintln(w, "Housekeeping:")
	integrity := "ok"
	if !hk.IntegrityOK {
		integrity = fmt.Sprintf("%d problem(s)", len(hk.Integrity))
		if hk.Rebuilt {
			integrity += ", rebuilt from the files"
		}
	}
	fmt.Fprintf(w, "  index: %d added, %d modified, %d deleted; integrity %s; optimized %v\n", hk.Added, hk.Modified, hk.Deleted, integrity, hk.Optimized)
	verb := "removed"
	if res.DryRun {
		verb = "to remove"
	}
	refreshed := "refreshed"
	if res.DryRun {
		refreshed = "to refresh"
	}
	fmt.Fprintf(w, "  temp files %s: %d; unused locks %s: %d; day pages %s: %d\n", verb, len(hk.TempFiles), verb, len(hk.StaleLocks), refreshed, len(hk.DayPages))
	for _, p := range hk.DayPages {
		fmt.Fprintf(w, "    %s\n", p)
	}
	if hk.MemoryIndex != "" {
		fmt.Fprintf(w, "  %s %s (the entries changed)\n", hk.MemoryIndex, refreshed)
	}
	if hk.JournalPruned != nil {
		fmt.Fprintf(w, "  journal preimages %s: %d (%d bytes)\n", verb, hk.JournalPruned.Objects, hk.JournalPruned.Bytes)
	}
	for _, p := range hk.OrphanImages {
		fmt.Fprintf(w, "  orphaned session images: %s (no conversation)\n", p)
	}
	for _, p := range hk.ReviewDue {
		fmt.Fprintf(w, "  review due: %s\n", p)
	}
	for _, p := range hk.InvalidDates {
		fmt.Fprintf(w, "  invalid date: %s\n", p)
	}
	if res.Dream != nil {
		fmt.Fprintln(w, res.Dream.Summary)
	}
	for _, e := range res.Errors {
		fmt.Fprintf(w, "error: %s\n", e)
	}
}

type autoDreamCmd struct {
	Date     string `help:"Anchor day (default today)." placeholder:"YYYY-MM-DD"`
	Hint     string `help:"Guidance for the model." placeholder:"TEXT"`
	ScanDays int    `name:"scan-days" default:"2" help:"Days in the window ending at --date (default ${default})."`
	MaxUnits int    `name:"max-units" default:"5" help:"Most units to extract (default ${default})."`
}

func (autoDreamCmd) Help() string {
	return `Consolidates recent daily cards into digest nodes (digest/personal, procedure,
wiki): the model extracts units of reusable knowledge from the cards no dream
consumed yet, then integrates each into a node (create, corroborate, refine or
correct) with a "## Sources" section citing the cards. Nodes carry a durability
(evergreen, until: DATE, review_after: DATE) that maintain acts on. Every node
written is journaled ("reme undo RUN" reverses it); consumed cards are recorded
in metadata/dream/catalog.json. Needs a model.`
}

func (c *autoDreamCmd) Run(ctx context.Context, app *App) error {
	// a bad flag is refused before the index and the model are opened
	if c.ScanDays < 1 || c.MaxUnits < 1 {
		return usageError{errors.New("--scan-days and --max-units must be at least 1")}
	}
	if c.Date != "" {
		if _, err := store.ParseDate(c.Date); err != nil {
			return answerError{err.Error()}
		}
	}
	env, err := app.jobEnv(ctx)
	if err != nil {
		return err
	}
	if _, err := app.FreshIndex(ctx); err != nil {
		return err
	}
	res, err := jobs.AutoDream(ctx, env, jobIndex{app.ix}, jobs.DreamOptions{Date: c.Date, Hint: c.Hint, ScanDays: c.ScanDays, MaxUnits: c.MaxUnits, Trigger: app.trigger()})
	if res == nil {
		return err
	}
	if app.Globals.JSON {
		if perr := app.printJSON(res); perr != nil {
			return perr
		}
	} else if res.Summary != "" {
		fmt.Fprintln(app.Stdout, res.Summary)
	}
	return err
}

// Methods maintain and auto_dream need from the index.

func (j jobIndex) Reconcile(ctx context.Context) (int, int, int, error) {
	rep, err := j.ix.Sync(ctx)
	if err != nil {
		return 0, 0, 0, err
	}
	return rep.Added, rep.Modified, rep.Deleted, nil
}

func (j jobIndex) IntegrityCheck(ctx context.Context) ([]string, error) {
	return j.ix.IntegrityCheck(ctx)
}

func (j jobIndex) Rebuild(ctx context.Context) error {
	_, err := j.ix.Recreate(ctx, nil)
	return err
}

func (j jobIndex) Optimize(ctx context.Context) error { return j.ix.Optimize(ctx) }

func (j jobIndex) Journal() *store.Journal { return j.ix.Journal() }

func (j jobIndex) Archive(ctx context.Context, run *store.Run, src, dst string, edit func([]byte) ([]byte, error), why store.Why) error {
	_, err := j.ix.Move(ctx, src, dst, index.MoveOptions{Run: run, Action: store.ActionArchive, Why: why, Edit: edit, Fresh: true})
	return err
}

func (j jobIndex) SearchNodes(ctx context.Context, query string, limit int) ([]jobs.NodeHit, error) {
	res, err := j.ix.Search(ctx, index.SearchOptions{Query: query, Limit: limit, PathPrefixes: []string{store.DigestDir + "/"}, Literal: true})
	if err != nil {
		if errors.Is(err, index.ErrEmptyQuery) {
			return nil, nil
		}
		return nil, err
	}
	var out []jobs.NodeHit
	seen := map[string]bool{}
	for _, r := range res.Results {
		if !seen[r.Path] {
			seen[r.Path] = true
			out = append(out, jobs.NodeHit{Path: r.Path, Name: r.Name, Description: r.Description})
		}
	}
	return out, nil
}

// sleepCtx pauses before trying again, or ends with ctx.
func sleepCtx(ctx context.Context) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(500 * time.Millisecond):
		return nil
	}
}

// checkWritable refuses a workspace on a read-only file system up front,
// with a message that says so, before anything is opened for writing. root
// is the resolved workspace folder (App.root).
func checkWritable(root string) error {
	if err := store.Writable(root); err != nil {
		return fmt.Errorf("workspace %s is read-only; nothing was changed: %w", root, err)
	}
	return nil
}
