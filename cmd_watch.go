package main

import (
	"context"
	"fmt"
	"time"

	"github.com/reme-dev/reme/index"
	"github.com/reme-dev/reme/jobs"
)

type watchCmd struct {
	IncludeImages *bool  `name:"include-images" negatable:"" help:"Process image resources (default: config resource.include_images, true)."`
	Language      string `enum:",en,zh" default:"" help:"Prompt language: en or zh."`
}

func (watchCmd) Help() string {
	return `Runs until Ctrl-C. Files added, changed or removed under resource/ go to
auto_resource (after a short quiet period, coalesced by each file's final state);
notes edited under daily/ and digest/ go to the index. File-system events are
only hints, so everything is reconciled at start, every watch.reconcile
(default 5m) and whenever events may have been lost. Progress goes to stderr.`
}

func (c *watchCmd) Run(ctx context.Context, app *App) error {
	app.watching = true
	env, req, err := app.resourceJob(ctx, c.IncludeImages, c.Language)
	if err != nil {
		return err
	}
	cfg, _ := app.Config() // loaded by resourceJob
	report := func(format string, a ...any) {
		fmt.Fprintf(app.Stderr, "%s watch: %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, a...))
	}
	opt := jobs.WatchOptions{
		Resource:  req,
		Debounce:  time.Duration(cfg.Watch.Debounce),
		Reconcile: time.Duration(cfg.Watch.Reconcile),
		Report:    report,
	}
	// Searches of other processes skip their scan while this watcher
	// vouches for the index.
	if srv, err := index.ServeWatch(ctx, env.WS, app.Log); err != nil {
		report("searches keep scanning the workspace: %v", err)
	} else {
		defer srv.Close()
		opt.Vouch = srv.Ack
	}
	if ix, err := app.Index(ctx, false); err == nil && app.searchModelsSet() {
		// Notes indexed by the watcher get their embeddings after each batch.
		opt.Indexed = func(ctx context.Context) {
			if n, err := ix.EmbedPending(ctx, nil); err != nil {
				report("embeddings: %v (keyword search still finds the notes)", err)
			} else if n > 0 {
				report("embedded %d chunk(s)", n)
			}
		}
	}
	err = jobs.Watch(ctx, env, opt)
	if err != nil {
		return err
	}
	fmt.Fprintln(app.Stderr, "watch: stopped")
	return nil
}
