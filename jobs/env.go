// Package jobs holds reme's pipelines: auto_memory (conversations become
// daily cards), auto_tag, auto_resource, watch. They are plain functions
// over the workspace (store), a model (jobs/llm) and the small Indexer
// interface below; the index package is wired in by main. Every card a job
// writes goes through one type, Card (card.go).
package jobs

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/reme-dev/reme/jobs/llm"
	"github.com/reme-dev/reme/store"
)

var (
	// ErrNoModel is returned when a job needs a model and none is configured.
	ErrNoModel = errors.New("no model configured (set COHERE_API_KEY or OPENAI_API_KEY, or llm.base_url for a local server)")
	// ErrInput is wrapped by every problem with a job's parameters (it is
	// store's, so that importers below jobs report the same way).
	ErrInput = store.ErrInput
	// ErrModelDown is returned, without calling the model, once a call failed
	// in a way that another call in the same run would not fix.
	ErrModelDown = errors.New("model unavailable")
	// ErrNoCard means a model ended its run without writing a card and
	// without saying that the input was not worth one.
	ErrNoCard = errors.New("the model wrote no card")
	// ErrBusy means another run held a session for longer than the caller
	// was willing to wait; the caller's messages were saved before.
	ErrBusy = errors.New("session busy")
)

// Indexer is what jobs need from the index.
type Indexer interface {
	// UpdatePaths re-indexes notes that a job wrote, moved or removed.
	UpdatePaths(ctx context.Context, paths ...string) error
	// Rename moves a note and retargets every inbound link to it, through
	// run (the journal); it refuses an existing destination, and may be
	// called inside Locked.
	Rename(ctx context.Context, run *store.Run, src, dst string) error
	// Locked runs fn under the workspace writer lock (never around a model
	// call); it is reentrant within one process.
	Locked(ctx context.Context, fn func() error) error
	// Tags lists the tags in use with their note counts, most used first.
	Tags(ctx context.Context, limit int) ([]TagCount, error)
	// Sync reconciles the index with the files.
	Sync(ctx context.Context) error
	// NotesWith lists the notes whose frontmatter key (session_id,
	// source_conversation or source_resource) equals value.
	NotesWith(ctx context.Context, key, value string) ([]string, error)
	// Sources maps every value of a lookup key to a note holding it.
	Sources(ctx context.Context, key string) (map[string]string, error)
	// SyncScope reconciles the index with the files under the given roots
	// only (folders, or a file such as MEMORY.md): cheap when the rest of
	// the workspace is large.
	SyncScope(ctx context.Context, roots ...string) error
	// SearchNotes ranks the notes of the given types that match a keyword
	// query, best first.
	SearchNotes(ctx context.Context, q NoteQuery) ([]NoteHit, error)
	// ListNotes lists the indexed notes of the given types, by path.
	ListNotes(ctx context.Context, types ...string) ([]NoteInfo, error)
	// Archive moves src to dst inside run, rewriting every inbound link,
	// after edit (when set) changed the bytes written at dst. The caller
	// holds the lock and synced the index: it does not scan.
	Archive(ctx context.Context, run *store.Run, src, dst string, edit func([]byte) ([]byte, error), why store.Why) error
}

// TagCount is a tag in use.
type TagCount struct {
	Tag   string `json:"tag"`
	Count int    `json:"count"`
}

// Env is what every job runs against.
type Env struct {
	WS      *store.Workspace
	Index   Indexer
	Model   llm.Client // nil when no model is configured
	ModelID string     // model name sent with each request
	// VisionModelID is the model that reads images (the Model client sends
	// it; it must accept image input).
	VisionModelID string
	Language      string // en or zh prompt set
	Location      *time.Location
	Now           func() time.Time
	Log           *slog.Logger
	// Journal records every file a job changes (journal.go).
	Journal *store.Journal
	// Trigger says what started the command: cli, hook, cron, watch, mcp.
	Trigger string
	// Memory configures the long-term layers (entries, profile, MEMORY.md)
	// and the long-term pass after auto_memory.
	Memory MemoryOptions
	// Fault, when set, is called at named steps of a job; returning an
	// error stops it there as a crash would. Tests only (REME_CRASH_AT).
	Fault func(step string) error
	// Connect, when set, fills in what a job needs beyond the workspace
	// (Index, Journal, Model). Jobs that save a conversation call it only
	// once the conversation is saved, so that an index that cannot open (a
	// full disk, a broken model configuration) costs no message; every
	// other job is given an Env that is connected already.
	Connect func(ctx context.Context, e *Env) error

	mu     sync.Mutex
	down   error      // why the model is down for the rest of this run
	run    *store.Run // the journal run the job writes through
	ownRun bool       // begun by the job (ended by it), not given by a caller
}

func (e *Env) logger() *slog.Logger {
	if e.Log == nil {
		return slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return e.Log
}

func (e *Env) now() time.Time {
	if e.Now == nil {
		return time.Now()
	}
	return e.Now()
}

func (e *Env) loc() *time.Location {
	if e.Location == nil {
		return time.Local
	}
	return e.Location
}

func (e *Env) fault(step string) error {
	if e.Fault == nil {
		return nil
	}
	return e.Fault(step)
}

// Today is the current date in the workspace time zone.
func (e *Env) Today() string { return e.now().In(e.loc()).Format(time.DateOnly) }

// connect runs Connect once; an Env without it is connected already.
func (e *Env) connect(ctx context.Context) error {
	c := e.Connect
	if c == nil {
		return nil
	}
	e.Connect = nil
	return c(ctx, e)
}
