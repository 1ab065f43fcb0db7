package main

import (
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/reme-dev/reme/jobs/llm/llmtest"
)

// cleanEnv keeps the caller's REME_* and model settings out of in-process
// runs.
func cleanEnv(t *testing.T) {
	t.Helper()
	for _, k := range []string{"REME_WORKSPACE", "REME_SEARCH_LIMIT", "REME_LANGUAGE", "REME_MODEL", "REME_VISION_MODEL",
		"REME_LLM_BASE_URL", "REME_LLM_TIMEOUT", "REME_LLM_MAX_RETRIES", "REME_MAX_FILE_BYTES", "COHERE_API_KEY", "REME_NOW",
		"REME_LLM_PROVIDER", "REME_LLM_API_KEY", "OPENAI_API_KEY", "OPENAI_BASE_URL", "LLM_API_KEY", "LLM_BASE_URL", "LLM_MODEL_NAME",
		"EMBEDDING_BASE_URL", "EMBEDDING_API_KEY"} {
		t.Setenv(k, "")
	}
	t.Setenv("REME_TIMEZONE", "Asia/Shanghai")
}

// exampleWorkspace copies the example workspace into a temporary folder.
func exampleWorkspace(t *testing.T) string {
	t.Helper()
	ws := filepath.Join(t.TempDir(), "ws")
	if err := copyDir(filepath.Join("testdata", "workspace"), ws); err != nil {
		t.Fatal(err)
	}
	return ws
}

// TestExitCodes: the same kind of mistake gets the same exit code and the
// same "reme: " prefix in every command, with ReMe's wording where ReMe has
// one: 2 for what is wrong in the command line, 1 for what the workspace
// holds (a missing file), 0 for success.
func TestExitCodes(t *testing.T) {
	cleanEnv(t)
	ws := exampleWorkspace(t)
	if err := os.Mkdir(filepath.Join(ws, "digest", "wiki.old"), 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		args   []string
		code   int
		stderr string // regexp on the first line
	}{
		{[]string{"frobnicate"}, 2, `^reme: unexpected argument frobnicate`},
		{[]string{"-w", ws, "search", "--frobnicate", "x"}, 2, `^reme: unknown flag --frobnicate$`},
		{[]string{"-w", ws, "search", "colour=blue"}, 2, `^reme: unknown argument "colour" for search`},
		{[]string{"-w", ws, "search", ""}, 2, `^reme: query cannot be empty$`},
		{[]string{"-w", ws, "search", "x", "--limit", "0"}, 2, `^reme: --limit must be greater than 0`},
		{[]string{"-w", ws, "daily_list", "2026-02-30"}, 2, `^reme: date must be YYYY-MM-DD$`},
		{[]string{"-w", ws, "daily_reindex", "tomorrow"}, 2, `^reme: date must be YYYY-MM-DD$`},
		{[]string{"-w", ws, "read", "daily/2026-06-17/user-preferences.md", "start_line=5", "end_line=3"}, 2, `^reme: start_line \(5\) > end_line \(3\)$`},
		{[]string{"-w", ws, "read", "daily/2026-06-17/user-preferences.md", "start_line=x"}, 2, `^reme: start_line must be an integer, got 'x'$`},
		{[]string{"-w", ws, "read", "path="}, 2, "^reme: `path` is required$"},
		{[]string{"-w", ws, "read", "../outside.md"}, 2, "^reme: `path` must stay inside the workspace$"},
		{[]string{"-w", ws, "read", "daily/2026-06-17/nope"}, 1, `^reme: file .*/daily/2026-06-17/nope\.md does not exist$`},
		{[]string{"-w", ws, "read", "daily/2026-06-17/user-preferences.md", "--start-line", "999"}, 1, `^reme: start_line 999 exceeds file length \(\d+ lines\)$`},
		{[]string{"-w", ws, "read", "digest/wiki.old"}, 1, `^reme: path .*/digest/wiki\.old is not a file$`},
		{[]string{"-w", ws, "read", "daily/2026-06-17/user-preferences", "--end-line", "1"}, 0, `^$`},
		{[]string{"-w", ws, "move", "daily/2026-06-17/user-preferences.md", "prefs.md"}, 2, `^reme: dst_path must be relative to the workspace with a directory component$`},
		{[]string{"-w", ws, "move", "daily/2026-06-17/user-preferences.md", "daily/2026-06-17/user-preferences.md"}, 2, `^reme: src_path and dst_path are the same$`},
		{[]string{"-w", ws, "move", "daily/2026-06-17/user-preferences.md", "../x/prefs.md"}, 2, `outside the workspace`},
		{[]string{"-w", ws, "move", "daily/2026-06-17/nope.md", "daily/2026-06-17/x.md"}, 1, `not found`},
		{[]string{"-w", ws, "delete", "../x.md"}, 2, `outside the workspace`},
		{[]string{"-w", ws, "auto_memory", "messages=[]"}, 2, `^reme: session_id is required$`},
		{[]string{"-w", ws, "auto_memory", "session_id=s1", "messages=[{"}, 2, `^reme: invalid messages: not valid JSON`},
		{[]string{"-w", ws, "auto_memory", "session_id=s1"}, 2, `^reme: messages is required`},
		{[]string{"-w", ws, "auto_resource"}, 2, `^reme: give resource paths or changes=JSON$`},
		{[]string{"-w", ws, "auto_resource", `changes={"path":"x"}`}, 2, `^reme: AutoResourceStep requires changes: list\[dict\] \(got a JSON object\)$`},
		{[]string{"-w", ws, "reindex", "scope=everything"}, 2, `^reme: --scope must be one of`},
		{[]string{"-w", filepath.Join(ws, "missing"), "search", "x"}, 1, `^reme: workspace .* does not exist`},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			_, stderr, code := runReme(t, tt.args...)
			if code != tt.code {
				t.Fatalf("exit code %d, want %d; stderr:\n%s", code, tt.code, stderr)
			}
			first, _, _ := strings.Cut(stderr, "\n")
			if !regexp.MustCompile(tt.stderr).MatchString(first) {
				t.Errorf("stderr = %q, want %q", stderr, tt.stderr)
			}
			if strings.Contains(stderr, "Go value") || strings.Contains(stderr, "jobs.") || strings.Contains(stderr, "main.") {
				t.Errorf("stderr names Go types: %q", stderr)
			}
		})
	}
}

