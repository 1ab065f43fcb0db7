package jobs

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/reme-dev/reme/jobs/llm"
	"github.com/reme-dev/reme/jobs/llm/llmtest"
	"github.com/reme-dev/reme/store"
)

const bulletConv = `[
 {"role":"user","content":"Remember that I prefer bullet answers, because long paragraphs are hard to scan.","created_at":"2026-06-22T09:00:00+08:00"},
 {"role":"assistant","content":"Noted: bullets from now on.","created_at":"2026-06-22T09:00:05+08:00"}
]`

// cardReplies write the day's card and leave its tags alone.
func cardReplies() []*llm.Response {
	return []*llm.Response{
		llmtest.ToolCallReply(call("daily_write", map[string]string{"name": "answer-style", "description": "The user wants bullet answers.", "content": "- Bullet answers, not paragraphs.\n"})),
		llmtest.TextReply("Recorded."),
		llmtest.TextReply("No tags fit."),
	}
}

func bulletWrite() llm.ToolCall {
	return call("memory_write", map[string]string{"type": "feedback", "name": "answer-format",
		"description": "Prefers bullet answers over long paragraphs.", "content": bulletFeedback})
}

func TestLongTermPassWritesAnEntryWithItsSource(t *testing.T) {
	replies := append(cardReplies(), llmtest.ToolCallReply(bulletWrite()), llmtest.TextReply("Saved the answer format preference."))
	model := llmtest.NewScripted(replies...)
	env, _ := newEnv(t, model)
	env.Memory.Extract = true
	res, err := AutoMemory(context.Background(), env, AutoMemoryRequest{SessionID: "s1", Messages: []byte(bulletConv)})
	if err != nil {
		t.Fatal(err)
	}
	lt := res.LongTerm
	if lt == nil || lt.Error != "" || lt.Distiller != "test-model" || lt.Messages != 2 ||
		!cmp.Equal(lt.Changes, []MemoryChange{{Action: "created", Path: "memory/entries/answer-format.md", Type: "feedback", Name: "answer-format"}}) {
		t.Fatalf("long-term result %+v", lt)
	}
	n, err := env.WS.ReadNote("memory/entries/answer-format.md")
	if err != nil {
		t.Fatal(err)
	}
	if n.FM.String("source") != "[[daily/2026-06-22/answer-style.md]]" || n.FM.String("type") != "feedback" {
		t.Errorf("entry frontmatter %v", n.FM.Map())
	}
	// the pass saw only the memory tools, the index and the messages
	reqs := model.Requests()
	last := reqs[3]
	var tools []string
	for _, tl := range last.Tools {
		tools = append(tools, tl.Name)
	}
	if !cmp.Equal(tools, []string{"memory_search", "memory_get", "memory_write", "memory_delete"}) {
		t.Errorf("tools %v", tools)
	}
	user := last.Messages[1].Text()
	for _, want := range []string{"(no entries yet)", "Remember that I prefer bullet answers", "Source of what you write: [[daily/2026-06-22/answer-style.md]]"} {
		if !strings.Contains(user, want) {
			t.Errorf("the pass was not shown %q:\n%s", want, user)
		}
	}
	if !strings.Contains(last.Messages[0].Text(), "code paths") {
		t.Error("the system prompt lacks the list of what never goes into memory")
	}
	// the same messages again: neither pass asks the model
	res, err = AutoMemory(context.Background(), env, AutoMemoryRequest{SessionID: "s1", Messages: []byte(bulletConv)})
	if err != nil || res.Skipped != "no new messages" || res.LongTerm != nil {
		t.Fatalf("repeat: %+v %v", res, err)
	}
	if n := len(model.Requests()); n != 5 {
		t.Errorf("model called %d times", n)
	}
}

func TestLongTermPassNothingToRemember(t *testing.T) {
	model := llmtest.NewScripted(append(cardReplies(), llmtest.TextReply("Nothing to remember."))...)
	env, _ := newEnv(t, model)
	env.Memory.Extract = true
	res, err := AutoMemory(context.Background(), env, AutoMemoryRequest{SessionID: "s", Messages: []byte(convJSON)})
	if err != nil {
		t.Fatal(err)
	}
	if res.LongTerm == nil || res.LongTerm.Error != "" || len(res.LongTerm.Changes) != 0 || res.LongTerm.Answer != "Nothing to remember." {
		t.Fatalf("%+v", res.LongTerm)
	}
	if env.WS.Exists(store.EntriesDir) || env.WS.Exists(store.MemoryIndexPath) {
		t.Error("an entry was written")
	}
}

