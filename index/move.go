package index

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/reme-dev/reme/store"
)

var (
	// ErrDestinationExists refuses to overwrite without being asked.
	ErrDestinationExists = errors.New("destination exists; pass --overwrite")
	// ErrSamePath refuses a move onto itself.
	ErrSamePath = errors.New("src_path and dst_path are the same")
	// ErrNeedsDirectory refuses a destination that is a bare name.
	ErrNeedsDirectory = errors.New("dst_path must be relative to the workspace with a directory component")
	// ErrIsDirectory is returned when a file operation gets a folder.
	ErrIsDirectory = errors.New("is a directory")
)

// MoveOptions control a move.
type MoveOptions struct {
	Overwrite  bool
	NoRetarget bool
	// Run, when set, journals the move as part of a larger run (maintain's
	// archiving); a crash then rolls the whole run back. Without it the move
	// is a run of its own, which a crash leaves for the next command to finish.
	Run *store.Run
	// Action is how the journal names the move: rename (default) or archive.
	Action string
	Why    store.Why
	// Edit, when set, changes the bytes written at the destination (an
	// archived note is marked as such).
	Edit func(raw []byte) ([]byte, error)
	// Fresh says the caller reconciled the index under the writer lock it
	// still holds, so the move need not scan the workspace again.
	Fresh bool
}

// Retarget reports the inbound links a move rewrote.
type Retarget struct {
	FilesTouched int            `json:"files_touched"`
	LinksChanged int            `json:"links_changed"`
	ByFile       map[string]int `json:"by_file"`
}

// MoveResult reports a move (ReMe's move metadata).
type MoveResult struct {
	Src        string    `json:"src_path"`
	Dst        string    `json:"dst_path"`
	Size       int64     `json:"size"`
	Retarget   *Retarget `json:"retarget"`
	SrcRemoved bool      `json:"src_removed"`
}

// movePlan is what the next command needs to finish a move that a crash
// interrupted; it is the plan of the move's journal run. Every step after
// it is idempotent, so recovery runs the remaining steps again.
type movePlan struct {
	Src       string   `json:"src"`
	Dst       string   `json:"dst"`
	Retarget  bool     `json:"retarget"`
	Overwrite bool     `json:"overwrite,omitempty"`
	Inbound   []string `json:"inbound"`
}

// legacyJournalPath is the intent file of earlier versions, read once and
// carried over into the journal.
func (ix *Index) legacyJournalPath() string { return ix.ws.MetadataPath("move.journal.json") }

func (ix *Index) fault(step string) error {
	if ix.opt.Fault == nil {
		return nil
	}
	return ix.opt.Fault(step)
}

// Move renames a file and rewrites every inbound [[link]] to it (exact
// full-path matches only; `!`, #anchor and |alias kept). The inbound notes
// come from one query on the links table; the index is updated before it
// returns. The whole move runs under the workspace writer lock and is
// journaled with its plan first, so a crash at any point is completed by
// the next command, and `reme undo` reverses it.
func (ix *Index) Move(ctx context.Context, src, dst string, opt MoveOptions) (*MoveResult, error) {
	var err error
	if src, err = ix.ws.Rel(src); err != nil {
		return nil, err
	}
	if !strings.Contains(strings.TrimSpace(dst), "/") {
		return nil, ErrNeedsDirectory
	}
	if dst, err = ix.ws.Rel(dst); err != nil {
		return nil, err
	}
	if src == dst {
		return nil, ErrSamePath
	}
	if err := store.ValidateLinkTarget(dst); err != nil {
		return nil, err
	}
	var res *MoveResult
	err = ix.Locked(ctx, func() error {
		fi, err := os.Lstat(ix.ws.Abs(src))
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("%s: %w", src, store.ErrNotFound)
			}
			return fmt.Errorf("move %s: %w", src, err)
		}
		if fi.IsDir() {
			return fmt.Errorf("move %s: %w (moving folders is not supported)", src, ErrIsDirectory)
		}
		if !fi.Mode().IsRegular() {
			return fmt.Errorf("move %s: not a regular file", src)
		}
		if dfi, err := os.Lstat(ix.ws.Abs(dst)); err == nil {
			if dfi.IsDir() {
				return fmt.Errorf("move to %s: %w", dst, ErrIsDirectory)
			}
			if !opt.Overwrite {
				return fmt.Errorf("%s: %w", dst, ErrDestinationExists)
			}
		}
		// The links table must describe the files as they are now.
		if !opt.Fresh || ix.lockDepth == 0 {
			if _, err := ix.Sync(ctx); err != nil {
				return err
			}
		}
		p := &movePlan{Src: src, Dst: dst, Retarget: !opt.NoRetarget, Overwrite: opt.Overwrite}
		if p.Retarget {
			if p.Inbound, err = ix.inboundSources(ctx, src); err != nil {
				return err
			}
		}
		run := opt.Run
		if run == nil {
			b, err := json.Marshal(p)
			if err != nil {
				return err
			}
			if run, err = ix.journal.Begin(store.RunInfo{Command: "move", Trigger: ix.opt.Trigger, Plan: b}); err != nil {
				return fmt.Errorf("journal move: %w", err)
			}
		}
		if err = run.Fault("journal-written"); err == nil {
			res, err = ix.runMove(ctx, run, p, opt)
		}
		if opt.Run == nil {
			if eerr := run.End(err); err == nil && eerr != nil {
				err = fmt.Errorf("journal move: %w", eerr)
			}
		}
		if err == nil {
			res.Size = fi.Size()
		}
		return err
	})
	return res, err
}

