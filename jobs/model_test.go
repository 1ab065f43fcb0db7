package jobs

import (
	"context"
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reme-dev/reme/jobs/llm"
	"github.com/reme-dev/reme/jobs/llm/llmtest"
)

const (
	testAWSKey    = "AKIA2QZ5K7X4MWRP3T6N"
	testGitHubTok = "ghp_R8mK2pW9xQ4vT7nZ3bL6cY1dF5hJ0sA8eG2u"
	testOpenAIKey = "sk-proj-Zq3k9LmN2pX7vB4tR8sW1yC6dF0hJ5gK2aE9uV3"
	testGitSHA    = "9fceb02d0ae598e95dc970b74767f19372d61af8"
)

// TestModelRequestsAreMasked: every text of a request is masked before
// the client sees it (the system prompt, user text, tool results, tool
// calls echoed back and their plan, image sources), image bytes are sent
// as they are, look-alikes pass, and the caller's request is not changed.
func TestModelRequestsAreMasked(t *testing.T) {
	model := llmtest.NewScripted(llmtest.TextReply("ok"))
	env, _ := newEnv(t, model)
	image := "data:image/png;base64,iVBORw0KGgo" + testAWSKey // not text: sent as it is
	args, _ := json.Marshal(map[string]string{"content": "token " + testGitHubTok, "commit": testGitSHA})
	req := llm.Request{Model: "m", Messages: []llm.Message{
		llm.TextMessage(llm.RoleSystem, "The workspace key is "+testOpenAIKey+"."),
		{Role: llm.RoleUser, Parts: []llm.Part{{Text: "Image source: https://bob:hunter2hunter2@example.com/x.png"}, {ImageURL: image}, {Text: "key " + testAWSKey + " at " + testGitSHA}}},
		{Role: llm.RoleAssistant, ToolPlan: "I will write password=hunter2hunter2", ToolCalls: []llm.ToolCall{{ID: "c1", Name: "write", Arguments: args}}},
		{Role: llm.RoleTool, ToolCallID: "c1", Parts: []llm.Part{{Text: "Wrote it with " + testGitHubTok}}},
	}}
	before, _ := json.Marshal(req)
	if _, err := env.model().Chat(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	if after, _ := json.Marshal(req); string(after) != string(before) {
		t.Error("the caller's request was changed")
	}
	sent, _ := json.Marshal(model.Requests()[0])
	got := string(sent)
	for _, secret := range []string{testOpenAIKey, testGitHubTok, "hunter2hunter2", "key " + testAWSKey} {
		if strings.Contains(got, secret) {
			t.Errorf("the request holds %s:\n%s", secret, got)
		}
	}
	for _, want := range []string{"[redacted:openai-api-key]", "[redacted:github-token]", "password=[redacted:password]",
		"bob:[redacted:url-password]@example.com", "key [redacted:aws-access-key] at " + testGitSHA, testGitSHA, image} {
		if !strings.Contains(got, want) {
			t.Errorf("the request lacks %q:\n%s", want, got)
		}
	}
}

// TestEveryModelCallIsMasked: jobs reach the model only through
// Env.model(), which masks secrets; a job that called Env.Model directly
// would send them as they are.
func TestEveryModelCallIsMasked(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") || f == "model.go" {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		file, err := parser.ParseFile(fset, f, src, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(file, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			uses := append([]ast.Expr{call.Fun}, call.Args...)
			for _, u := range uses {
				if fun, ok := u.(*ast.SelectorExpr); ok && u == call.Fun {
					u = fun.X // env.Model.Chat(…): the receiver
				}
				if sel, ok := u.(*ast.SelectorExpr); ok && sel.Sel.Name == "Model" {
					t.Errorf("%s: %s uses .Model directly; call the model through env.model(), which masks secrets",
						fset.Position(call.Pos()), src[fset.Position(call.Pos()).Offset:fset.Position(call.End()).Offset])
				}
			}
			return true
		})
	}
}