func TestLongTermPassFailureLeavesItsMessagesPending(t *testing.T) {
	// the card is written; the long-term pass finds the model gone
	model := llmtest.NewScripted(cardReplies()...)
	env, _ := newEnv(t, model)
	env.Memory.Extract = true
	res, err := AutoMemory(context.Background(), env, AutoMemoryRequest{SessionID: "s", Messages: []byte(bulletConv)})
	if err != nil {
		t.Fatalf("a failed long-term pass failed the card: %v", err)
	}
	if res.Path == nil || res.LongTerm == nil || !strings.Contains(res.LongTerm.Error, "no reply left") ||
		len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], "stay pending") {
		t.Fatalf("%+v %+v", res, res.LongTerm)
	}
	// the next call runs only the long-term pass, over the same messages
	model.Responses = append(model.Responses, llmtest.ToolCallReply(bulletWrite()), llmtest.TextReply("Saved."))
	res, err = AutoMemory(context.Background(), env, AutoMemoryRequest{SessionID: "s", Messages: []byte(bulletConv)})
	if err != nil || res.Skipped != "no new messages" || res.LongTerm == nil || len(res.LongTerm.Changes) != 1 || res.LongTerm.Messages != 2 {
		t.Fatalf("retry: %+v %v", res, err)
	}
	// a model that gives up after its write was refused is no success either
	model2 := llmtest.NewScripted(append(cardReplies(),
		llmtest.ToolCallReply(call("memory_write", map[string]string{"type": "feedback", "name": "x", "content": "Bullets."})),
		llmtest.TextReply("Could not save it."))...)
	env2, _ := newEnv(t, model2)
	env2.Memory.Extract = true
	res, err = AutoMemory(context.Background(), env2, AutoMemoryRequest{SessionID: "s", Messages: []byte(bulletConv)})
	if err != nil || res.LongTerm == nil || !strings.Contains(res.LongTerm.Error, `the model gave up after memory_write failed`) {
		t.Fatalf("refused write: %+v %v", res.LongTerm, err)
	}
}

func TestLongTermPassWithoutModelTakesExplicitRequests(t *testing.T) {
	env, _ := newEnv(t, nil)
	env.Memory.Extract = true
	res, err := AutoMemory(context.Background(), env, AutoMemoryRequest{SessionID: "s", Messages: []byte(bulletConv)})
	if err != nil {
		t.Fatal(err)
	}
	if res.LongTerm == nil || res.LongTerm.Distiller != "extractive" || len(res.LongTerm.Changes) != 1 {
		t.Fatalf("%+v", res.LongTerm)
	}
	p := res.LongTerm.Changes[0].Path
	n, _ := env.WS.ReadNote(p)
	if n.FM.String("type") != "feedback" || !strings.Contains(n.Content(), "Why: Long paragraphs are hard to scan") ||
		n.FM.String("source") != store.LinkTo(*res.Path) {
		t.Errorf("%s: %v\n%s", p, n.FM.Map(), n.Content())
	}
	// a conversation without a request writes no entry
	res, err = AutoMemory(context.Background(), env, AutoMemoryRequest{SessionID: "t", Messages: []byte(`[{"role":"user","content":"The staging database moved to pg-staging-3."}]`)})
	if err != nil || res.LongTerm == nil || len(res.LongTerm.Changes) != 0 {
		t.Fatalf("%+v %v", res.LongTerm, err)
	}
	// memory.extract off: no pass at all
	env.Memory.Extract = false
	res, err = AutoMemory(context.Background(), env, AutoMemoryRequest{SessionID: "u", Messages: []byte(`[{"role":"user","content":"记住：我是十年 Go 后端，前端新手"}]`)})
	if err != nil || res.LongTerm != nil {
		t.Fatalf("%+v %v", res.LongTerm, err)
	}
}

