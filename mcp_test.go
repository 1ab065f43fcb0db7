package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/reme-dev/reme/jobs/llm/llmtest"
)

// copyWorkspace copies the example workspace to a fresh folder.
func copyWorkspace(t testing.TB) string {
	t.Helper()
	root := filepath.Join(t.TempDir(), "ws")
	if err := os.CopyFS(root, os.DirFS(filepath.Join("testdata", "workspace"))); err != nil {
		t.Fatal(err)
	}
	return root
}

// syncBuffer is a bytes.Buffer safe for a writer and a reader at once.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// mcpInProcess runs `reme -w root mcp` in this process on pipes and
// connects the SDK's client to it.
func mcpInProcess(t testing.TB, root string, opt *mcp.ClientOptions) (*mcp.ClientSession, *syncBuffer) {
	t.Helper()
	serverIn, clientOut := io.Pipe()
	clientIn, serverOut := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	stderr := &syncBuffer{}
	done := make(chan int, 1)
	go func() {
		code := run(ctx, []string{"-w", root, "mcp"}, serverIn, serverOut, stderr)
		serverOut.Close()
		done <- code
	}()
	client := mcp.NewClient(&mcp.Implementation{Name: "reme-test", Version: "1"}, opt)
	cs, err := client.Connect(ctx, &mcp.IOTransport{Reader: clientIn, Writer: clientOut}, nil)
	if err != nil {
		cancel()
		t.Fatalf("connect: %v\n%s", err, stderr)
	}
	t.Cleanup(func() {
		cs.Close()
		clientOut.Close()
		cancel()
		if code := <-done; code != 0 {
			t.Errorf("reme mcp exited %d\n%s", code, stderr)
		}
	})
	return cs, stderr
}

// runCLI runs reme in this process and returns stdout, stderr and the exit code.
func runCLI(t testing.TB, args ...string) (string, string, int) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), args, nil, &stdout, &stderr)
	return stdout.String(), stderr.String(), code
}

func callTool(t testing.TB, cs *mcp.ClientSession, name string, args any) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res
}

func resultText(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// cliError is the CLI's error message without "reme: " and the usage hint.
func cliError(stderr string) string {
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(stderr), "\n") {
		if l == usageHint || strings.HasPrefix(l, "reme: warn") {
			continue
		}
		lines = append(lines, strings.TrimPrefix(l, "reme: "))
	}
	return strings.Join(lines, "\n")
}

var runIDs = regexp.MustCompile(`\d{8}T\d{6}Z-[0-9a-f]{6}`)

