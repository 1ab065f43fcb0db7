package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io/fs"
	"net"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/alecthomas/kong"
	"github.com/reme-dev/reme/jobs/llm"
	"github.com/reme-dev/reme/jobs/llm/llmtest"
	"github.com/rogpeppe/go-internal/testscript"
)

var update = flag.Bool("update", false, "rewrite golden files")

// TestMain lets the test binary act as the reme command in scripts and in
// tests that start processes.
func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"reme": func() { os.Exit(mainCode()) },
	})
}

func TestScripts(t *testing.T) {
	testscript.Run(t, scriptParams(providerCohere, filepath.Join("testdata", "script"), nil))
}

// TestScriptsOpenAI runs every script that uses "fakemodel" once more, with
// an OpenAI-compatible fake server in place of the Cohere one: the jobs,
// prompts and agent loop must not depend on the provider.
func TestScriptsOpenAI(t *testing.T) {
	all, err := filepath.Glob(filepath.Join("testdata", "script", "*.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, f := range all {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(b, []byte("\nfakemodel ")) || bytes.HasPrefix(b, []byte("fakemodel ")) {
			files = append(files, f)
		}
	}
	if len(files) == 0 {
		t.Fatal("no script uses fakemodel")
	}
	testscript.Run(t, scriptParams(providerOpenAI, "", files))
}

func scriptParams(provider, dir string, files []string) testscript.Params {
	return testscript.Params{
		Dir:                 dir,
		Files:               files,
		RequireExplicitExec: true,
		UpdateScripts:       *update, // -update rewrites the cmp files inside the scripts
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"fakecohere": cmdFakeCohere,
			"fakeopenai": cmdFakeOpenAI,
			"fakemodel": func(ts *testscript.TestScript, neg bool, args []string) {
				if provider == providerOpenAI {
					cmdFakeModelOpenAI(ts, neg, args)
					return
				}
				cmdFakeCohere(ts, neg, args)
			},
			"waitfor":         cmdWaitFor,
			"model-requests":  cmdModelRequests,
			"cohere-requests": cmdModelRequests,
			"watchsignal":     cmdWatchSignal,
			"manywrites":      cmdManyWrites,
			"waitvouched":     cmdWaitVouched,
			"waitbg":          cmdWaitBackground,
			"appendfile":      cmdAppendFile,
			"seedmemory":      cmdSeedMemory,
			"treesums":        cmdTreeSums,
			// truncate-index cuts a file in half, as a crash or a full disk might
			"truncate-index": func(ts *testscript.TestScript, neg bool, args []string) {
				p := ts.MkAbs(args[0])
				fi, err := os.Stat(p)
				ts.Check(err)
				ts.Check(os.Truncate(p, fi.Size()/2))
			},
		},
		Setup: func(env *testscript.Env) error {
			// every script gets its own copy of the example workspace in $WORK/ws
			if err := copyDir(filepath.Join("testdata", "workspace"), filepath.Join(env.WorkDir, "ws")); err != nil {
				return err
			}
			if err := copyDir(filepath.Join("testdata", "claude"), filepath.Join(env.WorkDir, "claude")); err != nil {
				return err
			}
			env.Setenv("REME_TIMEZONE", "Asia/Shanghai")
			env.Setenv("REME_NOW", "2026-06-22T10:00:00+08:00")
			env.Setenv("PROVIDER", provider)
			// No model unless a script starts a fake: whatever the machine
			// running the tests has set is cleared.
			for _, name := range modelVariables {
				env.Setenv(name, "")
			}
			return nil
		},
	}
}

// modelVariables are every environment variable that selects or
// configures a model.
var modelVariables = []string{
	"COHERE_API_KEY", "OPENAI_API_KEY", "OPENAI_BASE_URL", "REME_LLM_API_KEY", "REME_LLM_BASE_URL",
	"REME_LLM_PROVIDER", "REME_MODEL", "REME_VISION_MODEL", "LLM_API_KEY", "LLM_BASE_URL", "LLM_MODEL_NAME",
	"EMBEDDING_API_KEY", "EMBEDDING_BASE_URL", "EMBEDDING_MODEL_NAME", "REME_EMBED_MODEL", "REME_RERANK_MODEL",
}

// fakes holds each script's latest fake model server.
var fakes sync.Map // *testscript.TestScript -> interface{ Requests() []json.RawMessage }

