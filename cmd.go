package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/alecthomas/kong"
	"github.com/reme-dev/reme/index"
	"github.com/reme-dev/reme/jobs/llm"
	"github.com/reme-dev/reme/store"
)

const version = "0.1.0"

// Globals are the flags every command takes.
type Globals struct {
	Workspace string `short:"w" help:"Workspace folder ($REME_WORKSPACE, else ./.reme)." placeholder:"DIR"`
	JSON      bool   `help:"Print results as JSON."`
	Verbose   int    `short:"v" type:"counter" help:"Log more to stderr (-v info, -vv debug)."`
}

type cli struct {
	Globals

	AutoMemory      autoMemoryCmd      `cmd:"" name:"auto_memory" aliases:"auto-memory" help:"Turn a conversation into the day's memory card."`
	AutoMemoryCC    autoMemoryCCCmd    `cmd:"" name:"auto_memory_cc" aliases:"auto-memory-cc" help:"Turn a Claude Code session into the day's memory card (Stop hook)."`
	AutoMemoryCodex autoMemoryCodexCmd `cmd:"" name:"auto_memory_codex" aliases:"auto-memory-codex" help:"Turn a Codex CLI session into the day's memory card (Stop hook)."`
	AutoResource    autoResourceCmd    `cmd:"" name:"auto_resource" aliases:"auto-resource" help:"Turn resource files (text and images) into daily cards."`
	Watch           watchCmd           `cmd:"" help:"Watch the workspace: new resources become cards, edited notes are indexed."`
	Search          searchCmd          `cmd:"" help:"Search the memory (daily cards, digest nodes, long-term entries)."`
	Read            readCmd            `cmd:"" help:"Print a file of the workspace, or a range of its lines."`
	DailyList       dailyListCmd       `cmd:"" name:"daily_list" aliases:"daily-list" help:"List the cards of a day with their frontmatter."`
	DailyReindex    dailyReindexCmd    `cmd:"" name:"daily_reindex" aliases:"daily-reindex" help:"Rebuild the day index page daily/DATE.md."`
	ListTags        listTagsCmd        `cmd:"" name:"list_tags" aliases:"list-tags" help:"List tags (memory_tags, tags: and #tags) with their note counts."`
	Move            moveCmd            `cmd:"" help:"Move or rename a note and retarget every link to it."`
	Delete          deleteCmd          `cmd:"" help:"Delete a note and report the links that still point to it."`
	Links           linksCmd           `cmd:"" help:"Show a note's links both ways, or the links that lead nowhere or to several files."`
	Reindex         reindexCmd         `cmd:"" help:"Rebuild the search index from the files."`
	MemorySearch    memorySearchCmd    `cmd:"" name:"memory_search" aliases:"memory-search" help:"Search long-term memory (entries and the profile)."`
	MemoryGet       memoryGetCmd       `cmd:"" name:"memory_get" aliases:"memory-get" help:"Print a long-term entry (or the profile) with its hash."`
	MemoryWrite     memoryWriteCmd     `cmd:"" name:"memory_write" aliases:"memory-write" help:"Create or update a long-term entry (or the profile)."`
	MemoryDelete    memoryDeleteCmd    `cmd:"" name:"memory_delete" aliases:"memory-delete" help:"Move a long-term entry to the trash."`
	MemoryReindex   memoryReindexCmd   `cmd:"" name:"memory_reindex" aliases:"memory-reindex" help:"Rewrite the entry list of MEMORY.md."`
	Context         contextCmd         `cmd:"" help:"Print the memory an agent is shown for a message, within a byte budget."`
	Status          statusCmd          `cmd:"" help:"Print what the workspace holds, and whether MEMORY.md lists every entry."`
	Eval            evalCmd            `cmd:"" help:"Measure search recall on conversational QA data (LoCoMo's JSON shape)."`
	Maintain        maintainCmd        `cmd:"" help:"Tidy the memory: archive duplicates and expired notes within caps, keep the index healthy (cron-safe)."`
	AutoDream       autoDreamCmd       `cmd:"" name:"auto_dream" aliases:"auto-dream" help:"Consolidate recent daily cards into digest nodes (needs a model)."`
	History         historyCmd         `cmd:"" help:"List the changes reme made, run by run."`
	Undo            undoCmd            `cmd:"" help:"Restore every file a run changed, byte for byte."`
	Setup           setupCmd           `cmd:"" help:"Configure an agent (claude-code, codex, cursor) to use this workspace: MCP server and hooks."`
	MCP             mcpCmd             `cmd:"" name:"mcp" help:"Serve the memory to agents over the Model Context Protocol (stdio, or HTTP with --http)."`
	Config          configCmd          `cmd:"" aliases:"app_config,app-config" help:"Print the effective configuration (secrets redacted)."`
	Version         versionCmd         `cmd:"" help:"Print the version."`
	Help            helpCmd            `cmd:"" help:"Describe the commands, or one command."`
}

