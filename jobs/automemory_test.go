package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/reme-dev/reme/jobs/llm"
	"github.com/reme-dev/reme/jobs/llm/llmtest"
	"github.com/reme-dev/reme/store"
)

// fakeIndex is a working stand-in for the index: renames move the file
// (without retargeting links), updates are recorded.
type fakeIndex struct {
	ws      *store.Workspace
	updated []string
	renames [][2]string
	tags    []TagCount
}

func (f *fakeIndex) UpdatePaths(_ context.Context, paths ...string) error {
	f.updated = append(f.updated, paths...)
	return nil
}

func (f *fakeIndex) Rename(_ context.Context, run *store.Run, src, dst string) error {
	f.renames = append(f.renames, [2]string{src, dst})
	return run.Rename(src, dst, nil, store.ActionRename, false, store.Why{Reason: "rename"})
}

func (f *fakeIndex) Locked(_ context.Context, fn func() error) error { return fn() }

func (f *fakeIndex) Tags(context.Context, int) ([]TagCount, error) { return f.tags, nil }

func (f *fakeIndex) Sync(context.Context) error { return nil }

// notes lists the markdown notes under daily/ and digest/, as the index
// holds them.
func (f *fakeIndex) notes() []string {
	var out []string
	for _, root := range []string{"daily", "digest"} {
		filepath.WalkDir(f.ws.Abs(root), func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() && strings.HasSuffix(p, ".md") {
				rel, _ := filepath.Rel(f.ws.Root, p)
				out = append(out, filepath.ToSlash(rel))
			}
			return nil
		})
	}
	return out
}

// Sources scans the notes, as the index would answer.
func (f *fakeIndex) Sources(ctx context.Context, key string) (map[string]string, error) {
	out := map[string]string{}
	for _, rel := range f.notes() {
		if n, err := f.ws.ReadNote(rel); err == nil && n.FM.String(key) != "" {
			out[n.FM.String(key)] = rel
		}
	}
	return out, nil
}

// NotesWith scans the notes, as the index would answer.
func (f *fakeIndex) NotesWith(_ context.Context, key, value string) ([]string, error) {
	var out []string
	for _, rel := range f.notes() {
		if n, err := f.ws.ReadNote(rel); err == nil && n.FM.String(key) == value {
			out = append(out, rel)
		}
	}
	return out, nil
}

var shanghai, _ = time.LoadLocation("Asia/Shanghai")

func newEnv(t *testing.T, model llm.Client) (*Env, *fakeIndex) {
	t.Helper()
	ws, err := store.OpenWorkspace(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := ws.Init(); err != nil {
		t.Fatal(err)
	}
	ix := &fakeIndex{ws: ws}
	now := time.Date(2026, 6, 22, 10, 0, 0, 0, shanghai)
	clock := func() time.Time { return now }
	return &Env{WS: ws, Index: ix, Model: model, ModelID: "test-model", Location: shanghai, Now: clock,
		Journal: store.NewJournal(ws, store.JournalOptions{Now: clock})}, ix
}

func call(name string, args any) llm.ToolCall {
	b, _ := json.Marshal(args)
	return llm.ToolCall{ID: name + "-1", Name: name, Arguments: b}
}

const convJSON = `[
 {"role":"user","content":"Please remember: our staging database is pg-staging-2, port 6432.","created_at":"2026-06-20T08:00:00Z"},
 {"role":"assistant","content":"Noted.","created_at":"2026-06-20T08:00:05Z"}
]`

func workspaceFiles(t *testing.T, ws *store.Workspace) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(ws.Root, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(ws.Root, p)
			if !strings.HasPrefix(rel, "metadata") {
				out = append(out, filepath.ToSlash(rel))
			}
		}
		return nil
	})
	return out
}

