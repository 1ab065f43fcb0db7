package index

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/reme-dev/reme/store"
)

// copyExample copies testdata/workspace into a temporary workspace.
func copyExample(t testing.TB) *store.Workspace {
	t.Helper()
	src := filepath.Join("..", "testdata", "workspace")
	files := map[string]string{}
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if d.Name() == "metadata" {
				return filepath.SkipDir // a README run may have left an index here
			}
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		files[filepath.ToSlash(rel)] = string(b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return newWorkspace(t, files)
}

// TestCJKCompleteRecall searches for every two-character CJK sequence of
// the example workspace and requires exactly the notes that contain it.
func TestCJKCompleteRecall(t *testing.T) {
	ws := copyExample(t)
	ix := openIndex(t, ws, Options{})
	mustSync(t, ix)
	// what a note offers to search: name, description and body as indexed
	texts := map[string]string{}
	for dir := range map[string]bool{"daily": true, "digest": true} {
		filepath.WalkDir(ws.Abs(dir), func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(p, ".md") {
				return err
			}
			rel, _ := filepath.Rel(ws.Root, p)
			rel = filepath.ToSlash(rel)
			b, _ := os.ReadFile(p)
			n := store.ParseNote(rel, b)
			texts[rel] = n.Name() + "\n" + n.Description() + "\n" + linkWords(n.Body)
			return nil
		})
	}
	bigrams := map[string]bool{}
	for _, text := range texts {
		rs := []rune(text)
		for i := 0; i+1 < len(rs); i++ {
			if store.IsCJK(rs[i]) && store.IsCJK(rs[i+1]) {
				bigrams[string(rs[i:i+2])] = true
			}
		}
	}
	if len(bigrams) < 500 {
		t.Fatalf("only %d bigrams in the example workspace", len(bigrams))
	}
	words := []string{"登录", "部署", "部署回滚", "登录流程", "检索", "回滚演练", "时序图"}
	for b := range bigrams {
		words = append(words, b)
	}
	sort.Strings(words)
	missed := 0
	for _, w := range words {
		var want []string
		for p, text := range texts {
			if strings.Contains(text, w) {
				want = append(want, p)
			}
		}
		sort.Strings(want)
		got := sortedPaths(search(t, ix, w, SearchOptions{Limit: 1000}))
		if len([]rune(w)) > 2 {
			// longer words are OR-ed bigrams: every note with the word must
			// be found, and be ranked first
			res := search(t, ix, w, SearchOptions{Limit: 1000})
			for i, p := range want {
				if !contains(got, p) {
					t.Errorf("%s: %s not found", w, p)
				}
				if i < len(res) && !contains(want, res[i].Path) {
					t.Errorf("%s: result %d is %s, which lacks the exact word, ranked above a note that has it", w, i, res[i].Path)
				}
			}
			continue
		}
		if !cmp.Equal(got, want) {
			missed++
			if missed < 10 {
				t.Errorf("%s: got %v, want %v", w, got, want)
			}
		}
	}
	if missed > 0 {
		t.Errorf("%d of %d words not recalled exactly", missed, len(words))
	}
}