// App carries what commands share; dependencies open lazily so that cheap
// commands stay cheap.
type App struct {
	Stdin   io.Reader
	Stdout  io.Writer
	Stderr  io.Writer
	Globals *Globals
	Log     *slog.Logger
	Now     func() time.Time
	// Getenv reads the environment, then a .env file of the working
	// folder or one of its parents (never overriding the environment).
	Getenv func(string) string

	level  slog.Level
	root   string // the workspace folder, resolved once for config, files and index
	dotEnv *dotEnv
	cfg    *Config
	ws     *store.Workspace
	ix     *index.Index
	// wrapModel, when set, wraps the chat model a job gets (the MCP server
	// reports each model call as progress).
	wrapModel func(llm.Client) llm.Client
	// command is the command's name, for the journal's trigger
	command string
	// watching is set by the commands that run the watcher, which keeps
	// the index in step itself and must not ask itself for freshness.
	watching bool
	// keywordOnly leaves the models out of search (search --no-hybrid).
	keywordOnly bool
	// models are the search model clients, once set up (searchModels).
	models *searchModelClients
}

// usageError marks a bad command line (exit code 2).
type usageError struct{ error }

func (e usageError) Unwrap() error { return e.error }

// answerError is a mistake in what the caller gave, worded as ReMe words
// it (without ReMe's "Error: " prefix); like any usage error it exits 2.
type answerError struct{ msg string }

func (e answerError) Error() string { return e.msg }

// kongExit carries Kong's exit request (after --help) out of the parser.
type kongExit int

func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) (code int) {
	// A Claude Code hook that exits 2 blocks the user's session (Stop) or
	// prompt (UserPromptSubmit), so auto_memory_cc and reme context
	// --format claude-code never do; their failures also go to
	// metadata/logs/.
	hookLog, hook := hookCommand(args)
	given := args // as typed, for the log
	var hookErr *bytes.Buffer
	if hook {
		hookErr = &bytes.Buffer{}
		stderr = io.MultiWriter(stderr, hookErr)
	}
	var c cli
	app := &App{Stdin: stdin, Stdout: stdout, Stderr: stderr, Globals: &c.Globals}
	app.dotEnv = loadDotEnv()
	app.Getenv = app.dotEnv.getenv
	defer func() {
		if r := recover(); r != nil {
			if k, ok := r.(kongExit); ok {
				code = int(k)
			} else if hook {
				fmt.Fprintf(stderr, "reme: internal error: %v\n%s", r, debug.Stack())
				code = 1
			} else {
				panic(r)
			}
		}
		if hook {
			failed := code != 0
			switch {
			case hookLog == contextLogName:
				// the context hook never holds the prompt up: no context
				// this turn, and the failure in the log
				code = 0
			case code == 2:
				code = 1
			}
			// a background run's stderr is the log already
			if failed && !slices.Contains(given, "--background") {
				root := app.root
				if root == "" {
					root = hookWorkspace(given, app.Getenv)
				}
				logHookFailure(root, hookLog, given, hookErr.String(), time.Now())
			}
		}
	}()
	parser, err := kong.New(&c,
		kong.Name("reme"),
		kong.Description("Long-term memory for LLM agents: markdown cards people can read, grep and edit, with fast search.\n\n"+
			"Any flag can also be given ReMe-style as key=value: reme search query=\"login flow\" limit=3."),
		kong.Writers(stdout, stderr),
		kong.Exit(func(code int) { panic(kongExit(code)) }),
		kong.ConfigureHelp(kong.HelpOptions{Compact: true, NoExpandSubcommands: true}),
		kong.BindTo(ctx, (*context.Context)(nil)),
		kong.Bind(app),
	)
	if err != nil {
		fmt.Fprintf(stderr, "reme: %v\n", err)
		return 1
	}
	args, err = remeArgs(parser.Model, args)
	if err != nil {
		return app.fail(err)
	}
	kctx, err := parser.Parse(args)
	if err != nil {
		var pe *kong.ParseError
		if errors.As(err, &pe) {
			return app.fail(usageError{err})
		}
		return app.fail(err)
	}
	app.command = strings.Fields(kctx.Command() + " ")[0]
	app.setup()
	defer app.close()
	if err := app.resolveWorkspace(); err != nil {
		return app.fail(err)
	}
	err = kctx.Run()
	if err == nil {
		app.embedAfter(context.WithoutCancel(ctx))
	}
	return app.fail(err)
}

