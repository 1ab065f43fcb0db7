package main

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/reme-dev/reme/jobs"
	"github.com/reme-dev/reme/jobs/llm"
)

// The MCP server is the CLI's other face: every tool fills in the command's
// own struct and runs the command's own answer method, so a tool answers
// exactly what the command prints (as text, and as the --json value for the
// structured result), and fails with the command's error text.

// mcpMaxBody bounds an HTTP request body.
const mcpMaxBody = 1 << 20

// HTTP timeouts: a request body of mcpMaxBody arrives well within
// mcpReadTimeout; a response stream (a long auto_memory, or the event
// stream a client keeps open) is cut after mcpWriteTimeout, and clients
// reconnect.
const (
	mcpReadHeaderTimeout = 10 * time.Second
	mcpReadTimeout       = time.Minute
	mcpWriteTimeout      = 30 * time.Minute
	mcpIdleTimeout       = 2 * time.Minute
	mcpSessionTimeout    = 30 * time.Minute
)

// mcpPath is where the HTTP transport listens (ReMe serves MCP there too).
const mcpPath = "/mcp"

type mcpCmd struct {
	HTTP   string `name:"http" help:"Serve streamable HTTP on ADDR (host:port) instead of stdio. Clients must send the bearer token in REME_MCP_TOKEN." placeholder:"ADDR"`
	NoAuth bool   `name:"no-auth" help:"With --http on a loopback address (127.0.0.1, ::1, localhost) and no REME_MCP_TOKEN, serve without a token."`
}

func (mcpCmd) Help() string {
	return `Serves the workspace to agents over the Model Context Protocol: on stdin and
stdout by default, or over streamable HTTP at http://ADDR/mcp with --http.

Tools: search, read, daily_list, list_tags, move, history, memory_search,
memory_get, memory_write, memory_delete, context, auto_memory (for hosts without
hooks; it reports progress, and a cancelled call stops the work).
Each tool runs the command of the same name and answers what it prints, with
the --json value as the structured result; errors carry the command's message.
Resources: MEMORY.md and memory/profile.md.

The index is opened once; every call still sees the files as they are now:
the server watches the notes (as reme watch does, resources aside, unless a
watcher already runs), so a search asks the watcher rather than scanning.
Over HTTP every request must carry "Authorization: Bearer $REME_MCP_TOKEN";
without a token the server refuses to start, unless the address is loopback
and --no-auth is given. Request bodies are limited to 1 MiB.`
}

func (c *mcpCmd) Run(ctx context.Context, app *App) error {
	var token string
	if c.HTTP != "" {
		var err error
		if token, err = c.checkAuth(app); err != nil {
			return err
		}
	}
	srv, err := newMCPServer(ctx, app)
	if err != nil {
		return err
	}
	defer srv.close()
	if c.HTTP == "" {
		// stdout is the protocol: nothing else may be written there.
		in, out := app.Stdin, app.Stdout
		app.Stdin, app.Stdout = nil, app.Stderr
		if in == nil {
			return errors.New("mcp: nothing on stdin")
		}
		err := srv.server.Run(ctx, &mcp.IOTransport{Reader: io.NopCloser(in), Writer: nopWriteCloser{out}})
		if ctx.Err() != nil || errors.Is(err, io.EOF) {
			return nil // the client went away, or Ctrl-C
		}
		return err
	}
	app.Stdin, app.Stdout = nil, app.Stderr
	return srv.serveHTTP(ctx, c.HTTP, token)
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// checkAuth returns the token HTTP clients must send, or refuses to serve
// without one.
func (c *mcpCmd) checkAuth(app *App) (string, error) {
	host, _, err := net.SplitHostPort(c.HTTP)
	if err != nil {
		return "", usageError{fmt.Errorf("--http %s: %v (want host:port, e.g. 127.0.0.1:2333)", c.HTTP, err)}
	}
	token := strings.TrimSpace(app.Getenv("REME_MCP_TOKEN"))
	loopback := isLoopback(host)
	switch {
	case token != "":
		if c.NoAuth {
			app.Log.Warn("REME_MCP_TOKEN is set: --no-auth is ignored and clients must send the token")
		}
		return token, nil
	case c.NoAuth && loopback:
		app.Log.Warn("serving MCP over HTTP without a token", "addr", c.HTTP)
		return "", nil
	case c.NoAuth:
		return "", usageError{fmt.Errorf("--no-auth is only allowed on a loopback address (127.0.0.1, ::1, localhost), not %s; set REME_MCP_TOKEN", host)}
	}
	return "", usageError{fmt.Errorf("--http needs a bearer token: set REME_MCP_TOKEN (or, on a loopback address only, pass --no-auth)")}
}

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}

