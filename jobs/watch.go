package jobs

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"sort"
	"strings"
	"time"

	"github.com/reme-dev/reme/store"
)

// WatchOptions configure Watch.
type WatchOptions struct {
	// Resource holds the defaults of every batch (Changes ignored); an
	// empty Fallback means extractive: a watcher must not drop resources
	// while the model is out.
	Resource  AutoResourceRequest
	Debounce  time.Duration
	Reconcile time.Duration                 // full scan interval
	Report    func(format string, a ...any) // progress and results (stderr)
	// Vouch, when set, is told after each batch that carried cookies
	// (store.WatchBatch.Cookies) whether the index is now in step with
	// every change made before them: the notes of the batch were indexed,
	// or everything was reconciled after an overflow.
	Vouch func(cookies []string, ok bool)
	// Indexed, when set, is called after each batch and reconcile, with no
	// lock held (it may call a model: embeddings of what was indexed).
	Indexed func(ctx context.Context)
	// NotesOnly keeps the index in step and leaves resources alone, for a
	// process that serves searches (reme mcp) rather than distils files.
	NotesOnly bool
}

// Watch runs until ctx ends: changes under resource/ go to auto_resource,
// changes to notes go to the index. File-system events are only hints (they
// can be dropped or missed), so the whole workspace is reconciled at start,
// every Reconcile interval and after any overflow.
func Watch(ctx context.Context, env *Env, opt WatchOptions) error {
	if opt.Report == nil {
		opt.Report = func(string, ...any) {}
	}
	if opt.Reconcile <= 0 {
		opt.Reconcile = 5 * time.Minute
	}
	if opt.Resource.Fallback == "" {
		opt.Resource.Fallback = FallbackExtractive
	}
	batches, err := env.WS.Watch(ctx, store.WatchOptions{Debounce: opt.Debounce, Logger: env.Log})
	if err != nil {
		return err
	}
	w := &watcher{env: env, opt: opt, hashes: map[string]fileHash{}, kept: map[string]string{}}
	opt.Report("watching %s (Ctrl-C to stop)", env.WS.Root)
	if err := w.reconcile(ctx); err != nil && ctx.Err() == nil {
		opt.Report("reconcile: %v", err)
	}
	w.indexed(ctx)
	tick := time.NewTicker(opt.Reconcile)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
			if err := w.reconcile(ctx); err != nil && ctx.Err() == nil {
				opt.Report("reconcile: %v", err)
			}
			w.indexed(ctx)
		case b, ok := <-batches:
			if !ok {
				return nil
			}
			if b.Overflow {
				opt.Report("events may have been lost; reconciling everything")
				err = w.env.Index.Sync(ctx)
				w.vouch(b.Cookies, err)
				if err == nil {
					err = w.reconcileResources(ctx)
				}
			} else {
				err = w.handleNotes(ctx, b.Paths)
				w.vouch(b.Cookies, err)
				if err == nil {
					err = w.handle(ctx, b.Paths)
				}
			}
			if err != nil && ctx.Err() == nil {
				opt.Report("%v", err)
			}
			w.indexed(ctx)
		}
	}
}

func (w *watcher) indexed(ctx context.Context) {
	if w.opt.Indexed != nil && ctx.Err() == nil {
		w.opt.Indexed(ctx)
	}
}

type fileHash struct {
	size, mtime int64
	sha         string
}

type watcher struct {
	env    *Env
	opt    WatchOptions
	hashes map[string]fileHash // resource path → last hash, so a touch costs no model call
	// kept maps a resource to the hash whose change was left for a model
	// (no model configured), so that it is reported once, not on every
	// reconcile.
	kept map[string]string
}

// watchable reports resource files auto_resource handles.
func (w *watcher) watchable(rel string) bool {
	ext := strings.ToLower(path.Ext(rel))
	if imageResourceTypes[ext] {
		return w.opt.Resource.IncludeImages
	}
	return textResourceTypes[ext]
}

func (w *watcher) vouch(cookies []string, err error) {
	if len(cookies) > 0 && w.opt.Vouch != nil {
		w.opt.Vouch(cookies, err == nil)
	}
}

