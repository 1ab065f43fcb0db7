package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/reme-dev/reme/jobs/llm/llmtest"
	"github.com/reme-dev/reme/store"
)

// TestConcurrentSessionsNeverShareACard starts rounds of eight auto_memory
// processes, each for its own session, all choosing the same card name (a
// model that always says "release-plan", then an extractive distiller
// given the same words): every session must end with its own card, the
// clashes suffixed, each file named after its frontmatter name, and the
// day page listing them all.
func TestConcurrentSessionsNeverShareACard(t *testing.T) {
	if testing.Short() {
		t.Skip("starts many processes")
	}
	fake := llmtest.NewFakeCohereServer(t)
	fake.SetHandler(func(body []byte) llmtest.FakeReply {
		var req struct {
			Messages []struct {
				Role string `json:"role"`
			} `json:"messages"`
			Tools []struct {
				Function struct {
					Name string `json:"name"`
				} `json:"function"`
			} `json:"tools"`
		}
		if err := json.Unmarshal(body, &req); err != nil {
			return llmtest.FakeReply{Status: 400}
		}
		writes := false
		for _, tl := range req.Tools {
			writes = writes || tl.Function.Name == "daily_write"
		}
		if !writes || req.Messages[len(req.Messages)-1].Role == "tool" {
			return llmtest.FakeReply{Text: "Done."}
		}
		args, _ := json.Marshal(map[string]string{"name": "release-plan", "description": "The release plan.", "content": "- Release on Friday."})
		return llmtest.FakeReply{ToolCalls: []llmtest.FakeToolCall{{Name: "daily_write", Arguments: args}}}
	})
	root := filepath.Join(t.TempDir(), "ws")
	run := func(model bool, sid, date, text string) error {
		msgs := fmt.Sprintf(`[{"role":"user","content":%q,"created_at":"%sT10:00:00+08:00"}]`, text, date)
		cmd := exec.Command("reme", "-w", root, "auto_memory", "session_id="+sid, "messages="+msgs)
		env := append(os.Environ(), "REME_TIMEZONE=Asia/Shanghai", "REME_LLM_MAX_RETRIES=1")
		if model {
			env = append(env, "COHERE_API_KEY="+llmtest.FakeAPIKey, "REME_LLM_BASE_URL="+fake.URL())
		} else {
			env = append(env, "COHERE_API_KEY=")
		}
		cmd.Env = env
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("%s: %v\n%s", sid, err, out)
		}
		return nil
	}
	const sessions, rounds = 8, 5
	for r := 0; r < rounds+1; r++ {
		model := r < rounds // the last round has no model
		date := "2026-06-24"
		if !model {
			date = "2026-06-25"
		}
		var wg sync.WaitGroup
		errs := make(chan error, sessions)
		for i := 0; i < sessions; i++ {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				errs <- run(model, fmt.Sprintf("s%d-%d", r, i), date, "The release goes out on Friday after the QA sign-off.")
			}(i)
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Error(err)
			}
		}
	}
	ws, err := store.OpenWorkspace(root)
	if err != nil {
		t.Fatal(err)
	}
	for date, want := range map[string]int{"2026-06-24": sessions * rounds, "2026-06-25": sessions} {
		notes, err := ws.DailyNotes(date)
		if err != nil {
			t.Fatal(err)
		}
		owners := map[string]string{}
		for _, n := range notes {
			sid := n.FM.String("session_id")
			if prev, dup := owners[sid]; dup || sid == "" {
				t.Errorf("%s: session %q owns %s and %s", date, sid, prev, n.Path)
			}
			owners[sid] = n.Path
			if stem := strings.TrimSuffix(filepath.Base(n.Path), ".md"); n.FM.String("name") != stem {
				t.Errorf("%s is named %q", n.Path, n.FM.String("name"))
			}
		}
		if len(notes) != want {
			t.Errorf("%s: %d cards for %d sessions", date, len(notes), want)
		}
		page, err := os.ReadFile(filepath.Join(root, "daily", date+".md"))
		if err != nil || strings.Count(string(page), "\n- [[daily/"+date+"/") != want {
			t.Errorf("%s: the day page lists %d cards (%v)", date, strings.Count(string(page), "\n- [[daily/"+date+"/"), err)
		}
	}
}