// mcpServer serves one workspace. Quick tools share one App, so the index
// is opened once; they take turns, as an index is used by one goroutine at
// a time (other processes are kept in step by the workspace's locks, as
// between CLI commands). Long jobs get an App and index of their own, so
// that a search does not wait for a model.
type mcpServer struct {
	app    *App
	mu     sync.Mutex
	server *mcp.Server

	stopWatch context.CancelFunc
	watched   chan struct{} // closed when the server's watcher has stopped
}

func newMCPServer(ctx context.Context, app *App) (*mcpServer, error) {
	if _, err := app.Config(); err != nil {
		return nil, err
	}
	// A new workspace is created, so that an agent configured before its
	// first memory gets empty answers rather than errors.
	if _, err := app.Workspace(false); err != nil {
		if _, serr := os.Stat(app.root); !errors.Is(serr, fs.ErrNotExist) {
			return nil, err
		}
		if _, err := app.Workspace(true); err != nil {
			return nil, err
		}
	}
	if _, err := app.Index(ctx, false); err != nil {
		return nil, err
	}
	s := &mcpServer{app: app}
	s.server = mcp.NewServer(&mcp.Implementation{Name: "reme", Title: "reme memory", Version: version}, &mcp.ServerOptions{
		Instructions: "Long-term memory: search it before answering from memory, read a result's path for the whole card, and call auto_memory with the conversation at the end of a session (hosts without hooks).",
	})
	s.addTools()
	s.addResources()
	wctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	s.stopWatch, s.watched = cancel, make(chan struct{})
	go s.watch(wctx)
	return s, nil
}

func (s *mcpServer) close() {
	s.stopWatch()
	<-s.watched
	s.app.close()
}

// watch keeps the index in step with the notes while the server runs, so
// that a search asks this watcher instead of statting every note and is
// still fresh. Where another process (reme watch, another server) already
// answers for the workspace, or file events cannot be trusted, searches ask
// that one or scan, and this watcher does not run.
func (s *mcpServer) watch(ctx context.Context) {
	defer close(s.watched)
	app := s.app.fork()
	app.watching = true // its own index must not ask itself
	defer app.close()
	cfg, err := app.Config()
	if err != nil {
		return
	}
	env, err := app.jobEnv(ctx)
	if err != nil {
		app.Log.Debug("mcp: no watcher; searches scan the workspace", "err", err)
		return
	}
	opt := jobs.WatchOptions{NotesOnly: true, Debounce: time.Duration(cfg.Watch.Debounce), Reconcile: time.Duration(cfg.Watch.Reconcile),
		Report: func(format string, a ...any) { app.Log.Debug("mcp watch: " + fmt.Sprintf(format, a...)) }}
	stop, err := app.vouchFor(ctx, &opt)
	if err != nil {
		app.Log.Debug("mcp: no watcher of its own", "why", err)
		return
	}
	defer stop()
	if err := jobs.Watch(ctx, env, opt); err != nil && ctx.Err() == nil {
		app.Log.Warn("mcp: the watcher stopped; searches scan the workspace", "err", err)
	}
}

// fork gives a long job an App of its own that shares the configuration.
func (a *App) fork() *App {
	return &App{Stdout: a.Stderr, Stderr: a.Stderr, Globals: a.Globals, Log: a.Log, Now: a.Now, Getenv: a.Getenv,
		level: a.level, root: a.root, dotEnv: a.dotEnv, cfg: a.cfg, command: a.command}
}

// toolErrorText is the message the CLI prints after "reme: ".
func toolErrorText(err error) string {
	var ae answerError
	switch {
	case errors.Is(err, context.Canceled):
		return "cancelled"
	case errors.As(err, &ae):
		return ae.msg
	}
	return err.Error()
}

