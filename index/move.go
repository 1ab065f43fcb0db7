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

// moveJournal is the intent record that lets the next command finish a
// move that a crash interrupted. Every step after it is idempotent, so
// recovery simply runs the remaining steps again.
type moveJournal struct {
	Src      string    `json:"src"`
	Dst      string    `json:"dst"`
	Retarget bool      `json:"retarget"`
	Inbound  []string  `json:"inbound"`
	Started  time.Time `json:"started"`
}

func (ix *Index) journalPath() string { return ix.ws.MetadataPath("move.journal.json") }

func (ix *Index) fault(step string) error {
	if ix.opt.Fault == nil {
		return nil
	}
	return ix.opt.Fault(step)
}

// Move renames a file and rewrites every inbound [[link]] to it (exact
// full-path matches only; `!`, #anchor and |alias kept). The inbound notes
// come from one query on the links table; the index is updated before it
// returns. The whole move runs under the workspace writer lock and an intent
// journal, so a crash at any point is completed by the next command.
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
		if _, err := ix.Sync(ctx); err != nil {
			return err
		}
		j := &moveJournal{Src: src, Dst: dst, Retarget: !opt.NoRetarget, Started: time.Now().UTC()}
		if j.Retarget {
			if j.Inbound, err = ix.inboundSources(ctx, src); err != nil {
				return err
			}
		}
		b, err := json.MarshalIndent(j, "", "  ")
		if err != nil {
			return err
		}
		if err := store.WriteFileAbs(ix.journalPath(), b); err != nil {
			return fmt.Errorf("write move journal: %w", err)
		}
		if err := ix.fault("journal-written"); err != nil {
			return err
		}
		res, err = ix.runMove(ctx, j)
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

// runMove performs (or finishes) the steps after the journal: copy to dst,
// rewrite inbound links, remove src, refresh day indexes, update the index,
// drop the journal. Each step can be repeated safely.
func (ix *Index) runMove(ctx context.Context, j *moveJournal) (*MoveResult, error) {
	res := &MoveResult{Src: j.Src, Dst: j.Dst}
	if j.Retarget {
		res.Retarget = &Retarget{ByFile: map[string]int{}}
	}
	raw, err := os.ReadFile(ix.ws.Abs(j.Src))
	switch {
	case err == nil:
		if j.Retarget && strings.HasSuffix(j.Src, ".md") {
			// links from the note to itself follow it
			if nb, n, err := retargetNote(j.Src, raw, j.Src, j.Dst); err != nil {
				return nil, err
			} else if n > 0 {
				raw = nb
			}
		}
		if err := ix.ws.WriteFile(j.Dst, raw); err != nil {
			return nil, err
		}
	case errors.Is(err, fs.ErrNotExist):
		if !ix.ws.Exists(j.Dst) {
			return nil, fmt.Errorf("move %s: neither the source nor the destination exists", j.Src)
		}
		// the copy was made before the crash
	default:
		return nil, fmt.Errorf("move %s: %w", j.Src, err)
	}
	if err := ix.fault("dst-written"); err != nil {
		return nil, err
	}
	for i, p := range j.Inbound {
		n, err := ix.retargetFile(p, j.Src, j.Dst)
		if err != nil {
			return nil, err
		}
		if n > 0 {
			res.Retarget.FilesTouched++
			res.Retarget.LinksChanged += n
			res.Retarget.ByFile[p] = n
		}
		if err := ix.fault(fmt.Sprintf("inbound-%d-written", i)); err != nil {
			return nil, err
		}
	}
	if err := ix.ws.Remove(j.Src); err != nil && !errors.Is(err, store.ErrNotFound) {
		return nil, err
	}
	res.SrcRemoved = true
	if err := ix.fault("src-removed"); err != nil {
		return nil, err
	}
	touched := append([]string{j.Src, j.Dst}, j.Inbound...)
	for _, d := range uniqueDates(j.Src, j.Dst) {
		r, err := ix.ws.RefreshDayIndex(d)
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
	if err := ix.fault("index-updated"); err != nil {
		return nil, err
	}
	if err := os.Remove(ix.journalPath()); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("remove move journal: %w", err)
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
func (ix *Index) retargetFile(rel, src, dst string) (int, error) {
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
	if err := ix.ws.WriteFile(rel, out); err != nil {
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

// recoverMoves finishes a move that a crash interrupted.
func (ix *Index) recoverMoves(ctx context.Context) error {
	b, err := os.ReadFile(ix.journalPath())
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read move journal: %w", err)
	}
	return ix.Locked(ctx, func() error {
		// re-read under the lock: another process may have finished it
		b2, err := os.ReadFile(ix.journalPath())
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err == nil {
			b = b2
		}
		var j moveJournal
		if err := json.Unmarshal(b, &j); err != nil || j.Src == "" || j.Dst == "" {
			// A journal that does not parse was never complete, so the move
			// never started: drop it.
			ix.log.Warn("ignoring an unreadable move journal", "path", ix.journalPath())
			return os.Remove(ix.journalPath())
		}
		ix.log.Warn("finishing an interrupted move", "src", j.Src, "dst", j.Dst)
		_, err = ix.runMove(ctx, &j)
		return err
	})
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
// refreshed.
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
			if err := os.RemoveAll(ix.ws.Abs(rel)); err != nil {
				return fmt.Errorf("delete %s: %w", rel, err)
			}
		} else {
			res.Files = []string{rel}
			if err := ix.ws.Remove(rel); err != nil {
				return err
			}
		}
		touched := append([]string{}, res.Files...)
		for _, d := range uniqueDates(res.Files...) {
			r, err := ix.ws.RefreshDayIndex(d)
			if err != nil {
				return err
			}
			res.DayIndex = append(res.DayIndex, r)
			if r.Changed {
				touched = append(touched, r.Path)
			}
		}
		if err := ix.UpdatePaths(ctx, touched...); err != nil {
			return err
		}
		return ix.countInbound(ctx, rel, res)
	})
	if err != nil {
		return nil, err
	}
	return res, nil
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
