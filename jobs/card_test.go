package jobs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reme-dev/reme/jobs/llm"
	"github.com/reme-dev/reme/jobs/llm/llmtest"
	"github.com/reme-dev/reme/store"
)

// TestAutoResourceModelKeysAreReplacedNotRefused: a model that passes
// source_resource itself (ReMe's own prompt tells it to), case variants of
// owned keys, and keys that cannot be keys still gets its card; the
// system's values win, the bad keys are left out, and the model is told.
func TestAutoResourceModelKeysAreReplacedNotRefused(t *testing.T) {
	model := llmtest.NewScripted(
		llmtest.ToolCallReply(call("write", map[string]any{"path": "daily/2026-06-20/notes.md", "name": "meeting-notes",
			"description": "Meeting minutes: ship on Friday.", "content": "- Ship on Friday.",
			"metadata": map[string]any{"source_resource": "[[resource/elsewhere.md]]", "Status": "draft", "SESSION_ID": "x",
				"source_sha256": "0000", "bad\nkey": 1, "": 2, "topic": "release", "memory_tags": []any{"Release Plan", "release plan"}}})),
		llmtest.TextReply("Wrote the resource card."),
	)
	env, _ := newEnv(t, model)
	writeWS(t, env, "resource/2026-06-20/notes.md", "Meeting minutes: ship on Friday.\n")
	res := runResource(t, env, ResourceChange{Path: "resource/2026-06-20/notes.md"})
	it := res.Results[0]
	card := "daily/2026-06-20/meeting-notes.md"
	if !it.Success || it.Metadata.Path == nil || *it.Metadata.Path != card || it.Answer != "Wrote "+card || it.Metadata.Reply != "Wrote the resource card." {
		t.Fatalf("item %+v", it)
	}
	n, err := env.WS.ReadNote(card)
	if err != nil {
		t.Fatal(err)
	}
	if n.FM.String("source_resource") != "[[resource/2026-06-20/notes.md]]" || len(n.FM.String(SourceSHA256Key)) != 64 {
		t.Errorf("provenance %s", n.FM.JSON())
	}
	for _, k := range n.FM.Keys() {
		if strings.EqualFold(k, "status") || strings.EqualFold(k, "session_id") || strings.ContainsAny(k, "\n") || k == "" {
			t.Errorf("key %q reached the card", k)
		}
	}
	if tags := n.FM.Strings(store.TagKey); n.FM.String("topic") != "release" || len(tags) != 1 || !strings.EqualFold(tags[0], "release_plan") {
		t.Errorf("descriptive keys %s", n.FM.JSON())
	}
	tool := model.Requests()[1].Messages
	if r := tool[len(tool)-1].Text(); !strings.Contains(r, "Status is kept by the system") || !strings.Contains(r, `"bad\nkey" was left out`) {
		t.Errorf("the model was not told: %q", r)
	}
}

// TestAutoResourceNoCardIsNoSuccess: a run that ends without a card (its
// write refused, or no write at all) fails the item with the reason, and
// no answer says "Wrote"; an explicit skip keeps the model's reason.
func TestAutoResourceNoCardIsNoSuccess(t *testing.T) {
	for _, tt := range []struct {
		name    string
		replies []*llm.Response
		ok      bool
		want    string
	}{
		{"text only", []*llm.Response{llmtest.TextReply("Wrote the resource card.")}, false, `it answered "Wrote the resource card."`},
		{"write refused", []*llm.Response{
			llmtest.ToolCallReply(call("write", map[string]any{"path": "daily/2026-06-20/other.md", "content": "x"})),
			llmtest.TextReply("Wrote the resource card.")}, false, "no permission"},
		{"skip", []*llm.Response{
			llmtest.ToolCallReply(call("skip", map[string]any{"reason": "The file holds only a template."})),
			llmtest.TextReply("Skipped.")}, true, "Skipped: The file holds only a template."},
	} {
		t.Run(tt.name, func(t *testing.T) {
			env, _ := newEnv(t, llmtest.NewScripted(tt.replies...))
			writeWS(t, env, "resource/2026-06-20/doc.md", "# Template\n")
			it := runResource(t, env, ResourceChange{Path: "resource/2026-06-20/doc.md"}).Results[0]
			if it.Success != tt.ok || !strings.Contains(it.Answer, tt.want) || strings.HasPrefix(it.Answer, "Wrote") || it.Metadata.Path != nil {
				t.Fatalf("item %+v", it)
			}
			if env.WS.Exists("daily/2026-06-20") {
				t.Error("a card folder was made")
			}
		})
	}
}

