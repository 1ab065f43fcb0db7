package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/reme-dev/reme/index"
	"github.com/reme-dev/reme/jobs"
	"github.com/reme-dev/reme/jobs/claudecode"
	"github.com/reme-dev/reme/jobs/codex"
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
	return app.emit(c.answer(ctx, app))
}

func (c *autoMemoryCmd) answer(ctx context.Context, app *App) (*memoryAnswer, error) {
	cfg, err := app.Config()
	if err != nil {
		return nil, err
	}
	msgs, closeMsgs, err := openArgOrInput(c.Messages, app.Stdin, cfg.AutoMemory.MaxMessagesBytes)
	if err != nil {
		return nil, err
	}
	defer closeMsgs()
	env, err := app.saveFirstEnv()
	if err != nil {
		return nil, err
	}
	include := cfg.AutoMemory.IncludeImages
	if c.IncludeImages != nil {
		include = *c.IncludeImages
	}
	res, err := jobs.AutoMemory(ctx, env, jobs.AutoMemoryRequest{
		SessionID: c.SessionID, MessagesReader: msgs, Date: c.Date, MemoryHint: c.MemoryHint,
		Language: c.Language, Fallback: c.Fallback, IncludeImages: include, MaxImages: cfg.AutoMemory.MaxImageNum, Images: cfg.Images.Vision(),
		Wait: time.Duration(cfg.AutoMemory.SessionWait),
	})
	return app.memoryAnswer(res, err)
}

// openArgOrInput resolves a value given inline, as @FILE, or as - (stdin),
// as a reader that fails with a clear error past limit bytes, so that a
// long conversation is streamed, not read whole first. Long conversations
// do not fit in one argument (Linux allows 128 KiB).
func openArgOrInput(v string, stdin io.Reader, limit int64) (io.Reader, func(), error) {
	if v == "" {
		return nil, nil, answerError{"messages is required (JSON, @FILE or - for stdin)"}
	}
	r, _, closeFn, err := openArg(v, "messages", stdin, limit, func(name string) error {
		return fmt.Errorf("messages from %s are larger than %d bytes (auto_memory.max_messages_bytes)", name, limit)
	})
	if err != nil {
		return nil, nil, err
	}
	if r == nil {
		return strings.NewReader(v), func() {}, nil
	}
	return r, closeFn, nil
}

// openArg opens a value given as @FILE or as - (stdin) as a reader that
// fails with tooLarge(name) past limit bytes; what names the value in the
// other errors. A value given inline has no reader (nil, no error).
func openArg(v, what string, stdin io.Reader, limit int64, tooLarge func(name string) error) (r io.Reader, name string, closeFn func(), err error) {
	switch {
	case v == "-":
		if stdin == nil {
			return nil, "", nil, fmt.Errorf("%s: nothing on stdin", what)
		}
		return &cappedReader{r: stdin, left: limit, over: tooLarge("stdin")}, "stdin", func() {}, nil
	case strings.HasPrefix(v, "@"):
		f, err := os.Open(v[1:])
		if err != nil {
			return nil, "", nil, fmt.Errorf("%s: %w", what, err)
		}
		return &cappedReader{r: f, left: limit, over: tooLarge(v[1:])}, v[1:], func() { f.Close() }, nil
	}
	return nil, "", nil, nil
}

// cappedReader reads at most left bytes and then fails with over, which
// names the setting that raises the limit.
type cappedReader struct {
	r    io.Reader
	left int64
	over error
}

