package main

import (
	"context"
	"errors"
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
	stop, err := app.vouchFor(ctx, &opt)
	switch {
	case errors.Is(err, index.ErrOtherWatcher):
		report("%v; this one keeps resources and the index in step", err)
	case err != nil:
		report("searches keep scanning the workspace: %v", err)
	default:
		defer stop()
	}
	err = jobs.Watch(ctx, env, opt)
	if err != nil {
		return err
	}
	fmt.Fprintln(app.Stderr, "watch: stopped")
	return nil
}

// vouchFor makes the watcher of opt embed what it indexes when search
// models are configured, and answer the searches of every process on the
// workspace: they skip their scan while it vouches for the index. An error
// says why searches keep scanning.
func (app *App) vouchFor(ctx context.Context, opt *jobs.WatchOptions) (stop func(), err error) {
	ix, err := app.Index(ctx, false)
	if err != nil {
		return nil, err
	}
	if app.searchModelsSet() {
		opt.Indexed = func(ctx context.Context) {
			if n, err := ix.EmbedPending(ctx, nil); err != nil {
				opt.Report("embeddings: %v (keyword search still finds the notes)", err)
			} else if n > 0 {
				opt.Report("embedded %d chunk(s)", n)
			}
		}
	}
	srv, err := index.ServeWatch(ctx, ix.Workspace(), app.Log)
	if err != nil {
		return nil, err
	}
	opt.Vouch = srv.Ack
	return srv.Close, nil
}