// toolFunc is a tool's body: it fills in the command and runs it.
type toolFunc[In any, Out answer] func(ctx context.Context, app *App, req *mcp.CallToolRequest, in In) (Out, error)

// addTool registers a tool whose input schema comes from In (with enums
// added) and whose output schema comes from Out, the command's answer.
func addTool[In any, Out answer](s *mcpServer, t *mcp.Tool, long bool, enums map[string][]any, run toolFunc[In, Out]) {
	schema, err := jsonschema.For[In](nil)
	if err != nil {
		panic(fmt.Sprintf("tool %s: input schema: %v", t.Name, err))
	}
	for name, values := range enums {
		p := schema.Properties[name]
		if p == nil {
			panic(fmt.Sprintf("tool %s: no property %s", t.Name, name))
		}
		p.Enum = values
	}
	t.InputSchema = schema
	mcp.AddTool(s.server, t, func(ctx context.Context, req *mcp.CallToolRequest, in In) (res *mcp.CallToolResult, out Out, err error) {
		app := s.app
		if long {
			app = s.app.fork()
			defer app.close()
		} else {
			s.mu.Lock()
			defer s.mu.Unlock()
		}
		defer func() {
			if r := recover(); r != nil {
				var zero Out
				res, out, err = nil, zero, fmt.Errorf("internal error: %v", r)
				app.Log.Error("tool panicked", "tool", t.Name, "panic", r)
			}
		}()
		if err := ctx.Err(); err != nil {
			return nil, out, errors.New(toolErrorText(err))
		}
		out, err = run(ctx, app, req, in)
		if err != nil {
			var zero Out
			return nil, zero, errors.New(toolErrorText(err))
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: out.text()}}}, out, nil
	})
}

// Tool inputs use ReMe's parameter names.

type searchInput struct {
	Query            string   `json:"query" jsonschema:"A question, words, \"an exact phrase\", -excluded, prefix*."`
	Limit            *int     `json:"limit,omitempty" jsonschema:"Number of results (default 5, or the workspace's search.limit)."`
	MinScore         float64  `json:"min_score,omitempty" jsonschema:"Drop results scoring below this."`
	StartDate        string   `json:"start_date,omitempty" jsonschema:"Only notes dated on or after this day (YYYY-MM-DD, from the path)."`
	EndDate          string   `json:"end_date,omitempty" jsonschema:"Only notes dated on or before this day (YYYY-MM-DD)."`
	StrictDateFilter bool     `json:"strict_date_filter,omitempty" jsonschema:"With a date bound, also leave out undated notes such as digest/."`
	Tags             []string `json:"tags,omitempty" jsonschema:"Only notes with any of these tags."`
	PathPrefixes     []string `json:"path_prefixes,omitempty" jsonschema:"Only paths starting with one of these prefixes."`
}

type readInput struct {
	Path      string `json:"path" jsonschema:"Workspace path, e.g. daily/2026-06-20/login-flow.md (a path without extension gets .md)."`
	StartLine *int   `json:"start_line,omitempty" jsonschema:"First line, 1-based."`
	EndLine   *int   `json:"end_line,omitempty" jsonschema:"Last line, inclusive."`
}

type dailyListInput struct {
	Date string `json:"date,omitempty" jsonschema:"Day to list, YYYY-MM-DD (default today in the workspace time zone)."`
}

type listTagsInput struct {
	Page     int    `json:"page,omitempty" jsonschema:"Page number, from 1."`
	PageSize int    `json:"page_size,omitempty" jsonschema:"Tags per page (default 100, at most 1000)."`
	OrderBy  string `json:"order_by,omitempty" jsonschema:"Sort by tag (default) or file_count."`
	Order    string `json:"order,omitempty" jsonschema:"asc or desc (default asc for tag, desc for file_count)."`
}

type moveInput struct {
	SrcPath   string `json:"src_path" jsonschema:"Workspace path of the note to move."`
	DstPath   string `json:"dst_path" jsonschema:"New workspace path, with its folder (e.g. daily/2026-06-20/new-name.md)."`
	Overwrite bool   `json:"overwrite,omitempty" jsonschema:"Replace an existing destination."`
	Retarget  *bool  `json:"retarget,omitempty" jsonschema:"Rewrite the links to the note (default true)."`
}

