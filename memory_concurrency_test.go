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
