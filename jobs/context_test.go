package jobs

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/reme-dev/reme/jobs/llm"
	"github.com/reme-dev/reme/jobs/llm/llmtest"
	"github.com/reme-dev/reme/store"
)

func putFile(t *testing.T, ws *store.Workspace, rel, text string) {
	t.Helper()
	p := ws.Abs(rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func putEntry(t *testing.T, ws *store.Workspace, name, typ, desc, body, updated string) {
	t.Helper()
	putFile(t, ws, store.EntriesDir+"/"+name+".md",
		fmt.Sprintf("---\ntype: %s\nname: %s\ndescription: %s\ncreated: %s\nupdated: %s\n---\n\n%s\n", typ, name, desc, updated, updated, body))
}

// contextWorkspace: a profile, four entries, MEMORY.md, cards today,
// yesterday and the day before.
func contextWorkspace(t *testing.T, model llm.Client) *Env {
	t.Helper()
	env, _ := newEnv(t, model)
	putFile(t, env.WS, store.ProfilePath, "---\nname: Dana\nrole: backend engineer\n---\n\nTen years of Go; new to frontend.\n")
	putEntry(t, env.WS, "answer-format", "feedback", "Prefers bullet answers over long paragraphs.", bulletFeedback, "2026-06-20")
	putEntry(t, env.WS, "q2-launch", "project", "Q2 launch deadline.", "The Q2 launch is due 2026-06-30.", "2026-04-01")
	putEntry(t, env.WS, "grep-usage", "reference", "How to use grep in this repo.", "Use grep -rn from the repo root.", "2026-06-01")
	putEntry(t, env.WS, "bash-usage", "reference", "How to use bash here.", "Run scripts with bash -eu.\nWarning: never run deploy.sh by hand.", "2026-06-01")
	if _, err := env.WS.RefreshMemoryIndex(store.MemoryIndexBounds{}); err != nil {
		t.Fatal(err)
	}
	putFile(t, env.WS, "daily/2026-06-22/login-fix.md", "---\nname: login-fix\ndescription: Fixed the login redirect loop.\n---\n\n- done\n")
	putFile(t, env.WS, "daily/2026-06-22/answers.md", "---\nname: answers\ndescription: Talked about answer formats.\n---\n\n- bullets\n")
	putFile(t, env.WS, "daily/2026-06-21/deploy.md", "---\nname: deploy\ndescription: Deployed v2.3 to staging.\n---\n\n- ok\n")
	putFile(t, env.WS, "daily/2026-06-20/old.md", "---\nname: old\ndescription: An older day.\n---\n\n- x\n")
	return env
}

func TestContextPriorityAndManifest(t *testing.T) {
	env := contextWorkspace(t, nil)
	res, err := BuildContext(context.Background(), env, ContextRequest{Query: "how should I format answers?"})
	if err != nil {
		t.Fatal(err)
	}
	text := res.Text
	order := []string{"## About the user (memory/profile.md)", "name: Dana", "Ten years of Go", "## Long-term memory index (MEMORY.md)",
		"- [[memory/entries/answer-format.md|answer-format]]", "## Relevant long-term entries", "### answer-format (feedback) — memory/entries/answer-format.md",
		"How to apply: use short bullets", "## Daily notes, today (2026-06-22)", "- [[daily/2026-06-22/answers.md|answers]]: Talked about answer formats.",
		"- [[daily/2026-06-22/login-fix.md|login-fix]]", "## Daily notes, yesterday (2026-06-21)", "deploy", "\n---\nreme context: included the profile, MEMORY.md, 1 entry (answer-format), 3 daily notes. "}
	at := 0
	for _, want := range order {
		i := strings.Index(text[at:], want)
		if i < 0 {
			t.Fatalf("%q missing or out of order in:\n%s", want, text)
		}
		at += i + len(want)
	}
	if strings.Contains(text, "old.md") || strings.Contains(text, "verify before relying") {
		t.Errorf("older day or a verify note in:\n%s", text)
	}
	if res.Bytes != len(text) || res.Bytes > res.Budget || !strings.HasSuffix(text, fmt.Sprintf(" %s of 8,192 bytes.\n", thousands(len(text)))) {
		t.Errorf("bytes %d budget %d tail %q", res.Bytes, res.Budget, text[len(text)-40:])
	}
	// the same input gives the same output
	again, err := BuildContext(context.Background(), env, ContextRequest{Query: "how should I format answers?"})
	if err != nil || again.Text != text {
		t.Errorf("not deterministic")
	}
}

func TestContextVerifyReminderAndStartMode(t *testing.T) {
	env := contextWorkspace(t, nil)
	res, err := BuildContext(context.Background(), env, ContextRequest{Query: "when is the Q2 launch due"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Text, "### q2-launch (project)") || !strings.Contains(res.Text, "(saved 82 days ago — verify before relying on it)") {
		t.Errorf("no reminder on an 82-day-old entry:\n%s", res.Text)
	}
	env.Memory.VerifyAfterDays = 100
	res, _ = BuildContext(context.Background(), env, ContextRequest{Query: "when is the Q2 launch due"})
	if strings.Contains(res.Text, "verify before relying") {
		t.Error("reminder under memory.verify_after_days")
	}
	start, err := BuildContext(context.Background(), env, ContextRequest{Mode: ContextStart})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(start.Text, "Ten years of Go") || !strings.Contains(start.Text, "## Long-term memory index") ||
		strings.Contains(start.Text, "## Relevant") || strings.Contains(start.Text, "## Daily") {
		t.Errorf("start context:\n%s", start.Text)
	}
}

func TestContextSessionDoesNotRepeatEntries(t *testing.T) {
	env := contextWorkspace(t, nil)
	ask := func(reset bool) *ContextResult {
		t.Helper()
		res, err := BuildContext(context.Background(), env, ContextRequest{Query: "answer format", SessionID: "s1", Reset: reset})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	first := ask(false)
	if !strings.Contains(first.Text, "How to apply: use short bullets") {
		t.Fatalf("first turn:\n%s", first.Text)
	}
	second := ask(false)
	if strings.Contains(second.Text, "How to apply: use short bullets") || !strings.Contains(second.Text, "[[memory/entries/answer-format.md|answer-format]]") ||
		!strings.Contains(second.Text, "left out 1 entry (answer-format): already shown in this session") {
		t.Errorf("second turn repeated the entry or lost its index line:\n%s", second.Text)
	}
	// a changed entry is shown again
	putEntry(t, env.WS, "answer-format", "feedback", "Prefers bullet answers over long paragraphs.", bulletFeedback+"At most five bullets.", "2026-06-22")
	if third := ask(false); !strings.Contains(third.Text, "At most five bullets.") {
		t.Errorf("the changed entry was not shown:\n%s", third.Text)
	}
	if again := ask(false); strings.Contains(again.Text, "At most five bullets.") {
		t.Error("shown twice")
	}
	if reset := ask(true); !strings.Contains(reset.Text, "At most five bullets.") {
		t.Error("a reset session was not shown the entry")
	}
	// another session has its own state
	other, _ := BuildContext(context.Background(), env, ContextRequest{Query: "answer format", SessionID: "s2"})
	if !strings.Contains(other.Text, "At most five bullets.") {
		t.Error("another session was not shown the entry")
	}
}

func TestContextSkipsToolReferencesUnlessTheyWarn(t *testing.T) {
	env := contextWorkspace(t, nil)
	res, err := BuildContext(context.Background(), env, ContextRequest{Query: "how to use grep and bash here", RecentTools: []string{"Grep", "Bash"}})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(res.Text, "Use grep -rn") || !strings.Contains(res.Text, "never run deploy.sh by hand") {
		t.Errorf("tool references:\n%s", res.Text)
	}
	if !strings.Contains(res.Text, "left out 1 entry (grep-usage): skipped: how to use grep, which the session used recently") {
		t.Errorf("manifest:\n%s", res.Text)
	}
	res, _ = BuildContext(context.Background(), env, ContextRequest{Query: "how to use grep and bash here"})
	if !strings.Contains(res.Text, "Use grep -rn") {
		t.Error("skipped without the tool used")
	}
}

func TestContextNeverExceedsTheBudget(t *testing.T) {
	env := contextWorkspace(t, nil)
	for i := 0; i < 40; i++ {
		putEntry(t, env.WS, fmt.Sprintf("deploy-note-%02d", i), store.EntryTypes[i%4], fmt.Sprintf("Deploy note %d.", i),
			strings.Repeat(fmt.Sprintf("Deploy step %d: check the canary. Why: outages. How to apply: always.\n", i), 1+i%9), "2026-06-10")
	}
	putFile(t, env.WS, store.ProfilePath, "# Profile\n\n"+strings.Repeat("I work on the deploy pipeline and care about canaries.\n", 60))
	if _, err := env.WS.RefreshMemoryIndex(store.MemoryIndexBounds{}); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewSource(1))
	queries := []string{"deploy canary", "answer format", "部署", "q2 launch", "nothing matches this"}
	for i := 0; i < 200; i++ {
		budget := MinContextBudget + rng.Intn(9000)
		q := queries[i%len(queries)]
		res, err := BuildContext(context.Background(), env, ContextRequest{Query: q, Budget: budget})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Text) > budget || res.Bytes != len(res.Text) {
			t.Fatalf("budget %d, query %q: %d bytes", budget, q, len(res.Text))
		}
		if !strings.Contains(res.Text, "reme context: ") {
			t.Fatalf("budget %d: no manifest:\n%s", budget, res.Text)
		}
		if want := fmt.Sprintf(" %s of %s bytes.\n", thousands(len(res.Text)), thousands(budget)); !strings.HasSuffix(res.Text, want) {
			t.Fatalf("budget %d: the manifest does not count the output (%q):\n%s", budget, want, res.Text)
		}
		for _, it := range res.Included {
			if it.Kind == "entry" && !strings.Contains(res.Text, "— "+it.Path) {
				t.Fatalf("budget %d: %s said included but absent", budget, it.Path)
			}
		}
	}
	if _, err := BuildContext(context.Background(), env, ContextRequest{Query: "x", Budget: 100}); err == nil {
		t.Error("a budget below the minimum was accepted")
	}
	// a cut profile says so
	res, _ := BuildContext(context.Background(), env, ContextRequest{Query: "deploy", Budget: 1500})
	if !strings.Contains(res.Text, "… (cut to fit the budget; the rest: reme read memory/profile.md)") {
		t.Errorf("cut profile:\n%s", res.Text)
	}
}

func TestContextModelPicksFromManyEntries(t *testing.T) {
	var prompts []string
	model := &llmtest.Scripted{Func: func(req llm.Request) (*llm.Response, error) {
		prompts = append(prompts, req.Messages[1].Text())
		return llmtest.TextReply("[3, 1, 3]"), nil
	}}
	env := contextWorkspace(t, model)
	for i := 0; i < 30; i++ {
		putEntry(t, env.WS, fmt.Sprintf("topic-%02d", i), "user", fmt.Sprintf("Topic %d.", i), "Body.", "2026-06-10")
	}
	res, err := BuildContext(context.Background(), env, ContextRequest{Query: "what do you know about me"})
	if err != nil {
		t.Fatal(err)
	}
	// entries are listed by path: 1 answer-format, 2 bash-usage, 3 grep-usage
	if len(prompts) != 1 || !strings.Contains(prompts[0], "1. answer-format (feedback): Prefers bullet answers over long paragraphs.") ||
		!strings.Contains(prompts[0], "34. topic-29 (user): Topic 29.") {
		t.Fatalf("prompt %v", prompts)
	}
	gi, ai := strings.Index(res.Text, "### grep-usage"), strings.Index(res.Text, "### answer-format")
	if res.Picker != "test-model" || gi < 0 || ai < 0 || gi > ai || !strings.Contains(res.Text, "entries picked by test-model") {
		t.Errorf("picker %s:\n%s", res.Picker, res.Text)
	}
	// an answer that is not a list falls back to keywords, and says so
	model.Func = func(llm.Request) (*llm.Response, error) { return llmtest.TextReply("grep-usage, I think"), nil }
	res, err = BuildContext(context.Background(), env, ContextRequest{Query: "answer format"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Picker != "keyword" || len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], "is not a list of entry numbers") || !strings.Contains(res.Text, "### answer-format") {
		t.Errorf("fallback %s %v:\n%s", res.Picker, res.Warnings, res.Text)
	}
}

func TestContextModelPicksWhenKeywordsMiss(t *testing.T) {
	calls := 0
	model := &llmtest.Scripted{Func: func(llm.Request) (*llm.Response, error) {
		calls++
		return llmtest.TextReply("[]"), nil
	}}
	env := contextWorkspace(t, model)
	for i := 0; i < 16; i++ {
		putEntry(t, env.WS, fmt.Sprintf("topic-%02d", i), "user", fmt.Sprintf("Topic %d.", i), "Body.", "2026-06-10")
	}
	// 20 entries: keywords first; the model only when they find nothing
	if _, err := BuildContext(context.Background(), env, ContextRequest{Query: "answer format"}); err != nil || calls != 0 {
		t.Fatalf("calls %d err %v", calls, err)
	}
	res, err := BuildContext(context.Background(), env, ContextRequest{Query: "zzz qqq"})
	if err != nil || calls != 1 || res.Picker != "test-model" || strings.Contains(res.Text, "## Relevant") {
		t.Fatalf("calls %d picker %s err %v", calls, res.Picker, err)
	}
}

func TestContextBrokenProfile(t *testing.T) {
	env := contextWorkspace(t, nil)
	putFile(t, env.WS, store.ProfilePath, "---\nname: [Dana\n---\n\nTen years of Go.\n")
	before := snapshot(t, env.WS)
	res, err := BuildContext(context.Background(), env, ContextRequest{Query: "hello"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], "the frontmatter of memory/profile.md does not parse") ||
		!strings.Contains(res.Text, "Ten years of Go.") || strings.Contains(res.Text, "[Dana") {
		t.Errorf("%v\n%s", res.Warnings, res.Text)
	}
	if after := snapshot(t, env.WS); len(after) != len(before) {
		t.Error("context changed the workspace")
	}
	_ = time.Second
}

// TestContextLongIndexLeavesRoomForEntries: a MEMORY.md longer than half
// the budget is cut there (and says so), so that the entries relevant to
// the message are still shown.
func TestContextLongIndexLeavesRoomForEntries(t *testing.T) {
	env := contextWorkspace(t, nil)
	for i := 0; i < 300; i++ {
		putEntry(t, env.WS, fmt.Sprintf("topic-%03d", i), "user", fmt.Sprintf("A rather long description of topic number %d for the index.", i), "Body.", "2026-06-10")
	}
	if _, err := env.WS.RefreshMemoryIndex(store.MemoryIndexBounds{}); err != nil {
		t.Fatal(err)
	}
	res, err := BuildContext(context.Background(), env, ContextRequest{Query: "answer format"})
	if err != nil {
		t.Fatal(err)
	}
	head, _, _ := strings.Cut(res.Text, "## Relevant long-term entries")
	if !strings.Contains(res.Text, "### answer-format (feedback)") || len(head) > res.Budget/2+200 ||
		!strings.Contains(res.Text, "… (cut to fit the budget; the rest: reme read MEMORY.md)") || len(res.Text) > res.Budget {
		t.Errorf("%d bytes before the entries:\n%s", len(head), res.Text)
	}
}

// TestContainsWordMatchesTheWordPattern: the word test finds a tool name
// where the pattern (^|[^\pL\pN_])name($|[^\pL\pN_]) does.
func TestContainsWordMatchesTheWordPattern(t *testing.T) {
	texts := []string{"", "git", "git push", "use git.", "github", "legit", "git_x", "x-git-y", "gitgit git",
		"legit then git", "日本git", "git日本", "git2", "²git", "c++ tips", "c++x", "the c++", "kubectl, git", "über-git", "git\u00a0x"}
	tools := []string{"git", "c++", "日本", "x", "git x"}
	for _, s := range texts {
		for _, w := range tools {
			re := regexp.MustCompile(`(^|[^\pL\pN_])` + regexp.QuoteMeta(w) + `($|[^\pL\pN_])`)
			if got, want := containsWord(s, w), re.MatchString(s); got != want {
				t.Errorf("containsWord(%q, %q) = %v, the pattern says %v", s, w, got, want)
			}
		}
	}
}
