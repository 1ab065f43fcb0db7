package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/reme-dev/reme/index"
	"github.com/reme-dev/reme/jobs"
	"github.com/reme-dev/reme/jobs/claudecode"
	"github.com/reme-dev/reme/store"
)

type autoMemoryCmd struct {
	SessionID  string `name:"session-id" help:"Conversation id (a file name: no / or ..)." placeholder:"ID"`
	Messages   string `help:"Messages as a JSON list, @FILE, or - for stdin." placeholder:"JSON|@FILE|-"`
	Date       string `help:"Day of the card (default: the latest message day, else today)." placeholder:"YYYY-MM-DD"`
	MemoryHint string `name:"memory-hint" help:"Extra guidance for the model." placeholder:"TEXT"`
	Language   string `enum:",en,zh" default:"" help:"Prompt language: en or zh (default: config language)."`
	Fallback   string `enum:",extractive,none" default:"" help:"With extractive, a model failure writes an extractive card (distiller: extractive) instead of failing (default none)."`
	// IncludeImages overrides the configured default (auto_memory.include_images).
	IncludeImages *bool `name:"include-images" negatable:"" help:"Save the conversation's images under session/images/ and show them to the model (default: config auto_memory.include_images, false)."`
}

func (autoMemoryCmd) Help() string {
	return `Distils a conversation into the day's memory card for its session:
daily/DATE/<name>.md, listed on daily/DATE.md and tagged. The messages are first
saved to session/dialog/<session_id>.jsonl (tool results and base64 data left
out). Without a model (see reme config) an extractive card is written from the
user's own statements. Messages take "role", "content" (text or blocks), and optionally
"name", "id" and "created_at" (or time_created, timestamp, createdAt,
timeCreated, created_time, also inside "metadata").`
}

func (c *autoMemoryCmd) Run(ctx context.Context, app *App) error {
	cfg, err := app.Config()
	if err != nil {
		return err
	}
	msgs, closeMsgs, err := openArgOrInput(c.Messages, app.Stdin, cfg.AutoMemory.MaxMessagesBytes)
	if err != nil {
		return err
	}
	defer closeMsgs()
	env, err := app.jobEnv(ctx)
	if err != nil {
		return err
	}
	include := cfg.AutoMemory.IncludeImages
	if c.IncludeImages != nil {
		include = *c.IncludeImages
	}
	res, err := jobs.AutoMemory(ctx, env, jobs.AutoMemoryRequest{
		SessionID: c.SessionID, MessagesReader: msgs, Date: c.Date, MemoryHint: c.MemoryHint,
		Language: c.Language, Fallback: c.Fallback, IncludeImages: include, MaxImages: cfg.AutoMemory.MaxImageNum,
		Wait: time.Duration(cfg.AutoMemory.SessionWait),
	})
	return app.reportMemory(res, err)
}

// openArgOrInput resolves a value given inline, as @FILE, or as - (stdin),
// as a reader that fails with a clear error past limit bytes, so that a
// long conversation is streamed, not read whole first. Long conversations
// do not fit in one argument (Linux allows 128 KiB).
func openArgOrInput(v string, stdin io.Reader, limit int64) (io.Reader, func(), error) {
	switch {
	case v == "":
		return nil, nil, answerError{"messages is required (JSON, @FILE or - for stdin)"}
	case v == "-":
		if stdin == nil {
			return nil, nil, fmt.Errorf("messages: nothing on stdin")
		}
		return &cappedReader{r: stdin, left: limit, limit: limit, name: "stdin"}, func() {}, nil
	case strings.HasPrefix(v, "@"):
		f, err := os.Open(v[1:])
		if err != nil {
			return nil, nil, fmt.Errorf("messages: %w", err)
		}
		return &cappedReader{r: f, left: limit, limit: limit, name: v[1:]}, func() { f.Close() }, nil
	}
	return strings.NewReader(v), func() {}, nil
}

// cappedReader reads at most limit bytes and then fails, naming the
// setting that raises the limit.
type cappedReader struct {
	r           io.Reader
	left, limit int64
	name        string
}