// TestDigestNodeIsMasked: a digest node the model writes with a secret in
// it (its body, its description) is written masked, and a node path that
// holds a secret is refused.
func TestDigestNodeIsMasked(t *testing.T) {
	node := strings.Replace(goodNode, "Keep pull requests", "Deploy with "+testAWSKey+". Keep pull requests", 1)
	model := llmtest.NewScripted(
		extractReply(),
		llmtest.ToolCallReply(dreamCall("1", "write", map[string]any{"path": "digest/personal/" + testGitHubTok + ".md", "name": "small pull requests",
			"description": "keep PRs small", "durability": "evergreen", "content": goodNode})),
		llmtest.ToolCallReply(dreamCall("2", "write", map[string]any{"path": "digest/personal/small-pull-requests.md", "name": "small pull requests",
			"description": "token " + testGitHubTok, "durability": "evergreen", "content": node})),
		llmtest.TextReply(`{"action": "CREATE", "target_path": "digest/personal/small-pull-requests.md", "note": "new rule"}`),
	)
	env, ix := dreamEnv(t, model)
	if _, err := AutoDream(context.Background(), env, ix, DreamOptions{}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(env.WS.Abs("digest/personal/small-pull-requests.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"description: token [redacted:github-token]\n", "Deploy with [redacted:aws-access-key]. Keep pull requests"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("node lacks %q:\n%s", want, b)
		}
	}
	if strings.Contains(string(b), testAWSKey) || strings.Contains(string(b), testGitHubTok) {
		t.Errorf("node holds a secret:\n%s", b)
	}
	if files, _ := filepath.Glob(env.WS.Abs("digest/personal/ghp_*")); len(files) != 0 {
		t.Errorf("a node is named after a token: %v", files)
	}
	reqs := model.Requests()
	if last := reqs[len(reqs)-1]; !strings.Contains(string(mustJSON(t, last)), "holds a secret") {
		t.Errorf("the refusal of the path is not in the conversation")
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

type recordingReranker struct{ query, docs []string }

func (r *recordingReranker) Rerank(_ context.Context, query string, docs []string, _ int) ([]llm.Ranked, error) {
	r.query = append(r.query, query)
	r.docs = append(r.docs, docs...)
	return []llm.Ranked{{Index: 1, Score: 1}}, nil
}

func (r *recordingReranker) Model() string { return "rerank" }

// TestRerankIsMasked: the question and the documents a reranker is sent
// are masked; its answer, by position, is passed on as it is.
func TestRerankIsMasked(t *testing.T) {
	rec := &recordingReranker{}
	got, err := MaskReranker(rec).Rerank(context.Background(), "which key is "+testAWSKey, []string{"commit " + testGitSHA, "token " + testGitHubTok}, 1)
	if err != nil || len(got) != 1 || got[0].Index != 1 {
		t.Fatalf("%v %v", got, err)
	}
	sent := strings.Join(append(rec.query, rec.docs...), "\n")
	if want := "which key is [redacted:aws-access-key]\ncommit " + testGitSHA + "\ntoken [redacted:github-token]"; sent != want {
		t.Errorf("sent %q, want %q", sent, want)
	}
	if MaskReranker(nil) != nil || MaskEmbedder(nil) != nil {
		t.Error("no model became a model")
	}
}

// BenchmarkMaskRequest: masking a request whose conversation is 1 MB of
// ordinary text with a few secrets, as an agent's step re-sends it.
func BenchmarkMaskRequest(b *testing.B) {
	var conv strings.Builder
	for conv.Len() < 1<<20 {
		conv.WriteString("The deploy freeze starts on 2026-12-20; commit " + testGitSHA + " is the last one before it. ")
		if conv.Len()%(64<<10) < 200 {
			conv.WriteString("key " + testAWSKey + " ")
		}
	}
	req := llm.Request{Messages: []llm.Message{llm.TextMessage(llm.RoleSystem, "You write memory cards."), llm.TextMessage(llm.RoleUser, conv.String())}}
	b.SetBytes(int64(conv.Len()))
	for b.Loop() {
		maskRequest(req)
	}
}