// inboundSources lists the notes that link to target, excluding itself.
func (ix *Index) inboundSources(ctx context.Context, target string) ([]string, error) {
	rows, err := ix.db.QueryContext(ctx, `SELECT DISTINCT n.path FROM links l JOIN notes n ON n.id = l.note_id
		WHERE l.target = ? AND n.path != ? ORDER BY n.path`, target, target)
	if err != nil {
		return nil, fmt.Errorf("find inbound links: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var p string
		if err := rows.Scan(&p); err != nil {
			return nil, fmt.Errorf("find inbound links: %w", err)
		}
		out = append(out, p)
	}
	return out, rows.Err()
}

// errInapplicable marks a move that recovery cannot carry out.
var errInapplicable = errors.New("cannot be applied")

// runMove performs (or finishes) the steps of a move through the journal:
// the copy at dst and removal of src, inbound links, day indexes, the
// index. Each step can be repeated safely.
func (ix *Index) runMove(ctx context.Context, run *store.Run, p *movePlan, opt MoveOptions) (*MoveResult, error) {
	res := &MoveResult{Src: p.Src, Dst: p.Dst}
	if p.Retarget {
		res.Retarget = &Retarget{ByFile: map[string]int{}}
	}
	action := opt.Action
	if action == "" {
		action = store.ActionRename
	}
	why := opt.Why
	raw, err := os.ReadFile(ix.ws.Abs(p.Src))
	switch {
	case err == nil:
		if opt.Edit != nil {
			if raw, err = opt.Edit(raw); err != nil {
				return nil, fmt.Errorf("move %s: %w", p.Src, err)
			}
		}
		if p.Retarget && strings.HasSuffix(p.Src, ".md") {
			// links from the note to itself follow it
			if nb, n, err := retargetNote(p.Src, raw, p.Src, p.Dst); err != nil {
				return nil, err
			} else if n > 0 {
				raw = nb
			}
		}
		// A copy left at dst by a crash is replaced (its bytes are kept in
		// the journal like any other).
		overwrite := p.Overwrite || ix.ws.Exists(p.Dst) && opt.Run == nil
		if err := run.Rename(p.Src, p.Dst, raw, action, overwrite, why); err != nil {
			return nil, err
		}
	case errors.Is(err, fs.ErrNotExist):
		if !ix.ws.Exists(p.Dst) {
			return nil, fmt.Errorf("move %s: %w: neither the source nor the destination exists", p.Src, errInapplicable)
		}
		// the move was made before the crash
	default:
		return nil, fmt.Errorf("move %s: %w", p.Src, err)
	}
	if err := run.Fault("dst-written"); err != nil {
		return nil, err
	}
	for i, in := range p.Inbound {
		n, err := ix.retargetFile(run, in, p.Src, p.Dst, why)
		if err != nil {
			return nil, err
		}
		if n > 0 {
			res.Retarget.FilesTouched++
			res.Retarget.LinksChanged += n
			res.Retarget.ByFile[in] = n
		}
		if err := run.Fault(fmt.Sprintf("inbound-%d-written", i)); err != nil {
			return nil, err
		}
	}
	res.SrcRemoved = true
	if err := run.Fault("src-removed"); err != nil {
		return nil, err
	}
	touched := append([]string{p.Src, p.Dst}, p.Inbound...)
	for _, d := range uniqueDates(p.Src, p.Dst) {
		r, err := run.RefreshDayIndex(d)
		if err != nil {
			return nil, err
		}
		if r.Changed {
			touched = append(touched, r.Path)
		}
	}
	if err := ix.UpdatePaths(ctx, touched...); err != nil {
		return nil, err
	}
	if err := run.Fault("index-updated"); err != nil {
		return nil, err
	}
	return res, nil
}

// cardDate returns the date of a card directly under daily/<date>/.
func cardDate(rel string) string {
	parts := strings.Split(rel, "/")
	if len(parts) == 3 && parts[0] == store.DailyDir && store.IsDate(parts[1]) && strings.HasSuffix(parts[2], ".md") {
		return parts[1]
	}
	return ""
}

func uniqueDates(paths ...string) []string {
	var out []string
	for _, p := range paths {
		if d := cardDate(p); d != "" && !contains(out, d) {
			out = append(out, d)
		}
	}
	return out
}

func contains(xs []string, x string) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

// retargetFile rewrites links src→dst in one note; it returns the count.
func (ix *Index) retargetFile(run *store.Run, rel, src, dst string, why store.Why) (int, error) {
	raw, err := os.ReadFile(ix.ws.Abs(rel))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return 0, nil // removed since: nothing to rewrite
		}
		return 0, fmt.Errorf("retarget %s: %w", rel, err)
	}
	out, n, err := retargetNote(rel, raw, src, dst)
	if err != nil || n == 0 {
		return 0, err
	}
	why.Reason = "link to " + src + " retargeted to " + dst
	if err := run.WriteFile(rel, out, why); err != nil {
		return 0, err
	}
	return n, nil
}