func TestAutoMemoryBadInputChangesNothing(t *testing.T) {
	tests := []struct {
		name string
		req  AutoMemoryRequest
		want string
	}{
		{"missing session", AutoMemoryRequest{Messages: []byte(convJSON)}, "session_id is required"},
		{"slash in session", AutoMemoryRequest{SessionID: "a/b", Messages: []byte(convJSON)}, "session_id"},
		{"dots", AutoMemoryRequest{SessionID: "..", Messages: []byte(convJSON)}, "session_id"},
		{"reserved", AutoMemoryRequest{SessionID: "NUL", Messages: []byte(convJSON)}, "reserved"},
		{"bad date", AutoMemoryRequest{SessionID: "s", Messages: []byte(convJSON), Date: "2026-02-30"}, "date must be YYYY-MM-DD"},
		{"timestamp as date", AutoMemoryRequest{SessionID: "s", Messages: []byte(convJSON), Date: "2026-08-20T10:00:00"}, "date must be YYYY-MM-DD"},
		{"invalid json", AutoMemoryRequest{SessionID: "s", Messages: []byte(`[{"role":"user",`)}, "not valid JSON"},
		{"not a list", AutoMemoryRequest{SessionID: "s", Messages: []byte(`{"role":"user","content":"x"}`)}, "JSON list"},
		{"bad role", AutoMemoryRequest{SessionID: "s", Messages: []byte(`[{"role":"robot","content":"x"}]`)}, "robot"},
		{"bad content", AutoMemoryRequest{SessionID: "s", Messages: []byte(`[{"role":"user","content":5}]`)}, "content"},
		{"bad fallback", AutoMemoryRequest{SessionID: "s", Messages: []byte(convJSON), Fallback: "magic"}, "fallback"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env, _ := newEnv(t, llmtest.NewScripted())
			_, err := AutoMemory(context.Background(), env, tt.req)
			if err == nil || !errors.Is(err, ErrInput) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want ErrInput mentioning %q", err, tt.want)
			}
			if files := workspaceFiles(t, env.WS); len(files) != 0 {
				t.Errorf("bad input wrote %v", files)
			}
		})
	}
}

func TestAutoMemorySmallTalkIsSkippedButSaved(t *testing.T) {
	model := llmtest.NewScripted(
		llmtest.ToolCallReply(call("skip", map[string]string{"reason": "Only greetings; nothing to remember."})),
		llmtest.TextReply("Nothing recorded."),
	)
	env, _ := newEnv(t, model)
	conv := []byte(`[{"role":"user","content":"hello!"},{"role":"assistant","content":"Hi, how can I help?"}]`)
	res, err := AutoMemory(context.Background(), env, AutoMemoryRequest{SessionID: "hi", Messages: conv})
	if err != nil {
		t.Fatal(err)
	}
	if res.Path != nil || res.Created || res.Modified || res.Skipped != "Only greetings; nothing to remember." || res.Date != "2026-06-22" {
		t.Errorf("result %+v", res)
	}
	if !cmp.Equal(workspaceFiles(t, env.WS), []string{"session/dialog/hi.jsonl"}) {
		t.Errorf("files %v", workspaceFiles(t, env.WS))
	}
	// a repeat of the same small talk does not ask the model again
	res, err = AutoMemory(context.Background(), env, AutoMemoryRequest{SessionID: "hi", Messages: conv})
	if err != nil || res.Skipped != "no new messages" {
		t.Fatalf("repeat: %+v %v", res, err)
	}
	if n := len(model.Requests()); n != 2 {
		t.Errorf("model called %d times", n)
	}
}

