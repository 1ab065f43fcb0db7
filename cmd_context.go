package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/reme-dev/reme/jobs"
	"github.com/reme-dev/reme/jobs/claudecode"
)

// reme context prints what an agent is shown of its memory on a turn. With
// --format claude-code it is a UserPromptSubmit and SessionStart hook: it
// reads the hook's JSON on stdin and answers with the JSON Claude Code
// reads; a failure never blocks the prompt (exit 0, logged under
// metadata/logs/context.log).

const contextLogName = "context.log"

// recentToolCalls is how many of a transcript's last tool calls count as
// "used recently".
const recentToolCalls = 20

type contextCmd struct {
	Query       []string `arg:"" optional:"" help:"The user's message (with --format claude-code: read from the hook's JSON on stdin)."`
	Session     string   `help:"Session id: an entry whose text this session was already shown is not shown again." placeholder:"ID"`
	Budget      int      `help:"Most bytes of context (default memory.context_budget, 8192)." placeholder:"BYTES"`
	RecentTools []string `name:"recent-tools" sep:"," help:"Tools the session used recently: reference entries on how to use them are skipped unless they warn." placeholder:"A,B"`
	Start       bool     `help:"The context of a new session: the profile and MEMORY.md only."`
	Reset       bool     `help:"Forget which entries the session was shown (its conversation was cleared)."`
	Format      string   `enum:"text,claude-code" default:"text" help:"text, or claude-code: the JSON a UserPromptSubmit or SessionStart hook returns."`
}

func (contextCmd) Help() string {
	return `Prints, within a byte budget, in this order: the profile (memory/profile.md),
the MEMORY.md index, the long-term entries most relevant to the message (by
keywords; with a model and 30 or more entries, or 20 and no keyword match, the
model picks them by name and description), and today's and yesterday's daily
notes. Entries older than memory.verify_after_days carry a reminder to verify
them. It ends with a line saying what was included and what was left out, and
why. The same input gives the same output.

As a Claude Code hook (--format claude-code), the session, message and recently
used tools come from the hook's JSON and transcript; SessionStart gets the
profile and the index, and a cleared or compacted session is shown its entries
again.`
}

func (c *contextCmd) Run(ctx context.Context, app *App) error {
	if c.Format == "claude-code" {
		return c.runHook(ctx, app)
	}
	return app.emit(c.answer(ctx, app))
}

// contextAnswer is the context of a turn: its text, or with --json the
// text with what was included and left out.
type contextAnswer jobs.ContextResult

func (a *contextAnswer) jsonValue() any { return (*jobs.ContextResult)(a) }

func (a *contextAnswer) text() string { return a.Text }

func (c *contextCmd) answer(ctx context.Context, app *App) (*contextAnswer, error) {
	res, err := c.build(ctx, app, jobs.ContextRequest{
		Query: strings.Join(c.Query, " "), SessionID: c.Session, Budget: c.Budget,
		RecentTools: c.RecentTools, Mode: c.mode(), Reset: c.Reset,
	})
	if err != nil {
		return nil, err
	}
	return (*contextAnswer)(res), nil
}

func (c *contextCmd) mode() string {
	if c.Start {
		return jobs.ContextStart
	}
	return jobs.ContextTurn
}

func (c *contextCmd) build(ctx context.Context, app *App, req jobs.ContextRequest) (*jobs.ContextResult, error) {
	cfg, err := app.Config()
	if err != nil {
		return nil, err
	}
	if c.Budget < 0 {
		return nil, usageError{fmt.Errorf("--budget must be positive, not %d", c.Budget)}
	}
	if req.Budget == 0 {
		req.Budget = cfg.Memory.ContextBudget
	}
	req.Entries = cfg.Memory.ContextEntries
	req.PickTimeout = time.Duration(cfg.Memory.PickTimeout)
	if _, err := app.Workspace(false); err != nil {
		return nil, err
	}
	env, err := app.jobEnv(ctx)
	if err != nil {
		return nil, err
	}
	res, err := jobs.BuildContext(ctx, env, req)
	if err != nil {
		return nil, memoryErr(err)
	}
	for _, w := range res.Warnings {
		app.Log.Warn(w)
	}
	return res, nil
}

// runHook answers a Claude Code hook. Whatever goes wrong, the prompt goes
// through: run logs the failure and exits 0, and the hook prints nothing.
func (c *contextCmd) runHook(ctx context.Context, app *App) error {
	out, err := c.hook(ctx, app)
	if err != nil {
		return memoryErr(err)
	}
	enc := json.NewEncoder(app.Stdout)
	enc.SetEscapeHTML(false)
	return enc.Encode(out)
}

// hookOutput is what a UserPromptSubmit or SessionStart hook returns.
type hookOutput struct {
	HookSpecificOutput struct {
		HookEventName     string `json:"hookEventName"`
		AdditionalContext string `json:"additionalContext"`
	} `json:"hookSpecificOutput"`
}

func (c *contextCmd) hook(ctx context.Context, app *App) (*hookOutput, error) {
	req := jobs.ContextRequest{Query: strings.Join(c.Query, " "), SessionID: c.Session, Budget: c.Budget,
		RecentTools: c.RecentTools, Mode: c.mode(), Reset: c.Reset}
	event := "UserPromptSubmit"
	if c.Start {
		event = "SessionStart"
	}
	if req.Query == "" && !isTerminal(app.Stdin) {
		in, err := claudecode.ParseHookInput(app.Stdin)
		if err != nil {
			return nil, err
		}
		if req.SessionID == "" {
			req.SessionID = in.SessionID
		}
		switch in.HookEventName {
		case "SessionStart":
			event, req.Mode = in.HookEventName, jobs.ContextStart
			// a cleared or compacted conversation no longer holds what it was shown
			req.Reset = req.Reset || in.Source == "clear" || in.Source == "compact"
		case "UserPromptSubmit", "":
			req.Query = in.Prompt
		default:
			return nil, fmt.Errorf("hook event %q: reme context answers UserPromptSubmit and SessionStart", in.HookEventName)
		}
		if len(req.RecentTools) == 0 && in.TranscriptPath != "" && req.Mode == jobs.ContextTurn {
			tools, err := claudecode.RecentTools(in.TranscriptPath, recentToolCalls)
			if err != nil {
				app.Log.Warn("recent tools unknown", "err", err)
			}
			req.RecentTools = tools
		}
	}
	if req.Mode == jobs.ContextTurn && strings.TrimSpace(req.Query) == "" {
		return nil, fmt.Errorf("the hook input has no prompt")
	}
	res, err := c.build(ctx, app, req)
	if err != nil {
		return nil, err
	}
	out := &hookOutput{}
	out.HookSpecificOutput.HookEventName = event
	out.HookSpecificOutput.AdditionalContext = res.Text
	return out, nil
}
