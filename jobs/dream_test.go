package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/reme-dev/reme/jobs/llm"
	"github.com/reme-dev/reme/jobs/llm/llmtest"
	"github.com/reme-dev/reme/store"
)

// dreamIndex stands in for the index: node search greps digest files, the
// journal is the real one.
type dreamIndex struct {
	ws      *store.Workspace
	j       *store.Journal
	updated []string
}

func (d *dreamIndex) Locked(_ context.Context, fn func() error) error { return fn() }

func (d *dreamIndex) UpdatePaths(_ context.Context, paths ...string) error {
	d.updated = append(d.updated, paths...)
	return nil
}

func (d *dreamIndex) Journal() *store.Journal { return d.j }

func (d *dreamIndex) SearchNodes(_ context.Context, query string, limit int) ([]NodeHit, error) {
	files, err := listMarkdown(d.ws, store.DigestDir)
	if err != nil {
		return nil, err
	}
	var out []NodeHit
	for _, f := range files {
		n, err := d.ws.ReadNote(f)
		if err != nil {
			return nil, err
		}
		for _, w := range strings.Fields(strings.ToLower(query)) {
			if strings.Contains(strings.ToLower(n.Body+n.Name()), w) {
				out = append(out, NodeHit{Path: f, Name: n.Name(), Description: n.Description()})
				break
			}
		}
	}
	return out, nil
}

var dreamCards = map[string]string{
	"daily/2026-06-21/pr-review.md": "---\nname: pr-review\ndescription: review of a large PR\n---\n\nThe 2000-line PR took three days to review; we agreed to split PRs under 400 lines.\n",
	"daily/2026-06-22/pr-split.md":  "---\nname: pr-split\ndescription: splitting PRs\n---\n\nSplit the search refactor into four PRs, each reviewed the same day.\n",
	"daily/2026-06-10/old.md":       "---\nname: old\n---\n\nOutside the window.\n",
}

