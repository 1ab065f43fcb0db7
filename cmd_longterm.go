package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/reme-dev/reme/index"
	"github.com/reme-dev/reme/jobs"
	"github.com/reme-dev/reme/store"
)

// The memory tools as commands: memory_search, memory_get, memory_write,
// memory_delete. They run the same code as the tools a model gets.

// memorySession opens the memory tools for a person at the command line;
// one that changes memory is refused on a read-only workspace.
func (a *App) memorySession(ctx context.Context, create, writes bool) (*jobs.Memory, error) {
	if !create {
		if _, err := a.Workspace(false); err != nil {
			return nil, err
		}
	}
	env, err := a.jobEnv(ctx)
	if err != nil {
		return nil, err
	}
	if writes {
		if ro := a.ix.ReadOnly(); ro != nil {
			return nil, fmt.Errorf("%w: %v", index.ErrReadOnly, ro)
		}
	}
	// an agent over MCP is confined as a model is: the profile stays the
	// person's unless memory.profile_auto
	return jobs.NewMemory(env, jobs.MemorySessionOptions{Agent: a.trigger() == store.TriggerMCP}), nil
}

// memoryErr words a refusal of the caller's input (jobs.ErrInput, or one
// of also) the way ReMe words errors; other errors pass unchanged.
func memoryErr(err error, also ...error) error {
	for _, kind := range append([]error{jobs.ErrInput}, also...) {
		if errors.Is(err, kind) {
			return answerError{strings.TrimPrefix(err.Error(), jobs.ErrInput.Error()+": ")}
		}
	}
	return err
}

type memorySearchCmd struct {
	Query []string `arg:"" optional:"" help:"Keywords or a question."`
	Type  []string `help:"Only notes of this type (repeatable): user, feedback, project, reference, entry, profile, memory_index, card, digest (default: entries and the profile)." placeholder:"TYPE"`
	Limit int      `help:"Number of results (default ${default})." default:"5" placeholder:"N"`
}

func (memorySearchCmd) Help() string {
	return `Searches long-term memory: the entries under memory/entries/ and the profile,
or the types given. Entries edited by hand a moment ago are found.`
}

func (c *memorySearchCmd) Run(ctx context.Context, app *App) error {
	return app.emit(c.answer(ctx, app))
}

// memorySearchAnswer is what memory_search found.
type memorySearchAnswer struct {
	Hits []jobs.NoteHit `json:"results"`
}

func (a *memorySearchAnswer) jsonValue() any { return a }

func (a *memorySearchAnswer) text() string {
	if len(a.Hits) == 0 {
		return "No entry matches.\n"
	}
	var b strings.Builder
	for _, h := range a.Hits {
		kind := h.Type
		if kind == "" {
			kind = store.NoteKind(h.Path)
		}
		fmt.Fprintf(&b, "========== %s (%s, lines %d-%d, score %.2f)\n", h.Path, kind, h.StartLine, h.EndLine, h.Score)
		if h.Description != "" {
			fmt.Fprintf(&b, "%s\n", h.Description)
		}
		if t := strings.TrimSpace(h.Text); t != "" {
			fmt.Fprintf(&b, "%s\n", t)
		}
	}
	return b.String()
}

func (c *memorySearchCmd) answer(ctx context.Context, app *App) (*memorySearchAnswer, error) {
	query := strings.TrimSpace(strings.Join(c.Query, " "))
	if query == "" {
		return nil, answerError{"query cannot be empty"}
	}
	if c.Limit <= 0 {
		return nil, usageError{fmt.Errorf("--limit must be greater than 0, not %d", c.Limit)}
	}
	m, err := app.memorySession(ctx, false, false)
	if err != nil {
		return nil, err
	}
	hits, err := m.Search(ctx, jobs.MemorySearchRequest{Query: query, Types: c.Type, Limit: c.Limit})
	if err != nil {
		return nil, memoryErr(err)
	}
	if hits == nil {
		hits = []jobs.NoteHit{} // an empty list, not null, for JSON readers
	}
	return &memorySearchAnswer{hits}, nil
}

