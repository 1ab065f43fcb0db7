package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reme-dev/reme/store"
)

// TestFaultDiskFullMemoryWrite updates and creates long-term entries on a
// full disk at many free-space levels: a write that fails says
// the disk is full and leaves the entry whole (the old version, or the
// new), MEMORY.md listing exactly the entries there are, and no temp file;
// once space is freed the same command works.
func TestFaultDiskFullMemoryWrite(t *testing.T) {
	faultEnv(t)
	mnt := diskFullFS(t, 8<<20)
	ws := filepath.Join(mnt, "ws")
	mustRun(t, ws, "", "memory_write", "--type", "user", "--name", "go-backend", "--content", "Ten years of Go.")
	long := strings.Repeat("Ten years of Go backend, new to frontend, prefers bullets. ", 120)
	failures := 0
	for i, freePages := range []int64{0, 1, 2, 3, 4, 6, 8, 16, 32} {
		content := long + strings.Repeat("!", i)
		release := fillDisk(t, mnt, freePages*pageSize)
		before, _ := os.ReadFile(filepath.Join(ws, store.EntriesDir, "go-backend.md"))
		r := remeIn(t, ws, "", "memory_write", "--name", "go-backend", "--content", content)
		extra := remeIn(t, ws, "", "memory_write", "--type", "project", "--name", "extra", "--content", "An extra entry.")
		for _, res := range []remeResult{r, extra} {
			if res.code == 0 {
				continue
			}
			failures++
			if !strings.Contains(res.stderr, "no space left on device") && !strings.Contains(res.stderr, "disk is full") && !strings.Contains(res.stderr, "disk I/O error") {
				t.Errorf("free=%d pages: the error does not say the disk is full:\n%s", freePages, res.stderr)
			}
		}
		release()
		// the next command finishes or rolls back what was cut short
		mustRun(t, ws, "", "history", "--limit", "1")
		after, err := os.ReadFile(filepath.Join(ws, store.EntriesDir, "go-backend.md"))
		if err != nil {
			t.Fatalf("free=%d pages: the entry is gone: %v", freePages, err)
		}
		n := store.ParseNote("go-backend.md", after)
		if n.FMErr != nil || (string(after) != string(before) && strings.TrimSpace(n.Content()) != strings.TrimSpace(content)) {
			t.Errorf("free=%d pages: the entry is neither the old version nor the new:\n%s", freePages, after)
		}
		mustRun(t, ws, "", "memory_write", "--name", "go-backend", "--content", content)
		mustRun(t, ws, "", "memory_write", "--type", "project", "--name", "extra", "--content", "An extra entry.")
		status := mustRun(t, ws, "", "status")
		if !strings.Contains(status.stdout, "MEMORY.md   lists all 2 entries") {
			t.Errorf("free=%d pages: %s", freePages, status.stdout)
		}
		mustRun(t, ws, "", "memory_delete", "--name", "extra")
	}
	if failures == 0 {
		t.Fatal("no write ran out of space: the levels do not test a full disk")
	}
	noTempFiles(t, ws)
}