// TestMCPToolsAnswerAsTheCLI calls every tool and the command of the same
// name with the same arguments: the tool's text is what the command
// prints, its structured result is what --json prints, and its errors
// carry the command's message.
func TestMCPToolsAnswerAsTheCLI(t *testing.T) {
	t.Setenv("REME_NOW", "2026-06-22T12:00:00Z")
	t.Setenv("COHERE_API_KEY", "")
	t.Setenv("OPENAI_API_KEY", "")
	mcpRoot, cliRoot := copyWorkspace(t), copyWorkspace(t)
	cs, _ := mcpInProcess(t, mcpRoot, nil)
	conv := `[{"role":"user","content":"Remember: the staging database moves to eu-west-2 on 2026-06-22.","created_at":"2026-06-22T09:00:00"},{"role":"assistant","content":"Noted.","created_at":"2026-06-22T09:00:05"}]`
	cases := []struct {
		tool string
		args map[string]any
		cli  []string
		// wrap puts the CLI's --json value where the tool's structured
		// result has it
		wrap string
	}{
		{"search", map[string]any{"query": "rate limit burst"}, []string{"search", "rate limit burst"}, ""},
		{"search", map[string]any{"query": "login", "limit": 2, "tags": []string{"auth"}, "start_date": "2026-06-01", "end_date": "2026-06-30", "strict_date_filter": true},
			[]string{"search", "login", "--limit", "2", "--tag", "auth", "--start-date", "2026-06-01", "--end-date", "2026-06-30", "--strict-date"}, ""},
		{"search", map[string]any{"query": "zzzqqqxxx"}, []string{"search", "zzzqqqxxx"}, ""},
		{"search", map[string]any{"query": "login", "path_prefixes": []string{"digest/"}}, []string{"search", "login", "--path", "digest/"}, ""},
		{"search", map[string]any{"query": "  "}, []string{"search", "  "}, ""},
		{"search", map[string]any{"query": "x", "limit": 0}, []string{"search", "x", "--limit", "0"}, ""},
		{"search", map[string]any{"query": "x", "start_date": "2026-13-01"}, []string{"search", "x", "--start-date", "2026-13-01"}, ""},
		{"read", map[string]any{"path": "daily/2026-06-22/api-rate-limit-design.md", "start_line": 2, "end_line": 4},
			[]string{"read", "daily/2026-06-22/api-rate-limit-design.md", "--start-line", "2", "--end-line", "4"}, ""},
		{"read", map[string]any{"path": "daily/2026-06-22/api-rate-limit-design"}, []string{"read", "daily/2026-06-22/api-rate-limit-design"}, ""},
		{"read", map[string]any{"path": "daily/nope.md"}, []string{"read", "daily/nope.md"}, ""},
		{"read", map[string]any{"path": "../outside.md"}, []string{"read", "../outside.md"}, ""},
		{"read", map[string]any{"path": "daily/2026-06-22/api-rate-limit-design.md", "start_line": 5, "end_line": 3},
			[]string{"read", "daily/2026-06-22/api-rate-limit-design.md", "--start-line", "5", "--end-line", "3"}, ""},
		{"daily_list", map[string]any{"date": "2026-06-20"}, []string{"daily_list", "2026-06-20"}, ""},
		{"daily_list", map[string]any{}, []string{"daily_list"}, ""},
		{"daily_list", map[string]any{"date": "2026-02-30"}, []string{"daily_list", "2026-02-30"}, ""},
		{"list_tags", map[string]any{}, []string{"list_tags"}, ""},
		{"list_tags", map[string]any{"order_by": "file_count", "page_size": 3, "page": 2}, []string{"list_tags", "--order-by", "file_count", "--page-size", "3", "--page", "2"}, ""},
		{"list_tags", map[string]any{"page_size": 5000}, []string{"list_tags", "--page-size", "5000"}, ""},
		{"move", map[string]any{"src_path": "daily/2026-06-20/login-refactor-decision.md", "dst_path": "daily/2026-06-20/oidc-login-decision.md"},
			[]string{"move", "daily/2026-06-20/login-refactor-decision.md", "daily/2026-06-20/oidc-login-decision.md"}, ""},
		{"move", map[string]any{"src_path": "daily/2026-06-20/nope.md", "dst_path": "daily/2026-06-20/x.md"},
			[]string{"move", "daily/2026-06-20/nope.md", "daily/2026-06-20/x.md"}, ""},
		{"move", map[string]any{"src_path": "daily/2026-06-22/api-rate-limit-design.md", "dst_path": "notes/x.md"},
			[]string{"move", "daily/2026-06-22/api-rate-limit-design.md", "notes/x.md"}, ""},
		{"auto_memory", map[string]any{"session_id": "staging", "messages": json.RawMessage(conv), "fallback": "extractive"},
			[]string{"auto_memory", "session_id=staging", "messages=" + conv, "fallback=extractive"}, ""},
		{"history", map[string]any{}, []string{"history"}, "runs"},
		{"history", map[string]any{"since": "yesterday"}, []string{"history", "--since", "yesterday"}, ""},
		{"auto_memory", map[string]any{"session_id": "../x", "messages": json.RawMessage(conv)},
			[]string{"auto_memory", "session_id=../x", "messages=" + conv}, ""},
		{"auto_memory", map[string]any{"session_id": "bad-date", "messages": json.RawMessage(conv), "date": "2026-6-1"},
			[]string{"auto_memory", "session_id=bad-date", "messages=" + conv, "date=2026-6-1"}, ""},
	}
	for _, c := range cases {
		name := c.tool + " " + strings.Join(c.cli[1:], " ")
		res := callTool(t, cs, c.tool, c.args)
		stdout, stderr, code := runCLI(t, append([]string{"-w", cliRoot}, c.cli...)...)
		if code != 0 {
			if !res.IsError {
				t.Errorf("%s: the CLI failed (%d: %s) but the tool did not: %s", name, code, stderr, resultText(res))
				continue
			}
			if got, want := strings.ReplaceAll(resultText(res), mcpRoot, "ROOT"), strings.ReplaceAll(cliError(stderr), cliRoot, "ROOT"); got != want {
				t.Errorf("%s: tool error %q, CLI error %q", name, got, want)
			}
			continue
		}
		if res.IsError {
			t.Errorf("%s: tool failed: %s (CLI printed %q)", name, resultText(res), stdout)
			continue
		}
		got := resultText(res)
		if c.tool == "history" {
			// run ids are random, and the journal names the trigger
			got, stdout = runIDs.ReplaceAllString(strings.ReplaceAll(got, "  mcp  ", "  cli  "), "RUN"), runIDs.ReplaceAllString(stdout, "RUN")
		}
		if got != stdout {
			t.Errorf("%s: tool text differs from the CLI's output:\n%s", name, cmp.Diff(stdout, got))
		}
		jsonOut, stderr, code := runCLIJSON(t, cliRoot, c.tool, c.cli)
		if code != 0 {
			t.Fatalf("%s --json: %d %s", name, code, stderr)
		}
		var want, gotJSON any
		b, _ := json.Marshal(res.StructuredContent)
		if c.tool == "history" {
			jsonOut = runIDs.ReplaceAllString(jsonOut, "RUN")
			b = runIDs.ReplaceAll(bytes.ReplaceAll(b, []byte(`"trigger":"mcp"`), []byte(`"trigger":"cli"`)), []byte("RUN"))
		}
		if err := json.Unmarshal([]byte(jsonOut), &want); err != nil {
			t.Fatalf("%s --json: %v", name, err)
		}
		if c.wrap != "" {
			want = map[string]any{c.wrap: want}
		}
		if err := json.Unmarshal(b, &gotJSON); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, gotJSON); diff != "" {
			t.Errorf("%s: structured result differs from --json (-cli +tool):\n%s", name, diff)
		}
	}
}

