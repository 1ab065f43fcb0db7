package claudecode

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/reme-dev/reme/store"
)

func TestRecentTools(t *testing.T) {
	got, err := RecentTools(claudeFixturePath(t), 20)
	if err != nil {
		t.Fatal(err)
	}
	if !cmp.Equal(got, []string{"Bash", "Edit", "Read", "Write"}) {
		t.Errorf("all calls: %v", got)
	}
	// only the last n calls count: Edit Bash Edit (Read and Write came before)
	if got, _ := RecentTools(claudeFixturePath(t), 3); !cmp.Equal(got, []string{"Bash", "Edit"}) {
		t.Errorf("last 3: %v", got)
	}
	// a transcript larger than the tail read: the cut first line is skipped
	big := filepath.Join(t.TempDir(), "big.jsonl")
	fixture, _ := os.ReadFile(claudeFixturePath(t))
	pad := strings.Repeat(`{"type":"user","message":{"role":"user","content":"`+strings.Repeat("x", 1000)+`"}}`+"\n", 400)
	if err := os.WriteFile(big, append([]byte(pad), fixture...), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := RecentTools(big, 20); err != nil || !cmp.Equal(got, []string{"Bash", "Edit", "Read", "Write"}) {
		t.Errorf("large transcript: %v %v", got, err)
	}
	if _, err := RecentTools(t.TempDir(), 20); !errors.Is(err, store.ErrInput) {
		t.Errorf("a folder: %v", err)
	}
	if _, err := RecentTools(filepath.Join(t.TempDir(), "none.jsonl"), 20); err == nil {
		t.Error("a missing transcript")
	}
}
