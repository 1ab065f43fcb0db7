package index

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/reme-dev/reme/store"
)

// benchWorkspace writes n cards (~2 KB, 3 sections, 5 links, 2 tags, some
// Chinese) over 365 days, once per size for the whole benchmark run.
var benchWS sync.Map

// TestMain removes the benchmark workspaces, which outlive single tests.
func TestMain(m *testing.M) {
	code := m.Run()
	benchWS.Range(func(_, v any) bool {
		os.RemoveAll(v.(*store.Workspace).Root)
		return true
	})
	os.Exit(code)
}

func benchWorkspace(b *testing.B, n int) *store.Workspace { return benchWorkspaceLinks(b, n, false) }

// benchWorkspaceLinks is benchWorkspace with Obsidian's short links
// ([[card-00042]], [[2025-03-04/card-00042]], [text](../…/card-00042.md))
// instead of ReMe's full paths when short is set.
func benchWorkspaceLinks(b *testing.B, n int, short bool) *store.Workspace {
	key := fmt.Sprint(n, short)
	if v, ok := benchWS.Load(key); ok {
		return v.(*store.Workspace)
	}
	dir, err := os.MkdirTemp("", "reme-bench")
	if err != nil {
		b.Fatal(err)
	}
	ws, _ := store.OpenWorkspace(dir)
	ws.Init()
	words := []string{"deploy", "rollback", "canary", "latency", "budget", "index", "search", "token", "session", "gateway",
		"worker", "postgres", "cache", "regression", "recall", "migration", "alert", "pager", "review", "release"}
	for i := 0; i < n; i++ {
		date := fmt.Sprintf("2025-%02d-%02d", i%12+1, i%28+1)
		var body string
		for s := 0; s < 3; s++ {
			body += fmt.Sprintf("## Section %d\n", s)
			for l := 0; l < 6; l++ {
				body += fmt.Sprintf("- %s %s %s item%d value %d with details about %s.\n", words[(i+l)%20], words[(i*7+s)%20], words[(i*3+l*5)%20], i%997, l, words[(i+s+l)%20])
			}
			if i%5 == 0 {
				body += "我们决定重构登录流程，部署在周五之前完成。\n"
			}
			body += "\n"
		}
		for k := 1; k <= 5; k++ {
			j := (i + k*37) % n
			switch {
			case !short:
				body += fmt.Sprintf("See [[daily/2025-%02d-%02d/card-%05d.md]].\n", j%12+1, j%28+1, j)
			case k%3 == 0:
				body += fmt.Sprintf("See [the card](../2025-%02d-%02d/card-%05d.md).\n", j%12+1, j%28+1, j)
			case k%3 == 1:
				body += fmt.Sprintf("See [[card-%05d]].\n", j)
			default:
				body += fmt.Sprintf("See [[2025-%02d-%02d/card-%05d]].\n", j%12+1, j%28+1, j)
			}
		}
		content := card(fmt.Sprintf("card-%05d", i), fmt.Sprintf("Card %d about %s and %s.", i, words[i%20], words[(i+3)%20]), body,
			fmt.Sprintf("memory_tags: [%s, t%d]", words[i%20], i%50))
		p := ws.Abs(fmt.Sprintf("daily/%s/card-%05d.md", date, i))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	benchWS.Store(key, ws)
	return ws
}

func BenchmarkScanTree10k(b *testing.B) {
	ws := benchWorkspace(b, 10000)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := scanTree(ctx, ws.Root, []string{"daily", "digest"}, 2); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSyncNoChange10k(b *testing.B) {
	ws := benchWorkspace(b, 10000)
	ix := openIndex(b, ws, Options{})
	mustSync(b, ix)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		mustSync(b, ix)
	}
}

func BenchmarkSearch10k(b *testing.B) {
	ws := benchWorkspace(b, 10000)
	if dir := os.Getenv("REME_BENCH_WORKSPACE"); dir != "" {
		// a workspace made by scripts/gencorpus, already indexed
		ws, _ = store.OpenWorkspace(dir)
	}
	ix := openIndex(b, ws, Options{})
	mustSync(b, ix)
	for _, q := range []string{"deploy rollback canary", "what did we decide about the gateway latency budget", "登录流程", "item42", "release", "zanzibar"} {
		b.Run(q, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if _, err := ix.Search(ctx, SearchOptions{Query: q, Limit: 5, Context: 1}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkRebuild2k(b *testing.B) { benchRebuild(b, benchWorkspace(b, 2000)) }

func BenchmarkRebuild2kShortLinks(b *testing.B) { benchRebuild(b, benchWorkspaceLinks(b, 2000, true)) }

func benchRebuild(b *testing.B, ws *store.Workspace) {
	ix := openIndex(b, ws, Options{})
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := ix.Rebuild(ctx, nil); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(2000*b.N)/b.Elapsed().Seconds(), "cards/s")
}

func BenchmarkSyncOneChange10k(b *testing.B) {
	ws := benchWorkspace(b, 10000)
	ix := openIndex(b, ws, Options{})
	mustSync(b, ix)
	p := ws.Abs("daily/2025-02-22/card-05005.md")
	orig, err := os.ReadFile(p)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := os.WriteFile(p, append(orig, fmt.Sprintf("edit %d\n", i)...), 0o644); err != nil {
			b.Fatal(err)
		}
		if rep := mustSync(b, ix); rep.Modified != 1 {
			b.Fatalf("modified %d", rep.Modified)
		}
	}
}

// BenchmarkUpdatePathsOne10k re-indexes one edited note by path, as reme
// does after writing it: one small write transaction, no scan.
func BenchmarkUpdatePathsOne10k(b *testing.B) {
	ws := benchWorkspace(b, 10000)
	ix := openIndex(b, ws, Options{})
	mustSync(b, ix)
	const rel = "daily/2025-02-22/card-05005.md"
	p := ws.Abs(rel)
	orig, err := os.ReadFile(p)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := os.WriteFile(p, append(orig, fmt.Sprintf("edit %d\n", i)...), 0o644); err != nil {
			b.Fatal(err)
		}
		if err := ix.UpdatePaths(b.Context(), rel); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRebuildWorkspace rebuilds the index of a workspace made by
// scripts/gencorpus (REME_BENCH_WORKSPACE=DIR).
func BenchmarkRebuildWorkspace(b *testing.B) {
	dir := os.Getenv("REME_BENCH_WORKSPACE")
	if dir == "" {
		b.Skip("set REME_BENCH_WORKSPACE to a workspace made by scripts/gencorpus")
	}
	ws, err := store.OpenWorkspace(dir)
	if err != nil {
		b.Fatal(err)
	}
	ix := openIndex(b, ws, Options{})
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := ix.Rebuild(ctx, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSyncAddRemove10kShortLinks adds and removes a note whose name
// five cards link to by name: the sync resolves those links again.
func BenchmarkSyncAddRemove10kShortLinks(b *testing.B) {
	ws := benchWorkspaceLinks(b, 10000, true)
	ix := openIndex(b, ws, Options{})
	mustSync(b, ix)
	p := ws.Abs("digest/wiki/card-05005.md")
	os.MkdirAll(filepath.Dir(p), 0o755)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := os.WriteFile(p, []byte(card("card-05005", "a namesake", "x\n")), 0o644); err != nil {
			b.Fatal(err)
		}
		if rep := mustSync(b, ix); rep.Added != 1 {
			b.Fatalf("added %d", rep.Added)
		}
		if err := os.Remove(p); err != nil {
			b.Fatal(err)
		}
		if rep := mustSync(b, ix); rep.Deleted != 1 {
			b.Fatalf("deleted %d", rep.Deleted)
		}
	}
}