// cmdFakeCohere starts a local Cohere v2 server answering with the replies
// of a script file, and points reme at it.
func cmdFakeCohere(ts *testscript.TestScript, neg bool, args []string) {
	replies := loadFakeScript(ts, args)
	fake := llmtest.NewFakeCohere(replies...)
	srv := httptest.NewServer(fake)
	ts.Defer(srv.Close)
	fakes.Store(ts, fake)
	ts.Setenv("REME_LLM_BASE_URL", srv.URL)
	ts.Setenv("COHERE_API_KEY", llmtest.FakeAPIKey)
	ts.Setenv("REME_LLM_MAX_RETRIES", "1")
}

// startFakeOpenAI starts a local OpenAI-compatible server answering with
// the replies of a script file and returns its base URL.
func startFakeOpenAI(ts *testscript.TestScript, args []string) string {
	replies := loadFakeScript(ts, args)
	fake := llmtest.NewFakeOpenAI(replies...)
	srv := httptest.NewServer(fake)
	ts.Defer(srv.Close)
	fakes.Store(ts, fake)
	ts.Setenv("REME_LLM_MAX_RETRIES", "1")
	return srv.URL + "/v1"
}

// cmdFakeOpenAI starts a fake OpenAI-compatible server and sets the
// variables an OpenAI user has (OPENAI_BASE_URL, OPENAI_API_KEY); which
// provider reme uses is left to the script.
func cmdFakeOpenAI(ts *testscript.TestScript, neg bool, args []string) {
	url := startFakeOpenAI(ts, args)
	ts.Setenv("OPENAI_BASE_URL", url)
	ts.Setenv("OPENAI_API_KEY", llmtest.FakeOpenAIKey)
}

// cmdFakeModelOpenAI is fakemodel in the OpenAI run: the provider is
// chosen explicitly, and the model names are those the Cohere run uses, so
// that one set of expected outputs serves both runs.
func cmdFakeModelOpenAI(ts *testscript.TestScript, neg bool, args []string) {
	url := startFakeOpenAI(ts, args)
	ts.Setenv("REME_LLM_PROVIDER", providerOpenAI)
	ts.Setenv("REME_LLM_BASE_URL", url)
	ts.Setenv("REME_LLM_API_KEY", llmtest.FakeOpenAIKey)
	ts.Setenv("REME_MODEL", llm.DefaultModel)
	ts.Setenv("REME_VISION_MODEL", llm.DefaultVisionModel)
}

func loadFakeScript(ts *testscript.TestScript, args []string) []llmtest.FakeReply {
	if len(args) != 1 {
		ts.Fatalf("usage: fakecohere|fakeopenai|fakemodel SCRIPT.json")
	}
	replies, err := llmtest.LoadFakeScript(ts.MkAbs(args[0]))
	ts.Check(err)
	return replies
}