func (c *cappedReader) Read(p []byte) (int, error) {
	if c.left <= 0 {
		// one byte more tells a file of exactly limit bytes from a larger one
		var one [1]byte
		if n, _ := c.r.Read(one[:]); n == 0 {
			return 0, io.EOF
		}
		return 0, c.over
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
	return a.emit(a.memoryAnswer(res, err))
}

// memoryAnswer is an auto_memory result.
type memoryAnswer jobs.AutoMemoryResult

func (m *memoryAnswer) jsonValue() any { return (*jobs.AutoMemoryResult)(m) }

func (m *memoryAnswer) text() string { return memorySummary((*jobs.AutoMemoryResult)(m)) + "\n" }

// memoryAnswer logs an auto_memory result's warnings and words its error
// as the CLI reports it.
func (a *App) memoryAnswer(res *jobs.AutoMemoryResult, err error) (*memoryAnswer, error) {
	if res != nil {
		for _, w := range res.Warnings {
			a.Log.Warn(w)
		}
		if res.Distiller == "extractive" && a.cfg != nil && a.cfg.LLM.Provider == "" {
			fmt.Fprintln(a.Stderr, "reme: "+a.cfg.LLM.ProviderReason+"; wrote an extractive card from the conversation")
		}
	}
	if err != nil {
		return nil, memoryErr(err, store.ErrMessages)
	}
	return (*memoryAnswer)(res), nil
}

func memorySummary(r *jobs.AutoMemoryResult) string {
	line := cardSummary(r)
	if lt := r.LongTerm; lt != nil && len(lt.Changes) > 0 {
		var parts []string
		for _, c := range lt.Changes {
			parts = append(parts, c.Action+" "+c.Path)
		}
		line += "; long-term: " + strings.Join(parts, ", ")
	}
	return line
}

func cardSummary(r *jobs.AutoMemoryResult) string {
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
	env, err := a.saveFirstEnv()
	if err != nil {
		return nil, err
	}
	env.Connect = nil
	if err := a.connectJob(ctx, env); err != nil {
		return nil, err
	}
	return env, nil
}

// saveFirstEnv is the Env of a job that saves a conversation before it
// distils it: the workspace now, the index, the journal and the model only
// once the conversation is saved (jobs.Env.Connect).
func (a *App) saveFirstEnv() (*jobs.Env, error) {
	cfg, err := a.Config()
	if err != nil {
		return nil, err
	}
	loc, err := cfg.Location()
	if err != nil {
		return nil, err
	}
	ws, err := a.Workspace(true)
	if err != nil {
		return nil, err
	}
	return &jobs.Env{WS: ws, Language: cfg.Language, Location: loc, Now: a.Now, Log: a.Log, Trigger: a.trigger(),
		Memory: cfg.Memory.options(), Fault: a.crashHook(), Connect: a.connectJob}, nil
}

// connectJob opens the index (and with it the journal) and the model.
func (a *App) connectJob(ctx context.Context, env *jobs.Env) error {
	cfg, err := a.Config()
	if err != nil {
		return err
	}
	ix, err := a.Index(ctx, true)
	if err != nil {
		return err
	}
	env.WS, env.Index, env.Journal = ix.Workspace(), jobIndex{ix}, ix.Journal()
	model, err := a.ChatModel()
	if err != nil {
		return err
	}
	if model != nil {
		if a.wrapModel != nil {
			model = a.wrapModel(model)
		}
		env.Model, env.ModelID, env.VisionModelID = a.observe(model), cfg.LLM.Model, cfg.LLM.VisionModel
	}
	return nil
}

// jobIndex adapts the index to what jobs need.
type jobIndex struct{ ix *index.Index }

func (j jobIndex) UpdatePaths(ctx context.Context, paths ...string) error {
	return j.ix.UpdatePaths(ctx, paths...)
}

func (j jobIndex) Rename(ctx context.Context, run *store.Run, src, dst string) error {
	_, err := j.ix.Move(ctx, src, dst, index.MoveOptions{Run: run})
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

func (j jobIndex) SyncScope(ctx context.Context, roots ...string) error {
	_, err := j.ix.SyncScope(ctx, roots...)
	return err
}

// SearchNotes runs the keyword search and keeps each note's best window.
func (j jobIndex) SearchNotes(ctx context.Context, q jobs.NoteQuery) ([]jobs.NoteHit, error) {
	// a note can match in several chunks: ask for more, keep the best of each
	// Literal: entries have no date for "yesterday" to narrow them to
	res, err := j.ix.Search(ctx, index.SearchOptions{Query: q.Query, Types: q.Types, Limit: 3 * q.Limit, Literal: true})
	if err != nil {
		return nil, err
	}
	var out []jobs.NoteHit
	seen := map[string]bool{}
	for _, r := range res.Results {
		if seen[r.Path] || len(out) == q.Limit {
			continue
		}
		seen[r.Path] = true
		out = append(out, jobs.NoteHit{Path: r.Path, Type: r.Type, Name: r.Name, Description: r.Description,
			Score: r.Score, StartLine: r.StartLine, EndLine: r.EndLine, Text: r.Text})
	}
	return out, nil
}

func (j jobIndex) ListNotes(ctx context.Context, types ...string) ([]jobs.NoteInfo, error) {
	notes, err := j.ix.ListNotes(ctx, types...)
	if err != nil {
		return nil, err
	}
	out := make([]jobs.NoteInfo, len(notes))
	for i, n := range notes {
		out[i] = jobs.NoteInfo{Path: n.Path, Type: n.Type, Name: n.Name, Description: n.Description}
	}
	return out, nil
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
	transcriptHookFlags
}

// transcriptHookFlags are the options of the commands a Stop hook runs on
// an agent's transcript.
type transcriptHookFlags struct {
	Date       string `help:"Day of the card (default: the latest message day)." placeholder:"YYYY-MM-DD"`
	MemoryHint string `name:"memory-hint" help:"Extra guidance for the model." placeholder:"TEXT"`
	Language   string `enum:",en,zh" default:"" help:"Prompt language: en or zh."`
	Fallback   string `enum:",extractive,none" default:"" help:"What a model failure does: extractive (the default here) writes an extractive card, none fails."`
	Wait       bool   `help:"Distil in this process and print the result, instead of returning at once and distilling in the background."`
	// Background marks the detached run a hook starts; it logs with time
	// stamps to metadata/logs/<command>.log.
	Background bool `hidden:""`
}

func (autoMemoryCCCmd) Help() string {
	return `For a Claude Code Stop hook: reads the hook's JSON on stdin (session_id,
transcript_path, ...), appends the transcript's new entries to
session/claude_code/<session_id>.jsonl (durably, before returning), then
returns at once while a background process updates the session's card of the
day like auto_memory, holding the session's lock: Stop events that come
quickly one after another queue behind it, and entries stay pending until a
run has distilled them (the next Stop retries a run that did not finish). The
background run writes to metadata/logs/auto_memory_cc.log. --wait distils in
the foreground instead.

User and assistant text are kept, tool calls become one-line summaries,
thinking, sidechains and injected reminders are dropped. It never exits 2
(which Claude Code reads as "keep going"): mistakes exit 1 and are logged too.`
}

// sessionSource is an agent whose sessions a hook imports: Claude Code or
// Codex. Both hooks take the same input and run the same way.
type sessionSource struct {
	agent   string // for messages
	command string // the command, for the background run
	kind    string // names the session's marks under metadata/sessions/
	find    func(sid string, getenv func(string) string, home string) (string, error)
	// save stores what the transcript gained; it returns the copy's path
	// and how many entries were new
	save   func(ctx context.Context, env *jobs.Env, req jobs.AutoMemoryCCRequest) (string, int, error)
	distil func(ctx context.Context, env *jobs.Env, req jobs.AutoMemoryCCRequest) (*jobs.AutoMemoryResult, error)
}

var claudeSource = sessionSource{
	agent: "Claude Code", command: "auto_memory_cc", kind: "claude_code_hook", find: claudecode.FindTranscript,
	save: func(ctx context.Context, env *jobs.Env, req jobs.AutoMemoryCCRequest) (string, int, error) {
		ap, err := jobs.SaveNewClaudeEntries(ctx, env, req)
		if err != nil {
			return "", 0, err
		}
		return ap.Path, ap.New, nil
	},
	distil: jobs.AutoMemoryCC,
}

var codexSource = sessionSource{
	agent: "Codex", command: "auto_memory_codex", kind: "codex_hook", find: codex.FindTranscript,
	save: func(ctx context.Context, env *jobs.Env, req jobs.AutoMemoryCCRequest) (string, int, error) {
		cp, err := jobs.SaveCodexSession(ctx, env, req)
		if err != nil {
			return "", 0, err
		}
		return cp.Path, cp.New, nil
	},
	distil: jobs.AutoMemoryCodex,
}

func (c *autoMemoryCCCmd) Run(ctx context.Context, app *App) error {
	return c.run(ctx, app, claudeSource)
}

func (c *autoMemoryCCCmd) run(ctx context.Context, app *App, src sessionSource) error {
	if c.Background {
		app.logTo(&linePrefixer{w: app.Stderr, tag: fmt.Sprintf("[%s pid %d]", c.SessionID, os.Getpid()), now: time.Now})
	}
	sid, transcript := c.SessionID, c.TranscriptPath
	if sid == "" && isTerminal(app.Stdin) {
		return answerError{src.command + " reads the " + src.agent + " hook's JSON on stdin; to run it by hand give session_id=ID (and transcript_path=FILE)"}
	}
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
		p, err := src.find(sid, app.Getenv, home)
		if err != nil {
			return err
		}
		transcript = p
	}
	cfg, err := app.Config()
	if err != nil {
		return err // a broken config shows in the hook at once, not only in the log
	}
	req := jobs.AutoMemoryCCRequest{
		SessionID: sid, TranscriptPath: transcript, Date: c.Date, MemoryHint: c.MemoryHint,
		Language: c.Language, Fallback: c.Fallback,
		MaxTranscriptBytes: cfg.AutoMemory.MaxTranscriptBytes, Wait: time.Duration(cfg.AutoMemory.SessionWait),
	}
	if !c.Wait && !c.Background {
		return c.queue(ctx, app, req, src)
	}
	env, err := app.saveFirstEnv()
	if err != nil {
		return err
	}
	res, err := src.distil(ctx, env, req)
	if c.Background {
		markUnfinished(env.WS, src.kind, sid, err != nil)
	}
	return app.reportMemory(res, err)
}

// queue is the Stop hook's fast path: save the new entries, start the
// background run, return.
func (c *autoMemoryCCCmd) queue(ctx context.Context, app *App, req jobs.AutoMemoryCCRequest, src sessionSource) error {
	ws, err := app.Workspace(true)
	if err != nil {
		return err
	}
	// Saving needs no index and no model: the hook opens neither.
	copyPath, newEntries, err := src.save(ctx, &jobs.Env{WS: ws, Log: app.Log}, req)
	if err != nil {
		return app.reportMemory(nil, err)
	}
	retry := unfinished(ws, src.kind, req.SessionID)
	out := map[string]any{"session_id": req.SessionID, "copy": copyPath, "new_entries": newEntries, "retry": retry}
	if newEntries == 0 && !retry {
		if app.Globals.JSON {
			return app.printJSON(out)
		}
		fmt.Fprintf(app.Stdout, "nothing new in %s\n", copyPath)
		return nil
	}
	// set before the start, so that a run that never starts is retried too
	markUnfinished(ws, src.kind, req.SessionID, true)
	pid, logPath, err := app.startDistiller(src.command, c, req.SessionID, req.TranscriptPath)
	if err != nil {
		return fmt.Errorf("start the background run: %w (the entries are saved in %s; the next call distils them, or run with --wait)", err, copyPath)
	}
	if app.Globals.JSON {
		out["background_pid"], out["log"] = pid, logPath
		return app.printJSON(out)
	}
	what := fmt.Sprintf("saved %d new entries to %s; distilling them", newEntries, copyPath)
	if newEntries == 0 {
		what = fmt.Sprintf("nothing new in %s; distilling what an unfinished run left", copyPath)
	}
	fmt.Fprintf(app.Stdout, "%s in the background (pid %d, log %s)\n", what, pid, logPath)
	return nil
}

// unfinishedPath marks a session whose last background run was started and
// has not succeeded (it failed, was killed, or is still running): the next
// Stop starts another even when the transcript has nothing new.
func unfinishedPath(ws *store.Workspace, kind, sid string) string {
	return ws.MetadataPath("sessions", kind, sid+".unfinished")
}

func unfinished(ws *store.Workspace, kind, sid string) bool {
	_, err := os.Stat(unfinishedPath(ws, kind, sid))
	return err == nil
}

// markUnfinished sets or clears the mark; it is best effort, as its loss
// only delays a retry until the next new entry.
func markUnfinished(ws *store.Workspace, kind, sid string, on bool) {
	p := unfinishedPath(ws, kind, sid)
	if !on {
		_ = os.Remove(p)
		return
	}
	if os.MkdirAll(filepath.Dir(p), 0o755) == nil {
		_ = os.WriteFile(p, []byte(strconv.Itoa(os.Getpid())+"\n"), 0o644)
	}
}

type autoMemoryCodexCmd struct {
	SessionID      string `name:"session-id" help:"Codex session id (default: read the Stop-hook JSON on stdin)." placeholder:"ID"`
	TranscriptPath string `name:"transcript-path" help:"Rollout file (default: found under $CODEX_HOME or ~/.codex/sessions)." placeholder:"FILE"`
	transcriptHookFlags
}

func (autoMemoryCodexCmd) Help() string {
	return `For a Codex Stop hook (~/.codex/hooks.json; reme setup codex writes it), or
by hand with session_id=ID: copies the session's rollout
(~/.codex/sessions/YYYY/MM/DD/rollout-...-<session_id>.jsonl) into
session/codex/<session_id>.jsonl, then updates the session's card of the day
in the background, as auto_memory_cc does for Claude Code (its log is
metadata/logs/auto_memory_cc.log). --wait distils in the foreground instead.

User and assistant messages are kept without the context Codex adds
(environment, AGENTS.md and user instructions); tool calls and their output
become one-line summaries; reasoning is dropped. It never exits 2.`
}

func (c *autoMemoryCodexCmd) Run(ctx context.Context, app *App) error {
	cc := autoMemoryCCCmd(*c)
	return cc.run(ctx, app, codexSource)
}
