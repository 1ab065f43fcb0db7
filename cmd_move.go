package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"path"
	"slices"
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
	return `Every link to the old path is rewritten to the new one in the form it was
written: ReMe's full paths ([[daily/2026-06-20/x.md|x]]) stay full paths,
Obsidian's short links ([[x]], [[folder/x|x]]) stay as short as they can be while
only the new path matches, relative markdown links ([text](../x.md)) stay
relative, and links in frontmatter values follow too; embeds, #anchors and
|aliases are kept. Short
links that the new name would make ambiguous are lengthened so that they still
lead where they did; links that were ambiguous already are reported, not changed.
The files and the index are updated as one step: a move interrupted by a crash is
finished by the next reme command.
A note is not moved where search, daily_list and the day page would no longer
see it (a hidden name such as .draft.md, another suffix than .md, a folder
other than daily/ and digest/).`
}

func (c *moveCmd) Run(ctx context.Context, app *App) error {
	return app.emit(c.answer(ctx, app))
}

// moveAnswer is a finished move and the links it rewrote.
type moveAnswer index.MoveResult

func (m *moveAnswer) jsonValue() any { return (*index.MoveResult)(m) }

func (m *moveAnswer) text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Moved %s → %s\n", m.Src, m.Dst)
	if m.Retarget != nil {
		fmt.Fprintf(&b, "Retargeted %d link(s) in %d file(s)\n", m.Retarget.LinksChanged, m.Retarget.FilesTouched)
		for _, p := range sortedKeys(m.Retarget.ByFile) {
			fmt.Fprintf(&b, "  %s: %d\n", p, m.Retarget.ByFile[p])
		}
		writeLinkList(&b, "ambiguous link(s) may mean it and were left as they are", m.Retarget.Ambiguous)
		writeLinkList(&b, "link(s) to it could not be rewritten", m.Retarget.NotRetargeted)
	}
	return b.String()
}

func (c *moveCmd) answer(ctx context.Context, app *App) (*moveAnswer, error) {
	ix, err := app.Index(ctx, false)
	if err != nil {
		return nil, err
	}
	if err := checkMoveVisible(ix.Workspace(), c.SrcPath, c.DstPath); err != nil {
		return nil, usageError{err}
	}
	res, err := ix.Move(ctx, c.SrcPath, c.DstPath, index.MoveOptions{Overwrite: c.Overwrite, NoRetarget: !c.Retarget})
	if err != nil {
		return nil, pathArgError(err)
	}
	return (*moveAnswer)(res), nil
}

type deleteCmd struct {
	Path      string `arg:"" help:"Workspace path of the note (or folder, with --recursive) to delete."`
	Recursive bool   `short:"r" help:"Delete a folder and everything in it."`
}

func (deleteCmd) Help() string {
	return `Removes the file and reports every link that still points to it (in any form:
full paths, short links, markdown links, frontmatter values), and the ambiguous
short links that may have meant it, so that you can fix or remove them. The day
index of a deleted card is refreshed.`
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
		if res.Inbound.ByTarget == nil {
			for _, p := range sortedKeys(res.Inbound.ByFile) {
				fmt.Fprintf(app.Stdout, "  %s: %d\n", p, res.Inbound.ByFile[p])
			}
		}
		for _, target := range sortedKeys(res.Inbound.ByTarget) {
			fmt.Fprintf(app.Stdout, "  to %s:\n", target)
			from := res.Inbound.ByTarget[target]
			for _, p := range sortedKeys(from) {
				fmt.Fprintf(app.Stdout, "    %s: %d\n", p, from[p])
			}
		}
	}
	writeLinkList(app.Stdout, "ambiguous link(s) may have meant it", res.Inbound.Ambiguous)
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

func sortedKeys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}

// writeLinkList prints links as "  path:line [[written]] → where".
func writeLinkList(w io.Writer, title string, links []index.LinkInfo) {
	if len(links) == 0 {
		return
	}
	fmt.Fprintf(w, "%d %s:\n", len(links), title)
	for _, l := range links {
		fmt.Fprintf(w, "  %s\n", describeLink(l))
	}
}

// describeLink renders a link as its note and line, the link as written,
// and where it leads.
func describeLink(l index.LinkInfo) string {
	return fmt.Sprintf("%s:%d %s %s", l.From, l.Line, writtenLink(l), leadsTo(l))
}

func writtenLink(l index.LinkInfo) string {
	written := "[[" + l.Written + "]]"
	if l.Markdown {
		written = "(" + l.Written + ")"
	}
	if l.Field != "" {
		written = l.Field + ": " + written
	}
	return written
}

func leadsTo(l index.LinkInfo) string {
	switch l.Status {
	case "ambiguous":
		return "ambiguous: " + strings.Join(l.Candidates, ", ")
	case "missing":
		return "no such file"
	}
	return "→ " + l.Target
}

type linksCmd struct {
	Path      string `arg:"" optional:"" help:"A note: list its links and the links to it. Without it: the links that lead nowhere or to several files."`
	Ambiguous bool   `help:"Only ambiguous links."`
	Missing   bool   `help:"Only links to no file."`
}

func (linksCmd) Help() string {
	return `Links are read as Obsidian reads them: ReMe's full paths
([[daily/2026-06-20/x.md|x]]), short links ([[x]], [[folder/x|x]]: the one file
with that name or path ending, without regard to case, .md optional), relative
and absolute paths ([[./x]], [[/digest/x]]), markdown links to files
([text](../x.md), percent-encoded or in <angle brackets>), embeds, and wikilinks
in frontmatter values. A short link that several files match is ambiguous: it is
reported, never guessed.`
}

func (c *linksCmd) Run(ctx context.Context, app *App) error {
	ix, err := app.FreshIndex(ctx)
	if err != nil {
		return err
	}
	q := index.LinkQuery{Ambiguous: c.Ambiguous, Missing: c.Missing}
	if c.Path != "" {
		ws, err := app.Workspace(false)
		if err != nil {
			return err
		}
		if q.Path, err = ws.Rel(c.Path); err != nil {
			return err
		}
	}
	rep, err := ix.Links(ctx, q)
	if err != nil {
		return err
	}
	if app.Globals.JSON {
		return app.printJSON(rep)
	}
	if q.Path == "" {
		if len(rep.Problems) == 0 {
			fmt.Fprintln(app.Stdout, "Every link leads to one file.")
			return nil
		}
		for _, l := range rep.Problems {
			fmt.Fprintln(app.Stdout, describeLink(l))
		}
		return nil
	}
	fmt.Fprintf(app.Stdout, "outlinks (%d):\n", len(rep.Outlinks))
	for _, l := range rep.Outlinks {
		fmt.Fprintf(app.Stdout, "  line %d: %s %s\n", l.Line, writtenLink(l), leadsTo(l))
	}
	fmt.Fprintf(app.Stdout, "inlinks (%d):\n", len(rep.Inlinks))
	for _, l := range rep.Inlinks {
		line := fmt.Sprintf("  %s:%d %s", l.From, l.Line, writtenLink(l))
		if l.Status == "ambiguous" {
			line += " " + leadsTo(l)
		}
		fmt.Fprintln(app.Stdout, line)
	}
	return nil
}
