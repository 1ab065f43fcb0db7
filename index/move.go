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
	"time"

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
	// archiving, a job's card rename); a crash then rolls the whole run
	// back. Without it the move is a run of its own, with its plan, which a
	// crash leaves for the next command to finish.
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

// Retarget reports the links a move rewrote.
type Retarget struct {
	FilesTouched int            `json:"files_touched"`
	LinksChanged int            `json:"links_changed"`
	ByFile       map[string]int `json:"by_file"`
	// Ambiguous links may mean the moved file, or another with its name:
	// they are reported and left as they are.
	Ambiguous []LinkInfo `json:"ambiguous"`
	// NotRetargeted links led to the moved file but no target in their
	// form leads to its new path.
	NotRetargeted []LinkInfo `json:"not_retargeted,omitempty"`
}

// MoveResult reports a move (ReMe's move metadata).
type MoveResult struct {
	Src        string    `json:"src_path"`
	Dst        string    `json:"dst_path"`
	Size       int64     `json:"size"`
	Retarget   *Retarget `json:"retarget"`
	SrcRemoved bool      `json:"src_removed"`
}

// moveJournal is the plan of a move's journal run: what the next command
// needs to finish a move that a crash interrupted. Every step after it is
// idempotent, so recovery runs the remaining steps again. (It is also the
// format of an earlier version's metadata/move.journal.json.)
type moveJournal struct {
	Src       string `json:"src"`
	Dst       string `json:"dst"`
	Retarget  bool   `json:"retarget"`
	Overwrite bool   `json:"overwrite,omitempty"`
	// Inbound are the files whose links the move rewrites, with the edits
	// planned for each (the moved file's own are under Src) and the hash of
	// each file before them, so that a file already rewritten is not
	// rewritten twice.
	Inbound []string              `json:"inbound"`
	Edits   map[string][]linkEdit `json:"edits,omitempty"`
	Before  map[string]string     `json:"before,omitempty"`
	Started time.Time             `json:"started"`
}

// linkEdit replaces a link target as written in a file.
type linkEdit struct {
	Markdown bool   `json:"markdown,omitempty"`
	From     string `json:"from"`
	To       string `json:"to"`
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
		j := &moveJournal{Src: src, Dst: dst, Retarget: !opt.NoRetarget, Overwrite: opt.Overwrite, Started: ix.journalNow().UTC()}
		var plan *Retarget
		if j.Retarget {
			if plan, err = ix.planMove(ctx, j); err != nil {
				return err
			}
		}
		run := opt.Run
		if run == nil {
			b, err := json.Marshal(j)
			if err != nil {
				return err
			}
			if run, err = ix.journal.Begin(store.RunInfo{Command: "move", Trigger: ix.opt.Trigger, Plan: b}); err != nil {
				return fmt.Errorf("journal move: %w", err)
			}
		}
		if err = run.Fault("journal-written"); err == nil {
			res, err = ix.runMove(ctx, run, j, opt)
		}
		if opt.Run == nil {
			if eerr := run.End(err); err == nil && eerr != nil {
				err = fmt.Errorf("journal move: %w", eerr)
			}
		}
		if err == nil {
			res.Size = fi.Size()
			if plan != nil {
				res.Retarget.Ambiguous, res.Retarget.NotRetargeted = plan.Ambiguous, plan.NotRetargeted
			}
		}
		return err
	})
	return res, err
}