// runCLIJSON runs a case's command with --json. A case that changes the
// workspace ran on cliRoot already, so it runs on a fresh copy, where it
// makes the same change.
func runCLIJSON(t *testing.T, cliRoot, tool string, args []string) (string, string, int) {
	t.Helper()
	if tool == "move" || tool == "auto_memory" {
		cliRoot = copyWorkspace(t)
	}
	return runCLI(t, append([]string{"-w", cliRoot, "--json"}, args...)...)
}

// TestMCPListsToolsAndResources checks the tool list (names, typed input
// and output schemas) and the resources.
func TestMCPListsToolsAndResources(t *testing.T) {
	root := copyWorkspace(t)
	cs, _ := mcpInProcess(t, root, nil)
	ctx := context.Background()
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range tools.Tools {
		names = append(names, tool.Name)
		in, _ := json.Marshal(tool.InputSchema)
		out, _ := json.Marshal(tool.OutputSchema)
		if !strings.Contains(string(in), `"type":"object"`) || !strings.Contains(string(out), `"type":"object"`) {
			t.Errorf("%s: schemas in %s out %s", tool.Name, in, out)
		}
		if tool.Description == "" {
			t.Errorf("%s has no description", tool.Name)
		}
	}
	slices.Sort(names)
	want := []string{"auto_memory", "context", "daily_list", "history", "list_tags", "memory_delete", "memory_get", "memory_search", "memory_write", "move", "read", "search"}
	for _, w := range want {
		if !slices.Contains(names, w) {
			t.Errorf("tools %v lack %s", names, w)
		}
	}
	// a tool's input schema rejects what the command would reject as usage
	res := callTool(t, cs, "list_tags", map[string]any{"order_by": "size"})
	if !res.IsError || !strings.Contains(resultText(res), "order_by") {
		t.Errorf("order_by=size: %v %s", res.IsError, resultText(res))
	}
	res = callTool(t, cs, "search", map[string]any{"limit": 3})
	if !res.IsError || !strings.Contains(resultText(res), "query") {
		t.Errorf("search without a query: %v %s", res.IsError, resultText(res))
	}

	// resources: MEMORY.md and the profile, read from the files each time
	rs, err := cs.ListResources(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var uris []string
	for _, r := range rs.Resources {
		uris = append(uris, r.URI)
	}
	if !slices.Equal(uris, []string{"reme:///MEMORY.md", "reme:///memory/profile.md"}) {
		t.Errorf("resources %v", uris)
	}
	if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "reme:///memory/profile.md"}); err == nil {
		t.Error("a missing profile was read")
	}
	if err := os.MkdirAll(filepath.Join(root, "memory"), 0o755); err != nil {
		t.Fatal(err)
	}
	profile := "# Profile\n\nPrefers short answers.\n"
	if err := os.WriteFile(filepath.Join(root, "memory", "profile.md"), []byte(profile), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "MEMORY.md"), []byte("# Memory\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for uri, want := range map[string]string{"reme:///memory/profile.md": profile, "reme:///MEMORY.md": "# Memory\n"} {
		got, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
		if err != nil {
			t.Fatalf("%s: %v", uri, err)
		}
		if len(got.Contents) != 1 || got.Contents[0].Text != want || got.Contents[0].MIMEType != "text/markdown" {
			t.Errorf("%s: %+v", uri, got.Contents)
		}
	}
}

