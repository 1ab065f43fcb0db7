package main

// Long work says what it is doing on stderr when stderr is a terminal: the
// first sync of a large workspace, a rebuild, a model call. Pipes and logs
// get none of it.

import (
	"context"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/reme-dev/reme/index"
	"github.com/reme-dev/reme/jobs/llm"
)

// isTerminal reports whether a stream (stdin, stdout or stderr) is a
// terminal (a variable so that tests can pretend).
var isTerminal = func(stream any) bool {
	f, ok := stream.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// progressDelay: work that ends sooner shows nothing.
var progressDelay = time.Second

// progressEvery is the quickest a progress line is redrawn.
const progressEvery = 200 * time.Millisecond

// progress returns a (done, total) callback that redraws one stderr line,
// or nil when stderr is not a terminal.
func (a *App) progress(what, unit string) index.Progress {
	if !isTerminal(a.Stderr) {
		return nil
	}
	w := a.Stderr
	var mu sync.Mutex
	start := time.Now()
	var last time.Time
	return func(done, total int) {
		mu.Lock()
		defer mu.Unlock()
		now := time.Now()
		if now.Sub(start) < progressDelay || (done < total && now.Sub(last) < progressEvery) {
			return
		}
		last = now
		fmt.Fprintf(w, "\rreme: %s %d/%d %s", what, done, total, unit)
		if done >= total {
			fmt.Fprintln(w)
		}
	}
}

// waitingModel shows, on a terminal, how long the current model call has
// been waiting (jobs log every call with its duration at -v).
type waitingModel struct {
	llm.Client
	tty io.Writer
}

// observe wraps the model for a terminal; elsewhere it is left as it is.
func (a *App) observe(m llm.Client) llm.Client {
	if !isTerminal(a.Stderr) {
		return m
	}
	return waitingModel{Client: m, tty: a.Stderr}
}

func (m waitingModel) Chat(ctx context.Context, req llm.Request) (*llm.Response, error) {
	stop := m.showWaiting(req.Model, time.Now())
	defer stop()
	return m.Client.Chat(ctx, req)
}

// showWaiting redraws "waiting for MODEL (Ns)" every second once the call
// has taken progressDelay; the returned func clears the line.
func (m waitingModel) showWaiting(model string, start time.Time) func() {
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		shown := false
		t := time.NewTimer(progressDelay)
		defer t.Stop()
		for {
			select {
			case <-done:
				if shown {
					fmt.Fprint(m.tty, "\r\033[K")
				}
				return
			case <-t.C:
				shown = true
				fmt.Fprintf(m.tty, "\rreme: waiting for %s (%ds)", model, int(time.Since(start).Seconds()))
				t.Reset(time.Second)
			}
		}
	}()
	return func() {
		close(done)
		<-finished
	}
}