// planMove decides, before anything changes, which links the move must
// rewrite so that every link that led to src leads to dst, and every other
// link still leads where it did (the moved note's own relative links; short
// links that dst's name would make ambiguous). Each keeps its form. The
// edits go into the journal.
func (ix *Index) planMove(ctx context.Context, j *moveJournal) (*Retarget, error) {
	rep := &Retarget{Ambiguous: []LinkInfo{}}
	pre := ix.newLinkFiles(ctx, ix.db, true)
	post := ix.newLinkFiles(ctx, ix.db, true)
	post.pretend(j.Src, false)
	post.pretend(j.Dst, true)
	// the notes that may hold such links: links found to src, and links by
	// src's or dst's name
	to, arg, err := leadingTo(ctx, ix.db, j.Src)
	if err != nil {
		return nil, err
	}
	rows, err := ix.db.QueryContext(ctx, `SELECT DISTINCT n.path FROM links l JOIN notes n ON n.id = l.note_id
		WHERE `+to+` OR l.name IN (?, ?) ORDER BY n.path`, arg, store.LinkName(j.Src), store.LinkName(j.Dst))
	if err != nil {
		return nil, fmt.Errorf("find inbound links: %w", err)
	}
	var files []string
	for rows.Next() {
		var p string
		if err := rows.Scan(&p); err != nil {
			rows.Close()
			return nil, fmt.Errorf("find inbound links: %w", err)
		}
		files = append(files, p)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("find inbound links: %w", err)
	}
	if strings.HasSuffix(j.Src, ".md") && !contains(files, j.Src) {
		files = append(files, j.Src)
	}
	j.Edits, j.Before = map[string][]linkEdit{}, map[string]string{}
	for _, from := range files {
		raw, err := os.ReadFile(ix.ws.Abs(from))
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			return nil, fmt.Errorf("read %s: %w", from, err)
		}
		links := noteLinks(store.ParseNote(from, raw))
		at := from
		if from == j.Src {
			at = j.Dst
		}
		var edits []linkEdit
		var edited []LinkInfo
		wants := make([]string, len(links))
		for i, l := range links {
			was := store.ResolveLink(from, l.Link, pre)
			info := LinkInfo{From: from, Line: l.Line, Field: l.field, Written: l.Target, Markdown: l.Markdown, Embed: l.Embed,
				Anchor: l.Anchor, Status: string(was.Status), Target: was.Path, Candidates: was.Candidates}
			if was.Status == store.LinkAmbiguous && contains(was.Candidates, j.Src) {
				rep.Ambiguous = append(rep.Ambiguous, info)
				continue
			}
			if !was.Status.Resolves() {
				continue
			}
			want := was.Path
			if want == j.Src {
				want = j.Dst
			}
			wants[i] = want
			if now := store.ResolveLink(at, l.Link, post); now.Status.Resolves() && now.Path == want {
				continue
			}
			text, ok := store.LinkTextFor(at, l.Link, was, want, post)
			if !ok {
				rep.NotRetargeted = append(rep.NotRetargeted, info)
				continue
			}
			if l.Markdown {
				text = store.EncodeMarkdownDest(text, l.Angle, l.written)
			}
			edited = append(edited, info)
			e := linkEdit{Markdown: l.Markdown, From: l.written, To: text}
			if !containsEdit(edits, e) {
				edits = append(edits, e)
			}
		}
		if len(edits) > 0 && !editsHold(at, raw, edits, wants, post) {
			// a rewrite that would change how the note reads (a markdown
			// destination whose parentheses balance across its #anchor):
			// leave the file as it is and say so
			rep.NotRetargeted = append(rep.NotRetargeted, edited...)
			edits = nil
		}
		if len(edits) == 0 {
			continue
		}
		j.Edits[from] = edits
		j.Before[from] = store.Sum(raw)
		if from != j.Src {
			j.Inbound = append(j.Inbound, from)
		}
	}
	return rep, nil
}

// foundLink is a link of a note with the text its target is written as.
type foundLink struct {
	store.Link
	written, field string
}

// noteLinks lists a note's links as the index does: the body's, then the
// frontmatter's.
func noteLinks(n *store.Note) []foundLink {
	var links []foundLink
	for _, l := range store.ParseNoteLinks(n.Body, n.BodyLine) {
		links = append(links, foundLink{l, n.Body[l.TargetStart:l.TargetEnd], ""})
	}
	if n.FMErr == nil {
		for _, l := range n.FrontmatterLinks() {
			links = append(links, foundLink{l.Link, l.Target, l.Key})
		}
	}
	return links
}

