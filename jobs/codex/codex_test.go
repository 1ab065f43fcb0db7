package codex

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/reme-dev/reme/store"
)

func messageTexts(t *testing.T, msgs []store.Message) []string {
	t.Helper()
	var out []string
	for _, m := range msgs {
		var b struct{ Text string }
		if len(m.Content) != 1 || json.Unmarshal(m.Content[0], &b) != nil {
			t.Fatalf("message %+v has no single text block", m)
		}
		out = append(out, m.Role+" @ "+m.CreatedAt+": "+b.Text)
	}
	return out
}

func TestRenderMessages(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "codex", "rollout.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	got := messageTexts(t, RenderMessages(splitLines(data)))
	want := []string{
		"user @ 2026-06-24T09:00:02.000Z: The retry budget for the payments client should be 3 attempts with jittered backoff capped at 2 seconds. Please change it.",
		`assistant @ 2026-06-24T09:00:05.000Z: [tool shell({"command":["rg","-n","MaxRetries","payments"]})]` + "\n" +
			"[tool result: payments/client.go:42: MaxRetries: 5,]\n" +
			"[tool apply_patch(*** Begin Patch *** Update File: payments/client.go - MaxRetries: 5, + MaxRetries: 3, *** End Patch)]\n" +
			"[tool result: Success. Updated the following files: M payments/client.go]",
		"assistant @ 2026-06-24T09:00:12.000Z: Done: the payments client now retries 3 times with jittered backoff capped at 2s (payments/client.go).",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestSaveAppendsOnlyNewCompleteLines(t *testing.T) {
	ws, err := store.OpenWorkspace(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	tr := filepath.Join(t.TempDir(), "rollout-2026-06-24T08-59-58-s1.jsonl")
	write := func(s string) {
		t.Helper()
		if err := os.WriteFile(tr, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	l1 := `{"timestamp":"t1","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"one"}]}}`
	l2 := `{"timestamp":"t2","type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"two"}]}}`
	// a line still being written is not taken yet, nor is one that is not JSON
	write(l1 + "\nnot json\n" + l2[:20])
	c, err := Save(ws, "s1", tr, 0)
	if err != nil || c.New != 1 {
		t.Fatalf("first save: %+v %v", c, err)
	}
	write(l1 + "\nnot json\n" + l2 + "\n")
	if c, err = Save(ws, "s1", tr, 0); err != nil || c.New != 1 || len(c.Lines) != 2 {
		t.Fatalf("second save: %+v %v", c, err)
	}
	if c, err = Save(ws, "s1", tr, 0); err != nil || c.New != 0 {
		t.Fatalf("a save with nothing new: %+v %v", c, err)
	}
	b, _ := os.ReadFile(ws.Abs(CopyPath("s1")))
	if string(b) != l1+"\n"+l2+"\n" {
		t.Errorf("copy:\n%s", b)
	}
	if _, err := Save(ws, "s1", tr, 10); err == nil || !strings.Contains(err.Error(), "max_transcript_bytes") {
		t.Errorf("an oversized transcript: %v", err)
	}
	if _, err := Save(ws, "../x", tr, 0); err == nil {
		t.Error("a session id with a path was accepted")
	}
	if _, err := Save(ws, "s1", filepath.Dir(tr), 0); err == nil {
		t.Error("a folder was taken for a transcript")
	}
}

// TestSaveSetsAsideTornTail: a copy whose last line a crash cut is repaired
// by the next save: the torn bytes go to <copy>.corrupt (they were dropped)
// and the line is copied again from the rollout.
func TestSaveSetsAsideTornTail(t *testing.T) {
	ws, err := store.OpenWorkspace(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	l1 := `{"timestamp":"t1","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"one"}]}}`
	l2 := `{"timestamp":"t2","type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"two"}]}}`
	tr := filepath.Join(t.TempDir(), "rollout.jsonl")
	if err := os.WriteFile(tr, []byte(l1+"\n"+l2+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := ws.WriteFile(CopyPath("s1"), []byte(l1+"\n"+l2[:30])); err != nil {
		t.Fatal(err)
	}
	c, err := Save(ws, "s1", tr, 0)
	if err != nil || c.New != 1 || c.SetAside == nil || c.SetAside.To != CopyPath("s1")+store.CorruptSuffix {
		t.Fatalf("%+v %v", c, err)
	}
	if b, _ := os.ReadFile(ws.Abs(CopyPath("s1"))); string(b) != l1+"\n"+l2+"\n" {
		t.Errorf("copy:\n%s", b)
	}
	if b, err := os.ReadFile(ws.Abs(c.SetAside.To)); err != nil || string(b) != l2[:30]+"\n" {
		t.Errorf(".corrupt = %q, %v", b, err)
	}
	// a copy saved whole but without its last newline is appended to
	if err := ws.WriteFile(CopyPath("s2"), []byte(l1)); err != nil {
		t.Fatal(err)
	}
	if c, err := Save(ws, "s2", tr, 0); err != nil || c.New != 1 || c.SetAside != nil {
		t.Fatalf("%+v %v", c, err)
	}
	if b, _ := os.ReadFile(ws.Abs(CopyPath("s2"))); string(b) != l1+"\n"+l2+"\n" {
		t.Errorf("copy:\n%s", b)
	}
}

// TestSaveRedactsWithRedactSessions: with redact.sessions the copy holds
// the lines masked, and a later save neither repeats them nor, with the
// setting turned off, adds the raw lines again.
func TestSaveRedactsWithRedactSessions(t *testing.T) {
	ws, err := store.OpenWorkspace(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	key := "AKIA" + "2QZ5K7X4MWRP3T6N"
	l1 := `{"timestamp":"t1","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"the key is ` + key + `"}]}}`
	tr := filepath.Join(t.TempDir(), "rollout.jsonl")
	if err := os.WriteFile(tr, []byte(l1+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ws.RedactSessions = true
	if c, err := Save(ws, "s1", tr, 0); err != nil || c.New != 1 {
		t.Fatalf("%+v %v", c, err)
	}
	ws.RedactSessions = false
	if c, err := Save(ws, "s1", tr, 0); err != nil || c.New != 0 {
		t.Fatalf("the masked line was saved again: %+v %v", c, err)
	}
	b, _ := os.ReadFile(ws.Abs(CopyPath("s1")))
	if strings.Contains(string(b), key) || !strings.Contains(string(b), "the key is [redacted:aws-access-key]") || strings.Count(string(b), "\n") != 1 {
		t.Errorf("copy:\n%s", b)
	}
}

func TestFindTranscript(t *testing.T) {
	home := t.TempDir()
	dir := filepath.Join(home, ".codex", "sessions", "2026", "06", "24")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(dir, "rollout-2026-06-24T08-59-58-abc.jsonl")
	os.WriteFile(want, nil, 0o644)
	os.WriteFile(filepath.Join(dir, "rollout-2026-06-24T08-59-58-xabcx.jsonl"), nil, 0o644)
	env := func(string) string { return "" }
	if got, err := FindTranscript("abc", env, home); err != nil || got != want {
		t.Errorf("got %q %v", got, err)
	}
	if _, err := FindTranscript("nope", env, home); err == nil {
		t.Error("found a missing session")
	}
	other := t.TempDir()
	if _, err := FindTranscript("abc", func(k string) string {
		if k == "CODEX_HOME" {
			return other
		}
		return ""
	}, home); err == nil {
		t.Error("CODEX_HOME was not used")
	}
}
