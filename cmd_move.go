package main

import (
	"context"
	"errors"
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/reme-dev/reme/index"
	"github.com/reme-dev/reme/store"
)

type moveCmd struct {
	SrcPath   string `arg:"" name:"src_path" help:"Workspace path of the note to move."`
	DstPath   string `arg:"" name:"dst_path" help:"New workspace path (with its folder, e.g. daily/2026-06-20/new-name.md)."`
	Overwrite bool   `help:"Replace an existing destination."`
	Retarget  bool   `default:"true" negatable:"" help:"Rewrite the links to the note (--no-retarget, or ReMe's retarget=false, leaves them pointing at the old path)."`
}

func (moveCmd) Help() string {
	return `Every [[link]] to the old path (exact full-path matches; embeds, #anchors and
|aliases kept) is rewritten to the new one, and the index is updated, as one
step: a move interrupted by a crash is finished by the next reme command.
A note is not moved where search, daily_list and the day page would no longer
see it (a hidden name such as .draft.md, another suffix than .md, a folder
other than daily/ and digest/).`
}

func (c *moveCmd) Run(ctx context.Context, app *App) error {
	ix, err := app.Index(ctx, false)
	if err != nil {
		return err
	}
	if err := checkMoveVisible(ix.Workspace(), c.SrcPath, c.DstPath); err != nil {
		return usageError{err}
	}
	res, err := ix.Move(ctx, c.SrcPath, c.DstPath, index.MoveOptions{Overwrite: c.Overwrite, NoRetarget: !c.Retarget})
	if err != nil {
		return pathArgError(err)
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
		return pathArgError(err)
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

// pathArgError makes a path argument that breaks the path rules (or a
// move onto itself or to a bare name) a usage error, like any other bad
// argument; what the workspace holds (not found, exists) stays an error.
func pathArgError(err error) error {
	for _, e := range []error{store.ErrInvalidPath, store.ErrOutsideWorkspace, index.ErrSamePath, index.ErrNeedsDirectory} {
		if errors.Is(err, e) {
			return usageError{err}
		}
	}
	return err
}

// noteRoots are the folders the index reads notes from.
var noteRoots = []string{store.DailyDir, store.DigestDir}

// checkMoveVisible refuses to move a note the index sees to a path it
// would not see: the note would silently vanish from search, daily_list
// and the day page. Paths that do not validate are left to the move, which
// reports them.
func checkMoveVisible(ws *store.Workspace, src, dst string) error {
	s, err := ws.Rel(src)
	if err != nil || !store.IsNotePath(s, noteRoots) {
		return nil
	}
	if !strings.Contains(dst, "/") {
		return nil // a bare name: the move says what it needs
	}
	d, err := ws.Rel(dst)
	if err != nil || store.IsNotePath(d, noteRoots) {
		return nil
	}
	why := ""
	for _, part := range strings.Split(d, "/") {
		if strings.HasPrefix(part, ".") {
			why = fmt.Sprintf("%q starts with a dot, and hidden files and folders are not indexed", part)
			break
		}
	}
	switch {
	case why != "":
	case path.Ext(d) != ".md":
		why = "only .md files are notes"
	default:
		why = "only notes under daily/ and digest/ are indexed"
	}
	return fmt.Errorf("not moving %s to %s: %s, so the note would disappear from search, daily_list and the day page", s, d, why)
}

func sortedKeys(m map[string]int) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
