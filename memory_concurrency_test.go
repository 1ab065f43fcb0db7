package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/reme-dev/reme/store"
)

// TestConcurrentMemoryWrites: processes writing entries at once, and
// context reading while they do, all succeed; every entry is on disk and
// MEMORY.md lists every one of them.
func TestConcurrentMemoryWrites(t *testing.T) {
	if testing.Short() {
		t.Skip("starts many processes")
	}
	root := t.TempDir()
	const writers = 8
	var wg sync.WaitGroup
	errs := make(chan string, 2*writers)
	for i := 0; i < writers; i++ {
		wg.Add(2)
		go func(i int) {
			defer wg.Done()
			out, err := exec.Command("reme", "-w", root, "memory_write", "--type", "user", "--name", fmt.Sprintf("fact-%d", i),
				"--description", fmt.Sprintf("Fact %d.", i), "--content", fmt.Sprintf("The fact number %d.", i)).CombinedOutput()
			if err != nil {
				errs <- fmt.Sprintf("write %d: %v\n%s", i, err, out)
			}
		}(i)
		go func(i int) {
			defer wg.Done()
			out, err := exec.Command("reme", "-w", root, "context", "--session", fmt.Sprintf("s%d", i), "fact number").CombinedOutput()
			// the workspace may not exist yet for the first readers
			if err != nil && !strings.Contains(string(out), "does not exist") {
				errs <- fmt.Sprintf("context %d: %v\n%s", i, err, out)
			}
		}(i)
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	page, err := os.ReadFile(filepath.Join(root, store.MemoryIndexPath))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < writers; i++ {
		if _, err := os.Stat(filepath.Join(root, store.EntriesDir, fmt.Sprintf("fact-%d.md", i))); err != nil {
			t.Errorf("entry %d: %v", i, err)
		}
		if !strings.Contains(string(page), fmt.Sprintf("[[memory/entries/fact-%d.md|fact-%d]]", i, i)) {
			t.Errorf("MEMORY.md lacks fact-%d:\n%s", i, page)
		}
		// reme's record of what it wrote lost none of them: an update
		// without a hash goes through
		if out, err := exec.Command("reme", "-w", root, "memory_write", "--name", fmt.Sprintf("fact-%d", i), "--content", "Updated.").CombinedOutput(); err != nil {
			t.Errorf("update %d: %v\n%s", i, err, out)
		}
	}
}

// TestMemoryGetPrintsWhatItHashed: memory_get prints the file its hash
// names, even while the entry is edited by hand as it reads it.
func TestMemoryGetPrintsWhatItHashed(t *testing.T) {
	root := t.TempDir()
	if _, stderr, code := runReme(t, "-w", root, "memory_write", "--type", "user", "--name", "editor",
		"--description", "The editor.", "--content", "Uses Helix."); code != 0 {
		t.Fatalf("memory_write: %d %s", code, stderr)
	}
	p := filepath.Join(root, store.EntriesDir, "editor.md")
	orig, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	// Two versions of the entry, each put in place whole (as editors
	// save), as fast as they can be.
	versions := [][]byte{orig, []byte(strings.Replace(string(orig), "Uses Helix.", "Uses Helix, and Vim over ssh.", 1))}
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		tmp := p + ".tmp"
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			if os.WriteFile(tmp, versions[i%2], 0o644) != nil || os.Rename(tmp, p) != nil {
				return
			}
		}
	}()
	defer func() { close(stop); <-done }()
	for i := 0; i < 200; i++ {
		stdout, stderr, code := runReme(t, "-w", root, "memory_get", "memory/entries/editor.md")
		if code != 0 {
			t.Fatalf("memory_get: %d %s", code, stderr)
		}
		head, file, ok := strings.Cut(stdout, "\n# hash: ")
		hash, text, ok2 := strings.Cut(file, "\n")
		if !ok || !ok2 || !strings.HasPrefix(head, "# memory/entries/editor.md") {
			t.Fatalf("memory_get printed:\n%s", stdout)
		}
		if got := store.Sum([]byte(text)); got != hash {
			t.Fatalf("run %d: the text printed hashes to %s, the hash printed is %s:\n%s", i, got, hash, text)
		}
	}
}