// cmdWaitFor waits (up to 10 s) until a file exists, or with ! until it
// is gone: for scripts that run reme watch in the background.
func cmdWaitFor(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 {
		ts.Fatalf("usage: waitfor [!] PATH")
	}
	p := ts.MkAbs(args[0])
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		_, err := os.Stat(p)
		if (err == nil) != neg {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	ts.Fatalf("timed out waiting for %s (gone: %v)", args[0], neg)
}

// backgroundPID finds the background run's pid in a hook's output (JSON or
// text).
var backgroundPID = regexp.MustCompile(`"background_pid": (\d+)|\(pid (\d+),`)

// cmdWaitBackground waits (up to 60 s) until the background run started by
// the last auto_memory_cc has ended.
func cmdWaitBackground(ts *testscript.TestScript, neg bool, args []string) {
	m := backgroundPID.FindStringSubmatch(ts.ReadFile("stdout"))
	if m == nil {
		ts.Fatalf("waitbg: no background pid in the last stdout")
	}
	pid, _ := strconv.Atoi(m[1] + m[2])
	waitGone(ts.Fatalf, pid)
}

func waitGone(fatalf func(string, ...any), pid int) {
	deadline := time.Now().Add(60 * time.Second)
	for !processGone(pid) {
		if time.Now().After(deadline) {
			fatalf("background run %d still running after 60 s", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// cmdAppendFile appends a file to another, as a transcript grows.
func cmdAppendFile(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: appendfile SRC DST")
	}
	f, err := os.OpenFile(ts.MkAbs(args[1]), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	ts.Check(err)
	_, err = f.WriteString(ts.ReadFile(args[0]))
	ts.Check(err)
	ts.Check(f.Close())
}

// cmdModelRequests writes the chat request bodies the latest fake server
// received, one compact JSON document per line, so that scripts can grep
// them.
func cmdModelRequests(ts *testscript.TestScript, neg bool, args []string) {
	v, ok := fakes.Load(ts)
	if !ok || len(args) != 1 {
		ts.Fatalf("usage: model-requests FILE (after fakecohere, fakeopenai or fakemodel)")
	}
	var b bytes.Buffer
	for _, r := range v.(interface{ Requests() []json.RawMessage }).Requests() {
		var c bytes.Buffer
		ts.Check(json.Compact(&c, r))
		b.Write(c.Bytes())
		b.WriteByte('\n')
	}
	ts.Check(os.WriteFile(ts.MkAbs(args[0]), b.Bytes(), 0o644))
}

// cmdWaitVouched waits (up to 30 s) until the watcher of a workspace
// vouches for its index again, as after it reconciled a burst of changes.
// It asks the watcher's socket itself: a search would scan meanwhile and
// repair the index on the watcher's behalf.
func cmdWaitVouched(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 {
		ts.Fatalf("usage: waitvouched WORKSPACE")
	}
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if askWatcher(ts.MkAbs(args[0])) {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	ts.Fatalf("the watcher of %s did not vouch within 30 s", args[0])
}

// askWatcher speaks the watcher's protocol: "sync", answered "ok" once the
// index holds every change made before.
func askWatcher(ws string) bool {
	b, err := os.ReadFile(filepath.Join(ws, "metadata", "watch", "state.json"))
	if err != nil {
		return false
	}
	var st struct{ Socket string }
	if json.Unmarshal(b, &st) != nil {
		return false
	}
	conn, err := net.DialTimeout("unix", st.Socket, time.Second)
	if err != nil {
		return false
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := conn.Write([]byte("sync\n")); err != nil {
		return false
	}
	line, err := bufio.NewReader(conn).ReadString('\n')
	return err == nil && line == "ok\n"
}

// cmdManyNotes writes N small notes into a folder as fast as it can:
// burst-00000.md holds the word burst00000 and so on.
// cmdManyWrites writes two notes of DIR in turn, N times in all, each time
// with a new word: more file events than the kernel queues (consecutive
// events of one file would merge), at the cost of indexing two notes.
func cmdManyWrites(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: manywrites DIR N")
	}
	n, err := strconv.Atoi(args[1])
	ts.Check(err)
	dir := ts.MkAbs(args[0])
	ts.Check(os.MkdirAll(dir, 0o755))
	for i := 0; i < n; i++ {
		name := "burst-" + string(rune('a'+i%2))
		body := fmt.Sprintf("---\nname: %s\n---\nburst%05d\n", name, i)
		ts.Check(os.WriteFile(filepath.Join(dir, name+".md"), []byte(body), 0o644))
	}
}

func copyDir(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			if d.Name() == "metadata" {
				return filepath.SkipDir // a README run may have left an index here
			}
			return os.MkdirAll(target, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o644)
	})
}

// runReme runs the CLI in process.
func runReme(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(context.Background(), args, strings.NewReader(""), &out, &errb)
	return out.String(), errb.String(), code
}

// TestHelpGolden keeps every command's --help text reviewed: a change shows
// up as a diff of testdata/help/*.txt (rewrite with -update).
func TestHelpGolden(t *testing.T) {
	cmds := [][]string{{}}
	for _, c := range helpCommands(t) {
		cmds = append(cmds, []string{c})
	}
	for _, c := range cmds {
		name := "reme"
		if len(c) > 0 {
			name = c[0]
		}
		t.Run(name, func(t *testing.T) {
			out, _, code := runReme(t, append(c, "--help")...)
			if code != 0 {
				t.Fatalf("--help exited %d", code)
			}
			golden := filepath.Join("testdata", "help", name+".txt")
			if *update {
				if err := os.WriteFile(golden, []byte(out), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -run TestHelpGolden -update)", err)
			}
			if out != string(want) {
				t.Errorf("help for %s changed; run with -update if intended.\n--- got:\n%s\n--- want:\n%s", name, out, want)
			}
		})
	}
}

// helpCommands lists the command names from the grammar.
func helpCommands(t *testing.T) []string {
	var c cli
	p, err := kong.New(&c)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, n := range p.Model.Children {
		out = append(out, n.Name)
	}
	return out
}