// TestAutoResourceFallbackWritesExtractiveCard: with fallback=extractive a
// failed model run gives the extractive card, marked as such; a card a
// model wrote earlier is never replaced by an extract.
func TestAutoResourceFallbackWritesExtractiveCard(t *testing.T) {
	env, _ := newEnv(t, llmtest.NewScripted(llmtest.TextReply("Done.")))
	writeWS(t, env, "resource/2026-06-20/doc.md", "# Deploy plan\n\nBlue-green on 2026-07-01.\n")
	res, err := AutoResource(context.Background(), env, AutoResourceRequest{Fallback: FallbackExtractive,
		Changes: []ResourceChange{{Path: "resource/2026-06-20/doc.md"}}})
	if err != nil {
		t.Fatal(err)
	}
	it := res.Results[0]
	if !it.Success || it.Metadata.Path == nil || it.Metadata.Distiller != "extractive" || len(it.Metadata.Warnings) != 1 || it.Answer != "Wrote daily/2026-06-20/doc.md (extractive)" {
		t.Fatalf("item %+v", it)
	}
	if n, _ := env.WS.ReadNote(*it.Metadata.Path); n.FM.String("distiller") != "extractive" || !strings.Contains(n.Body, "Blue-green on 2026-07-01.") {
		t.Errorf("card %s\n%s", n.FM.JSON(), n.Body)
	}
	// A model-made card and a model that fails: kept, and the item fails.
	writeWS(t, env, "daily/2026-06-20/plan.md", "---\nname: plan\nsource_resource: \"[[resource/2026-06-20/plan.md]]\"\n---\n\nwritten by a model\n")
	writeWS(t, env, "resource/2026-06-20/plan.md", "# Plan v2\n")
	env.Model = &llmtest.Scripted{Func: func(llm.Request) (*llm.Response, error) { return nil, llm.ErrServer }}
	res, err = AutoResource(context.Background(), env, AutoResourceRequest{Fallback: FallbackExtractive,
		Changes: []ResourceChange{{Path: "resource/2026-06-20/plan.md"}}})
	if err != nil {
		t.Fatal(err)
	}
	if it := res.Results[0]; it.Success || !strings.Contains(it.Answer, "keeps its last version") {
		t.Fatalf("item %+v", it)
	}
	if b, _ := os.ReadFile(env.WS.Abs("daily/2026-06-20/plan.md")); !strings.Contains(string(b), "written by a model") {
		t.Error("the model's card was replaced")
	}
}

// TestCardNameAlwaysMatchesStem: after a clash suffix, and after an update
// that changes the name, the file stem and the frontmatter name agree.
func TestCardNameAlwaysMatchesStem(t *testing.T) {
	env, _ := newEnv(t, resourceModel("notes"))
	writeWS(t, env, "daily/2026-06-20/notes.md", "---\nname: notes\n---\n\nthe user's own notes\n")
	writeWS(t, env, "resource/2026-06-20/meeting.txt", "Meeting minutes: ship on Friday.")
	it := runResource(t, env, ResourceChange{Path: "resource/2026-06-20/meeting.txt"}).Results[0]
	p := *it.Metadata.Path
	n, _ := env.WS.ReadNote(p)
	if !strings.HasPrefix(p, "daily/2026-06-20/notes--") || n.Name() != stemOf(p) {
		t.Fatalf("clash: %s named %q", p, n.Name())
	}
	// The update renames the card.
	env.Model = llmtest.NewScripted(
		llmtest.ToolCallReply(call("frontmatter_update", map[string]any{"path": p, "metadata": map[string]any{"name": "friday-ship-decision"}})),
		llmtest.TextReply("Renamed."))
	writeWS(t, env, "daily/2026-06-21/links.md", "see [["+p+"]]\n")
	writeWS(t, env, "resource/2026-06-20/meeting.txt", "Meeting minutes: ship on Friday, not Thursday.")
	it = runResource(t, env, ResourceChange{Path: "resource/2026-06-20/meeting.txt"}).Results[0]
	want := "daily/2026-06-20/friday-ship-decision.md"
	if !it.Success || *it.Metadata.Path != want || env.WS.Exists(p) {
		t.Fatalf("update: %+v", it)
	}
	if n, _ := env.WS.ReadNote(want); n.Name() != "friday-ship-decision" {
		t.Errorf("name %q", n.Name())
	}
	// A rename onto a taken name gets the suffix, and the name follows.
	env.Model = llmtest.NewScripted(
		llmtest.ToolCallReply(call("frontmatter_update", map[string]any{"path": want, "metadata": map[string]any{"name": "notes"}})),
		llmtest.TextReply("Renamed."))
	writeWS(t, env, "resource/2026-06-20/meeting.txt", "Meeting minutes: ship on Friday; QA on Thursday.")
	it = runResource(t, env, ResourceChange{Path: "resource/2026-06-20/meeting.txt"}).Results[0]
	if got := *it.Metadata.Path; got != p {
		t.Fatalf("renamed onto a taken name: %s, want %s", got, p)
	}
	if n, _ := env.WS.ReadNote(p); n.Name() != stemOf(p) {
		t.Errorf("name %q at %s", n.Name(), p)
	}
	if b, _ := os.ReadFile(env.WS.Abs("daily/2026-06-20/notes.md")); string(b) != "---\nname: notes\n---\n\nthe user's own notes\n" {
		t.Error("the user's note changed")
	}
}