// handleNotes brings the index in step with the notes of a batch, before
// any resource is handled (which may wait on a model).
func (w *watcher) handleNotes(ctx context.Context, paths []string) error {
	var notes []string
	folder, entries := false, false
	for _, p := range paths {
		if top, _, _ := strings.Cut(p, "/"); top == store.ResourceDir || top == store.SessionDir {
			continue // the index keeps to its own folders (daily/, digest/, memory/, archive/)
		}
		entries = entries || p == store.MemoryDir || p == store.EntriesDir || strings.HasPrefix(p, store.EntriesDir+"/")
		if strings.HasSuffix(p, ".md") {
			notes = append(notes, p)
		} else if _, err := os.Lstat(w.env.WS.Abs(p)); errors.Is(err, fs.ErrNotExist) {
			folder = true
		}
	}
	switch {
	case folder:
		// A removed folder arrives as one path: a sync handles that and
		// any note inside it.
		if err := w.env.Index.Sync(ctx); err != nil {
			return fmt.Errorf("index: %w", err)
		}
	case len(notes) > 0:
		if err := w.env.Index.UpdatePaths(ctx, notes...); err != nil {
			return fmt.Errorf("index: %w", err)
		}
	}
	if entries {
		// entries edited by hand: MEMORY.md follows (its own change comes
		// back as an event that changes nothing)
		return w.env.Index.Locked(ctx, func() error {
			// A run only when MEMORY.md changes: an edit that leaves it as
			// it is (or its own write, coming back) leaves no empty run in
			// the history.
			entries, err := w.env.WS.ListEntries()
			if err != nil {
				return err
			}
			probe, err := w.env.WS.WriteMemoryIndex(entries, w.env.Memory.IndexBounds, func(string, []byte) error { return nil })
			if err != nil || !probe.Changed {
				return err
			}
			return w.env.withRun("watch", "", func() error {
				run, err := w.env.journalRun()
				if err != nil {
					return err
				}
				res, err := run.WriteMemoryIndex(entries, w.env.Memory.IndexBounds)
				if err != nil || !res.Changed {
					return err
				}
				w.opt.Report("rewrote %s: %d of %d entries listed", res.Path, res.Listed, res.Entries)
				return w.env.Index.UpdatePaths(ctx, store.MemoryIndexPath)
			})
		})
	}
	return nil
}

// handle processes the resources of a batch of hinted paths, decided by
// their final state.
func (w *watcher) handle(ctx context.Context, paths []string) error {
	if w.opt.NotesOnly {
		return nil
	}
	var resources []string
	for _, p := range paths {
		if strings.HasPrefix(p, store.ResourceDir+"/") {
			resources = append(resources, p)
		}
	}
	if len(resources) == 0 {
		return nil
	}
	sources, err := w.cardsBySource(ctx)
	if err != nil {
		return err
	}
	var changes []ResourceChange
	for _, p := range resources {
		fi, err := os.Lstat(w.env.WS.Abs(p))
		switch {
		case err == nil && fi.Mode().IsRegular():
			if c, ok := w.changeFor(p, fi, sources); ok {
				changes = append(changes, c)
			}
		case errors.Is(err, fs.ErrNotExist):
			// a file or a whole folder went away: delete the cards linked below it
			for src := range sources {
				if (src == p || strings.HasPrefix(src, p+"/")) && w.watchable(src) {
					changes = append(changes, ResourceChange{Path: src, Change: "deleted"})
					delete(w.hashes, src)
				}
			}
		}
	}
	return w.run(ctx, changes)
}

// changeFor decides whether a present resource needs auto_resource: no card
// yet, or content different from what its card was made from.
func (w *watcher) changeFor(rel string, fi fs.FileInfo, sources map[string]string) (ResourceChange, bool) {
	if !w.watchable(rel) {
		return ResourceChange{}, false
	}
	if w.env.Model == nil && imageResourceTypes[strings.ToLower(path.Ext(rel))] {
		return ResourceChange{}, false // images need a model; nothing to do until one is configured
	}
	if w.opt.Resource.MaxFileBytes > 0 && fi.Size() > w.opt.Resource.MaxFileBytes {
		return ResourceChange{Path: rel}, true // reported as an oversized skip
	}
	sha, err := w.hash(rel, fi)
	if err != nil {
		w.opt.Report("hash %s: %v", rel, err)
		return ResourceChange{}, false
	}
	card, ok := sources[rel]
	if !ok {
		return ResourceChange{Path: rel, Change: "added"}, true
	}
	if w.kept[rel] == sha {
		return ResourceChange{}, false
	}
	n, err := w.env.WS.ReadNote(card)
	if err == nil && n.FMErr == nil {
		switch recorded := n.FM.String(SourceSHA256Key); recorded {
		case sha:
			return ResourceChange{}, false
		case "":
			// A card from before hashes were recorded, or written by ReMe:
			// file times say nothing after a copy or a clone, so the card is
			// taken as made from the file as it is, and the hash recorded,
			// without a model call.
			if err := w.adopt(card, rel, sha); err != nil {
				w.opt.Report("record %s on %s: %v", SourceSHA256Key, card, err)
				return ResourceChange{}, false
			}
			w.opt.Report("recorded %s of %s on %s (no model call)", SourceSHA256Key, rel, card)
			return ResourceChange{}, false
		}
	}
	return ResourceChange{Path: rel, Change: "modified"}, true
}