// retargetNote rewrites the body only; the header (even one whose YAML does
// not parse) is kept byte for byte.
func retargetNote(rel string, raw []byte, src, dst string) ([]byte, int, error) {
	n := store.ParseNote(rel, raw)
	body, count := store.RetargetLinks(n.Body, src, dst)
	if count == 0 {
		return raw, 0, nil
	}
	n.Body = body
	out, err := n.Bytes()
	if err != nil {
		return nil, 0, fmt.Errorf("retarget %s: %w", rel, err)
	}
	return out, count, nil
}

// checkPlan applies the workspace path rules to a plan read back from the
// journal: it is input like any other.
func (ix *Index) checkPlan(p *movePlan) error {
	if p.Src == "" || p.Dst == "" {
		return errors.New("move plan without a source or destination")
	}
	for _, q := range append([]string{p.Src, p.Dst}, p.Inbound...) {
		rel, err := ix.ws.Rel(q)
		if err != nil {
			return err
		}
		if rel != q || strings.HasPrefix(rel, store.MetadataDir+"/") {
			return fmt.Errorf("%w: %q", store.ErrInvalidPath, q)
		}
	}
	if p.Src == p.Dst {
		return ErrSamePath
	}
	return nil
}

// recover settles what crashed commands left: a move is finished, any
// other run is rolled back. Recovery always makes progress: a run that
// cannot be settled is set aside with a warning naming it, and the command
// goes on.
func (ix *Index) recover(ctx context.Context) {
	if err := ix.recoverLegacyMove(ctx); err != nil {
		ix.log.Warn("could not finish an interrupted move", "error", err)
	}
	orphans, err := ix.journal.Orphans()
	if err != nil {
		ix.log.Warn("could not read the journal", "error", err)
	}
	for _, o := range orphans {
		err := ix.Locked(ctx, func() error { return ix.settle(ctx, o) })
		if err != nil {
			ix.log.Warn("could not settle an interrupted run", "run", o.Run.ID, "command", o.Summary.Command, "error", err)
		}
	}
}