// TestAutoMemoryOnlyExplicitSkipsAdvance: a model that ends without a card
// skips only when it says so (the skip tool, or an answer starting
// "Skipped:"); any other ending fails the call and leaves the messages
// pending, so that the next call with a working model distils them.
func TestAutoMemoryOnlyExplicitSkipsAdvance(t *testing.T) {
	t.Run("plain Skipped answer", func(t *testing.T) {
		env, _ := newEnv(t, llmtest.NewScripted(llmtest.TextReply("Skipped: the user only said thanks.")))
		res, err := AutoMemory(context.Background(), env, AutoMemoryRequest{SessionID: "s", Messages: []byte(convJSON)})
		if err != nil || res.Skipped != "the user only said thanks." || res.Path != nil {
			t.Fatalf("%+v %v", res, err)
		}
	})
	for _, tt := range []struct {
		name  string
		model *llmtest.Scripted
		want  string
	}{
		{"answer without a card", llmtest.NewScripted(llmtest.TextReply("Wrote the card.")), `it answered "Wrote the card."`},
		{"every write failed", llmtest.NewScripted(
			llmtest.ToolCallReply(call("daily_write", map[string]string{"name": "x", "description": "", "content": "c"})),
			llmtest.TextReply("I could not write it.")), "its last tool error was daily_write: description is empty"},
		{"a Skipped answer after tool calls", llmtest.NewScripted(
			llmtest.ToolCallReply(call("daily_write", map[string]string{"name": "x", "description": "d", "content": ""})),
			llmtest.TextReply("Skipped: the tool failed.")), "content is empty"},
		{"step limit", &llmtest.Scripted{Func: func(llm.Request) (*llm.Response, error) {
			return llmtest.ToolCallReply(call("daily_write", map[string]string{"name": "x", "description": "d", "content": " "})), nil
		}}, "agent did not finish"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			env, _ := newEnv(t, tt.model)
			res, err := AutoMemory(context.Background(), env, AutoMemoryRequest{SessionID: "s3", Messages: []byte(convJSON)})
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "stay pending") {
				t.Fatalf("err = %v (result %+v)", err, res)
			}
			if res != nil && (res.Path != nil || res.Skipped != "") {
				t.Errorf("a failure reported as %+v", res)
			}
			if !cmp.Equal(workspaceFiles(t, env.WS), []string{"session/dialog/s3.jsonl"}) {
				t.Errorf("files %v", workspaceFiles(t, env.WS))
			}
			// The same call with a working model distils the same messages.
			env.Model = llmtest.NewScripted(
				llmtest.ToolCallReply(call("daily_write", map[string]string{"name": "staging-db", "description": "Staging DB.", "content": "- pg-staging-2, port 6432"})),
				llmtest.TextReply("done"), llmtest.TextReply("no tags"))
			res, err = AutoMemory(context.Background(), env, AutoMemoryRequest{SessionID: "s3", Messages: []byte(convJSON)})
			if err != nil || res.Path == nil || *res.Path != "daily/2026-06-20/staging-db.md" || res.Skipped != "" {
				t.Fatalf("retry: %+v %v", res, err)
			}
			reqs := env.Model.(*llmtest.Scripted).Requests()
			if !strings.Contains(reqs[0].Messages[1].Text(), "pg-staging-2, port 6432") {
				t.Error("the retry did not show the model the pending messages")
			}
		})
	}
}

// TestAutoMemoryPendingMessagesJoinTheNextCall: after a failed call, a call
// that sends only its own new message gets the earlier pending ones too.
func TestAutoMemoryPendingMessagesJoinTheNextCall(t *testing.T) {
	env, _ := newEnv(t, &llmtest.Scripted{Func: func(llm.Request) (*llm.Response, error) { return nil, llm.ErrBadRequest }})
	first := `[{"role":"user","id":"a","content":"The release train leaves on Thursdays.","created_at":"2026-06-20T08:00:00+08:00"}]`
	if _, err := AutoMemory(context.Background(), env, AutoMemoryRequest{SessionID: "p", Messages: []byte(first)}); err == nil {
		t.Fatal("a failing model succeeded")
	}
	model := llmtest.NewScripted(
		llmtest.ToolCallReply(call("daily_write", map[string]string{"name": "release-train", "description": "Release train.", "content": "- Thursdays; freeze Wednesday 18:00"})),
		llmtest.TextReply("done"), llmtest.TextReply("no tags"))
	env.Model = model
	second := `[{"role":"user","id":"b","content":"Code freeze is Wednesday 18:00.","created_at":"2026-06-20T09:00:00+08:00"}]`
	res, err := AutoMemory(context.Background(), env, AutoMemoryRequest{SessionID: "p", Messages: []byte(second)})
	if err != nil || res.Path == nil {
		t.Fatalf("%+v %v", res, err)
	}
	prompt := model.Requests()[0].Messages[1].Text()
	if !strings.Contains(prompt, "release train leaves on Thursdays") || !strings.Contains(prompt, "Wednesday 18:00") {
		t.Errorf("the prompt lacks the pending message:\n%s", prompt)
	}
	// both are distilled now: the next call with only old messages has nothing to do
	res, err = AutoMemory(context.Background(), env, AutoMemoryRequest{SessionID: "p", Messages: []byte(first)})
	if err != nil || res.Skipped != "no new messages" {
		t.Fatalf("%+v %v", res, err)
	}
}