// adopt records a resource's hash on its card.
func (w *watcher) adopt(card, rel, sha string) (err error) {
	ctx := context.Background()
	if err := w.env.beginRun("watch", ""); err != nil {
		return err
	}
	defer func() {
		if eerr := w.env.endRun(err); err == nil {
			err = eerr
		}
	}()
	c, err := OpenCard(w.env, CardSpec{Path: card, Date: store.DateFromPath(card), System: []KeyValue{{SourceSHA256Key, sha}}})
	if err != nil {
		return err
	}
	if err := c.Update(func(*store.Note) error { return nil }); err != nil {
		return err
	}
	_, err = c.index(ctx)
	return err
}

func (w *watcher) hash(rel string, fi fs.FileInfo) (string, error) {
	if h, ok := w.hashes[rel]; ok && h.size == fi.Size() && h.mtime == fi.ModTime().UnixNano() {
		return h.sha, nil
	}
	f, err := os.Open(w.env.WS.Abs(rel))
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	sum := hex.EncodeToString(h.Sum(nil))
	w.hashes[rel] = fileHash{fi.Size(), fi.ModTime().UnixNano(), sum}
	return sum, nil
}

// cardsBySource maps each resource path to the card that links it.
func (w *watcher) cardsBySource(ctx context.Context) (map[string]string, error) {
	links, err := w.env.Index.Sources(ctx, "source_resource")
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for link, card := range links {
		out[store.LinkTarget(link)] = card
	}
	return out, nil
}

// reconcile compares every resource with its card and every note with the
// index, as if all events had been lost.
func (w *watcher) reconcile(ctx context.Context) error {
	if err := w.env.Index.Sync(ctx); err != nil {
		return fmt.Errorf("index: %w", err)
	}
	return w.reconcileResources(ctx)
}

// reconcileResources compares every resource with its card.
func (w *watcher) reconcileResources(ctx context.Context) error {
	if w.opt.NotesOnly {
		return nil
	}
	sources, err := w.cardsBySource(ctx)
	if err != nil {
		return err
	}
	var changes []ResourceChange
	present := map[string]bool{}
	err = walkFiles(w.env.WS, store.ResourceDir, func(rel string, d fs.DirEntry) error {
		present[rel] = true
		fi, err := d.Info()
		if err != nil {
			return nil // vanished while walking
		}
		if c, ok := w.changeFor(rel, fi, sources); ok {
			changes = append(changes, c)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("scan resources: %w", err)
	}
	for src := range sources {
		if !present[src] && strings.HasPrefix(src, store.ResourceDir+"/") && w.watchable(src) {
			changes = append(changes, ResourceChange{Path: src, Change: "deleted"})
		}
	}
	return w.run(ctx, changes)
}

// stopGrace is how long work in progress may go on after Ctrl-C, so that a
// card just written also reaches the day index and the search index.
const stopGrace = 5 * time.Second

// graceful returns a context that ends stopGrace after parent does.
func graceful(parent context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(context.WithoutCancel(parent))
	stop := context.AfterFunc(parent, func() {
		t := time.AfterFunc(stopGrace, cancel)
		context.AfterFunc(ctx, func() { t.Stop() })
	})
	return ctx, func() { stop(); cancel() }
}

func (w *watcher) run(parent context.Context, changes []ResourceChange) error {
	if len(changes) == 0 {
		return nil
	}
	ctx, cancel := graceful(parent)
	defer cancel()
	sort.Slice(changes, func(i, j int) bool { return changes[i].Path < changes[j].Path })
	req := w.opt.Resource
	req.Changes = changes
	w.env.ResetModel() // each batch is a run: a model that came back is used again
	res, err := AutoResource(ctx, w.env, req)
	if res != nil {
		for _, it := range res.Results {
			if it.Metadata.Skipped == "no model configured" {
				w.kept[it.Path] = w.hashes[it.Path].sha
			} else {
				delete(w.kept, it.Path)
			}
			w.opt.Report("%s", it.Line())
		}
	}
	return err
}