// TestWorkspaceTilde: a workspace given as ~/… (quoted, so no shell expands
// it) is one folder for the configuration, the files and the index.
func TestWorkspaceTilde(t *testing.T) {
	cleanEnv(t)
	t.Setenv("REME_TIMEZONE", "")
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Chdir(t.TempDir())
	if err := copyDir(filepath.Join(wd(t), "testdata", "workspace"), filepath.Join(home, "mem")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, "mem", "config.yaml"), []byte("timezone: America/Chicago\nsearch:\n  limit: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, flag := range [][]string{{"-w", "~/mem"}, {"--workspace=~/mem"}} {
		out, stderr, code := runReme(t, append(flag, "config")...)
		if code != 0 || !strings.Contains(out, "timezone: America/Chicago # from config.yaml") || !strings.Contains(out, "# workspace: "+filepath.Join(home, "mem")+"\n") {
			t.Fatalf("%v config: exit %d, stderr %s\n%s", flag, code, stderr, out)
		}
		out, stderr, code = runReme(t, append(flag, "search", "rollback drill")...)
		if code != 0 || len(regexp.MustCompile(`(?m)^==========`).FindAllString(out, -1)) != 1 {
			t.Fatalf("%v search (limit 1 from config.yaml): exit %d, stderr %s\n%s", flag, code, stderr, out)
		}
	}
	t.Setenv("REME_WORKSPACE", "~/mem")
	if out, _, code := runReme(t, "config"); code != 0 || !strings.Contains(out, "America/Chicago") {
		t.Fatalf("REME_WORKSPACE=~/mem config:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(home, "mem", "metadata", "index.db")); err != nil {
		t.Errorf("the index is not in the workspace: %v", err)
	}
	if _, err := os.Stat("~"); err == nil {
		t.Errorf("a folder named ~ was created in the working folder")
	}
}

func wd(t *testing.T) string {
	t.Helper()
	// the package folder, saved before tests change the working folder
	return pkgDir
}

var pkgDir = func() string {
	d, err := os.Getwd()
	if err != nil {
		panic(err)
	}
	return d
}()

// TestDotEnv: a .env in the working folder or a parent gives defaults that
// the real environment overrides, as ReMe reads it.
func TestDotEnv(t *testing.T) {
	cleanEnv(t)
	ws := exampleWorkspace(t)
	top := t.TempDir()
	env := fmt.Sprintf(`# reme settings
export REME_WORKSPACE=%s
REME_SEARCH_LIMIT=2   # two results
REME_MODEL="command-r-plus"
REME_VISION_MODEL='vision-${NOT_EXPANDED}'
REME_LANGUAGE=${DOTENV_TEST_LANG:-zh}
this line is broken
`, ws)
	if err := os.WriteFile(filepath.Join(top, ".env"), []byte(env), 0o644); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(top, "a", "b", "c")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Chdir(sub)
	os.Unsetenv("REME_WORKSPACE")
	os.Unsetenv("REME_SEARCH_LIMIT")
	os.Unsetenv("REME_MODEL")
	os.Unsetenv("REME_VISION_MODEL")
	os.Unsetenv("REME_LANGUAGE")
	out, stderr, code := runReme(t, "--json", "config")
	if code != 0 {
		t.Fatalf("config: exit %d: %s", code, stderr)
	}
	var got struct {
		Workspace string `json:"workspace"`
		EnvFile   string `json:"env_file"`
		Language  string `json:"language"`
		Search    struct{ Limit int }
		LLM       struct {
			Model       string `json:"model"`
			VisionModel string `json:"vision_model"`
		} `json:"llm"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	if got.Workspace != ws || got.Search.Limit != 2 || got.LLM.Model != "command-r-plus" || got.Language != "zh" ||
		got.LLM.VisionModel != "vision-${NOT_EXPANDED}" || got.EnvFile != filepath.Join(top, ".env") {
		t.Errorf("config with .env = %+v", got)
	}
	if !strings.Contains(stderr, ".env line 7 is not KEY=VALUE") {
		t.Errorf("no warning for the broken line: %q", stderr)
	}
	// The environment wins over the file.
	t.Setenv("REME_SEARCH_LIMIT", "3")
	out, _, _ = runReme(t, "--json", "config")
	if !strings.Contains(out, `"limit": 3`) {
		t.Errorf("REME_SEARCH_LIMIT=3 in the environment lost to .env:\n%s", out)
	}
}

func TestDotEnvParse(t *testing.T) {
	e := &dotEnv{vars: map[string]string{}, lookup: func(k string) (string, bool) {
		if k == "HOME" {
			return "/home/dana", true
		}
		return "", false
	}}
	e.parse(".env", []byte("A=1\nexport B = two words # comment\nC=\"line\\nbreak \\\"q\\\"\"\nD='literal ${HOME} # not a comment'\nH='it' # it's a comment\nE=${HOME}/x\nF=\"multi\nline\"\nG=${A}-${MISSING:-dflt}\n=bad\n"))
	want := map[string]string{"A": "1", "B": "two words", "C": "line\nbreak \"q\"", "D": "literal ${HOME} # not a comment",
		"E": "/home/dana/x", "F": "multi\nline", "G": "1-dflt", "H": "it"}
	for k, v := range want {
		if e.vars[k] != v {
			t.Errorf("%s = %q, want %q", k, e.vars[k], v)
		}
	}
	if len(e.warnings) != 1 {
		t.Errorf("warnings = %q, want one for =bad", e.warnings)
	}
}

// TestConfigErrorsPlain: a mistake in config.yaml is told by line and key
// path, never with Go type names.
func TestConfigErrorsPlain(t *testing.T) {
	cleanEnv(t)
	tests := []struct{ yaml, want string }{
		{"search:\n  limit: abc\n", `line 2: search.limit must be a whole number, not "abc"`},
		{"max_file_bytes: 1.5\n", `line 1: max_file_bytes must be a whole number, not "1.5"`},
		{"search: [1, 2]\n", `line 1: search must be a mapping of keys, not a list`},
		{"colour: blue\n", `line 1: unknown key colour (known here: timezone, language,`},
		{"llm:\n  modle: x\n", `line 2: unknown key llm.modle (known here: provider, model,`},
		{"llm:\n  timeout: soon\n", `line 2: llm.timeout: "soon" is not a duration such as 90s or 2m`},
		{"resource:\n  include_images: maybe\n", `line 2: resource.include_images must be true or false, not "maybe"`},
		{"timezone: [UTC]\n", `line 1: timezone must be a single value, not a list`},
		{"- a\n- b\n", `the file must be a mapping of keys`},
		{"timezone: UTC\ntimezone: GMT\n", `line 2: timezone is set twice (first on line 1)`},
		{"timezone: [\n", `did not find expected node content`},
		{"language: fr\n", `language must be en or zh, not "fr"`},
		{"images:\n  max_memory: 2097152\nresource:\n  max_image_memory: 4194304\n",
			`resource.max_image_memory and images.max_memory are the same limit (resource.max_image_memory is its earlier name); set only images.max_memory`},
		{"resource:\n  max_image_memory: 1000\n", `images.max_memory must be at least 1048576 (1 MiB), in bytes`},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			ws := t.TempDir()
			if err := os.WriteFile(filepath.Join(ws, "config.yaml"), []byte(tt.yaml), 0o644); err != nil {
				t.Fatal(err)
			}
			_, stderr, code := runReme(t, "-w", ws, "config")
			if code != 1 || !strings.Contains(stderr, tt.want) {
				t.Fatalf("exit %d, stderr %q; want %q", code, stderr, tt.want)
			}
			if m := regexp.MustCompile(`!!|int64|main\.|[^.]yaml:|unmarshal|Go `).FindString(stderr); m != "" {
				t.Errorf("stderr %q contains %q", stderr, m)
			}
		})
	}
	t.Setenv("REME_LLM_TIMEOUT", "soon")
	if _, stderr, _ := runReme(t, "-w", t.TempDir(), "config"); !strings.Contains(stderr, `environment REME_LLM_TIMEOUT: "soon" is not a duration`) || strings.Contains(stderr, "time:") {
		t.Errorf("REME_LLM_TIMEOUT=soon: %q", stderr)
	}
}

// TestConfigImageLimits: one pair of image limits, images.*, read also
// under its earlier names in resource, printed once under images.
func TestConfigImageLimits(t *testing.T) {
	cleanEnv(t)
	ws := t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "config.yaml"), []byte("resource:\n  max_pixels: 1000000\n  max_image_memory: 2097152\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, stderr, code := runReme(t, "-w", ws, "config")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"images:\n", "  max_pixels: 1000000 # from config.yaml (as resource.max_pixels)", "  max_memory: 2097152 # from config.yaml (as resource.max_image_memory)"} {
		if !strings.Contains(out, want) {
			t.Errorf("config lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "max_image_memory:") || strings.Count(out, "max_pixels:") != 1 {
		t.Errorf("the earlier names are printed:\n%s", out)
	}
}

// TestConfigEffective: `reme config` prints what an empty value means and
// where each value came from, and never a credential.
func TestConfigEffective(t *testing.T) {
	cleanEnv(t)
	ws := t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "config.yaml"), []byte("llm:\n  base_url: https://bob:hunter2@proxy.example.com/cohere?api_key=sk-live-123&region=eu\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("COHERE_API_KEY", "co-secret-456")
	t.Setenv("REME_TIMEZONE", "")
	t.Setenv("TZ", "Europe/Berlin")
	out, stderr, code := runReme(t, "-w", ws, "config")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{
		"timezone: Europe/Berlin # the host's local time; now UTC",
		"language: en # default",
		"model: command-a-03-2025 # default for cohere",
		"base_url: https://***@proxy.example.com/cohere?api_key=***&region=*** # from config.yaml; credentials hidden",
		"api_key: (set, from COHERE_API_KEY)",
		"# model: cohere command-a-03-2025 at https://***@proxy.example.com/cohere",
		"# config file: " + filepath.Join(ws, "config.yaml"),
	} {
		if !strings.Contains(out, want) {
			t.Errorf("config lacks %q:\n%s", want, out)
		}
	}
	for _, leak := range []string{"hunter2", "sk-live-123", "co-secret-456", "bob"} {
		for _, args := range [][]string{{"config"}, {"--json", "config"}} {
			o, _, _ := runReme(t, append([]string{"-w", ws}, args...)...)
			if strings.Contains(o, leak) {
				t.Errorf("%v prints %q:\n%s", args, leak, o)
			}
		}
	}
}

// TestProgressOnTerminal: the first search of a workspace never indexed
// shows how far indexing is on a terminal, and nothing when stderr is a
// pipe; -v logs every model call with its duration.
func TestProgressOnTerminal(t *testing.T) {
	cleanEnv(t)
	root := t.TempDir()
	writeCards(t, root, 300)
	defer func(f func(any) bool, d time.Duration) { isTerminal, progressDelay = f, d }(isTerminal, progressDelay)
	_, stderr, code := runReme(t, "-w", root, "search", "quick brown fox")
	if code != 0 || strings.Contains(stderr, "indexing") {
		t.Fatalf("not a terminal: exit %d, stderr %q", code, stderr)
	}
	if err := os.Remove(filepath.Join(root, "metadata", "index.db")); err != nil {
		t.Fatal(err)
	}
	isTerminal = func(any) bool { return true }
	progressDelay = 0
	_, stderr, code = runReme(t, "-w", root, "search", "quick brown fox")
	if code != 0 || !strings.Contains(stderr, "\rreme: indexing 300/300 notes\n") {
		t.Fatalf("terminal: exit %d, stderr %q", code, stderr)
	}
	_, stderr, _ = runReme(t, "-w", root, "reindex")
	if !strings.Contains(stderr, "\rreme: reindex 300/300 notes\n") {
		t.Errorf("reindex: stderr %q", stderr)
	}

	// A model call that takes a while shows that it is waiting, then clears
	// the line; -v logs the call.
	fake := llmtest.NewFakeCohere(llmtest.FakeReply{Text: "The conversation has nothing to remember.", Delay: 300 * time.Millisecond})
	srv := httptest.NewServer(fake)
	defer srv.Close()
	t.Setenv("REME_LLM_BASE_URL", srv.URL)
	t.Setenv("COHERE_API_KEY", llmtest.FakeAPIKey)
	progressDelay = 50 * time.Millisecond
	_, stderr, _ = runReme(t, "-w", root, "-v", "auto_memory", "session_id=s1",
		`messages=[{"role":"user","content":"hello there","created_at":"2026-06-20T10:00:00+08:00"}]`)
	if !strings.Contains(stderr, "\rreme: waiting for command-a-03-2025 (0s)") || !strings.Contains(stderr, "\r\033[K") {
		t.Errorf("no waiting line: %q", stderr)
	}
	if !regexp.MustCompile(`reme: info: model call model=command-a-03-2025 duration=[0-9.]+(µs|ms|s) `).MatchString(stderr) {
		t.Errorf("no model call line with -v: %q", stderr)
	}
}

// TestReadmeAgentLines runs the README's Stop-hook command and cron line as
// Claude Code and cron run them: through a shell, with a PATH that does not
// hold reme, in a home where ~/.reme does not exist yet.
func TestReadmeAgentLines(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the README's lines are for a POSIX shell")
	}
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	block := regexp.MustCompile("(?s)```json\n(\\{\\s*\"hooks\".*?)```").FindSubmatch(readme)
	if block == nil {
		t.Fatal("no hooks JSON block in the README")
	}
	var settings struct {
		Hooks map[string][]struct {
			Hooks []struct{ Type, Command string }
		}
	}
	if err := json.Unmarshal(block[1], &settings); err != nil {
		t.Fatalf("the README's settings JSON does not parse: %v", err)
	}
	hook := settings.Hooks["Stop"][0].Hooks[0]
	cron := regexp.MustCompile("(?m)^15 3 \\* \\* \\* (.*)$").FindSubmatch(readme)
	if hook.Type != "command" || cron == nil {
		t.Fatalf("hook %+v, cron line %q", hook, cron)
	}

	home := t.TempDir()
	reme, err := exec.LookPath("reme") // the test binary, acting as reme
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(home, ".local", "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(reme, filepath.Join(home, ".local", "bin", "reme")); err != nil {
		t.Fatal(err)
	}
	transcript := filepath.Join(home, "t.jsonl")
	if err := os.WriteFile(transcript, []byte(claudeTurn("9d8c7b6a-5f4e-4d3c-8b2a-1f0e9d8c7b6a", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	env := []string{"HOME=" + home, "PATH=/usr/bin:/bin", "REME_NOW=2026-06-21T12:00:00Z", "REME_TIMEZONE=UTC"}
	sh := exec.Command("/bin/sh", "-c", hook.Command)
	sh.Env, sh.Dir = env, home
	sh.Stdin = strings.NewReader(fmt.Sprintf(`{"session_id":"9d8c7b6a-5f4e-4d3c-8b2a-1f0e9d8c7b6a","transcript_path":%q,"cwd":%q,"hook_event_name":"Stop","stop_hook_active":false}`, transcript, home))
	out, err := sh.CombinedOutput()
	if err != nil {
		t.Fatalf("the README's hook command %q: %v\n%s", hook.Command, err, out)
	}
	if m := regexp.MustCompile(`\(pid (\d+),`).FindSubmatch(out); m != nil {
		pid, _ := strconv.Atoi(string(m[1]))
		waitGone(t.Fatalf, pid)
	}
	if _, err := os.Stat(filepath.Join(home, ".reme", "session", "claude_code", "9d8c7b6a-5f4e-4d3c-8b2a-1f0e9d8c7b6a.jsonl")); err != nil {
		t.Fatalf("the hook did not save the session: %v\n%s", err, out)
	}
	cards, _ := filepath.Glob(filepath.Join(home, ".reme", "daily", "2026-06-21", "*.md"))
	if len(cards) != 1 {
		t.Fatalf("the background run wrote no card: %v", cards)
	}
	// the context hooks answer with the JSON Claude Code reads
	for _, ev := range []struct{ event, input, want string }{
		{"UserPromptSubmit", `{"session_id":"9d8c7b6a-5f4e-4d3c-8b2a-1f0e9d8c7b6a","hook_event_name":"UserPromptSubmit","prompt":"what did we do today?"}`, "## Daily notes, today (2026-06-21)"},
		{"SessionStart", `{"session_id":"9d8c7b6a-5f4e-4d3c-8b2a-1f0e9d8c7b6a","hook_event_name":"SessionStart","source":"startup"}`, "reme context: "},
	} {
		hooks := settings.Hooks[ev.event]
		if len(hooks) != 1 || len(hooks[0].Hooks) != 1 {
			t.Fatalf("the README has no %s hook", ev.event)
		}
		sh := exec.Command("/bin/sh", "-c", hooks[0].Hooks[0].Command)
		sh.Env, sh.Dir, sh.Stdin = env, home, strings.NewReader(ev.input)
		out, err := sh.Output()
		var answer struct {
			HookSpecificOutput struct{ HookEventName, AdditionalContext string }
		}
		if err != nil || json.Unmarshal(out, &answer) != nil || answer.HookSpecificOutput.HookEventName != ev.event ||
			!strings.Contains(answer.HookSpecificOutput.AdditionalContext, ev.want) {
			t.Fatalf("the README's %s hook: %v\n%s", ev.event, err, out)
		}
	}

	fresh := t.TempDir() // cron on a machine where ~/.reme does not exist yet
	if err := os.MkdirAll(filepath.Join(fresh, ".local", "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(reme, filepath.Join(fresh, ".local", "bin", "reme")); err != nil {
		t.Fatal(err)
	}
	for _, h := range []string{home, fresh} {
		c := exec.Command("/bin/sh", "-c", string(cron[1]))
		c.Env = []string{"HOME=" + h, "PATH=/usr/bin:/bin", "REME_TIMEZONE=UTC"}
		if out, err := c.CombinedOutput(); err != nil {
			t.Fatalf("the README's cron line with HOME=%s: %v\n%s", h, err, out)
		}
	}
}

// TestHookByHand: run from a terminal without a session, auto_memory_cc
// says what it expects instead of waiting for JSON that never comes.
func TestHookByHand(t *testing.T) {
	cleanEnv(t)
	defer func(f func(any) bool) { isTerminal = f }(isTerminal)
	isTerminal = func(any) bool { return true }
	_, stderr, code := runReme(t, "-w", t.TempDir(), "auto_memory_cc")
	if code != 1 || !strings.Contains(stderr, "reme: auto_memory_cc reads the Claude Code hook's JSON on stdin; to run it by hand give session_id=ID") {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
}
