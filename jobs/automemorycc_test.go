package jobs

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/reme-dev/reme/jobs/llm"
)

func ccLine(uuid, role, ts, text string) string {
	b, _ := json.Marshal(map[string]any{"type": role, "uuid": uuid, "timestamp": ts, "sessionId": "cc-1",
		"message": map[string]any{"role": role, "content": text}})
	return string(b) + "\n"
}

func ccTranscript(t *testing.T, lines ...string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "cc-1.jsonl")
	if err := os.WriteFile(p, []byte(strings.Join(lines, "")), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestAutoMemoryCCDayWithoutMessages: --date for a day the session has no
// messages on writes nothing, not an empty card.
func TestAutoMemoryCCDayWithoutMessages(t *testing.T) {
	env, _ := newEnv(t, nil)
	tr := ccTranscript(t, ccLine("u1", "user", "2026-06-20T02:00:00Z", "The nightly build moved to 03:00 UTC."))
	res, err := AutoMemoryCC(context.Background(), env, AutoMemoryCCRequest{SessionID: "cc-1", TranscriptPath: tr, Date: "2026-06-25"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Path != nil || res.Skipped != "no messages on 2026-06-25" {
		t.Fatalf("%+v", res)
	}
	if env.WS.Exists("daily/2026-06-25") || env.WS.Exists("daily/2026-06-25.md") {
		t.Error("a card or day page was written for a day without messages")
	}
	// the day that has them gets its card
	res, err = AutoMemoryCC(context.Background(), env, AutoMemoryCCRequest{SessionID: "cc-1", TranscriptPath: tr, Date: "2026-06-20"})
	if err != nil || res.Path == nil {
		t.Fatalf("%+v %v", res, err)
	}
}

// TestAutoMemoryCCFallsBackByDefault: a Stop hook does not lose the day
// to a dead model: the extractive card is written, and the model is
// called once.
func TestAutoMemoryCCFallsBackByDefault(t *testing.T) {
	var calls atomic.Int32
	env, _ := newEnv(t, deadModel(&calls, llm.ErrTimeout))
	tr := ccTranscript(t,
		ccLine("u1", "user", "2026-06-20T02:00:00Z", "The nightly build moved to 03:00 UTC."),
		ccLine("a1", "assistant", "2026-06-20T02:00:05Z", "Noted: nightly build at 03:00 UTC."))
	res, err := AutoMemoryCC(context.Background(), env, AutoMemoryCCRequest{SessionID: "cc-1", TranscriptPath: tr})
	if err != nil {
		t.Fatal(err)
	}
	if res.Path == nil || res.Distiller != "extractive" || calls.Load() != 1 {
		t.Fatalf("%d calls, %+v", calls.Load(), res)
	}
	// fallback=none keeps the old behaviour: the call fails, messages pending
	calls.Store(0)
	env, _ = newEnv(t, deadModel(&calls, llm.ErrTimeout))
	if _, err := AutoMemoryCC(context.Background(), env, AutoMemoryCCRequest{SessionID: "cc-1", TranscriptPath: tr, Fallback: FallbackNone}); err == nil || !strings.Contains(err.Error(), "stay pending") {
		t.Fatalf("err = %v", err)
	}
}
