package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/reme-dev/reme/index"
	"github.com/reme-dev/reme/store"
)

// writeCards writes n small cards with links between them.
func writeCards(t *testing.T, root string, n int) {
	t.Helper()
	for i := 0; i < n; i++ {
		date := fmt.Sprintf("2026-03-%02d", i%28+1)
		p := filepath.Join(root, "daily", date, fmt.Sprintf("card-%03d.md", i))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		next := (i + 1) % n
		body := fmt.Sprintf("---\nname: card-%03d\ndescription: card number %d about topic%d\nmemory_tags: [t%d]\n---\n\n## Notes\nthe quick brown fox %d jumps, 登录 %d.\nsee [[daily/2026-03-%02d/card-%03d.md]]\n",
			i, i, i%7, i%5, i, i, next%28+1, next)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestConcurrentProcesses runs two `reme reindex` and a stream of `reme
// search` processes at once: none may fail (no "database is locked"), and
// the index they leave equals a fresh rebuild.
func TestConcurrentProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("starts many processes")
	}
	root := t.TempDir()
	writeCards(t, root, 800)
	if out, err := exec.Command("reme", "-w", root, "reindex").CombinedOutput(); err != nil {
		t.Fatalf("initial reindex: %v\n%s", err, out)
	}
	// changes for the searches to sync while the reindexes run
	if err := os.WriteFile(filepath.Join(root, "daily", "2026-03-01", "new.md"), []byte("---\nname: new\n---\n\nfresh zebra\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(root, "daily", "2026-03-02", "card-001.md")); err != nil {
		t.Fatal(err)
	}
	type outcome struct {
		args   []string
		err    error
		stderr string
	}
	results := make(chan outcome, 100)
	var wg sync.WaitGroup
	start := func(args ...string) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var stderr bytes.Buffer
			cmd := exec.Command("reme", append([]string{"-w", root}, args...)...)
			cmd.Stderr = &stderr
			cmd.Stdout = &bytes.Buffer{}
			err := cmd.Run()
			results <- outcome{args, err, stderr.String()}
		}()
	}
	start("reindex")
	start("reindex")
	for g := 0; g < 2; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 8; i++ {
				var stderr bytes.Buffer
				cmd := exec.Command("reme", "-w", root, "search", fmt.Sprintf("fox topic%d 登录", (g+i)%7))
				cmd.Stderr = &stderr
				err := cmd.Run()
				results <- outcome{[]string{"search"}, err, stderr.String()}
			}
		}(g)
	}
	wg.Wait()
	close(results)
	n := 0
	for r := range results {
		n++
		if r.err != nil || strings.Contains(r.stderr, "locked") || strings.Contains(r.stderr, "busy") {
			t.Errorf("reme %v: %v\n%s", r.args, r.err, r.stderr)
		}
	}
	if n != 18 {
		t.Fatalf("%d processes reported", n)
	}
	got := dumpIndex(t, root)
	for _, s := range []string{"", "-wal", "-shm"} {
		os.Remove(filepath.Join(root, "metadata", "index.db"+s))
	}
	want := dumpIndex(t, root)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("index after concurrent runs differs from a fresh rebuild (-fresh +concurrent):\n%s", diff)
	}
	if !strings.Contains(got, "\ndaily/2026-03-01/new.md\tdaily/2026-03-01\t") || strings.Contains(got, "\ndaily/2026-03-02/card-001.md\tdaily/2026-03-02\t") {
		t.Error("the concurrent searches did not pick up the file changes")
	}
}

func dumpIndex(t *testing.T, root string) string {
	t.Helper()
	ws, err := store.OpenWorkspace(root)
	if err != nil {
		t.Fatal(err)
	}
	ix, err := index.Open(context.Background(), ws, schemaSQL, index.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	if _, err := ix.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	d, err := ix.Dump(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestConcurrentCallsForOneSession starts several auto_memory processes for
// the same conversation at once: the per-session lock must leave exactly
// one card.
func TestConcurrentCallsForOneSession(t *testing.T) {
	root := t.TempDir()
	conv := filepath.Join(root, "conv.json")
	if err := os.WriteFile(conv, []byte(`[{"role":"user","content":"The deploy freeze starts on 2026-12-20.","created_at":"2026-12-01T10:00:00"}]`), 0o644); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan string, 4)
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.Command("reme", "-w", filepath.Join(root, "ws"), "auto_memory", "session_id=same", "messages=@"+conv)
			cmd.Env = append(os.Environ(), "COHERE_API_KEY=")
			if out, err := cmd.CombinedOutput(); err != nil {
				errs <- fmt.Sprintf("%v: %s", err, out)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	cards, err := filepath.Glob(filepath.Join(root, "ws", "daily", "2026-12-01", "*.md"))
	if err != nil || len(cards) != 1 {
		t.Fatalf("cards %v (%v), want exactly one", cards, err)
	}
}