func (a *App) setup() {
	level := slog.LevelWarn
	switch {
	case a.Globals.Verbose >= 2:
		level = slog.LevelDebug
	case a.Globals.Verbose == 1:
		level = slog.LevelInfo
	}
	a.level = level
	a.Log = slog.New(&lineHandler{w: a.Stderr, level: level})
	a.Now = time.Now
	if v := a.Getenv("REME_NOW"); v != "" {
		// Fixed time for scripts and tests.
		if t, err := time.Parse(time.RFC3339, v); err == nil {
			a.Now = func() time.Time { return t }
		}
	}
	if a.dotEnv == nil {
		a.dotEnv = &dotEnv{lookup: os.LookupEnv}
	}
	for _, w := range a.dotEnv.warnings {
		a.Log.Warn(w)
	}
	if a.dotEnv.path != "" {
		a.Log.Debug("read environment defaults", "file", a.dotEnv.path)
	}
}

// resolveWorkspace decides the workspace folder once: the flag, else
// REME_WORKSPACE, else ./.reme, with ~/ expanded and made absolute. Config,
// files and index all use this one path.
func (a *App) resolveWorkspace() error {
	ws, err := store.OpenWorkspace(workspaceDir(a.Globals.Workspace, a.Getenv))
	if err != nil {
		return usageError{fmt.Errorf("workspace: %w", err)}
	}
	a.root = ws.Root
	return nil
}

// workspaceDir is the workspace folder as given: the flag's value, else
// REME_WORKSPACE, else ./.reme.
func workspaceDir(flag string, getenv func(string) string) string {
	if flag != "" {
		return flag
	}
	if dir := getenv("REME_WORKSPACE"); dir != "" {
		return dir
	}
	return "./.reme"
}

// logTo sends results and logs to w (a background run's log).
func (a *App) logTo(w io.Writer) {
	a.Stdout, a.Stderr = w, w
	a.Log = slog.New(&lineHandler{w: w, level: a.level})
}

func (a *App) close() {
	if a.ix != nil {
		a.ix.Close()
	}
}

// fail prints err and maps it to the exit code: 0 ok, 1 error, 2 usage,
// 130 cancelled.
func (a *App) fail(err error) int {
	if err == nil {
		return 0
	}
	var ue usageError
	var ae answerError
	switch {
	case errors.Is(err, context.Canceled):
		fmt.Fprintln(a.Stderr, "reme: cancelled")
		return 130
	case errors.As(err, &ae):
		fmt.Fprintf(a.Stderr, "reme: %s\n", ae.msg)
		fmt.Fprintln(a.Stderr, usageHint)
		return 2
	case errors.As(err, &ue):
		fmt.Fprintf(a.Stderr, "reme: %v\n", err)
		fmt.Fprintln(a.Stderr, usageHint)
		return 2
	}
	if a.ws != nil {
		err = diskFull(a.ws.Root, err)
	}
	fmt.Fprintf(a.Stderr, "reme: %v\n", err)
	return 1
}