type memoryGetCmd struct {
	Path string `arg:"" optional:"" help:"memory/entries/<name>.md or memory/profile.md." placeholder:"PATH"`
	Name string `help:"The entry's name, instead of its path." placeholder:"NAME"`
}

func (memoryGetCmd) Help() string {
	return `Prints an entry (or the profile) with its hash: pass the hash to memory_write or
memory_delete to change exactly the version you read.`
}

func (c *memoryGetCmd) Run(ctx context.Context, app *App) error {
	return app.emit(c.answer(ctx, app))
}

// memoryEntryAnswer is an entry as memory_get prints it: the file with
// its path and hash.
type memoryEntryAnswer struct {
	jobs.MemoryEntry
	File string `json:"-"` // the file as it is, for the text form
}

func (a *memoryEntryAnswer) jsonValue() any { return &a.MemoryEntry }

func (a *memoryEntryAnswer) text() string {
	s := fmt.Sprintf("# %s\n# hash: %s\n%s", a.Path, a.Hash, a.File)
	if !strings.HasSuffix(s, "\n") {
		s += "\n"
	}
	return s
}

func (c *memoryGetCmd) answer(ctx context.Context, app *App) (*memoryEntryAnswer, error) {
	if c.Path == "" && c.Name == "" {
		return nil, answerError{"give the entry's path or --name"}
	}
	m, err := app.memorySession(ctx, false, false)
	if err != nil {
		return nil, err
	}
	e, err := m.Get(ctx, jobs.MemoryRef{Path: c.Path, Name: c.Name})
	if err != nil {
		return nil, memoryErr(err)
	}
	text, _ := store.DecodeText(e.Raw)
	return &memoryEntryAnswer{MemoryEntry: *e, File: text}, nil
}

type memoryWriteCmd struct {
	Path        string `help:"The entry to update (or memory/profile.md); leave out to create one, or to update the one entry named --name." placeholder:"PATH"`
	Type        string `help:"user, feedback, project or reference (required for a new entry)." placeholder:"TYPE"`
	Name        string `help:"Short stable name, also the file name." placeholder:"NAME"`
	Description string `help:"One sentence for MEMORY.md." placeholder:"TEXT"`
	Content     string `help:"The entry's text, @FILE, or - for stdin; a feedback entry needs \"Why:\" and \"How to apply:\" lines." placeholder:"TEXT|@FILE|-"`
	Due         string `help:"Deadline of a project milestone." placeholder:"YYYY-MM-DD"`
	Expires     string `help:"Day after which the entry no longer holds." placeholder:"YYYY-MM-DD"`
	Hash        string `help:"The hash memory_get printed: required to change an entry edited since reme last wrote it." placeholder:"SHA256"`
	Source      string `help:"Where the memory comes from, as a wikilink or path." placeholder:"LINK"`
}

func (memoryWriteCmd) Help() string {
	return `Creates a long-term entry under memory/entries/<name>.md, or updates one: the
entry at --path, else the one entry named --name (updated in place). Fields not
given keep their value. MEMORY.md is rewritten. A write is refused, and nothing
changes, when the entry was edited since reme last wrote it (pass --hash from
memory_get), when the name belongs to another entry, or when a field is not
valid.`
}

func (c *memoryWriteCmd) Run(ctx context.Context, app *App) error {
	return app.emit(c.answer(ctx, app))
}

// memoryWriteAnswer reports a memory_write.
type memoryWriteAnswer jobs.MemoryWriteResult

func (a *memoryWriteAnswer) jsonValue() any { return (*jobs.MemoryWriteResult)(a) }

func (a *memoryWriteAnswer) text() string {
	line := fmt.Sprintf("%s %s (hash %s)", a.Action, a.Path, a.Hash)
	if a.RenamedFrom != "" {
		line += "; renamed from " + a.RenamedFrom
	}
	return line + "\n"
}