type historyInput struct {
	Since string `json:"since,omitempty" jsonschema:"Only runs since then: a date (2026-06-20), a time (RFC 3339) or a duration back from now (24h, 7d)."`
	Path  string `json:"path,omitempty" jsonschema:"Only changes to this workspace path (a file, or a folder and everything in it)."`
	Run   string `json:"run,omitempty" jsonschema:"Only this run."`
	Limit int    `json:"limit,omitempty" jsonschema:"Show at most this many runs, newest last (0: all)."`
}

type autoMemoryInput struct {
	SessionID     string           `json:"session_id" jsonschema:"Conversation id (a file name: no / or ..)."`
	Messages      []map[string]any `json:"messages" jsonschema:"The conversation: objects with role, content (text or blocks) and optionally name, id, created_at."`
	Date          string           `json:"date,omitempty" jsonschema:"Day of the card, YYYY-MM-DD (default: the latest message day)."`
	MemoryHint    string           `json:"memory_hint,omitempty" jsonschema:"Extra guidance for the model."`
	Language      string           `json:"language,omitempty" jsonschema:"Prompt language: en or zh (default: the workspace's language)."`
	Fallback      string           `json:"fallback,omitempty" jsonschema:"extractive: a model failure writes an extractive card instead of failing; none (default) fails."`
	IncludeImages *bool            `json:"include_images,omitempty" jsonschema:"Save the conversation's images and show them to the model."`
}

type memorySearchInput struct {
	Query string   `json:"query" jsonschema:"Keywords or a question."`
	Types []string `json:"types,omitempty" jsonschema:"Narrow the search: user, feedback, project, reference (entries of that type), entry, profile, memory_index, card, digest (default: entries and the profile)."`
	Limit int      `json:"limit,omitempty" jsonschema:"Number of results (default 5)."`
}

type memoryGetInput struct {
	Path string `json:"path,omitempty" jsonschema:"memory/entries/<name>.md or memory/profile.md."`
	Name string `json:"name,omitempty" jsonschema:"The entry's name, instead of its path."`
}

type memoryWriteInput struct {
	Path        string `json:"path,omitempty" jsonschema:"The entry to update (leave out to create one, or to update the one entry named name)."`
	Type        string `json:"type,omitempty" jsonschema:"user (who the user is), feedback (a preference or correction: its content needs Why: and How to apply: lines), project (a decision or dated milestone), reference (where to look something up)."`
	Name        string `json:"name,omitempty" jsonschema:"Short stable name, also the file name."`
	Description string `json:"description,omitempty" jsonschema:"One sentence for MEMORY.md."`
	Content     string `json:"content,omitempty" jsonschema:"The entry's markdown text: the durable fact, not the conversation."`
	Due         string `json:"due,omitempty" jsonschema:"YYYY-MM-DD deadline of a project milestone."`
	Expires     string `json:"expires,omitempty" jsonschema:"YYYY-MM-DD after which the entry no longer holds."`
	Hash        string `json:"hash,omitempty" jsonschema:"The hash memory_get returned: required to change an entry edited since reme last wrote it."`
	Source      string `json:"source,omitempty" jsonschema:"Where the memory comes from, as a wikilink or path."`
}

type memoryDeleteInput struct {
	Path   string `json:"path,omitempty" jsonschema:"memory/entries/<name>.md."`
	Name   string `json:"name,omitempty" jsonschema:"The entry's name, instead of its path."`
	Hash   string `json:"hash,omitempty" jsonschema:"Delete only this version (the hash memory_get returned)."`
	Reason string `json:"reason,omitempty" jsonschema:"Why, in a few words (kept with the archived entry)."`
}

type contextInput struct {
	Query       string   `json:"query,omitempty" jsonschema:"The user's message (leave out with start)."`
	Session     string   `json:"session,omitempty" jsonschema:"Session id: an entry whose text this session was already shown is not shown again."`
	Budget      int      `json:"budget,omitempty" jsonschema:"Most bytes of context (default 8192)."`
	RecentTools []string `json:"recent_tools,omitempty" jsonschema:"Tools the session used recently: reference entries on how to use them are skipped unless they warn."`
	Start       bool     `json:"start,omitempty" jsonschema:"The context of a new session: the profile and MEMORY.md only."`
}