// TestMCPServerStaysFresh keeps one server process (a real subprocess on
// stdio) while notes are edited by hand and changed by CLI commands: every
// call sees the files as they are.
func TestMCPServerStaysFresh(t *testing.T) {
	root := copyWorkspace(t)
	cmd := exec.Command("reme", "-w", root, "-v", "mcp")
	var stderr syncBuffer
	cmd.Stderr = &stderr
	client := mcp.NewClient(&mcp.Implementation{Name: "reme-test", Version: "1"}, nil)
	ctx := context.Background()
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect: %v\n%s", err, stderr.String())
	}
	defer cs.Close()
	search := func(q string) string {
		t.Helper()
		res := callTool(t, cs, "search", map[string]any{"query": q})
		if res.IsError {
			t.Fatalf("search %q: %s", q, resultText(res))
		}
		return resultText(res)
	}
	if got := search("pelican"); !strings.HasPrefix(got, noResults+"\n") {
		t.Fatalf("before the edit: %q", got)
	}
	// The server watches the notes itself: once its watcher is up, searches
	// ask it instead of scanning (on Linux, where it can vouch).
	vouching := runtime.GOOS == "linux"
	if vouching {
		deadline := time.Now().Add(30 * time.Second)
		for !askWatcher(root) {
			if time.Now().After(deadline) {
				t.Fatalf("the server's watcher never vouched\n%s", stderr.String())
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	// an edit by hand, a moment ago
	p := filepath.Join(root, "daily", "2026-06-22", "birds.md")
	if err := os.WriteFile(p, []byte("---\nname: birds\ndescription: birds seen\n---\n\nA pelican landed on the pier.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := search("pelican"); !strings.Contains(got, "daily/2026-06-22/birds.md") {
		t.Fatalf("the hand edit is not found: %q", got)
	}
	// a CLI process moves it meanwhile
	if out, err := exec.Command("reme", "-w", root, "move", "daily/2026-06-22/birds.md", "daily/2026-06-22/pier-birds.md").CombinedOutput(); err != nil {
		t.Fatalf("move: %v\n%s", err, out)
	}
	if got := search("pelican"); !strings.Contains(got, "daily/2026-06-22/pier-birds.md") || strings.Contains(got, "/birds.md") {
		t.Fatalf("the CLI's move is not seen: %q", got)
	}
	// and a deletion by hand
	if err := os.Remove(filepath.Join(root, "daily", "2026-06-22", "pier-birds.md")); err != nil {
		t.Fatal(err)
	}
	if got := search("pelican"); !strings.HasPrefix(got, noResults+"\n") {
		t.Fatalf("a deleted note is still found: %q", got)
	}
	res := callTool(t, cs, "read", map[string]any{"path": "daily/2026-06-22/pier-birds.md"})
	if !res.IsError || !strings.Contains(resultText(res), "does not exist") {
		t.Errorf("read of a deleted note: %v %s", res.IsError, resultText(res))
	}
	// On a loaded machine a search may time out waiting and scan instead
	// (as correct, only slower), so one vouched search of four is enough.
	if vouching && !strings.Contains(stderr.String(), "freshness watcher=the watcher vouched") {
		t.Errorf("no search was vouched for by the server's watcher:\n%s", stderr.String())
	}
}

// startHTTPServer starts `reme mcp --http 127.0.0.1:0` and returns its URL.
func startHTTPServer(t *testing.T, root string, env []string, args ...string) (string, *syncBuffer) {
	t.Helper()
	cmd := exec.Command("reme", append([]string{"-w", root, "-vv", "mcp", "--http", "127.0.0.1:0"}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	stderr := &syncBuffer{}
	pr, pw := io.Pipe()
	cmd.Stderr = io.MultiWriter(stderr, pw)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		cmd.Wait()
		pw.Close()
	})
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		re := regexp.MustCompile(`serving MCP at (http://\S+)`)
		for sc.Scan() {
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				addr <- m[1]
			}
		}
	}()
	select {
	case u := <-addr:
		return u, stderr
	case <-time.After(20 * time.Second):
		t.Fatalf("the server did not start:\n%s", stderr.String())
	}
	return "", nil
}

type bearer struct {
	token string
	rt    http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.rt.RoundTrip(r)
}

// TestMCPHTTP serves streamable HTTP with a token: requests without it (or
// with another) get 401, a body over 1 MiB is refused, the token never
// reaches the log, and the SDK's client with the token works.
func TestMCPHTTP(t *testing.T) {
	root := copyWorkspace(t)
	const token = "s3cret-token-for-test"
	url, stderr := startHTTPServer(t, root, []string{"REME_MCP_TOKEN=" + token})
	initBody := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`
	post := func(auth, body string) int {
		req, _ := http.NewRequest("POST", url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	for _, auth := range []string{"", "Bearer wrong", "Bearer " + token + "x", "Basic " + token, token} {
		if code := post(auth, initBody); code != http.StatusUnauthorized {
			t.Errorf("Authorization %q: status %d, want 401", auth, code)
		}
	}
	if code := post("Bearer "+token, initBody); code != http.StatusOK {
		t.Errorf("with the token: status %d", code)
	}
	big := `{"jsonrpc":"2.0","id":2,"method":"ping","params":{"_meta":{"pad":"` + strings.Repeat("a", mcpMaxBody) + `"}}}`
	if code := post("Bearer "+token, big); code != http.StatusRequestEntityTooLarge {
		t.Errorf("a body over 1 MiB: status %d, want 413", code)
	}

	client := mcp.NewClient(&mcp.Implementation{Name: "reme-test", Version: "1"}, nil)
	ctx := context.Background()
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url,
		HTTPClient: &http.Client{Transport: bearer{token, http.DefaultTransport}}}, nil)
	if err != nil {
		t.Fatalf("connect: %v\n%s", err, stderr.String())
	}
	res := callTool(t, cs, "search", map[string]any{"query": "rate limit burst", "limit": 1})
	if res.IsError || !strings.Contains(resultText(res), "api-rate-limit-design.md") {
		t.Errorf("search over HTTP: %s", resultText(res))
	}
	cs.Close()
	// without the token the client cannot even connect
	if _, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url}, nil); err == nil {
		t.Error("a client without the token connected")
	}
	if strings.Contains(stderr.String(), token) || strings.Contains(strings.ToLower(stderr.String()), "authorization") {
		t.Errorf("the log shows the token or the header:\n%s", stderr.String())
	}
}

// TestMCPHTTPRefusesWithoutToken: no token means no server, except on a
// loopback address with --no-auth.
func TestMCPHTTPRefusesWithoutToken(t *testing.T) {
	root := copyWorkspace(t)
	t.Setenv("REME_MCP_TOKEN", "")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--http", "127.0.0.1:0"}, "--http needs a bearer token: set REME_MCP_TOKEN"},
		{[]string{"--http", "0.0.0.0:0"}, "--http needs a bearer token: set REME_MCP_TOKEN"},
		{[]string{"--http", "0.0.0.0:0", "--no-auth"}, "--no-auth is only allowed on a loopback address"},
		{[]string{"--http", "192.0.2.1:0", "--no-auth"}, "--no-auth is only allowed on a loopback address"},
		{[]string{"--http", "nonsense"}, "--http nonsense:"},
	} {
		_, stderr, code := runCLI(t, append([]string{"-w", root, "mcp"}, c.args...)...)
		if code != 2 || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, %s", c.args, code, stderr)
		}
	}
	// loopback with --no-auth serves
	url, _ := startHTTPServer(t, root, []string{"REME_MCP_TOKEN="}, "--no-auth")
	client := mcp.NewClient(&mcp.Implementation{Name: "reme-test", Version: "1"}, nil)
	cs, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if res := callTool(t, cs, "list_tags", map[string]any{}); res.IsError {
		t.Error(resultText(res))
	}
}

// blockingModel is a model server that holds every request until the
// caller goes away, and records that it did.
func blockingModel(t *testing.T) (url string, started, aborted chan struct{}) {
	started, aborted = make(chan struct{}, 8), make(chan struct{}, 8)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body) // the server notices a closed connection only once the body is read
		started <- struct{}{}
		select {
		case <-r.Context().Done():
			aborted <- struct{}{}
		case <-time.After(30 * time.Second):
			http.Error(w, "test timed out", http.StatusInternalServerError)
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL, started, aborted
}

// TestMCPAutoMemoryProgressAndCancel: auto_memory reports progress while
// the model works, and a cancelled call stops the model call; the
// conversation is saved either way.
func TestMCPAutoMemoryProgressAndCancel(t *testing.T) {
	root := copyWorkspace(t)
	t.Setenv("REME_LLM_MAX_RETRIES", "1")
	t.Setenv("COHERE_API_KEY", llmtest.FakeAPIKey)
	t.Setenv("OPENAI_API_KEY", "")
	fake := llmtest.NewFakeCohere(llmtest.FakeReply{Text: "Skipped: small talk only."})
	srv := httptest.NewServer(fake)
	defer srv.Close()
	t.Setenv("REME_LLM_BASE_URL", srv.URL)

	var mu sync.Mutex
	var progress []string
	cs, _ := mcpInProcess(t, root, &mcp.ClientOptions{ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
		mu.Lock()
		defer mu.Unlock()
		progress = append(progress, fmt.Sprintf("%v %s", r.Params.Progress, r.Params.Message))
	}})
	params := &mcp.CallToolParams{Name: "auto_memory", Arguments: map[string]any{"session_id": "hello",
		"messages": []map[string]any{{"role": "user", "content": "hi there", "created_at": "2026-06-22T10:00:00"}}}}
	params.SetProgressToken("tok-1")
	res, err := cs.CallTool(context.Background(), params)
	if err != nil || res.IsError {
		t.Fatalf("auto_memory: %v %s", err, resultText(res))
	}
	if !strings.HasPrefix(resultText(res), "skipped: small talk only.") {
		t.Errorf("answer %q", resultText(res))
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		mu.Lock()
		n := len(progress)
		mu.Unlock()
		if n >= 4 || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	mu.Lock()
	want := []string{"1 saving the conversation", "2 waiting for command-a-03-2025", "3 command-a-03-2025 answered", "4 done"}
	if diff := cmp.Diff(want, progress); diff != "" {
		t.Errorf("progress (-want +got):\n%s", diff)
	}
	mu.Unlock()

	// now a model that never answers, and a client that gives up
	url, started, aborted := blockingModel(t)
	t.Setenv("REME_LLM_BASE_URL", url)
	cs2, _ := mcpInProcess(t, root, nil)
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := cs2.CallTool(ctx, &mcp.CallToolParams{Name: "auto_memory", Arguments: map[string]any{"session_id": "slow",
			"messages": []map[string]any{{"role": "user", "content": "The release train leaves on Thursdays.", "created_at": "2026-06-22T11:00:00"}}}})
		errc <- err
	}()
	select {
	case <-started:
	case <-time.After(20 * time.Second):
		t.Fatal("the model was never called")
	}
	cancel()
	if err := <-errc; err == nil {
		t.Error("the cancelled call returned no error")
	}
	select {
	case <-aborted:
	case <-time.After(10 * time.Second):
		t.Fatal("cancelling the call did not stop the model call")
	}
	if _, err := os.Stat(filepath.Join(root, "session", "dialog", "slow.jsonl")); err != nil {
		t.Errorf("the conversation of the cancelled call was not saved: %v", err)
	}
	// the server goes on serving
	if res := callTool(t, cs2, "daily_list", map[string]any{"date": "2026-06-22"}); res.IsError {
		t.Errorf("after the cancel: %s", resultText(res))
	}
}

// TestMCPConcurrentServers runs two server processes and CLI processes on
// one workspace at once, each writing cards and searching: every call
// succeeds, every card is there, and the index equals a fresh rebuild.
func TestMCPConcurrentServers(t *testing.T) {
	if testing.Short() {
		t.Skip("starts several processes")
	}
	root := copyWorkspace(t)
	ctx := context.Background()
	var sessions []*mcp.ClientSession
	for i := 0; i < 2; i++ {
		cmd := exec.Command("reme", "-w", root, "mcp")
		cmd.Env = append(os.Environ(), "COHERE_API_KEY=", "OPENAI_API_KEY=")
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "reme-test", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		sessions = append(sessions, cs)
	}
	conv := func(who string, i int) []map[string]any {
		return []map[string]any{{"role": "user", "content": fmt.Sprintf("Note from %s number %d: the quokka%d project ships soon.", who, i, i), "created_at": "2026-06-23T10:00:00"}}
	}
	var wg sync.WaitGroup
	errs := make(chan string, 100)
	const per = 4
	for s, cs := range sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < per; i++ {
				sid := fmt.Sprintf("mcp%d-%d", s, i)
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "auto_memory", Arguments: map[string]any{"session_id": sid, "messages": conv(sid, i), "fallback": "extractive"}})
				if err != nil || res.IsError {
					errs <- fmt.Sprintf("auto_memory %s: %v %s", sid, err, resultText(res))
				}
				res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "search", Arguments: map[string]any{"query": "quokka project"}})
				if err != nil || res.IsError {
					errs <- fmt.Sprintf("search: %v %s", err, resultText(res))
				}
			}
		}()
	}
	for c := 0; c < 2; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < per; i++ {
				sid := fmt.Sprintf("cli%d-%d", c, i)
				b, _ := json.Marshal(conv(sid, i))
				cmd := exec.Command("reme", "-w", root, "auto_memory", "session_id="+sid, "messages="+string(b), "fallback=extractive")
				cmd.Env = append(os.Environ(), "COHERE_API_KEY=", "OPENAI_API_KEY=")
				if out, err := cmd.CombinedOutput(); err != nil {
					errs <- fmt.Sprintf("cli %s: %v %s", sid, err, out)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	cards, _ := filepath.Glob(filepath.Join(root, "daily", "2026-06-23", "*.md"))
	if len(cards) != 4*per {
		t.Errorf("%d cards, want %d: %v", len(cards), 4*per, cards)
	}
	res := callTool(t, sessions[0], "search", map[string]any{"query": "quokka project", "limit": 50})
	if n := strings.Count(resultText(res), "========== daily/2026-06-23/"); n != 4*per {
		t.Errorf("search finds %d of the %d new cards", n, 4*per)
	}
	for _, cs := range sessions {
		cs.Close()
	}
	got := dumpIndex(t, root)
	for _, s := range []string{"", "-wal", "-shm"} {
		os.Remove(filepath.Join(root, "metadata", "index.db"+s))
	}
	if diff := cmp.Diff(dumpIndex(t, root), got); diff != "" {
		t.Errorf("index after concurrent servers differs from a fresh rebuild (-fresh +concurrent):\n%s", diff)
	}
}

// FuzzMCPToolArguments sends arbitrary arguments to every tool of one
// server: each call gets an answer or a tool error with a message, never
// a crash, and the server keeps serving.
func FuzzMCPToolArguments(f *testing.F) {
	f.Setenv("COHERE_API_KEY", "")
	f.Setenv("OPENAI_API_KEY", "")
	root := copyWorkspace(f)
	cs, stderr := mcpInProcess(f, root, nil)
	tools := []string{"search", "read", "daily_list", "list_tags", "move", "history", "auto_memory"}
	for i, seed := range []string{
		`{"query":"rate limit","limit":2}`, `{"path":"daily/2026-06-20.md","start_line":-3,"end_line":99999999999}`,
		`{"date":"2026-06-20"}`, `{"page":-1,"page_size":1e9,"order_by":"tag"}`,
		`{"src_path":"daily/2026-06-20/login-refactor-decision.md","dst_path":"../../etc/x.md"}`,
		`{"session_id":"s","messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}],"fallback":"extractive"}`,
		`{"query":"\u0000\"*-","tags":["",""]}`, `{"path":"%2e%2e/x"}`, `{"date":null}`, `[]`, `"x"`, `{"messages":{}}`,
	} {
		f.Add(uint8(i), []byte(seed))
	}
	f.Fuzz(func(t *testing.T, which uint8, args []byte) {
		if !json.Valid(args) {
			return
		}
		name := tools[int(which)%len(tools)]
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: json.RawMessage(args)})
		if err == nil && res.IsError && strings.TrimSpace(resultText(res)) == "" {
			t.Errorf("%s %s: a tool error without a message", name, args)
		}
		if err := cs.Ping(ctx, nil); err != nil {
			t.Fatalf("%s %s: the server stopped answering: %v\n%s", name, args, err, stderr.String())
		}
		if strings.Contains(stderr.String(), "tool panicked") {
			t.Fatalf("%s %s: a tool panicked:\n%s", name, args, stderr.String())
		}
	})
}