func dreamEnv(t *testing.T, model llm.Client) (*Env, *dreamIndex) {
	t.Helper()
	ws, err := store.OpenWorkspace(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := ws.Init(); err != nil {
		t.Fatal(err)
	}
	for p, c := range dreamCards {
		if err := ws.WriteFile(p, []byte(c)); err != nil {
			t.Fatal(err)
		}
	}
	now := func() time.Time { return time.Date(2026, 6, 22, 10, 0, 0, 0, shanghai) }
	env := &Env{WS: ws, Model: model, ModelID: "test-model", Location: shanghai, Now: now}
	return env, &dreamIndex{ws: ws, j: store.NewJournal(ws, store.JournalOptions{Now: now})}
}

func dreamCall(id, name string, args any) llm.ToolCall {
	b, _ := json.Marshal(args)
	return llm.ToolCall{ID: id, Name: name, Arguments: b}
}

const goodNode = "Keep pull requests under about 400 lines so that each is reviewed the same day.\n\n" +
	"Why: large PRs stall review for days.\nHow to apply: split work into reviewable steps before opening a PR.\n\n" +
	"## Sources\n" +
	"The three-day review of a 2000-line PR is recorded in [[daily/2026-06-21/pr-review.md]], where the team agreed on the limit.\n" +
	"The split of the search refactor in [[daily/2026-06-22/pr-split.md]] shows the rule working.\n"

func extractReply() *llm.Response {
	return llmtest.TextReply("```json\n" + `{"units": [{"name": "Small pull requests", "bucket": "personal",
		"summary": "The team keeps PRs small to get same-day reviews.",
		"paths": ["daily/2026-06-21/pr-review.md", "daily/2026-06-22/pr-split.md", "daily/2026-06-10/old.md"]}]}` + "\n```")
}

func TestAutoDreamCreatesAJournaledNode(t *testing.T) {
	model := llmtest.NewScripted(
		extractReply(),
		llmtest.ToolCallReply(dreamCall("1", "node_search", map[string]any{"query": "pull request review", "limit": 20})),
		llmtest.ToolCallReply(dreamCall("2", "read", map[string]any{"path": "daily/2026-06-21/pr-review.md"})),
		// refused: a bare link line in Sources, then no durability, then a path outside digest/
		llmtest.ToolCallReply(dreamCall("3", "write", map[string]any{"path": "digest/personal/small-pull-requests.md", "name": "small pull requests",
			"description": "keep PRs small", "durability": "evergreen", "content": "Keep PRs small.\n\n## Sources\n- [[daily/2026-06-21/pr-review.md]]\n"})),
		llmtest.ToolCallReply(dreamCall("4", "write", map[string]any{"path": "digest/personal/small-pull-requests.md", "name": "small pull requests",
			"description": "keep PRs small", "durability": "forever", "content": goodNode})),
		llmtest.ToolCallReply(dreamCall("5", "write", map[string]any{"path": "daily/2026-06-22/pr-split.md", "name": "x",
			"description": "x", "durability": "evergreen", "content": goodNode})),
		llmtest.ToolCallReply(dreamCall("6", "write", map[string]any{"path": "digest/personal/small-pull-requests.md", "name": "small pull requests",
			"description": "The team keeps pull requests under 400 lines for same-day review.", "durability": "review_after: 2026-12-01", "content": goodNode})),
		llmtest.TextReply(`{"action": "CREATE", "target_path": "digest/personal/small-pull-requests.md", "note": "new rule"}`),
	)
	env, ix := dreamEnv(t, model)
	res, err := AutoDream(context.Background(), env, ix, DreamOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Units) != 1 || len(res.Units[0].Paths) != 2 {
		t.Errorf("units %+v (a path outside the window must be dropped)", res.Units)
	}
	if len(res.NodesCreated) != 1 || res.NodesCreated[0] != "digest/personal/small-pull-requests.md" {
		t.Fatalf("result %+v", res)
	}
	reqs := model.Requests()
	var toolErrors []string
	for _, m := range reqs[len(reqs)-1].Messages {
		if m.Role == llm.RoleTool && strings.HasPrefix(m.Text(), "Error:") {
			toolErrors = append(toolErrors, m.Text())
		}
	}
	if len(toolErrors) != 3 || !strings.Contains(toolErrors[0], "bare link") || !strings.Contains(toolErrors[1], "durability") ||
		!strings.Contains(toolErrors[2], "no permission") {
		t.Errorf("tool errors %q", toolErrors)
	}
	b, err := os.ReadFile(env.WS.Abs("digest/personal/small-pull-requests.md"))
	if err != nil {
		t.Fatal(err)
	}
	node := string(b)
	for _, want := range []string{"name: small pull requests\n", "review_after: \"2026-12-01\"\n", "## Sources\n", "[[daily/2026-06-22/pr-split.md]]"} {
		if !strings.Contains(node, want) {
			t.Errorf("node lacks %q:\n%s", want, node)
		}
	}
	if got, _ := os.ReadFile(env.WS.Abs("daily/2026-06-22/pr-split.md")); string(got) != dreamCards["daily/2026-06-22/pr-split.md"] {
		t.Error("the model changed a card")
	}
	sum, err := ix.j.FindRun(res.Run)
	if err != nil {
		t.Fatal(err)
	}
	if len(sum.Changes) != 1 || sum.Changes[0].Action != store.ActionCreate || sum.Changes[0].Model != "test-model" || sum.Changes[0].Prompt != DreamPromptVersion {
		t.Errorf("journal %+v", sum.Changes)
	}
	if len(res.Checkpointed) != 2 {
		t.Errorf("checkpointed %v", res.Checkpointed)
	}
	// nothing new: no model call
	again, err := AutoDream(context.Background(), env, ix, DreamOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(again.Summary, "No changed dream input for 2026-06-21, 2026-06-22") {
		t.Errorf("second dream: %s", again.Summary)
	}
	// undoing the dream removes the node, and its cards count as new again
	if _, err := ix.j.Undo(res.Run, false, store.TriggerCLI); err != nil {
		t.Fatal(err)
	}
	if env.WS.Exists("digest/personal/small-pull-requests.md") {
		t.Error("undo left the node")
	}
	model.Responses = append(model.Responses, llmtest.TextReply(`{"units": []}`))
	third, err := AutoDream(context.Background(), env, ix, DreamOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if third.FilesChanged != 2 {
		t.Errorf("after undo %d cards are new, want 2: %s", third.FilesChanged, third.Summary)
	}
}

func TestAutoDreamUpdatesAreAdditive(t *testing.T) {
	existing := "---\nname: small pull requests\ndescription: keep PRs small\ndurability: evergreen\n---\n\n" +
		"Keep PRs small; see [[digest/wiki/code-review.md]].\n\n## Sources\nFirst seen in [[daily/2026-05-01/first.md]] during the spring planning.\n"
	model := llmtest.NewScripted(
		extractReply(),
		// drops an existing link: refused
		llmtest.ToolCallReply(dreamCall("1", "write", map[string]any{"path": "digest/personal/small-pull-requests.md", "name": "small pull requests",
			"description": "keep PRs small", "durability": "evergreen", "content": goodNode})),
		// a new node in another bucket: refused
		llmtest.ToolCallReply(dreamCall("2", "write", map[string]any{"path": "digest/wiki/other.md", "name": "other",
			"description": "x", "durability": "evergreen", "content": goodNode})),
		llmtest.ToolCallReply(dreamCall("3", "write", map[string]any{"path": "digest/personal/small-pull-requests.md", "name": "small pull requests",
			"description": "keep PRs small", "durability": "evergreen",
			"content": "Keep PRs small; see [[digest/wiki/code-review.md]].\n\n" + goodNode[strings.Index(goodNode, "## Sources"):] +
				"First seen in [[daily/2026-05-01/first.md]] during the spring planning.\n"})),
		// an invalid receipt twice: recovered from the one node written
		llmtest.TextReply("done"),
		llmtest.TextReply("still not JSON"),
	)
	env, ix := dreamEnv(t, model)
	if err := env.WS.WriteFile("digest/personal/small-pull-requests.md", []byte(existing)); err != nil {
		t.Fatal(err)
	}
	res, err := AutoDream(context.Background(), env, ix, DreamOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Integrated) != 1 || res.Integrated[0].Status != "ok" || res.Integrated[0].Action != "REFINE" {
		t.Fatalf("integrate %+v", res.Integrated)
	}
	reqs := model.Requests()
	var errs []string
	for _, m := range reqs[len(reqs)-1].Messages {
		if m.Role == llm.RoleTool && strings.HasPrefix(m.Text(), "Error:") {
			errs = append(errs, m.Text())
		}
	}
	if len(errs) != 2 || !strings.Contains(errs[0], "additive") || !strings.Contains(errs[1], "digest/personal/") {
		t.Errorf("tool errors %q", errs)
	}
	if env.WS.Exists("digest/wiki/other.md") {
		t.Error("a node was created in another bucket")
	}
	b, _ := os.ReadFile(env.WS.Abs("digest/personal/small-pull-requests.md"))
	if !strings.Contains(string(b), "[[daily/2026-05-01/first.md]]") || !strings.Contains(string(b), "[[daily/2026-06-21/pr-review.md]]") {
		t.Errorf("node:\n%s", b)
	}
}

func TestAutoDreamWithoutAModel(t *testing.T) {
	env, ix := dreamEnv(t, nil)
	res, err := AutoDream(context.Background(), env, ix, DreamOptions{})
	if !errors.Is(err, ErrNoModel) {
		t.Fatalf("err %v", err)
	}
	if len(res.FailedPaths) != 2 {
		t.Errorf("failed paths %v", res.FailedPaths)
	}
	if _, err := os.Stat(filepath.Join(env.WS.Root, "metadata", dreamCatalogPath)); err == nil {
		t.Error("cards were checkpointed without a model")
	}
}

func TestAutoDreamUnusableExtractIsAWarning(t *testing.T) {
	model := llmtest.NewScripted(llmtest.TextReply("I think these are nice cards."), llmtest.TextReply("- not: [valid"))
	env, ix := dreamEnv(t, model)
	res, err := AutoDream(context.Background(), env, ix, DreamOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(model.Requests()) != 2 || len(res.Warnings) != 1 || len(res.Units) != 0 {
		t.Errorf("requests %d, result %+v", len(model.Requests()), res)
	}
	if !strings.Contains(res.Summary, "AutoDream completed with warnings") {
		t.Errorf("summary %s", res.Summary)
	}
}

func TestAutoDreamModelFailureLeavesCardsPending(t *testing.T) {
	model := llmtest.NewScripted(extractReply()) // the integrate call finds no reply: a model error
	env, ix := dreamEnv(t, model)
	res, err := AutoDream(context.Background(), env, ix, DreamOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Integrated) != 1 || res.Integrated[0].Status != "failed" || len(res.FailedPaths) != 2 || len(res.Checkpointed) != 0 {
		t.Errorf("result %+v", res)
	}
}

// TestAutoDreamListsEveryNodeOfAnUnitWithoutReceipt: a unit that wrote
// several nodes but never gave a valid receipt lists each node it wrote.
func TestAutoDreamListsEveryNodeOfAnUnitWithoutReceipt(t *testing.T) {
	model := llmtest.NewScripted(
		extractReply(),
		llmtest.ToolCallReply(dreamCall("1", "write", map[string]any{"path": "digest/personal/small-prs.md", "name": "small prs",
			"description": "keep PRs small", "durability": "evergreen", "content": goodNode})),
		llmtest.ToolCallReply(dreamCall("2", "write", map[string]any{"path": "digest/personal/same-day-review.md", "name": "same day review",
			"description": "review PRs the same day", "durability": "evergreen", "content": goodNode})),
		llmtest.TextReply("done"),
		llmtest.TextReply("done, really"),
	)
	env, ix := dreamEnv(t, model)
	res, err := AutoDream(context.Background(), env, ix, DreamOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"digest/personal/same-day-review.md", "digest/personal/small-prs.md"}
	if !slices.Equal(res.NodesCreated, want) || len(res.NodesUpdated) != 0 {
		t.Fatalf("created %q, updated %q", res.NodesCreated, res.NodesUpdated)
	}
	if !strings.Contains(res.Summary, "- Created: "+strings.Join(want, ", ")+"\n") || strings.Contains(res.Summary, "- Updated:") {
		t.Errorf("summary:\n%s", res.Summary)
	}
}

// TestAutoDreamCatalogNotSavedFails: when the catalog cannot be saved no
// card was checkpointed, and the dream says so and fails.
func TestAutoDreamCatalogNotSavedFails(t *testing.T) {
	model := llmtest.NewScripted(
		extractReply(),
		llmtest.ToolCallReply(dreamCall("1", "write", map[string]any{"path": "digest/personal/small-prs.md", "name": "small prs",
			"description": "keep PRs small", "durability": "evergreen", "content": goodNode})),
		llmtest.TextReply(`{"action": "CREATE", "target_path": "digest/personal/small-prs.md"}`),
	)
	env, ix := dreamEnv(t, model)
	// a folder where the catalog goes: the save fails, the load before it
	// found no catalog
	cat := env.WS.MetadataPath(dreamCatalogPath)
	script := model.Responses
	model.Responses, model.Func = nil, func(llm.Request) (*llm.Response, error) {
		if err := os.MkdirAll(cat, 0o755); err != nil {
			return nil, err
		}
		r := script[0]
		script = script[1:]
		return r, nil
	}
	res, err := AutoDream(context.Background(), env, ix, DreamOptions{})
	if err == nil || !strings.Contains(err.Error(), "dream catalog") {
		t.Fatalf("err = %v", err)
	}
	if len(res.Checkpointed) != 0 || len(res.FailedPaths) != 2 {
		t.Errorf("checkpointed %q, failed %q", res.Checkpointed, res.FailedPaths)
	}
	if !strings.Contains(res.Summary, "Catalog: checkpointed 0 ") {
		t.Errorf("summary:\n%s", res.Summary)
	}
}