// TestCardsClaimNamesExclusively: many runs creating a card of the same
// name at once each get their own file; none overwrites another.
func TestCardsClaimNamesExclusively(t *testing.T) {
	env, _ := newEnv(t, nil)
	if err := env.beginRun("test", ""); err != nil {
		t.Fatal(err)
	}
	defer env.endRun(nil)
	const n = 24
	var wg sync.WaitGroup
	paths := make([]string, n)
	errs := make([]error, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			c, err := OpenCard(env, CardSpec{Dir: "daily/2026-06-20", Date: "2026-06-20", Stem: "conversation", ClashKey: fmt.Sprintf("s%d", i),
				System: []KeyValue{{"session_id", fmt.Sprintf("s%d", i)}}})
			if err == nil {
				_, err = c.Write(context.Background(), "release-plan", "d", fmt.Sprintf("card %d", i), nil)
			}
			paths[i], errs[i] = c.Path(), err
		}(i)
	}
	wg.Wait()
	seen := map[string]bool{}
	for i := 0; i < n; i++ {
		if errs[i] != nil {
			t.Fatalf("card %d: %v", i, errs[i])
		}
		if seen[paths[i]] {
			t.Fatalf("two cards at %s", paths[i])
		}
		seen[paths[i]] = true
		nt, err := env.WS.ReadNote(paths[i])
		if err != nil || nt.FM.String("session_id") != fmt.Sprintf("s%d", i) || nt.Name() != stemOf(paths[i]) || !strings.Contains(nt.Body, fmt.Sprintf("card %d\n", i)) {
			t.Fatalf("card %d at %s: %v %s", i, paths[i], err, nt.FM.JSON())
		}
	}
}

// deadModel fails every call as a server that is down would, and counts
// the calls.
func deadModel(calls *atomic.Int32, kind error) *llmtest.Scripted {
	return &llmtest.Scripted{Func: func(llm.Request) (*llm.Response, error) {
		calls.Add(1)
		return nil, fmt.Errorf("cohere chat: %w", kind)
	}}
}

