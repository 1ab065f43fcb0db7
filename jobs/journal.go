package jobs

import (
	"errors"
	"fmt"

	"github.com/reme-dev/reme/store"
)

// Every file a job writes goes through a journal run (store.Run): one per
// command invocation (a watch batch is one), begun by the job itself or
// given by its caller (maintain's run covers the auto_dream it starts). A
// crash before the run ends is rolled back by the next command; `reme undo
// RUN` reverses a run that ended.

var errNoRun = errors.New("no journal run: a job wrote outside beginRun")

// beginRun journals what the job writes from now on as one run of
// command, unless a run is open already (the caller's, which it keeps).
// prompt names the prompt set of model-driven changes.
func (e *Env) beginRun(command, prompt string) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.run != nil {
		return nil
	}
	if e.Journal == nil {
		return fmt.Errorf("%s: %w", command, errNoRun)
	}
	info := store.RunInfo{Command: command, Trigger: e.Trigger}
	if e.Model != nil {
		info.Model, info.Prompt = e.ModelID, prompt
	}
	r, err := e.Journal.Begin(info)
	if err != nil {
		return fmt.Errorf("journal %s: %w", command, err)
	}
	e.run, e.ownRun = r, true
	return nil
}

// endRun closes the run beginRun opened (not a caller's); a second call
// does nothing. err is the job's outcome, recorded in the end line.
func (e *Env) endRun(err error) error {
	e.mu.Lock()
	r, own := e.run, e.ownRun
	if own {
		e.run, e.ownRun = nil, false
	}
	e.mu.Unlock()
	if !own || r == nil {
		return nil
	}
	return r.End(err)
}

// withRun runs fn with its writes journaled: in the open run, or else in
// a run of its own (command, prompt) that ends with fn.
func (e *Env) withRun(command, prompt string, fn func() error) (err error) {
	if e.Run() != nil {
		return fn()
	}
	if err := e.beginRun(command, prompt); err != nil {
		return err
	}
	defer func() {
		if eerr := e.endRun(err); err == nil {
			err = eerr
		}
	}()
	return fn()
}

// UseRun makes the job write through the caller's run; the caller ends it.
func (e *Env) UseRun(r *store.Run) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.run, e.ownRun = r, false
}

// Run is the open journal run, if any.
func (e *Env) Run() *store.Run {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.run
}

// journalRun is the run a write goes through.
func (e *Env) journalRun() (*store.Run, error) {
	if r := e.Run(); r != nil {
		return r, nil
	}
	return nil, errNoRun
}
