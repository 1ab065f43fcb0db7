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

// testWatcher is what `reme watch` does with batches of note changes:
// index them (reconcile everything after an overflow), then answer the
// cookies; client is an index of another process that trusts it. stuck
// makes it stop answering, as a watcher busy with a model call.
type testWatcher struct {
	ws        *store.Workspace
	ctx       context.Context
	srv       *WatchServer
	client    *Index
	stuck     atomic.Bool
	overflows atomic.Int32
}

// startWatcher starts one on a new workspace, with a queue of buffer
// events (0: the default).
func startWatcher(t *testing.T, buffer int) *testWatcher {
	t.Helper()
	ws := newWorkspace(t, baseFiles())
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	srv, err := ServeWatch(ctx, ws, nil)
	if err != nil {
		t.Skipf("no watcher here: %v", err)
	}
	t.Cleanup(func() { srv.Close() })
	w := &testWatcher{ws: ws, ctx: ctx, srv: srv}
	ix := openIndex(t, ws, Options{})
	mustSync(t, ix)
	batches, err := ws.Watch(ctx, store.WatchOptions{Debounce: 50 * time.Millisecond, Buffer: buffer})
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		for b := range batches {
			if w.stuck.Load() {
				continue
			}
			var err error
			if b.Overflow {
				w.overflows.Add(1)
				_, err = ix.Sync(ctx)
			} else {
				err = ix.UpdatePaths(ctx, b.Paths...)
			}
			srv.Ack(b.Cookies, err == nil)
		}
	}()
	w.client = openIndex(t, ws, Options{TrustWatcher: true})
	return w
}

func TestWatcherVouchesForFreshness(t *testing.T) {
	w := startWatcher(t, 0)
	ws, ctx, client := w.ws, w.ctx, w.client
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
	w.stuck.Store(true)
	writeFile(t, ws, "daily/2026-06-22/canal.md", card("canal", "trip", "The canal boat.\n"))
	start := time.Now()
	find("canal", false)
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("waited %v for a stuck watcher", d)
	}
	w.stuck.Store(false)

	// A dead watcher leaves its state file; its socket answers no more.
	w.srv.Close()
	st, _ := os.ReadFile(ws.Abs(store.WatchCookieDir + "/" + watchStateFile))
	writeFile(t, ws, store.WatchCookieDir+"/"+watchStateFile, string(st))
	writeFile(t, ws, "daily/2026-06-22/lagoon.md", card("lagoon", "trip", "The lagoon tour.\n"))
	find("lagoon", false)
}

// Events lost to a full queue: the watcher reconciles everything before it
// vouches, so every edit is still found.
func TestWatcherOverflowStillFresh(t *testing.T) {
	w := startWatcher(t, 4) // a queue of 4 events
	ws, ctx, client := w.ws, w.ctx, w.client
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
	if w.overflows.Load() == 0 {
		t.Error("the queue never overflowed")
	}
}