// TestDeadModelIsCalledOnce: after one dead call the model is not called
// again in the run: not by auto_tag after the extractive fallback, not by
// the agent after the image description failed. A bad request does not
// mark it down.
func TestDeadModelIsCalledOnce(t *testing.T) {
	var calls atomic.Int32
	env, _ := newEnv(t, deadModel(&calls, llm.ErrServer))
	var logs bytes.Buffer
	env.Log = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	res, err := AutoMemory(context.Background(), env, AutoMemoryRequest{SessionID: "d", Messages: []byte(convJSON), Fallback: FallbackExtractive})
	if err != nil {
		t.Fatal(err)
	}
	if calls.Load() != 1 || res.Distiller != "extractive" || res.AutoTag == nil || !strings.HasPrefix(res.AutoTag.Skipped, "model unavailable") {
		t.Fatalf("%d calls; result %+v, auto_tag %+v", calls.Load(), res, res.AutoTag)
	}
	if !strings.Contains(logs.String(), "msg=\"model call\"") || !strings.Contains(logs.String(), "duration=") || !strings.Contains(logs.String(), "model_down=true") {
		t.Errorf("no model call line at Info:\n%s", logs.String())
	}

	calls.Store(0)
	env, _ = newEnv(t, deadModel(&calls, llm.ErrUnauthorized))
	env.VisionModelID = "vision"
	res, err = AutoMemory(context.Background(), env, AutoMemoryRequest{SessionID: "img", Messages: imageConv(t, ""), IncludeImages: true, Fallback: FallbackExtractive})
	if err != nil {
		t.Fatal(err)
	}
	if calls.Load() != 1 || res.Path == nil {
		t.Fatalf("%d calls with a dead model (describe, then agent and tags must not call); %+v", calls.Load(), res)
	}
	if n, _ := env.WS.ReadNote(*res.Path); len(n.FM.Strings("source_images")) != 2 {
		t.Errorf("the extractive card lost the images: %s", n.FM.JSON())
	}

	calls.Store(0)
	env, _ = newEnv(t, deadModel(&calls, llm.ErrBadRequest))
	if _, err := AutoMemory(context.Background(), env, AutoMemoryRequest{SessionID: "b", Messages: []byte(convJSON), Fallback: FallbackExtractive}); err != nil {
		t.Fatal(err)
	}
	if calls.Load() != 2 || env.ModelDown() != nil {
		t.Errorf("a bad request marked the model down: %d calls, %v", calls.Load(), env.ModelDown())
	}
}

// TestAutoMemoryFallbackWhenNoCard: with fallback=extractive, a model that
// ends without a card (and without a skip) gives the extractive card.
func TestAutoMemoryFallbackWhenNoCard(t *testing.T) {
	env, _ := newEnv(t, llmtest.NewScripted(llmtest.TextReply("All done!")))
	res, err := AutoMemory(context.Background(), env, AutoMemoryRequest{SessionID: "f", Messages: []byte(convJSON), Fallback: FallbackExtractive})
	if err != nil {
		t.Fatal(err)
	}
	if res.Path == nil || res.Distiller != "extractive" || len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], `it answered "All done!"`) {
		t.Fatalf("%+v", res)
	}
	if n, _ := env.WS.ReadNote(*res.Path); n.FM.String("distiller") != "extractive" || n.FM.String("session_id") != "f" {
		t.Errorf("card %s", n.FM.JSON())
	}
}

// TestAutoMemorySavesBeforeWaiting: a call for a session another run is
// distilling saves its messages first, then waits a bounded time and says
// so; the next call distils them.
func TestAutoMemorySavesBeforeWaiting(t *testing.T) {
	env, _ := newEnv(t, nil)
	lock, err := env.WS.Lock(context.Background(), "session-busy")
	if err != nil {
		t.Fatal(err)
	}
	res, err := AutoMemory(context.Background(), env, AutoMemoryRequest{SessionID: "busy", Messages: []byte(convJSON), Wait: 200 * time.Millisecond})
	if err == nil || !errors.Is(err, ErrBusy) || !strings.Contains(err.Error(), "the messages are saved in session/dialog/busy.jsonl") {
		t.Fatalf("err = %v, %+v", err, res)
	}
	if b, _ := os.ReadFile(env.WS.Abs("session/dialog/busy.jsonl")); !bytes.Contains(b, []byte("pg-staging-2, port 6432")) {
		t.Fatalf("the messages were not saved before the wait: %q", b)
	}
	lock.Unlock()
	res, err = AutoMemory(context.Background(), env, AutoMemoryRequest{SessionID: "busy", Messages: []byte(`[{"role":"user","content":"Also: the replica is pg-staging-3.","created_at":"2026-06-20T08:05:00Z"}]`)})
	if err != nil || res.Path == nil {
		t.Fatalf("%+v %v", res, err)
	}
	if b, _ := os.ReadFile(env.WS.Abs(*res.Path)); !bytes.Contains(b, []byte("pg-staging-2, port 6432")) || !bytes.Contains(b, []byte("pg-staging-3")) {
		t.Errorf("the card lacks the messages saved while busy:\n%s", b)
	}
}

