package main

// Long work says what it is doing on stderr when stderr is a terminal: the
// first sync of a large workspace, a rebuild, a model call. Pipes and logs
// get none of it; -v logs one line per model call with its duration.

import (
	"context"
	"fmt"
	"io"
	"log/slog"
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

// observedModel logs every model call with its duration (-v) and, on a
// terminal, shows how long the current call has been waiting.
type observedModel struct {
	llm.Client
	log *slog.Logger
	tty io.Writer // nil unless stderr is a terminal
}

func (a *App) observe(m llm.Client) llm.Client {
	o := observedModel{Client: m, log: a.Log}
	if isTerminal(a.Stderr) {
		o.tty = a.Stderr
	}
	return o
}

func (m observedModel) Chat(ctx context.Context, req llm.Request) (*llm.Response, error) {
	start := time.Now()
	stop := m.showWaiting(req.Model, start)
	resp, err := m.Client.Chat(ctx, req)
	stop()
	took := time.Since(start).Round(time.Millisecond)
	if err != nil {
		m.log.Info("model call failed", "model", req.Model, "duration", took, "error", err)
		return resp, err
	}
	m.log.Info("model call", "model", req.Model, "duration", took,
		"input_tokens", resp.Usage.InputTokens, "output_tokens", resp.Usage.OutputTokens)
	return resp, nil
}

// showWaiting redraws "waiting for the model" every second once the call
// has taken progressDelay; the returned func clears the line.
func (m observedModel) showWaiting(model string, start time.Time) func() {
	if m.tty == nil {
		return func() {}
	}
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
