package jobs

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/reme-dev/reme/jobs/llm"
	"github.com/reme-dev/reme/jobs/llm/llmtest"
	"github.com/reme-dev/reme/store"
)

func newWatcher(env *Env, report *[]string) *watcher {
	opt := WatchOptions{Resource: AutoResourceRequest{Fallback: FallbackExtractive}, Report: func(f string, a ...any) {
		*report = append(*report, fmt.Sprintf(f, a...))
	}}
	return &watcher{env: env, opt: opt, hashes: map[string]fileHash{}, kept: map[string]string{}}
}

// TestWatchAdoptsReMeCards: a card ReMe wrote (no source_sha256) for a
// resource is not handed to the model again after a clone made the file
// look newer: its hash is recorded, once, without a model call.
func TestWatchAdoptsReMeCards(t *testing.T) {
	model := &llmtest.Scripted{Func: func(llm.Request) (*llm.Response, error) {
		t.Error("the model was called for a card that is up to date")
		return llmtest.TextReply("no"), nil
	}}
	env, _ := newEnv(t, model)
	writeWS(t, env, "daily/2026-06-20/q3-report.md", "---\nname: q3-report\ndescription: Q3 report.\nsource_resource: \"[[resource/2026-06-20/q3.md]]\"\n---\n\n- Written by ReMe.\n")
	writeWS(t, env, "resource/2026-06-20/q3.md", "# Q3\n") // written after the card, as a clone does
	var report []string
	w := newWatcher(env, &report)
	for i := 0; i < 3; i++ {
		if err := w.reconcile(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	n, _ := env.WS.ReadNote("daily/2026-06-20/q3-report.md")
	if len(n.FM.String(SourceSHA256Key)) != 64 || !strings.Contains(n.Body, "Written by ReMe.") {
		t.Errorf("card %s\n%s", n.FM.JSON(), n.Body)
	}
	if len(report) != 1 || !strings.HasPrefix(report[0], "recorded source_sha256 of resource/2026-06-20/q3.md") {
		t.Errorf("report %q", report)
	}
}

// TestWatchWithoutModelKeepsOnce: without a model, a changed resource whose
// card a model wrote is kept, and that is reported once, not on every
// reconcile.
func TestWatchWithoutModelKeepsOnce(t *testing.T) {
	env, _ := newEnv(t, nil)
	writeWS(t, env, "daily/2026-06-20/q3-report.md", "---\nname: q3-report\nsource_resource: \"[[resource/2026-06-20/q3.md]]\"\nsource_sha256: \"0000\"\n---\n\n- Written by a model.\n")
	writeWS(t, env, "resource/2026-06-20/q3.md", "# Q3, revised\n")
	var report []string
	w := newWatcher(env, &report)
	for i := 0; i < 3; i++ {
		if err := w.reconcile(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if len(report) != 1 || !strings.Contains(report[0], "Kept daily/2026-06-20/q3-report.md") {
		t.Errorf("report %q", report)
	}
	// a new change is reported again
	writeWS(t, env, "resource/2026-06-20/q3.md", "# Q3, revised twice\n")
	if err := w.reconcile(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(report) != 2 {
		t.Errorf("report %q", report)
	}
}

// TestWatchKeepsMemoryIndexCurrent: an entry added or removed by hand shows
// up in MEMORY.md at the next batch; a batch without entry changes leaves
// MEMORY.md alone.
func TestWatchKeepsMemoryIndexCurrent(t *testing.T) {
	env, _ := newEnv(t, nil)
	var report []string
	w := newWatcher(env, &report)
	writeWS(t, env, "memory/entries/tabs.md", "---\ntype: feedback\nname: tabs\ndescription: Tabs, not spaces.\n---\n\nTabs.\nWhy: habit.\nHow to apply: always.\n")
	if err := w.handleNotes(context.Background(), []string{"memory/entries/tabs.md"}); err != nil {
		t.Fatal(err)
	}
	page, _ := os.ReadFile(env.WS.Abs(store.MemoryIndexPath))
	if !strings.Contains(string(page), "[[memory/entries/tabs.md|tabs]] — Tabs, not spaces.") || len(report) != 1 {
		t.Fatalf("MEMORY.md:\n%s\nreport %q", page, report)
	}
	if err := w.handleNotes(context.Background(), []string{store.MemoryIndexPath, "daily/2026-06-22/x.md"}); err != nil || len(report) != 1 {
		t.Fatalf("a batch without entries: %v %q", err, report)
	}
	// the entry saved again as it was: MEMORY.md stays, and so does the
	// history (no empty watch run)
	runs := func() int {
		rs, err := env.Journal.Runs()
		if err != nil {
			t.Fatal(err)
		}
		return len(rs)
	}
	before := runs()
	if err := w.handleNotes(context.Background(), []string{"memory/entries/tabs.md"}); err != nil || len(report) != 1 {
		t.Fatalf("an unchanged entry: %v %q", err, report)
	}
	if n := runs(); n != before {
		t.Errorf("an entry saved unchanged left %d run(s) in the history", n-before)
	}
	if err := os.Remove(env.WS.Abs("memory/entries/tabs.md")); err != nil {
		t.Fatal(err)
	}
	if err := w.handleNotes(context.Background(), []string{"memory/entries"}); err != nil {
		t.Fatal(err)
	}
	page, _ = os.ReadFile(env.WS.Abs(store.MemoryIndexPath))
	if strings.Contains(string(page), "tabs") {
		t.Errorf("removed entry still listed:\n%s", page)
	}
}