func (s *mcpServer) addTools() {
	readOnly := &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: new(false)}
	addTool(s, &mcp.Tool{Name: "search", Title: "Search memory", Annotations: readOnly,
		Description: "Search the memory (daily cards and digest notes) by keywords or a question; results are the best-matching lines with their path and line range."},
		false, nil, func(ctx context.Context, app *App, _ *mcp.CallToolRequest, in searchInput) (*searchAnswer, error) {
			c := searchCmd{Query: []string{in.Query}, Limit: in.Limit, MinScore: in.MinScore, StartDate: in.StartDate, EndDate: in.EndDate,
				StrictDate: in.StrictDateFilter, Tag: in.Tags, Path: in.PathPrefixes}
			return c.answer(ctx, app)
		})
	addTool(s, &mcp.Tool{Name: "read", Title: "Read a file", Annotations: readOnly,
		Description: "Read a file of the workspace, or a range of its lines; output over 50 KiB is cut with a notice saying where to continue."},
		false, nil, func(ctx context.Context, app *App, _ *mcp.CallToolRequest, in readInput) (*readAnswer, error) {
			c := readCmd{Path: in.Path, StartLine: optInt(in.StartLine), EndLine: optInt(in.EndLine)}
			return c.answer(ctx, app)
		})
	addTool(s, &mcp.Tool{Name: "daily_list", Title: "List a day's cards", Annotations: readOnly,
		Description: "List the cards of a day with their frontmatter."},
		false, nil, func(ctx context.Context, app *App, _ *mcp.CallToolRequest, in dailyListInput) (*dailyListAnswer, error) {
			c := dailyListCmd{Date: in.Date}
			return c.answer(ctx, app)
		})
	addTool(s, &mcp.Tool{Name: "list_tags", Title: "List tags", Annotations: readOnly,
		Description: "List tags (memory_tags, tags: and #tags) with their note counts."},
		false, map[string][]any{"order_by": {"tag", "file_count"}, "order": {"", "asc", "desc"}},
		func(ctx context.Context, app *App, _ *mcp.CallToolRequest, in listTagsInput) (*tagsAnswer, error) {
			c := listTagsCmd{Page: in.Page, PageSize: in.PageSize, OrderBy: in.OrderBy, Order: in.Order}
			if c.Page == 0 {
				c.Page = 1
			}
			if c.PageSize == 0 {
				c.PageSize = 100
			}
			if c.OrderBy == "" {
				c.OrderBy = "tag"
			}
			return c.answer(ctx, app)
		})
	addTool(s, &mcp.Tool{Name: "move", Title: "Move a note",
		Annotations: &mcp.ToolAnnotations{DestructiveHint: new(false), OpenWorldHint: new(false)},
		Description: "Move or rename a note and rewrite every link to it, in one step that survives a crash."},
		false, nil, func(ctx context.Context, app *App, _ *mcp.CallToolRequest, in moveInput) (*moveAnswer, error) {
			c := moveCmd{SrcPath: in.SrcPath, DstPath: in.DstPath, Overwrite: in.Overwrite, Retarget: in.Retarget == nil || *in.Retarget}
			return c.answer(ctx, app)
		})
	addTool(s, &mcp.Tool{Name: "history", Title: "List changes", Annotations: readOnly,
		Description: "List the changes reme made to the workspace, run by run (what undo can restore)."},
		false, nil, func(ctx context.Context, app *App, _ *mcp.CallToolRequest, in historyInput) (*historyAnswer, error) {
			c := historyCmd{Since: in.Since, Path: in.Path, RunID: in.Run, Limit: in.Limit}
			return c.answer(ctx, app)
		})
	addTool(s, &mcp.Tool{Name: "memory_search", Title: "Search long-term memory", Annotations: readOnly,
		Description: "Search long-term memory (the entries under memory/entries/ and the profile) by keywords; results are the matching lines with the entry's path, type and description."},
		false, nil, func(ctx context.Context, app *App, _ *mcp.CallToolRequest, in memorySearchInput) (*memorySearchAnswer, error) {
			limit := in.Limit
			if limit == 0 {
				limit = 5
			}
			c := memorySearchCmd{Query: []string{in.Query}, Type: in.Types, Limit: limit}
			return c.answer(ctx, app)
		})
	addTool(s, &mcp.Tool{Name: "memory_get", Title: "Read a long-term entry", Annotations: readOnly,
		Description: "Read one long-term entry (or memory/profile.md) with its frontmatter and hash; pass the hash to memory_write or memory_delete to change exactly this version."},
		false, nil, func(ctx context.Context, app *App, _ *mcp.CallToolRequest, in memoryGetInput) (*memoryEntryAnswer, error) {
			c := memoryGetCmd{Path: in.Path, Name: in.Name}
			return c.answer(ctx, app)
		})
	addTool(s, &mcp.Tool{Name: "memory_write", Title: "Remember across sessions",
		Annotations: &mcp.ToolAnnotations{DestructiveHint: new(false), OpenWorldHint: new(false)},
		Description: "Create a long-term entry (what should be remembered across sessions: who the user is, a preference with why and how to apply it, a decision or milestone, where to look something up), " +
			"or update one (give its path, or the name of an existing entry; fields left out keep their value). Never for today-only progress or code."},
		false, map[string][]any{"type": {"", "user", "feedback", "project", "reference"}},
		func(ctx context.Context, app *App, _ *mcp.CallToolRequest, in memoryWriteInput) (*memoryWriteAnswer, error) {
			c := memoryWriteCmd{Path: in.Path, Type: in.Type, Name: in.Name, Description: in.Description, Content: in.Content,
				Due: in.Due, Expires: in.Expires, Hash: in.Hash, Source: in.Source}
			if strings.HasPrefix(c.Content, "@") || c.Content == "-" {
				return nil, answerError{"content is the entry's text itself (@FILE and - are for the command line)"}
			}
			return c.answer(ctx, app)
		})
	addTool(s, &mcp.Tool{Name: "memory_delete", Title: "Forget an entry",
		Annotations: &mcp.ToolAnnotations{DestructiveHint: new(false), OpenWorldHint: new(false)},
		Description: "Delete a long-term entry that is wrong or that the user asked to forget: it goes to the trash (archive/), from where reme undo restores it."},
		false, nil, func(ctx context.Context, app *App, _ *mcp.CallToolRequest, in memoryDeleteInput) (*memoryDeleteAnswer, error) {
			c := memoryDeleteCmd{Path: in.Path, Name: in.Name, Hash: in.Hash, Reason: in.Reason}
			return c.answer(ctx, app)
		})
	addTool(s, &mcp.Tool{Name: "context", Title: "Memory for a message", Annotations: readOnly,
		Description: "What to know from memory for the user's message, within a byte budget: the profile, the MEMORY.md index, the relevant long-term entries and today's and yesterday's daily notes, ending with a line saying what was left out."},
		true, nil, func(ctx context.Context, app *App, _ *mcp.CallToolRequest, in contextInput) (*contextAnswer, error) {
			c := contextCmd{Query: []string{in.Query}, Session: in.Session, Budget: in.Budget, RecentTools: in.RecentTools, Start: in.Start}
			if in.Query == "" {
				c.Query = nil
			}
			return c.answer(ctx, app)
		})
	addTool(s, &mcp.Tool{Name: "auto_memory", Title: "Remember a conversation",
		Annotations: &mcp.ToolAnnotations{DestructiveHint: new(false), OpenWorldHint: new(true)},
		Description: "Save a conversation and turn it into the day's memory card for its session (for hosts without hooks). " +
			"Only messages not distilled yet are sent to the model; progress is reported while the model works."},
		true, map[string][]any{"language": {"", "en", "zh"}, "fallback": {"", "extractive", "none"}},
		func(ctx context.Context, app *App, req *mcp.CallToolRequest, in autoMemoryInput) (*memoryAnswer, error) {
			msgs, err := json.Marshal(in.Messages)
			if err != nil {
				return nil, err
			}
			if in.Messages == nil {
				msgs = nil
			}
			c := autoMemoryCmd{SessionID: in.SessionID, Messages: string(msgs), Date: in.Date, MemoryHint: in.MemoryHint,
				Language: in.Language, Fallback: in.Fallback, IncludeImages: in.IncludeImages}
			p := newToolProgress(ctx, req)
			app.wrapModel = p.wrap
			p.report("saving the conversation")
			ans, err := c.answer(ctx, app)
			if err == nil {
				p.report("done")
			}
			return ans, err
		})
}

