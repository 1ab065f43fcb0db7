package main

import (
	"context"
	"fmt"
	"runtime/debug"
	"time"

	"github.com/reme-dev/reme/index"
)

type reindexCmd struct {
	Scope string `enum:"all,bm25,tag,embedding" default:"all" help:"ReMe's index scopes: all, bm25 and tag rebuild the one index reme keeps (text, links and tags together); embedding has nothing to rebuild without an embedding model."`
}

func (reindexCmd) Help() string {
	return `Throws the index content away and indexes every note under daily/ and digest/
again. Prints a line for every file that failed or was skipped, and a total.
Raw resources and session files are never indexed for search.`
}

func (c reindexCmd) Run(ctx context.Context, app *App) error {
	if c.Scope == "embedding" {
		msg := "No embedding index is configured: nothing to rebuild."
		if app.searchModelsSet() {
			// Embedding is this command's whole work: a model that fails
			// fails it, unlike the pass after a rebuild (embedAfter, which
			// then finds nothing pending).
			ix, err := app.Index(ctx, false)
			if err != nil {
				return err
			}
			n, err := app.embedPending(ctx, ix)
			if err != nil {
				return err
			}
			msg = fmt.Sprintf("Computed embeddings for %d chunk(s); every chunk has one now.", n)
		}
		if app.Globals.JSON {
			return app.printJSON([]index.FileResult{})
		}
		fmt.Fprintln(app.Stdout, msg)
		return nil
	}
	// A rebuild makes garbage for minutes: collect it sooner than a
	// short-lived command does, and keep the heap well under the limit
	// (SQLite's page cache and FTS5's table come on top of it).
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(160 << 20))
	ix, err := app.Index(ctx, true)
	if err != nil {
		return err
	}
	rep, err := ix.Rebuild(ctx, app.progress("reindex", "notes"))
	if err != nil {
		return err
	}
	failed, skipped := 0, 0
	for _, p := range rep.Problems {
		if p.Success {
			skipped++
		} else {
			failed++
		}
	}
	if app.Globals.JSON {
		return app.printJSON(reindexJSON(rep))
	}
	for _, p := range rep.Problems {
		if p.Success {
			fmt.Fprintf(app.Stdout, "skipped %s: %s\n", p.Path, p.Reason)
		} else {
			fmt.Fprintf(app.Stdout, "failed %s: %s\n", p.Path, p.Error)
		}
	}
	fmt.Fprintf(app.Stdout, "Reindexed %d note(s) in %s: %d failed, %d skipped.\n",
		rep.Indexed, rep.Elapsed.Round(time.Millisecond), failed, skipped)
	if failed > 0 {
		return fmt.Errorf("%d file(s) could not be indexed", failed)
	}
	return nil
}

// reindexJSON is ReMe's answer shape: one result per file.
func reindexJSON(rep *index.SyncReport) any {
	if rep.Files == nil {
		return []index.FileResult{}
	}
	return rep.Files
}