// TestAutoMemoryRejectsImpossibleTimes: an impossible created_at is an
// error, not a card dated today.
func TestAutoMemoryRejectsImpossibleTimes(t *testing.T) {
	env, _ := newEnv(t, nil)
	_, err := AutoMemory(context.Background(), env, AutoMemoryRequest{SessionID: "t", Messages: []byte(`[{"role":"user","content":"Deadline moved.","created_at":"2026-02-30T10:00:00"}]`)})
	if err == nil || !errors.Is(err, ErrInput) || !strings.Contains(err.Error(), `created_at "2026-02-30T10:00:00" is not a date or time`) {
		t.Fatalf("err = %v", err)
	}
	if files := workspaceFiles(t, env.WS); len(files) != 0 {
		t.Errorf("wrote %v", files)
	}
}

// TestAutoMemoryToolUseSavedAsToolCall: an Anthropic tool_use block is
// saved as AgentScope's tool_call, which ReMe's message model reads.
func TestAutoMemoryToolUseSavedAsToolCall(t *testing.T) {
	env, _ := newEnv(t, nil)
	msgs := `[{"role":"user","content":"List the staging hosts, please.","created_at":"2026-06-20T08:00:00Z"},
 {"role":"assistant","content":[{"type":"text","text":"Looking."},{"type":"tool_use","id":"toolu_1","name":"ssh","input":{"host":"pg-staging-2"}},{"type":"thinking","thinking":"hm"}],"created_at":"2026-06-20T08:00:05Z"}]`
	if _, err := AutoMemory(context.Background(), env, AutoMemoryRequest{SessionID: "tu", Messages: []byte(msgs)}); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(env.WS.Abs("session/dialog/tu.jsonl"))
	if !bytes.Contains(b, []byte(`{"type":"tool_call","id":"toolu_1","name":"ssh","input":"{\"host\":\"pg-staging-2\"}"}`)) || bytes.Contains(b, []byte("tool_use")) {
		t.Errorf("session file:\n%s", b)
	}
}

// TestMovedCardStaysWhereItIs: a resource card a person moved out of its
// day folder is updated where it is, not moved back.
func TestMovedCardStaysWhereItIs(t *testing.T) {
	env, _ := newEnv(t, llmtest.NewScripted(
		llmtest.ToolCallReply(call("edit", map[string]any{"path": "digest/wiki/q3.md", "old": "v1", "new": "v2"})),
		llmtest.TextReply("Updated.")))
	writeWS(t, env, "digest/wiki/q3.md", "---\nname: q3-report\nsource_resource: \"[[resource/2026-06-20/q3.md]]\"\n---\n\n- v1\n")
	writeWS(t, env, "resource/2026-06-20/q3.md", "# Q3 v2\n")
	it := runResource(t, env, ResourceChange{Path: "resource/2026-06-20/q3.md"}).Results[0]
	if !it.Success || *it.Metadata.Path != "digest/wiki/q3-report.md" {
		t.Fatalf("%+v", it)
	}
	if env.WS.Exists("daily/2026-06-20") {
		t.Error("the card went back to its day folder")
	}
}

// TestCardNameMasksSecrets: the one naming rule masks secrets in a name,
// spelt as a file name can hold them, with or without ".md"; look-alikes
// and ordinary names are kept.
func TestCardNameMasksSecrets(t *testing.T) {
	c := &Card{spec: CardSpec{Date: "2026-06-20", Stem: "card"}}
	for in, want := range map[string]string{
		"push " + testGitHubTok + " password":        "push redacted-github-token password",
		"push " + testGitHubTok + ".md":              "push redacted-github-token",
		testAWSKey:                                   "redacted-aws-access-key",
		"deploy " + testGitSHA:                       "deploy " + testGitSHA,
		"release notes 3f2504e0-4f89-41d3-9a0c-0305": "release notes 3f2504e0-4f89-41d3-9a0c-0305",
	} {
		if got := c.cleanName(in); got != want {
			t.Errorf("cleanName(%q) = %q, want %q", in, got, want)
		}
	}
	c.spec.Stem = "notes " + testOpenAIKey
	if got := c.cleanName(""); got != "notes redacted-openai-api-key" {
		t.Errorf("the stem is not masked: %q", got)
	}
}
