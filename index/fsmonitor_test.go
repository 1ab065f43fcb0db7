//go:build linux

package index

import (
	"context"
	"fmt"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reme-dev/reme/store"
)

// watchLoop is what `reme watch` does with batches of note changes: index
// them (reconcile everything after an overflow), then answer the cookies.
// stuck makes it stop answering, as a watcher busy with a model call.
func watchLoop(t *testing.T, ctx context.Context, ws *store.Workspace, buffer int, srv *WatchServer, stuck *atomic.Bool) *atomic.Int32 {
	t.Helper()
	ix := openIndex(t, ws, Options{})
	mustSync(t, ix)
	batches, err := ws.Watch(ctx, store.WatchOptions{Debounce: 50 * time.Millisecond, Buffer: buffer})
	if err != nil {
		t.Fatal(err)
	}
	var overflows atomic.Int32
	go func() {
		for b := range batches {
			if stuck.Load() {
				continue
			}
			var err error
			if b.Overflow {
				overflows.Add(1)
				_, err = ix.Sync(ctx)
			} else {
				err = ix.UpdatePaths(ctx, b.Paths...)
			}
			srv.Ack(b.Cookies, err == nil)
		}
	}()
	return &overflows
}

func TestWatcherVouchesForFreshness(t *testing.T) {
	ws := newWorkspace(t, baseFiles())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv, err := ServeWatch(ctx, ws, nil)
	if err != nil {
		t.Skipf("no watcher here: %v", err)
	}
	defer srv.Close()
	var stuck atomic.Bool
	watchLoop(t, ctx, ws, 0, srv, &stuck)
	client := openIndex(t, ws, Options{TrustWatcher: true})
	find := func(word string, wantVouched bool) {
		t.Helper()
		res, rep, err := client.SearchFresh(ctx, SearchOptions{Query: word, Limit: 5})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Results) == 0 {
			t.Fatalf("%s: not found (vouched %v)", word, rep.Vouched)
		}
		if rep.Vouched != wantVouched {
			t.Fatalf("%s: vouched %v, want %v", word, rep.Vouched, wantVouched)
		}
	}
	// A hand edit is found by the very next search, without a scan.
	writeFile(t, ws, "daily/2026-06-22/gondola.md", card("gondola", "trip", "Book a gondolier.\n"))
	find("gondolier", true)
	// Edits in place and removals too.
	writeFile(t, ws, "daily/2026-06-22/gondola.md", card("gondola", "trip", "Book a vaporetto.\n"))
	find("vaporetto", true)
	if res := searchResp(t, client, SearchOptions{Query: "gondolier"}); len(res.Results) != 0 {
		t.Errorf("the old text is still found: %+v", res.Results)
	}

	// A watcher that does not answer (busy with a model, say): the search
	// scans by itself after a short wait.
	stuck.Store(true)
	writeFile(t, ws, "daily/2026-06-22/canal.md", card("canal", "trip", "The canal boat.\n"))
	start := time.Now()
	find("canal", false)
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("waited %v for a stuck watcher", d)
	}
	stuck.Store(false)

	// A dead watcher leaves its state file; its socket answers no more.
	srv.Close()
	st, _ := os.ReadFile(ws.Abs(store.WatchCookieDir + "/" + watchStateFile))
	writeFile(t, ws, store.WatchCookieDir+"/"+watchStateFile, string(st))
	writeFile(t, ws, "daily/2026-06-22/lagoon.md", card("lagoon", "trip", "The lagoon tour.\n"))
	find("lagoon", false)
}

// Events lost to a full queue: the watcher reconciles everything before it
// vouches, so every edit is still found.
func TestWatcherOverflowStillFresh(t *testing.T) {
	ws := newWorkspace(t, baseFiles())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv, err := ServeWatch(ctx, ws, nil)
	if err != nil {
		t.Skipf("no watcher here: %v", err)
	}
	defer srv.Close()
	var stuck atomic.Bool
	overflows := watchLoop(t, ctx, ws, 4, srv, &stuck) // a queue of 4 events
	client := openIndex(t, ws, Options{TrustWatcher: true})
	for i := 0; i < 200; i++ {
		writeFile(t, ws, fmt.Sprintf("daily/2026-07-01/burst-%03d.md", i), card(fmt.Sprintf("burst-%03d", i), "burst", fmt.Sprintf("word%03d here\n", i)))
	}
	for _, i := range []int{0, 77, 199} {
		res, rep, err := client.SearchFresh(ctx, SearchOptions{Query: fmt.Sprintf("word%03d", i), Limit: 5})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Results) != 1 {
			t.Errorf("word%03d: %d results (vouched %v)", i, len(res.Results), rep.Vouched)
		}
	}
	if overflows.Load() == 0 {
		t.Error("the queue never overflowed")
	}
}