// TestLongTermToolsAreConfined: the model's memory tools refuse every path
// outside memory/entries/ and the profile (off without profile_auto), and
// never take its source; the refusals go back to the model and nothing
// outside memory changes.
func TestLongTermToolsAreConfined(t *testing.T) {
	attempts := []llm.ToolCall{
		call("memory_write", map[string]string{"path": "daily/2026-06-22/answer-style.md", "content": "overwritten"}),
		call("memory_write", map[string]string{"path": "../../../etc/passwd", "content": "x"}),
		call("memory_write", map[string]string{"path": "memory/profile.md", "content": "I am a model."}),
		call("memory_get", map[string]string{"path": "session/dialog/s.jsonl"}),
		call("memory_delete", map[string]string{"path": "daily/2026-06-22.md"}),
		call("memory_write", map[string]string{"type": "user", "name": "src", "content": "Go backend.", "source": "[[forged.md]]"}),
		call("memory_write", map[string]string{"type": "user", "name": "src", "content": "Go backend."}),
	}
	replies := cardReplies()
	for _, a := range attempts {
		replies = append(replies, llmtest.ToolCallReply(a))
	}
	replies = append(replies, llmtest.TextReply("Done."))
	model := llmtest.NewScripted(replies...)
	env, _ := newEnv(t, model)
	env.Memory.Extract = true
	putFile(t, env.WS, store.ProfilePath, "Kept by hand.\n")
	res, err := AutoMemory(context.Background(), env, AutoMemoryRequest{SessionID: "s", Messages: []byte(bulletConv)})
	if err != nil {
		t.Fatal(err)
	}
	card, _ := os.ReadFile(env.WS.Abs("daily/2026-06-22/answer-style.md"))
	profile, _ := os.ReadFile(env.WS.Abs(store.ProfilePath))
	if strings.Contains(string(card), "overwritten") || string(profile) != "Kept by hand.\n" {
		t.Fatalf("the model changed what it may not:\n%s\n%s", card, profile)
	}
	var errs []string
	reqs := model.Requests()
	for _, m := range reqs[len(reqs)-1].Messages {
		if m.Role == llm.RoleTool {
			errs = append(errs, m.Text())
		}
	}
	for i, want := range []string{"outside memory/entries/", "path is outside the workspace", "memory.profile_auto is off", "outside memory/entries/",
		"outside memory/entries/", `unknown argument "source"`, `"action":"created"`} {
		if i >= len(errs) || !strings.Contains(errs[i], want) {
			t.Errorf("tool answer %d = %q, want %q", i, errs, want)
		}
	}
	n, err := env.WS.ReadNote("memory/entries/src.md")
	if err != nil || n.FM.String("source") != "[[daily/2026-06-22/answer-style.md]]" {
		t.Errorf("source %v %v", n, err)
	}
	if res.LongTerm == nil || len(res.LongTerm.Changes) != 1 {
		t.Errorf("%+v", res.LongTerm)
	}
}

// TestLongTermPassSkipsWhatTheCardSkipped: small talk the card pass skipped
// costs the long-term pass no model call, and is not offered to it again.
func TestLongTermPassSkipsWhatTheCardSkipped(t *testing.T) {
	model := llmtest.NewScripted(
		llmtest.ToolCallReply(call("skip", map[string]string{"reason": "Only greetings."})),
		llmtest.TextReply("Nothing recorded."),
	)
	env, _ := newEnv(t, model)
	env.Memory.Extract = true
	conv := []byte(`[{"role":"user","content":"hello!"},{"role":"assistant","content":"Hi!"}]`)
	res, err := AutoMemory(context.Background(), env, AutoMemoryRequest{SessionID: "hi", Messages: conv})
	if err != nil || res.Skipped != "Only greetings." || res.LongTerm != nil {
		t.Fatalf("%+v %v", res, err)
	}
	res, err = AutoMemory(context.Background(), env, AutoMemoryRequest{SessionID: "hi", Messages: conv})
	if err != nil || res.Skipped != "no new messages" || res.LongTerm != nil || len(model.Requests()) != 2 {
		t.Fatalf("repeat: %+v %v, %d model calls", res, err, len(model.Requests()))
	}
}