// TestAutoMemoryToolsAreConfinedToTheCard: invalid names are cleaned (not
// refused), the card is written at once and later calls rewrite the same
// card; Finish renames it to its final name.
func TestAutoMemoryToolsAreConfinedToTheCard(t *testing.T) {
	model := llmtest.NewScripted(
		llmtest.ToolCallReply(call("daily_write", map[string]string{"name": "2026-06-20-db", "description": "d", "content": "c"})),
		llmtest.ToolCallReply(call("daily_write", map[string]string{"name": "a/b", "description": "d", "content": "c"})),
		llmtest.ToolCallReply(call("daily_write", map[string]string{"name": "staging-db", "description": "Staging database is pg-staging-2 on port 6432.", "content": "- Staging DB: pg-staging-2, port 6432."})),
		llmtest.TextReply("done"),
	)
	env, _ := newEnv(t, model)
	res, err := AutoMemory(context.Background(), env, AutoMemoryRequest{SessionID: "s1", Messages: []byte(convJSON)})
	if err != nil {
		t.Fatal(err)
	}
	if res.Path == nil || *res.Path != "daily/2026-06-20/staging-db.md" || !res.Created || !res.Modified {
		t.Fatalf("result %+v", res)
	}
	reqs := model.Requests()
	results := func(i int) string {
		msgs := reqs[i].Messages
		return msgs[len(msgs)-1].Text()
	}
	if r := results(1); !strings.HasPrefix(r, "Wrote daily/2026-06-20/db.md") || !strings.Contains(r, `the card is named "db"`) {
		t.Errorf("dated name: %q", r)
	}
	if r := results(2); !strings.HasPrefix(r, "Rewrote daily/2026-06-20/db.md") || !strings.Contains(r, `the card is named "a-b"`) {
		t.Errorf("name with /: %q", r)
	}
	if files := workspaceFiles(t, env.WS); !cmp.Equal(files, []string{"daily/2026-06-20/staging-db.md", "daily/2026-06-20.md", "session/dialog/s1.jsonl"}) {
		t.Errorf("files %v", files)
	}
	n, err := env.WS.ReadNote(*res.Path)
	if err != nil {
		t.Fatal(err)
	}
	if n.FM.String("session_id") != "s1" || n.FM.String("source_conversation") != "[[session/dialog/s1.jsonl]]" || n.Name() != "staging-db" {
		t.Errorf("frontmatter %s", n.FM.JSON())
	}
	if res.AutoTag == nil || res.AutoTag.Failed != 1 {
		t.Errorf("tagging with an exhausted script should fail softly: %+v", res.AutoTag)
	}
}

func TestAutoMemoryUpdateRefusesOtherPathsAndReservedKeys(t *testing.T) {
	env, _ := newEnv(t, nil)
	// an existing card of the session, and a sibling it must not touch
	for p, c := range map[string]string{
		"daily/2026-06-20/staging-db.md": "---\nname: staging-db\ndescription: d\nsession_id: s1\nsource_conversation: \"[[session/dialog/s1.jsonl]]\"\n---\n\n- old fact\n",
		"daily/2026-06-20/other.md":      "---\nname: other\n---\n\nsecret\n",
	} {
		if err := env.WS.WriteFile(p, []byte(c)); err != nil {
			t.Fatal(err)
		}
	}
	card := "daily/2026-06-20/staging-db.md"
	model := llmtest.NewScripted(
		llmtest.ToolCallReply(call("read", map[string]string{"path": "daily/2026-06-20/other.md"})),
		llmtest.ToolCallReply(call("write", map[string]string{"path": "../outside.md", "content": "x"})),
		llmtest.ToolCallReply(call("frontmatter_update", map[string]any{"path": card, "metadata": map[string]any{"status": "done"}})),
		llmtest.ToolCallReply(call("edit", map[string]string{"path": card, "old": "- old fact", "new": "- old fact\n- new fact"})),
		llmtest.TextReply("updated"),
		llmtest.TextReply("no tags"),
	)
	env.Model, env.ModelID = model, "m"
	res, err := AutoMemory(context.Background(), env, AutoMemoryRequest{SessionID: "s1", Messages: []byte(convJSON)})
	if err != nil {
		t.Fatal(err)
	}
	if res.Created || !res.Modified || *res.Path != card {
		t.Errorf("result %+v", res)
	}
	reqs := model.Requests()
	for i, want := range []string{"no permission", "outside the workspace", "status is kept by the system"} {
		msgs := reqs[i+1].Messages
		if got := msgs[len(msgs)-1].Text(); !strings.Contains(got, want) {
			t.Errorf("tool result %d = %q, want %q", i, got, want)
		}
	}
	b, _ := os.ReadFile(env.WS.Abs("daily/2026-06-20/other.md"))
	if string(b) != "---\nname: other\n---\n\nsecret\n" {
		t.Error("the sibling card changed")
	}
	var prompt strings.Builder
	for _, m := range reqs[0].Messages {
		prompt.WriteString(m.Text())
	}
	if !strings.Contains(prompt.String(), "already exists at "+card) {
		t.Error("the update prompt does not name the card")
	}
}