func (c *memoryWriteCmd) answer(ctx context.Context, app *App) (*memoryWriteAnswer, error) {
	cfg, err := app.Config()
	if err != nil {
		return nil, err
	}
	content, err := readContent(c.Content, app.Stdin, cfg.Memory.MaxEntryBytes)
	if err != nil {
		return nil, err
	}
	m, err := app.memorySession(ctx, true, true)
	if err != nil {
		return nil, err
	}
	res, err := m.Write(ctx, jobs.MemoryWriteRequest{Path: c.Path, Type: c.Type, Name: c.Name, Description: c.Description,
		Content: content, Due: c.Due, Expires: c.Expires, Hash: c.Hash, Source: c.Source})
	if err != nil {
		return nil, memoryErr(err)
	}
	for _, n := range res.Notes {
		app.Log.Warn(n)
	}
	reportIndexBound(app, res.Index)
	return (*memoryWriteAnswer)(res), nil
}

// reportIndexBound warns when MEMORY.md no longer lists every entry.
func reportIndexBound(app *App, idx *store.MemoryIndexResult) {
	if idx != nil && idx.Omitted > 0 {
		fmt.Fprintf(app.Stderr, "reme: MEMORY.md lists %d of %d entries: it is bounded to %s (memory.index_max_lines, memory.index_max_bytes)\n",
			idx.Listed, idx.Entries, idx.Bounds)
	}
}

// readContent resolves text given inline, as @FILE, or as - (stdin),
// reading at most one byte past limit so that a huge input is refused
// without being held.
func readContent(v string, stdin io.Reader, limit int) (string, error) {
	r, name, closeFn, err := openArg(v, "content", stdin, int64(limit), func(name string) error {
		return answerError{fmt.Sprintf("the content from %s is larger than %d bytes, the most an entry holds (memory.max_entry_bytes)", name, limit)}
	})
	if err != nil {
		return "", err
	}
	if r == nil {
		return v, nil
	}
	defer closeFn()
	b, err := io.ReadAll(r)
	var tooLarge answerError
	if errors.As(err, &tooLarge) {
		return "", err
	}
	if err != nil {
		return "", fmt.Errorf("content from %s: %w", name, err)
	}
	return string(b), nil
}

type memoryDeleteCmd struct {
	Path   string `arg:"" optional:"" help:"memory/entries/<name>.md." placeholder:"PATH"`
	Name   string `help:"The entry's name, instead of its path." placeholder:"NAME"`
	Hash   string `help:"Delete only this version (the hash memory_get printed)." placeholder:"SHA256"`
	Reason string `help:"Why, kept with the archived entry." placeholder:"TEXT"`
}

func (memoryDeleteCmd) Help() string {
	return `Moves an entry to the trash: it is archived under archive/memory/entries/ as
maintain archives notes (marked with the day, where it was and why; links to it
follow), and MEMORY.md is rewritten. Nothing is destroyed: reme undo --last
brings it back.`
}

func (c *memoryDeleteCmd) Run(ctx context.Context, app *App) error {
	return app.emit(c.answer(ctx, app))
}

// memoryDeleteAnswer reports a memory_delete.
type memoryDeleteAnswer jobs.MemoryDeleteResult

func (a *memoryDeleteAnswer) jsonValue() any { return (*jobs.MemoryDeleteResult)(a) }

func (a *memoryDeleteAnswer) text() string {
	return fmt.Sprintf("deleted %s (in the trash: %s)\n", a.Path, a.Trash)
}

func (c *memoryDeleteCmd) answer(ctx context.Context, app *App) (*memoryDeleteAnswer, error) {
	if c.Path == "" && c.Name == "" {
		return nil, answerError{"give the entry's path or --name"}
	}
	m, err := app.memorySession(ctx, false, true)
	if err != nil {
		return nil, err
	}
	res, err := m.Delete(ctx, jobs.MemoryDeleteRequest{Path: c.Path, Name: c.Name, Hash: c.Hash, Reason: c.Reason})
	if err != nil {
		return nil, memoryErr(err)
	}
	return (*memoryDeleteAnswer)(res), nil
}