// editsHold checks a planned rewrite on the file's bytes: the note keeps
// the same links, and each that led somewhere leads where it should.
func editsHold(at string, raw []byte, edits []linkEdit, wants []string, files store.LinkFiles) bool {
	out, _, err := applyEdits(at, raw, edits)
	if err != nil {
		return false
	}
	after := noteLinks(store.ParseNote(at, out))
	if len(after) != len(wants) {
		return false
	}
	for i, want := range wants {
		if want == "" {
			continue
		}
		if r := store.ResolveLink(at, after[i].Link, files); !r.Status.Resolves() || r.Path != want {
			return false
		}
	}
	return true
}

func containsEdit(es []linkEdit, e linkEdit) bool {
	for _, x := range es {
		if x.Markdown == e.Markdown && x.From == e.From {
			return true
		}
	}
	return false
}

// inboundSources lists the notes that link to target, excluding itself.
func (ix *Index) inboundSources(ctx context.Context, target string) ([]string, error) {
	to, arg, err := leadingTo(ctx, ix.db, target)
	if err != nil {
		return nil, err
	}
	rows, err := ix.db.QueryContext(ctx, `SELECT DISTINCT n.path FROM links l JOIN notes n ON n.id = l.note_id
		WHERE `+to+` AND n.path != ? ORDER BY n.path`, arg, target)
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

// runMove performs (or finishes) the steps of a move through the journal
// run: the copy at dst and removal of src, the planned link edits, day
// indexes, the index. Each step can be repeated safely.
func (ix *Index) runMove(ctx context.Context, run *store.Run, j *moveJournal, opt MoveOptions) (*MoveResult, error) {
	res := &MoveResult{Src: j.Src, Dst: j.Dst}
	if j.Retarget {
		res.Retarget = &Retarget{ByFile: map[string]int{}}
	}
	action := opt.Action
	if action == "" {
		action = store.ActionRename
	}
	raw, err := os.ReadFile(ix.ws.Abs(j.Src))
	switch {
	case err == nil:
		if opt.Edit != nil {
			if raw, err = opt.Edit(raw); err != nil {
				return nil, fmt.Errorf("move %s: %w", j.Src, err)
			}
		}
		if j.Retarget && strings.HasSuffix(j.Src, ".md") {
			// the note's links to itself, and its relative links, follow it
			if nb, n, err := applyEdits(j.Src, raw, j.editsFor(j.Src)); err != nil {
				return nil, err
			} else if n > 0 {
				raw = nb
			}
		}
		// A copy left at dst by a crash is replaced (its bytes are kept in
		// the journal like any other).
		overwrite := j.Overwrite || ix.ws.Exists(j.Dst) && opt.Run == nil
		if err := run.Rename(j.Src, j.Dst, raw, action, overwrite, opt.Why); err != nil {
			return nil, err
		}
	case errors.Is(err, fs.ErrNotExist):
		if !ix.ws.Exists(j.Dst) {
			return nil, fmt.Errorf("move %s: %w: neither the source nor the destination exists", j.Src, errInapplicable)
		}
		// the move was made before the crash
	default:
		return nil, fmt.Errorf("move %s: %w", j.Src, err)
	}
	if err := run.Fault("dst-written"); err != nil {
		return nil, err
	}
	for i, p := range j.Inbound {
		n, err := ix.retargetFile(run, p, j, opt.Why)
		if err != nil {
			return nil, err
		}
		if n > 0 {
			res.Retarget.FilesTouched++
			res.Retarget.LinksChanged += n
			res.Retarget.ByFile[p] = n
		}
		if err := run.Fault(fmt.Sprintf("inbound-%d-written", i)); err != nil {
			return nil, err
		}
	}
	res.SrcRemoved = true
	if err := run.Fault("src-removed"); err != nil {
		return nil, err
	}
	touched := append([]string{j.Src, j.Dst}, j.Inbound...)
	for _, d := range uniqueDates(j.Src, j.Dst) {
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

// editsFor returns the edits planned for a file. A journal written before
// edits were planned asks for ReMe's rewrite: [[src]] to [[dst]].
func (j *moveJournal) editsFor(rel string) []linkEdit {
	if j.Edits == nil {
		return []linkEdit{{From: j.Src, To: j.Dst}}
	}
	return j.Edits[rel]
}

// retargetFile applies the planned edits to one note; it returns the count.
// A file that no longer has the bytes it was planned on was rewritten
// already (by the run a crash interrupted) and is left alone.
func (ix *Index) retargetFile(run *store.Run, rel string, j *moveJournal, why store.Why) (int, error) {
	raw, err := os.ReadFile(ix.ws.Abs(rel))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return 0, nil // removed since: nothing to rewrite
		}
		return 0, fmt.Errorf("retarget %s: %w", rel, err)
	}
	if before, ok := j.Before[rel]; ok && before != store.Sum(raw) {
		return 0, nil
	}
	out, n, err := applyEdits(rel, raw, j.editsFor(rel))
	if err != nil || n == 0 {
		return 0, err
	}
	why.Reason = "links to " + j.Src + " retargeted to " + j.Dst
	if err := run.WriteFile(rel, out, why); err != nil {
		return 0, err
	}
	return n, nil
}

// applyEdits rewrites the links of a note whose target is written as an
// edit's From, in the body and in frontmatter values; everything else,
// including a header whose YAML does not parse, stays byte for byte.
func applyEdits(rel string, raw []byte, edits []linkEdit) ([]byte, int, error) {
	if len(edits) == 0 {
		return raw, 0, nil
	}
	type key struct {
		markdown bool
		from     string
	}
	to := map[key]string{}
	for _, e := range edits {
		to[key{e.Markdown, e.From}] = e.To
	}
	repl := func(l store.Link, written string) (string, bool) {
		t, ok := to[key{l.Markdown, written}]
		return t, ok
	}
	n := store.ParseNote(rel, raw)
	body, count := store.ReplaceLinks(n.Body, store.ParseNoteLinks(n.Body, n.BodyLine), repl)
	n.Body = body
	k, err := n.RetargetFrontmatterLinks(repl)
	if err != nil {
		return nil, 0, fmt.Errorf("retarget %s: %w", rel, err)
	}
	if count += k; count == 0 {
		return raw, 0, nil
	}
	out, err := n.Bytes()
	if err != nil {
		return nil, 0, fmt.Errorf("retarget %s: %w", rel, err)
	}
	return out, count, nil
}

// checkPlan applies the workspace path rules to a plan read back from the
// journal: it is input like any other.
func (ix *Index) checkPlan(j *moveJournal) error {
	if j.Src == "" || j.Dst == "" {
		return errors.New("move plan without a source or destination")
	}
	paths := append([]string{j.Src, j.Dst}, j.Inbound...)
	for p := range j.Edits {
		paths = append(paths, p)
	}
	for p := range j.Before {
		paths = append(paths, p)
	}
	for _, q := range paths {
		rel, err := ix.ws.Rel(q)
		if err != nil {
			return err
		}
		if rel != q || strings.HasPrefix(rel, store.MetadataDir+"/") {
			return fmt.Errorf("%w: %q", store.ErrInvalidPath, q)
		}
	}
	if j.Src == j.Dst {
		return ErrSamePath
	}
	return nil
}

// recover settles what crashed commands left: a move is finished, any
// other run is rolled back. Recovery always makes progress: a run that
// cannot be settled is set aside with a warning naming it, and the command
// goes on. A read-only workspace is left for a command that can write.
func (ix *Index) recover(ctx context.Context) {
	if ix.readOnly != nil {
		return
	}
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
		var j moveJournal
		err := json.Unmarshal(o.Summary.Plan, &j)
		if err == nil {
			err = ix.checkPlan(&j)
		}
		if err != nil {
			o.Abandon(fmt.Errorf("unusable move plan: %w", err))
			return fmt.Errorf("set aside run %s: unusable move plan: %w", o.Run.ID, err)
		}
		ix.log.Warn("finishing an interrupted move", "run", o.Run.ID, "src", j.Src, "dst", j.Dst)
		if _, err := ix.runMove(ctx, o.Run, &j, MoveOptions{}); err != nil {
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
		var j moveJournal
		err = json.Unmarshal(b, &j)
		if err == nil {
			err = ix.checkPlan(&j)
		}
		if err == nil && !ix.ws.Exists(j.Src) && !ix.ws.Exists(j.Dst) {
			err = errors.New("neither the source nor the destination exists")
		}
		if err != nil {
			return ix.setAsideLegacy(err)
		}
		ix.log.Warn("finishing an interrupted move", "src", j.Src, "dst", j.Dst)
		plan, _ := json.Marshal(&j)
		run, err := ix.journal.Begin(store.RunInfo{Command: "move", Trigger: ix.opt.Trigger, Plan: plan})
		if err != nil {
			return err
		}
		_, err = ix.runMove(ctx, run, &j, MoveOptions{})
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
	// ByTarget groups the links of a folder delete by the removed file they
	// point to, then by the linking file, as ReMe reports them.
	ByTarget map[string]map[string]int `json:"by_target,omitempty"`
	// Ambiguous links may have meant a removed file (or another with its
	// name).
	Ambiguous []LinkInfo `json:"ambiguous"`
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
	res := &DeleteResult{Path: rel, Inbound: InboundReport{ByFile: map[string]int{}, Ambiguous: []LinkInfo{}}}
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
			res.Inbound.ByTarget = map[string]map[string]int{}
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
		return ix.countInbound(ctx, res)
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
		// what is left is empty folders (or what the walk skipped, such as
		// symlinks, which hold no bytes of their own)
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

// countInbound finds the links, in notes that remain, that led to a
// removed file: the stored links by a removed file's name, resolved as if
// the files were still there.
func (ix *Index) countInbound(ctx context.Context, res *DeleteResult) error {
	sort.Strings(res.Files)
	gone := map[string]bool{}
	before := ix.newLinkFiles(ctx, ix.db, true)
	var names []string
	for _, f := range res.Files {
		gone[f] = true
		before.pretend(f, true)
		names = append(names, store.LinkName(f))
	}
	// links by a removed file's name, and those that named one exactly
	links, err := linksNaming(ctx, ix.db, sortedUnique(names), res.Files)
	if err != nil {
		return err
	}
	for _, li := range links {
		if gone[li.From] || within(li.From, res.Path) {
			continue
		}
		r := store.ResolveLink(li.From, store.Link{Target: li.Written, Markdown: li.Markdown}, before)
		switch {
		case r.Status.Resolves() && gone[r.Path]:
			if res.Inbound.ByFile[li.From] == 0 {
				res.Inbound.FilesTouched++
			}
			res.Inbound.ByFile[li.From]++
			res.Inbound.LinksTotal++
			if res.Inbound.ByTarget != nil {
				if res.Inbound.ByTarget[r.Path] == nil {
					res.Inbound.ByTarget[r.Path] = map[string]int{}
				}
				res.Inbound.ByTarget[r.Path][li.From]++
			}
		case r.Status == store.LinkAmbiguous && anyIn(r.Candidates, gone):
			li.Status, li.Target, li.Candidates = string(r.Status), r.Path, r.Candidates
			res.Inbound.Ambiguous = append(res.Inbound.Ambiguous, li)
		}
	}
	return before.err
}

func anyIn(xs []string, set map[string]bool) bool {
	for _, x := range xs {
		if set[x] {
			return true
		}
	}
	return false
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