func optInt(p *int) string {
	if p == nil {
		return ""
	}
	return strconv.Itoa(*p)
}

// toolProgress sends progress notifications for a call that asked for them
// (with a progress token).
type toolProgress struct {
	ctx   context.Context
	req   *mcp.CallToolRequest
	token any
	mu    sync.Mutex
	n     int
}

func newToolProgress(ctx context.Context, req *mcp.CallToolRequest) *toolProgress {
	p := &toolProgress{ctx: ctx, req: req}
	if req != nil && req.Params != nil {
		p.token = req.Params.GetProgressToken()
	}
	return p
}

func (p *toolProgress) report(msg string) {
	if p.token == nil || p.req.Session == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.n++
	// best effort: a client that went away cancels the call anyway
	_ = p.req.Session.NotifyProgress(p.ctx, &mcp.ProgressNotificationParams{ProgressToken: p.token, Progress: float64(p.n), Message: msg})
}

func (p *toolProgress) wrap(m llm.Client) llm.Client { return progressModel{Client: m, p: p} }

// progressModel reports each model call.
type progressModel struct {
	llm.Client
	p *toolProgress
}

func (m progressModel) Chat(ctx context.Context, req llm.Request) (*llm.Response, error) {
	m.p.report("waiting for " + req.Model)
	resp, err := m.Client.Chat(ctx, req)
	if err == nil {
		m.p.report(req.Model + " answered")
	}
	return resp, err
}