func TestAutoMemoryWithoutModelWritesExtractiveCard(t *testing.T) {
	env, _ := newEnv(t, nil)
	res, err := AutoMemory(context.Background(), env, AutoMemoryRequest{SessionID: "s2", Messages: []byte(convJSON)})
	if err != nil {
		t.Fatal(err)
	}
	if res.Distiller != "extractive" || res.Path == nil || !res.Created || res.AutoTag == nil || res.AutoTag.Skipped == "" {
		t.Fatalf("result %+v", res)
	}
	n, err := env.WS.ReadNote(*res.Path)
	if err != nil {
		t.Fatal(err)
	}
	if n.FM.String("distiller") != "extractive" || !strings.Contains(n.Body, "pg-staging-2, port 6432") || !strings.Contains(n.Body, "[[session/dialog/s2.jsonl]]") {
		t.Errorf("card:\n%s", n.Body)
	}
}

func TestAutoMemoryModelFailure(t *testing.T) {
	failing := &llmtest.Scripted{Func: func(llm.Request) (*llm.Response, error) { return nil, llm.ErrServer }}
	env, _ := newEnv(t, failing)
	_, err := AutoMemory(context.Background(), env, AutoMemoryRequest{SessionID: "s3", Messages: []byte(convJSON)})
	if err == nil || !errors.Is(err, llm.ErrServer) {
		t.Fatalf("err = %v", err)
	}
	if !cmp.Equal(workspaceFiles(t, env.WS), []string{"session/dialog/s3.jsonl"}) {
		t.Errorf("files %v (the conversation must be saved, nothing else)", workspaceFiles(t, env.WS))
	}
	res, err := AutoMemory(context.Background(), env, AutoMemoryRequest{SessionID: "s3", Messages: []byte(convJSON), Fallback: "extractive"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Distiller != "extractive" || res.Path == nil || len(res.Warnings) != 1 {
		t.Errorf("fallback result %+v", res)
	}
}

func TestAutoMemoryDates(t *testing.T) {
	tests := []struct {
		name, msgs, date, want string
	}{
		{"historical import", `[{"role":"user","content":"Jon lost his job today.","created_at":"2023-01-19T08:00:00"}]`, "", "2023-01-19"},
		{"latest day wins", `[{"role":"user","content":"a","created_at":"2026-01-01T10:00:00"},{"role":"user","content":"b","timestamp":"2026-01-03T10:00:00"},{"role":"user","content":"c","metadata":{"createdAt":"2026-01-02T10:00:00"}}]`, "", "2026-01-03"},
		{"utc converted to the workspace zone", `[{"role":"user","content":"x","created_at":"2026-08-19T16:30:00Z"}]`, "", "2026-08-20"},
		{"created_at wins over aliases", `[{"role":"user","content":"x","created_at":"2026-05-01T10:00:00","timestamp":"2026-09-09T10:00:00"}]`, "", "2026-05-01"},
		{"explicit date", `[{"role":"user","content":"x","created_at":"2026-05-01T10:00:00"}]`, "2023-01-19", "2023-01-19"},
		{"no timestamps: today", `[{"role":"user","content":"x"}]`, "", "2026-06-22"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env, _ := newEnv(t, nil)
			res, err := AutoMemory(context.Background(), env, AutoMemoryRequest{SessionID: "d", Messages: []byte(tt.msgs), Date: tt.date})
			if err != nil {
				t.Fatal(err)
			}
			if res.Date != tt.want || res.Path == nil || !strings.HasPrefix(*res.Path, "daily/"+tt.want+"/") {
				t.Errorf("date %s path %v, want %s", res.Date, res.Path, tt.want)
			}
		})
	}
}

func TestPromptsRenderInBothLanguages(t *testing.T) {
	for _, lang := range []string{"en", "zh"} {
		for _, part := range []string{"system", "create", "update"} {
			data := map[string]any{"Today": "2026-06-20", "SessionID": "s", "SessionFile": "session/dialog/s.jsonl", "Hint": "(none)", "NotePath": "daily/2026-06-20/x.md", "History": "[u @ t]\nhi", "Images": false}
			out, err := renderPrompt("auto_memory", lang, part, data)
			if err != nil {
				t.Fatal(err)
			}
			golden := filepath.Join("testdata", "prompts", "auto_memory."+lang+"."+part+".txt")
			checkGolden(t, golden, out)
		}
		for _, part := range []string{"system", "create", "update"} {
			data := map[string]any{"Resource": "resource/2026-06-20/q3.md", "Today": "2026-06-20", "NotePath": "daily/2026-06-20/q3.md", "Content": "# Q3", "Cut": true, "Link": "[[resource/2026-06-20/q3.md]]"}
			out, err := renderPrompt("auto_resource", lang, part, data)
			if err != nil {
				t.Fatal(err)
			}
			checkGolden(t, filepath.Join("testdata", "prompts", "auto_resource."+lang+"."+part+".txt"), out)
		}
		out, err := renderPrompt("auto_tag", lang, "user", map[string]any{"Path": "daily/2026-06-20/x.md", "Existing": "auth (3)"})
		if err != nil {
			t.Fatal(err)
		}
		checkGolden(t, filepath.Join("testdata", "prompts", "auto_tag."+lang+".user.txt"), out)
		for _, part := range []string{"system", "user"} {
			data := map[string]any{"Today": "2026-06-20", "Source": "[[daily/2026-06-20/x.md]]", "Index": "## User\n\n- [[memory/entries/a.md|a]] — A.",
				"Profile": "Go backend.", "ProfilePath": "memory/profile.md", "History": "[u @ t]\nremember that I like tabs"}
			out, err := renderPrompt("long_term", lang, part, data)
			if err != nil {
				t.Fatal(err)
			}
			checkGolden(t, filepath.Join("testdata", "prompts", "long_term."+lang+"."+part+".txt"), out)
			out, err = renderPrompt("context_pick", lang, part, map[string]any{"Query": "how to format answers", "Entries": "1. answer-format (feedback): Bullets.", "N": 5})
			if err != nil {
				t.Fatal(err)
			}
			checkGolden(t, filepath.Join("testdata", "prompts", "context_pick."+lang+"."+part+".txt"), out)
		}
	}
}

// TestPromptLanguagesNameTheSameTools keeps the English and Chinese prompt
// sets in step: every tool one names, the other names too.
func TestPromptLanguagesNameTheSameTools(t *testing.T) {
	toolRe := regexp.MustCompile(`\b(read|edit|write|daily_write|frontmatter_update|skip|list_tags)\(`)
	memoryToolRe := regexp.MustCompile(`\b(memory_search|memory_get|memory_write|memory_delete)\b`)
	for _, f := range []string{"auto_memory", "auto_resource", "auto_tag", "describe_images", "image_caption", "long_term", "context_pick"} {
		names := map[string]map[string]bool{}
		for _, lang := range []string{"en", "zh"} {
			b, err := promptFiles.ReadFile("prompts/" + f + "." + lang + ".tmpl")
			if err != nil {
				t.Fatal(err)
			}
			names[lang] = map[string]bool{}
			for _, re := range []*regexp.Regexp{toolRe, memoryToolRe} {
				for _, m := range re.FindAllStringSubmatch(string(b), -1) {
					names[lang][m[1]] = true
				}
			}
		}
		if !cmp.Equal(names["en"], names["zh"]) {
			t.Errorf("%s: en names %v, zh names %v", f, names["en"], names["zh"])
		}
	}
}

// TestAutoMemoryWithoutModelSkipsSmallTalk: the extractive distiller does
// not write a card of greetings; it says why, and a real statement later
// in the session still gets its card.
func TestAutoMemoryWithoutModelSkipsSmallTalk(t *testing.T) {
	env, _ := newEnv(t, nil)
	res, err := AutoMemory(context.Background(), env, AutoMemoryRequest{SessionID: "hi", Messages: []byte(`[{"role":"user","content":"hi, thanks!","created_at":"2026-06-20T08:00:00Z"}]`)})
	if err != nil || res.Path != nil || !strings.Contains(res.Skipped, "small talk") || strings.HasPrefix(res.Answer, "Wrote") {
		t.Fatalf("%+v %v", res, err)
	}
	res, err = AutoMemory(context.Background(), env, AutoMemoryRequest{SessionID: "hi", Messages: []byte(convJSON)})
	if err != nil || res.Path == nil || res.Distiller != "extractive" {
		t.Fatalf("%+v %v", res, err)
	}
}

// TestAutoMemorySkipThenWriteKeepsTheCard: a model that calls skip and then
// writes the card after all has written a card, not skipped: it is
// finished (day page, index) and the result names it.
func TestAutoMemorySkipThenWriteKeepsTheCard(t *testing.T) {
	model := llmtest.NewScripted(
		llmtest.ToolCallReply(call("skip", map[string]string{"reason": "Only greetings."})),
		llmtest.ToolCallReply(call("daily_write", map[string]string{"name": "staging-db", "description": "Staging DB.", "content": "- pg-staging-2, port 6432"})),
		llmtest.TextReply("done"), llmtest.TextReply("no tags"))
	env, ix := newEnv(t, model)
	res, err := AutoMemory(context.Background(), env, AutoMemoryRequest{SessionID: "s", Messages: []byte(convJSON)})
	if err != nil {
		t.Fatal(err)
	}
	card := "daily/2026-06-20/staging-db.md"
	if res.Skipped != "" || res.Path == nil || *res.Path != card || !res.Created || res.Index == nil {
		t.Fatalf("result %+v", res)
	}
	if !env.WS.Exists(store.DayIndexPath("2026-06-20")) {
		t.Error("the day page was not refreshed")
	}
	if !slices.Contains(ix.updated, card) {
		t.Errorf("the card was not indexed: %v", ix.updated)
	}
}

// TestAutoTagLeavesTheCallersRunOpen: tagging inside a job's run writes
// through that run and leaves it to its owner, which ends it (and would
// hear of a failed end) after the rest of its work.
func TestAutoTagLeavesTheCallersRunOpen(t *testing.T) {
	card := "daily/2026-06-20/staging-db.md"
	env, _ := newEnv(t, llmtest.NewScripted(
		llmtest.ToolCallReply(call("frontmatter_update", map[string]any{"path": card, "metadata": map[string]any{"memory_tags": []string{"database"}}})),
		llmtest.TextReply("done")))
	if err := env.WS.WriteFile(card, []byte("---\nname: staging-db\ndescription: d\n---\n\n- pg-staging-2\n")); err != nil {
		t.Fatal(err)
	}
	if err := env.beginRun("auto_memory", "auto_memory"); err != nil {
		t.Fatal(err)
	}
	run := env.Run()
	res := AutoTag(context.Background(), env, card, "en")
	if res.Succeeded != 1 {
		t.Fatalf("tagging %+v", res)
	}
	if env.Run() != run {
		t.Fatal("tagging closed the run it was given")
	}
	if s, err := env.Journal.FindRun(run.ID); err != nil || s.Status != "open" || len(s.Changes) == 0 {
		t.Fatalf("run before its owner ends it: %+v %v", s, err)
	}
	if err := env.endRun(nil); err != nil {
		t.Fatal(err)
	}
	if s, err := env.Journal.FindRun(run.ID); err != nil || s.Status != store.StatusOK {
		t.Fatalf("run after its owner ended it: %+v %v", s, err)
	}
}