// settle finishes or rolls back one orphaned run.
func (ix *Index) settle(ctx context.Context, o *store.Orphan) error {
	if o.Summary.Command == "move" && len(o.Summary.Plan) > 0 {
		var p movePlan
		err := json.Unmarshal(o.Summary.Plan, &p)
		if err == nil {
			err = ix.checkPlan(&p)
		}
		if err != nil {
			o.Abandon(fmt.Errorf("unusable move plan: %w", err))
			return fmt.Errorf("set aside run %s: unusable move plan: %w", o.Run.ID, err)
		}
		ix.log.Warn("finishing an interrupted move", "run", o.Run.ID, "src", p.Src, "dst", p.Dst)
		if _, err := ix.runMove(ctx, o.Run, &p, MoveOptions{}); err != nil {
			if o.Run.Err() == nil && !errors.Is(err, errInapplicable) {
				o.Release() // a passing problem (a busy disk): try again next time
				return err
			}
			o.Abandon(err)
			return fmt.Errorf("set aside run %s: %w", o.Run.ID, err)
		}
		return o.Finish()
	}
	ix.log.Warn("rolling back an interrupted run", "run", o.Run.ID, "command", o.Summary.Command)
	paths, err := o.Rollback()
	if uerr := ix.UpdatePaths(ctx, paths...); err == nil {
		err = uerr
	}
	return err
}

// recoverLegacyMove carries an earlier version's move.journal.json over
// into the journal and finishes it. A journal that cannot be applied
// (unreadable, paths outside the workspace, both files gone) is moved
// aside under metadata/ with a warning naming it.
func (ix *Index) recoverLegacyMove(ctx context.Context) error {
	if _, err := os.Stat(ix.legacyJournalPath()); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return ix.Locked(ctx, func() error {
		b, err := os.ReadFile(ix.legacyJournalPath())
		if errors.Is(err, fs.ErrNotExist) {
			return nil // another process finished it
		}
		if err != nil {
			return fmt.Errorf("read move journal: %w", err)
		}
		var p movePlan
		err = json.Unmarshal(b, &p)
		if err == nil {
			err = ix.checkPlan(&p)
		}
		if err == nil && !ix.ws.Exists(p.Src) && !ix.ws.Exists(p.Dst) {
			err = errors.New("neither the source nor the destination exists")
		}
		if err != nil {
			return ix.setAsideLegacy(err)
		}
		ix.log.Warn("finishing an interrupted move", "src", p.Src, "dst", p.Dst)
		plan, _ := json.Marshal(&p)
		run, err := ix.journal.Begin(store.RunInfo{Command: "move", Trigger: ix.opt.Trigger, Plan: plan})
		if err != nil {
			return err
		}
		_, err = ix.runMove(ctx, run, &p, MoveOptions{})
		if eerr := run.End(err); err == nil {
			err = eerr
		}
		if err != nil {
			return ix.setAsideLegacy(err)
		}
		if err := os.Remove(ix.legacyJournalPath()); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("remove move journal: %w", err)
		}
		return nil
	})
}

func (ix *Index) setAsideLegacy(cause error) error {
	aside := fmt.Sprintf("%s.inapplicable-%s", ix.legacyJournalPath(), ix.journalNow().UTC().Format("20060102T150405Z"))
	if err := os.Rename(ix.legacyJournalPath(), aside); err != nil {
		return fmt.Errorf("set aside move journal: %w", err)
	}
	ix.log.Warn("set aside a move journal that cannot be applied", "path", aside, "error", cause)
	return nil
}

// InboundReport lists links that still point at a removed path.
type InboundReport struct {
	FilesTouched int            `json:"files_touched"`
	LinksTotal   int            `json:"links_total"`
	ByFile       map[string]int `json:"by_file"`
}

// DeleteResult reports a delete.
type DeleteResult struct {
	Path     string                  `json:"path"`
	Files    []string                `json:"files"`
	Inbound  InboundReport           `json:"inbound"`
	DayIndex []*store.DayIndexResult `json:"day_index,omitempty"`
}

