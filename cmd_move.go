package main

import (
	"context"
	"fmt"
	"sort"

	"github.com/reme-dev/reme/index"
)

type moveCmd struct {
	SrcPath    string `arg:"" name:"src_path" help:"Workspace path of the note to move."`
	DstPath    string `arg:"" name:"dst_path" help:"New workspace path (with its folder, e.g. daily/2026-06-20/new-name.md)."`
	Overwrite  bool   `help:"Replace an existing destination."`
	NoRetarget bool   `name:"no-retarget" help:"Leave inbound links pointing at the old path."`
}

func (moveCmd) Help() string {
	return `Every [[link]] to the old path (exact full-path matches; embeds, #anchors and
|aliases kept) is rewritten to the new one, and the index is updated, as one
step: a move interrupted by a crash is finished by the next reme command.`
}

func (c *moveCmd) Run(ctx context.Context, app *App) error {
	ix, err := app.Index(ctx, false)
	if err != nil {
		return err
	}
	res, err := ix.Move(ctx, c.SrcPath, c.DstPath, index.MoveOptions{Overwrite: c.Overwrite, NoRetarget: c.NoRetarget})
	if err != nil {
		return err
	}
	if app.Globals.JSON {
		return app.printJSON(res)
	}
	fmt.Fprintf(app.Stdout, "Moved %s → %s\n", res.Src, res.Dst)
	if res.Retarget != nil {
		fmt.Fprintf(app.Stdout, "Retargeted %d link(s) in %d file(s)\n", res.Retarget.LinksChanged, res.Retarget.FilesTouched)
		for _, p := range sortedKeys(res.Retarget.ByFile) {
			fmt.Fprintf(app.Stdout, "  %s: %d\n", p, res.Retarget.ByFile[p])
		}
	}
	return nil
}

type deleteCmd struct {
	Path      string `arg:"" help:"Workspace path of the note (or folder, with --recursive) to delete."`
	Recursive bool   `short:"r" help:"Delete a folder and everything in it."`
}

func (deleteCmd) Help() string {
	return `Removes the file and reports every link that still points to it, so that you
can fix or remove them. The day index of a deleted card is refreshed.`
}

func (c *deleteCmd) Run(ctx context.Context, app *App) error {
	ix, err := app.Index(ctx, false)
	if err != nil {
		return err
	}
	res, err := ix.Delete(ctx, c.Path, c.Recursive)
	if err != nil {
		return err
	}
	if app.Globals.JSON {
		return app.printJSON(res)
	}
	if len(res.Files) == 1 && res.Files[0] == res.Path {
		fmt.Fprintf(app.Stdout, "Deleted %s\n", res.Path)
	} else {
		fmt.Fprintf(app.Stdout, "Deleted directory %s (%d file(s))\n", res.Path, len(res.Files))
	}
	if res.Inbound.LinksTotal > 0 {
		fmt.Fprintf(app.Stdout, "%d link(s) in %d file(s) still point to it:\n", res.Inbound.LinksTotal, res.Inbound.FilesTouched)
		for _, p := range sortedKeys(res.Inbound.ByFile) {
			fmt.Fprintf(app.Stdout, "  %s: %d\n", p, res.Inbound.ByFile[p])
		}
	}
	return nil
}

func sortedKeys(m map[string]int) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