// TestMCPNodeClient runs scripts/mcpclient-node/check.mjs, a client built
// on the official TypeScript SDK, against the server over stdio and over
// HTTP. It needs node and the SDK installed there (npm ci, as .ci/run
// does); without them it is skipped, unless REME_REQUIRE_NODE_CLIENT is
// set (CI), when it fails.
func TestMCPNodeClient(t *testing.T) {
	dir := filepath.Join("scripts", "mcpclient-node")
	missing := ""
	if _, err := exec.LookPath("node"); err != nil {
		missing = "node is not installed"
	} else if _, err := os.Stat(filepath.Join(dir, "node_modules", "@modelcontextprotocol", "sdk")); err != nil {
		missing = "the TypeScript MCP SDK is not installed: run npm ci --prefix " + dir
	}
	if missing != "" {
		if os.Getenv("REME_REQUIRE_NODE_CLIENT") != "" {
			t.Fatalf("the Node MCP client check cannot run: %s", missing)
		}
		t.Skipf("the Node MCP client check does not run: %s", missing)
	}
	reme, err := exec.LookPath("reme")
	if err != nil {
		t.Fatal(err)
	}
	prepare := func() string {
		root := copyWorkspace(t)
		if err := os.WriteFile(filepath.Join(root, "MEMORY.md"), []byte("# Memory\n\n- [[memory/entries/x.md]]\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return root
	}
	node := func(args ...string) {
		t.Helper()
		cmd := exec.Command("node", append([]string{"check.mjs"}, args...)...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "REME_NOW=2026-06-23T12:00:00Z")
		out, err := cmd.CombinedOutput()
		t.Logf("%s", out)
		if err != nil {
			t.Fatalf("node check.mjs %v: %v", args, err)
		}
		if !regexp.MustCompile(`(?m)^\w+: \d+ passed, 0 failed$`).Match(out) {
			t.Fatalf("no summary line")
		}
	}
	t.Run("stdio", func(t *testing.T) {
		root := prepare()
		abs, _ := filepath.Abs(root)
		node("--reme", reme, "--workspace", abs)
	})
	t.Run("http", func(t *testing.T) {
		root := prepare()
		const token = "node-check-token"
		url, _ := startHTTPServer(t, root, []string{"REME_MCP_TOKEN=" + token, "REME_NOW=2026-06-23T12:00:00Z", "COHERE_API_KEY=", "OPENAI_API_KEY="})
		node("--url", url, "--token", token)
	})
}
