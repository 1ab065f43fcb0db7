package index

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/reme-dev/reme/store"
)

// schemaText is the repository's schema.sql, read from disk so that tests
// use exactly what main embeds.
func schemaText(t testing.TB) string {
	t.Helper()
	b, err := os.ReadFile("../schema.sql")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func newWorkspace(t testing.TB, files map[string]string) *store.Workspace {
	t.Helper()
	ws, err := store.OpenWorkspace(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := ws.Init(); err != nil {
		t.Fatal(err)
	}
	for p, c := range files {
		writeFile(t, ws, p, c)
	}
	return ws
}

func writeFile(t testing.TB, ws *store.Workspace, rel, content string) {
	t.Helper()
	p := ws.Abs(rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func openIndex(t testing.TB, ws *store.Workspace, opt Options) *Index {
	t.Helper()
	ix, err := Open(context.Background(), ws, schemaText(t), opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	return ix
}

func mustSync(t testing.TB, ix *Index) *SyncReport {
	t.Helper()
	rep, err := ix.Sync(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func search(t testing.TB, ix *Index, q string, opt SearchOptions) []Result {
	t.Helper()
	opt.Query = q
	if opt.Limit == 0 {
		opt.Limit = 50
	}
	res, err := ix.Search(context.Background(), opt)
	if err != nil {
		t.Fatalf("search %q: %v", q, err)
	}
	return res.Results
}

func paths(rs []Result) []string {
	var out []string
	seen := map[string]bool{}
	for _, r := range rs {
		if !seen[r.Path] {
			seen[r.Path] = true
			out = append(out, r.Path)
		}
	}
	return out
}

func sortedPaths(rs []Result) []string {
	p := paths(rs)
	sort.Strings(p)
	return p
}

func card(name, desc, body string, extra ...string) string {
	var b strings.Builder
	b.WriteString("---\nname: " + name + "\ndescription: " + desc + "\n")
	for _, e := range extra {
		b.WriteString(e + "\n")
	}
	b.WriteString("---\n\n" + body)
	return b.String()
}