// SQLite's primary result codes for a full disk: SQLITE_FULL ("database or
// disk is full"), and SQLITE_IOERR ("disk I/O error"), which it returns when
// its shared-memory file cannot grow (SQLITE_IOERR_SHMSIZE, 4874).
const (
	sqliteIOErr = 10
	sqliteFull  = 13
)

// diskFull words an error that a full disk caused as one: "no space left
// on device: <folder>", wrapping syscall.ENOSPC, instead of SQLite's own
// words. An I/O error counts only when the disk holding root is nearly full
// now; file errors say "no space left on device" with their path already.
func diskFull(root string, err error) error {
	var se interface{ Code() int }
	if err == nil || errors.Is(err, syscall.ENOSPC) || !errors.As(err, &se) {
		return err
	}
	switch code := se.Code() & 0xff; {
	case code == sqliteFull, code == sqliteIOErr && store.LowOnSpace(root, 1<<20):
		return fmt.Errorf("%w: the disk holding %s is full (%w)", syscall.ENOSPC, root, err)
	}
	return err
}

const usageHint = `Run "reme --help" or "reme <command> --help" for usage.`

// Config loads the configuration once.
func (a *App) Config() (*Config, error) {
	if a.cfg == nil {
		cfg, err := loadConfig(a.root, a.Getenv)
		if err != nil {
			return nil, err
		}
		a.cfg = cfg
	}
	return a.cfg, nil
}

// Workspace opens the workspace. Commands that only read refuse a missing
// one rather than creating it in the wrong place.
func (a *App) Workspace(create bool) (*store.Workspace, error) {
	if a.ws != nil {
		return a.ws, nil
	}
	// a.root is resolved once (resolveWorkspace): absolute, links followed
	ws := &store.Workspace{Root: a.root}
	if !filepath.IsAbs(a.root) {
		var err error
		if ws, err = store.OpenWorkspace(a.root); err != nil {
			return nil, err
		}
	}
	if fi, err := os.Stat(ws.Root); err != nil || !fi.IsDir() {
		if !create {
			if err == nil || errors.Is(err, fs.ErrNotExist) {
				return nil, fmt.Errorf("workspace %s does not exist (set --workspace or REME_WORKSPACE)", ws.Root)
			}
			return nil, fmt.Errorf("workspace %s: %w", ws.Root, err)
		}
	}
	if create {
		if err := ws.Init(); err != nil {
			return nil, err
		}
	}
	if cfg, err := a.Config(); err == nil { // a broken config fails the commands that write
		ws.RedactSessions = cfg.Redact.Sessions
	}
	a.ws = ws
	return ws, nil
}

// Index opens the index (finishing any interrupted move) without syncing.
func (a *App) Index(ctx context.Context, create bool) (*index.Index, error) {
	if a.ix != nil {
		return a.ix, nil
	}
	cfg, err := a.Config()
	if err != nil {
		return nil, err
	}
	ws, err := a.Workspace(create)
	if err != nil {
		return nil, err
	}
	opt := index.Options{Logger: a.Log, MaxFileBytes: cfg.MaxFileBytes, Fault: a.crashHook(),
		Progress: a.progress("indexing", "notes"), Now: a.Now, Trigger: a.trigger(), TrustWatcher: !a.watching}
	opt.Embedder, opt.Reranker = a.searchModels()
	ix, err := index.Open(ctx, ws, schemaSQL, opt)
	if err != nil {
		return nil, diskFull(ws.Root, err)
	}
	a.ix = ix
	return ix, nil
}

