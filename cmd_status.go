package main

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/reme-dev/reme/store"
)

type statusCmd struct{}

func (statusCmd) Help() string {
	return `Prints what the workspace holds: daily cards, digest nodes, long-term entries by
type, the profile, and whether MEMORY.md lists every entry (it is bounded by
memory.index_max_lines and memory.index_max_bytes) and is up to date.`
}

// memoryStatus is the long-term part of reme status.
type memoryStatus struct {
	Entries     int            `json:"entries"`
	ByType      map[string]int `json:"by_type"`
	Unreadable  []string       `json:"unreadable,omitempty"`
	Profile     string         `json:"profile"` // present, missing, or why it does not parse
	IndexListed int            `json:"index_listed"`
	IndexBounds string         `json:"index_bounds"`
	// IndexOmitted entries do not fit within the bounds.
	IndexOmitted int  `json:"index_omitted"`
	IndexCurrent bool `json:"index_current"`
}

type statusReport struct {
	Workspace string         `json:"workspace"`
	Cards     int            `json:"cards"`
	DayPages  int            `json:"day_pages"`
	Digest    int            `json:"digest"`
	Memory    memoryStatus   `json:"memory"`
	Problems  map[string]int `json:"-"`
}

func (statusCmd) Run(ctx context.Context, app *App) error {
	cfg, err := app.Config()
	if err != nil {
		return err
	}
	ix, err := app.FreshIndex(ctx)
	if err != nil {
		return err
	}
	ws := ix.Workspace()
	counts, err := ix.CountKinds(ctx)
	if err != nil {
		return err
	}
	rep := statusReport{Workspace: ws.Root, Memory: memoryStatus{ByType: map[string]int{}}}
	for _, c := range counts {
		switch c.Kind {
		case store.KindCard:
			rep.Cards += c.Count
		case store.KindDayPage:
			rep.DayPages += c.Count
		case store.KindDigest:
			rep.Digest += c.Count
		}
	}
	entries, err := ws.ListEntries()
	if err != nil {
		return err
	}
	m := &rep.Memory
	m.Entries = len(entries)
	for _, e := range entries {
		switch {
		case e.FMErr != nil:
			m.Unreadable = append(m.Unreadable, e.Path)
		case store.IsEntryType(e.Type):
			m.ByType[e.Type]++
		default:
			m.ByType["other"]++
		}
	}
	m.Profile = "missing"
	if n, err := ws.ReadNote(store.ProfilePath); err == nil {
		m.Profile = "present"
		if n.FMErr != nil {
			m.Profile = "its frontmatter does not parse: " + n.FMErr.Error()
		}
	} else if !errors.Is(err, store.ErrNotFound) {
		return err
	}
	bounds := cfg.Memory.options().IndexBounds
	idx, err := ws.WriteMemoryIndex(entries, bounds, func(string, []byte) error { return nil })
	if err != nil {
		return err
	}
	m.IndexListed, m.IndexOmitted, m.IndexBounds, m.IndexCurrent = idx.Listed, idx.Omitted, idx.Bounds, !idx.Changed
	if app.Globals.JSON {
		return app.printJSON(rep)
	}
	w := app.Stdout
	fmt.Fprintf(w, "workspace   %s\n", rep.Workspace)
	fmt.Fprintf(w, "daily       %d card(s), %d day page(s)\n", rep.Cards, rep.DayPages)
	fmt.Fprintf(w, "digest      %d node(s)\n", rep.Digest)
	var types []string
	for _, t := range append(append([]string{}, store.EntryTypes...), "other") {
		if n := m.ByType[t]; n > 0 {
			types = append(types, fmt.Sprintf("%s %d", t, n))
		}
	}
	line := fmt.Sprintf("%d", m.Entries)
	if len(types) > 0 {
		line += " (" + strings.Join(types, ", ") + ")"
	}
	fmt.Fprintf(w, "entries     %s\n", line)
	sort.Strings(m.Unreadable)
	for _, p := range m.Unreadable {
		fmt.Fprintf(w, "            %s: the frontmatter does not parse\n", p)
	}
	fmt.Fprintf(w, "profile     %s (%s)\n", m.Profile, store.ProfilePath)
	listing := fmt.Sprintf("lists all %d entries (bounds %s)", m.Entries, m.IndexBounds)
	if m.IndexOmitted > 0 {
		listing = fmt.Sprintf("lists %d of %d entries: %d do not fit within its bounds (%s; memory.index_max_lines, memory.index_max_bytes)",
			m.IndexListed, m.Entries, m.IndexOmitted, m.IndexBounds)
	}
	switch {
	case m.Entries == 0 && !ws.Exists(store.MemoryIndexPath):
		fmt.Fprintln(w, "MEMORY.md   none yet (no entries)")
	case !m.IndexCurrent:
		fmt.Fprintf(w, "MEMORY.md   out of date (entries changed by hand): reme memory_reindex rewrites it; then it %s\n", listing)
	default:
		fmt.Fprintf(w, "MEMORY.md   %s\n", listing)
	}
	return nil
}

type memoryReindexCmd struct{}

func (memoryReindexCmd) Help() string {
	return `Rewrites the block of MEMORY.md between its markers from the entries under
memory/entries/; text outside the markers is kept. Every memory_write and
memory_delete does this; run it after editing entries by hand.`
}

func (memoryReindexCmd) Run(ctx context.Context, app *App) error {
	cfg, err := app.Config()
	if err != nil {
		return err
	}
	ix, err := app.Index(ctx, false)
	if err != nil {
		return err
	}
	var res *store.MemoryIndexResult
	err = ix.Locked(ctx, func() error {
		var err error
		if res, err = ix.Workspace().RefreshMemoryIndex(cfg.Memory.options().IndexBounds); err != nil {
			return err
		}
		return ix.UpdatePaths(ctx, store.MemoryIndexPath)
	})
	if err != nil {
		return err
	}
	if app.Globals.JSON {
		return app.printJSON(res)
	}
	verb := "unchanged"
	if res.Changed {
		verb = "rewrote"
	}
	if res.Entries == 0 && !res.Changed && !ix.Workspace().Exists(store.MemoryIndexPath) {
		fmt.Fprintln(app.Stdout, "no entries: MEMORY.md not written")
		return nil
	}
	fmt.Fprintf(app.Stdout, "%s %s: %d of %d entries listed\n", verb, res.Path, res.Listed, res.Entries)
	reportIndexBound(app, res)
	return nil
}