// mcpResources are the files served as resources.
var mcpResources = []struct{ path, name, desc string }{
	{"MEMORY.md", "MEMORY.md", "The index of long-term memory entries, grouped by type."},
	{"memory/profile.md", "profile", "The user profile."},
}

func (s *mcpServer) addResources() {
	for _, r := range mcpResources {
		uri := "reme:///" + r.path
		s.server.AddResource(&mcp.Resource{URI: uri, Name: r.name, Description: r.desc, MIMEType: "text/markdown"},
			func(ctx context.Context, _ *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
				b, err := os.ReadFile(s.app.ws.Abs(r.path))
				if errors.Is(err, fs.ErrNotExist) {
					return nil, mcp.ResourceNotFoundError(uri)
				}
				if err != nil {
					return nil, fmt.Errorf("read %s: %w", r.path, err)
				}
				return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: "text/markdown", Text: string(b)}}}, nil
			})
	}
}

// serveHTTP serves streamable HTTP at addr until ctx ends.
func (s *mcpServer) serveHTTP(ctx context.Context, addr, token string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("mcp: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle(mcpPath, s.httpHandler(token))
	hs := &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: mcpReadHeaderTimeout,
		ReadTimeout:       mcpReadTimeout,
		WriteTimeout:      mcpWriteTimeout,
		IdleTimeout:       mcpIdleTimeout,
		MaxHeaderBytes:    64 << 10,
		// net/http's own messages name no header; keep them off stdout
		ErrorLog: log.New(s.app.Stderr, "reme: http: ", 0),
	}
	fmt.Fprintf(s.app.Stderr, "reme: serving MCP at http://%s%s\n", ln.Addr(), mcpPath)
	done := make(chan error, 1)
	go func() { done <- hs.Serve(ln) }()
	select {
	case err := <-done:
		return fmt.Errorf("mcp: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = hs.Shutdown(sctx)
	return nil
}

// httpHandler is the MCP endpoint behind the token check and the body
// limit.
func (s *mcpServer) httpHandler(token string) http.Handler {
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.server },
		&mcp.StreamableHTTPOptions{MaxRequestBodyBytes: mcpMaxBody, SessionTimeout: mcpSessionTimeout})
	return requireToken(token, h)
}

// requireToken answers 401 to a request without "Authorization: Bearer
// <token>"; the comparison takes the same time whatever the guess. An
// empty token lets every request through.
func requireToken(token string, next http.Handler) http.Handler {
	if token == "" {
		return next
	}
	want := sha256.Sum256([]byte(token))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		sum := sha256.Sum256([]byte(strings.TrimSpace(got)))
		if !ok || subtle.ConstantTimeCompare(sum[:], want[:]) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="reme"`)
			http.Error(w, "missing or wrong bearer token", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}