// crashHook lets tests kill this process (SIGKILL, no cleanup) at a named
// step of a journaled run ("dst-written"), or at its Nth step ("#3"), to
// prove that the next command finishes or rolls it back.
func (a *App) crashHook() func(string) error {
	at := a.Getenv("REME_CRASH_AT")
	if at == "" {
		return nil
	}
	n := 0
	return func(step string) error {
		n++
		if step == at || at == "#"+strconv.Itoa(n) {
			p, _ := os.FindProcess(os.Getpid())
			p.Kill()
			select {} // the kill is asynchronous; never carry on
		}
		return nil
	}
}

// FreshIndex opens the index and reconciles it with the files, so that a
// note edited by hand a moment ago is found.
func (a *App) FreshIndex(ctx context.Context) (*index.Index, error) {
	ix, err := a.Index(ctx, false)
	if err != nil {
		return nil, err
	}
	rep, err := ix.Sync(ctx)
	if err != nil {
		return nil, err
	}
	a.warnProblems(rep)
	return ix, nil
}

// warnProblems reports notes that could not be indexed.
func (a *App) warnProblems(rep *index.SyncReport) {
	for _, p := range rep.Problems {
		if !p.Success {
			a.Log.Warn("not indexed", "path", p.Path, "error", p.Error)
		}
	}
}

// Today is the current date in the workspace time zone.
func (a *App) Today() (string, error) {
	cfg, err := a.Config()
	if err != nil {
		return "", err
	}
	loc, err := cfg.Location()
	if err != nil {
		return "", err
	}
	return a.Now().In(loc).Format(time.DateOnly), nil
}

// answer is what a command found or did: the text it prints, and the value
// that --json prints. The CLI prints it and the MCP server returns it, so
// both faces run the same code.
type answer interface {
	text() string
	jsonValue() any
}

// emit prints a command's answer, or passes its error on.
func (a *App) emit(ans answer, err error) error {
	if err != nil {
		return err
	}
	if a.Globals.JSON {
		return a.printJSON(ans.jsonValue())
	}
	_, err = io.WriteString(a.Stdout, ans.text())
	return err
}

func (a *App) printJSON(v any) error {
	enc := json.NewEncoder(a.Stdout)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

type helpCmd struct {
	Command []string `arg:"" optional:"" help:"Command to describe."`
}

func (c *helpCmd) Run(kctx *kong.Context) error {
	_, err := kctx.Kong.Parse(append(append([]string{}, c.Command...), "--help"))
	if err != nil {
		return usageError{err}
	}
	return nil
}

type versionCmd struct{}

func (versionCmd) Run(app *App) error {
	v := version
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && len(s.Value) >= 12 {
				v += " (" + s.Value[:12] + ")"
			}
		}
	}
	if app.Globals.JSON {
		return app.printJSON(map[string]string{"version": v})
	}
	fmt.Fprintf(app.Stdout, "reme %s\n", v)
	return nil
}

// lineHandler logs as "reme: level: message key=value ..." lines, which read
// better in a terminal than slog's default format.
type lineHandler struct {
	w     io.Writer
	level slog.Level
	attrs []slog.Attr
}

func (h *lineHandler) Enabled(_ context.Context, l slog.Level) bool { return l >= h.level }

func (h *lineHandler) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	b.WriteString("reme: ")
	b.WriteString(strings.ToLower(r.Level.String()))
	b.WriteString(": ")
	b.WriteString(r.Message)
	write := func(a slog.Attr) bool {
		fmt.Fprintf(&b, " %s=%v", a.Key, a.Value.Any())
		return true
	}
	for _, a := range h.attrs {
		write(a)
	}
	r.Attrs(write)
	b.WriteByte('\n')
	_, err := io.WriteString(h.w, b.String())
	return err
}

func (h *lineHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &lineHandler{w: h.w, level: h.level, attrs: append(append([]slog.Attr{}, h.attrs...), attrs...)}
}

func (h *lineHandler) WithGroup(string) slog.Handler { return h }