func (c *cappedReader) Read(p []byte) (int, error) {
	if c.left <= 0 {
		// one byte more tells a file of exactly limit bytes from a larger one
		var one [1]byte
		if n, _ := c.r.Read(one[:]); n == 0 {
			return 0, io.EOF
		}
		return 0, fmt.Errorf("messages from %s are larger than %d bytes (auto_memory.max_messages_bytes)", c.name, c.limit)
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.r.Read(p)
	c.left -= int64(n)
	return n, err
}

// reportMemory prints an auto_memory result: JSON, or one summary line.
func (a *App) reportMemory(res *jobs.AutoMemoryResult, err error) error {
	if res != nil {
		for _, w := range res.Warnings {
			a.Log.Warn(w)
		}
		if res.Distiller == "extractive" && a.cfg != nil && a.cfg.LLM.Provider == "" {
			fmt.Fprintln(a.Stderr, "reme: "+a.cfg.LLM.ProviderReason+"; wrote an extractive card from the conversation")
		}
	}
	if err != nil {
		if errors.Is(err, jobs.ErrInput) || errors.Is(err, store.ErrMessages) {
			return answerError{strings.TrimPrefix(err.Error(), jobs.ErrInput.Error()+": ")}
		}
		return err
	}
	if a.Globals.JSON {
		return a.printJSON(res)
	}
	fmt.Fprintln(a.Stdout, memorySummary(res))
	return nil
}

func memorySummary(r *jobs.AutoMemoryResult) string {
	if r.Skipped != "" {
		where := ""
		if r.Path != nil {
			where = " (" + *r.Path + ")"
		}
		return fmt.Sprintf("skipped: %s%s; %d message(s) in %s", r.Skipped, where, r.NMessages, strings.Trim(r.SourceConversation, "[]"))
	}
	verb := "unchanged"
	switch {
	case r.Created:
		verb = "created"
	case r.Modified:
		verb = "updated"
	}
	line := fmt.Sprintf("%s %s (%d message(s), %s)", verb, *r.Path, r.NMessages, r.Distiller)
	if r.AutoTag != nil && len(r.AutoTag.Results) > 0 && r.AutoTag.Results[0].Error == "" {
		line += "; tags: " + strings.Join(r.AutoTag.Results[0].Tags, ", ")
	}
	return line
}

// jobEnv wires the workspace, the index and the model for a job.
func (a *App) jobEnv(ctx context.Context) (*jobs.Env, error) {
	cfg, err := a.Config()
	if err != nil {
		return nil, err
	}
	loc, err := cfg.Location()
	if err != nil {
		return nil, err
	}
	ix, err := a.Index(ctx, true)
	if err != nil {
		return nil, err
	}
	env := &jobs.Env{WS: ix.Workspace(), Index: jobIndex{ix}, Language: cfg.Language, Location: loc, Now: a.Now, Log: a.Log}
	model, err := a.ChatModel()
	if err != nil {
		return nil, err
	}
	if model != nil {
		env.Model, env.ModelID, env.VisionModelID = model, cfg.LLM.Model, cfg.LLM.VisionModel
	}
	return env, nil
}

// jobIndex adapts the index to what jobs need.
type jobIndex struct{ ix *index.Index }

func (j jobIndex) UpdatePaths(ctx context.Context, paths ...string) error {
	return j.ix.UpdatePaths(ctx, paths...)
}

func (j jobIndex) Rename(ctx context.Context, src, dst string) error {
	_, err := j.ix.Move(ctx, src, dst, index.MoveOptions{})
	return err
}

func (j jobIndex) Locked(ctx context.Context, fn func() error) error { return j.ix.Locked(ctx, fn) }

func (j jobIndex) Sync(ctx context.Context) error {
	_, err := j.ix.Sync(ctx)
	return err
}

func (j jobIndex) NotesWith(ctx context.Context, key, value string) ([]string, error) {
	return j.ix.NotesWith(ctx, key, value)
}

func (j jobIndex) Sources(ctx context.Context, key string) (map[string]string, error) {
	return j.ix.Sources(ctx, key)
}

func (j jobIndex) Tags(ctx context.Context, limit int) ([]jobs.TagCount, error) {
	page, err := j.ix.ListTags(ctx, index.TagListOptions{Page: 1, PageSize: limit, OrderBy: "file_count"})
	if err != nil {
		return nil, err
	}
	out := make([]jobs.TagCount, 0, len(page.Items))
	for _, it := range page.Items {
		out = append(out, jobs.TagCount{Tag: it[0].(string), Count: it[1].(int)})
	}
	return out, nil
}

type autoMemoryCCCmd struct {
	SessionID      string `name:"session-id" help:"Claude Code session id (default: read the Stop-hook JSON on stdin)." placeholder:"ID"`
	TranscriptPath string `name:"transcript-path" help:"Transcript file (default: found under $CLAUDE_CONFIG_DIR or ~/.claude/projects)." placeholder:"FILE"`
	Date           string `help:"Day of the card (default: the latest message day)." placeholder:"YYYY-MM-DD"`
	MemoryHint     string `name:"memory-hint" help:"Extra guidance for the model." placeholder:"TEXT"`
	Language       string `enum:",en,zh" default:"" help:"Prompt language: en or zh."`
	Fallback       string `enum:",extractive,none" default:"" help:"What a model failure does: extractive (the default here) writes an extractive card, none fails."`
}

func (autoMemoryCCCmd) Help() string {
	return `For a Claude Code Stop hook: reads the hook's JSON on stdin (session_id,
transcript_path), copies the transcript's new entries to
session/claude_code/<session_id>.jsonl, and updates the session's card of the day
like auto_memory. User and assistant text are kept, tool calls become one-line
summaries, thinking and injected reminders are dropped.`
}

func (c *autoMemoryCCCmd) Run(ctx context.Context, app *App) error {
	sid, transcript := c.SessionID, c.TranscriptPath
	if sid == "" {
		in, err := claudecode.ParseHookInput(app.Stdin)
		if err != nil {
			return app.reportMemory(nil, err)
		}
		sid = in.SessionID
		if transcript == "" {
			transcript = in.TranscriptPath
		}
	}
	if err := jobs.ValidateSessionID(sid); err != nil {
		return app.reportMemory(nil, err)
	}
	if transcript == "" {
		home, _ := os.UserHomeDir()
		p, err := claudecode.FindTranscript(sid, app.Getenv, home)
		if err != nil {
			return err
		}
		transcript = p
	}
	env, err := app.jobEnv(ctx)
	if err != nil {
		return err
	}
	cfg, err := app.Config()
	if err != nil {
		return err
	}
	res, err := jobs.AutoMemoryCC(ctx, env, jobs.AutoMemoryCCRequest{
		SessionID: sid, TranscriptPath: transcript, Date: c.Date, MemoryHint: c.MemoryHint,
		Language: c.Language, Fallback: c.Fallback,
		MaxTranscriptBytes: cfg.AutoMemory.MaxTranscriptBytes, Wait: time.Duration(cfg.AutoMemory.SessionWait),
	})
	return app.reportMemory(res, err)
}