// Delete removes a file (or, with recursive, a folder) and reports the links
// that still point at what was removed. Day index pages of removed cards are
// refreshed. The removal is journaled, so `reme undo` brings the files back.
func (ix *Index) Delete(ctx context.Context, rel string, recursive bool) (*DeleteResult, error) {
	rel, err := ix.ws.Rel(rel)
	if err != nil {
		return nil, err
	}
	res := &DeleteResult{Path: rel, Inbound: InboundReport{ByFile: map[string]int{}}}
	err = ix.Locked(ctx, func() error {
		fi, err := os.Lstat(ix.ws.Abs(rel))
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("%s: %w", rel, store.ErrNotFound)
			}
			return fmt.Errorf("delete %s: %w", rel, err)
		}
		// The links table must describe the files as they are now.
		if _, err := ix.Sync(ctx); err != nil {
			return err
		}
		if fi.IsDir() {
			if !recursive {
				return fmt.Errorf("delete %s: %w; pass --recursive to delete it and everything in it", rel, ErrIsDirectory)
			}
			if err := ix.walkFiles(rel, &res.Files); err != nil {
				return err
			}
		} else {
			res.Files = []string{rel}
		}
		run, err := ix.journal.Begin(store.RunInfo{Command: "delete", Trigger: ix.opt.Trigger})
		if err != nil {
			return fmt.Errorf("journal delete: %w", err)
		}
		err = ix.deleteFiles(ctx, run, rel, fi.IsDir(), res)
		if eerr := run.End(err); err == nil && eerr != nil {
			err = fmt.Errorf("journal delete: %w", eerr)
		}
		if err != nil {
			return err
		}
		return ix.countInbound(ctx, rel, res)
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

func (ix *Index) deleteFiles(ctx context.Context, run *store.Run, rel string, dir bool, res *DeleteResult) error {
	why := store.Why{Reason: "reme delete " + rel}
	for _, f := range res.Files {
		if err := run.Remove(f, why); err != nil {
			return err
		}
	}
	if dir {
		// what is left is empty folders (or files the journal may not
		// hold, such as symlinks, which the walk skipped)
		if err := os.RemoveAll(ix.ws.Abs(rel)); err != nil {
			return fmt.Errorf("delete %s: %w", rel, err)
		}
	}
	touched := append([]string{}, res.Files...)
	for _, d := range uniqueDates(res.Files...) {
		r, err := run.RefreshDayIndex(d)
		if err != nil {
			return err
		}
		res.DayIndex = append(res.DayIndex, r)
		if r.Changed {
			touched = append(touched, r.Path)
		}
	}
	return ix.UpdatePaths(ctx, touched...)
}

func (ix *Index) walkFiles(dir string, out *[]string) error {
	return fsWalk(ix.ws.Abs(dir), func(rel string) {
		*out = append(*out, path.Join(dir, rel))
	})
}

// countInbound counts links to the removed paths from notes outside them.
func (ix *Index) countInbound(ctx context.Context, rel string, res *DeleteResult) error {
	rows, err := ix.db.QueryContext(ctx, `SELECT n.path, count(*) FROM links l JOIN notes n ON n.id = l.note_id
		WHERE (l.target = ? OR l.target LIKE ? ESCAPE '\') AND n.path != ? AND n.path NOT LIKE ? ESCAPE '\'
		GROUP BY n.path ORDER BY n.path`, rel, likePrefix(rel+"/"), rel, likePrefix(rel+"/"))
	if err != nil {
		return fmt.Errorf("count inbound links: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var p string
		var n int
		if err := rows.Scan(&p, &n); err != nil {
			return fmt.Errorf("count inbound links: %w", err)
		}
		res.Inbound.ByFile[p] = n
		res.Inbound.FilesTouched++
		res.Inbound.LinksTotal += n
	}
	sort.Strings(res.Files)
	return rows.Err()
}

// fsWalk calls fn with the slash-separated path, relative to root, of every
// regular file under root.
func fsWalk(root string, fn func(rel string)) error {
	return filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			rel, err := filepath.Rel(root, p)
			if err != nil {
				return err
			}
			fn(filepath.ToSlash(rel))
		}
		return nil
	})
}
