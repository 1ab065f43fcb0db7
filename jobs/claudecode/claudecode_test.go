package claudecode

import (
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/reme-dev/reme/store"
)

const claudeFixtureSID = "4f9c2d1e-7b3a-4c5d-9e8f-0a1b2c3d4e5f"

// claudeFixturePath finds testdata/claude/transcript.jsonl from the module root,
// so the test works wherever the package sits in the module.
func claudeFixturePath(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, "testdata", "claude", "transcript.jsonl")
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("go.mod not found above the test folder")
		}
		dir = parent
	}
}

func claudeReadFixture(t *testing.T) []byte {
	t.Helper()
	b, err := os.ReadFile(claudeFixturePath(t))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// claudeFixtureEntries parses the fixture the way CopyTranscript does and
// keeps the lines with a uuid.
func claudeFixtureEntries(t *testing.T) []Entry {
	t.Helper()
	var out []Entry
	for _, line := range bytes.Split(claudeReadFixture(t), []byte("\n")) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		e, ok := parseLine(line, true)
		if !ok {
			t.Fatalf("fixture line does not parse: %.80s", line)
		}
		if e.UUID != "" {
			out = append(out, e)
		}
	}
	return out
}

func TestParseHookInput(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    *HookInput
		wantErr string
	}{
		{
			name: "stop hook",
			in:   `{"session_id":"abc","transcript_path":"/home/u/.claude/projects/-home-u-proj/abc.jsonl","hook_event_name":"Stop","cwd":"/home/u/proj","stop_hook_active":false}` + "\n",
			want: &HookInput{SessionID: "abc", TranscriptPath: "/home/u/.claude/projects/-home-u-proj/abc.jsonl", HookEventName: "Stop", Cwd: "/home/u/proj"},
		},
		{
			name: "only the session id, unknown fields",
			in:   ` {"session_id":"` + claudeFixtureSID + `","permission_mode":"default","extra":{"a":[1,2]}} `,
			want: &HookInput{SessionID: claudeFixtureSID},
		},
		{name: "empty", in: "", wantErr: "hook input is empty"},
		{name: "blank", in: " \n\t", wantErr: "hook input is empty"},
		{name: "garbage", in: "Stop hook fired", wantErr: "not a JSON object"},
		{name: "truncated JSON", in: `{"session_id":"abc"`, wantErr: "not valid JSON"},
		{name: "trailing data", in: `{"session_id":"abc"} {}`, wantErr: "not valid JSON"},
		{name: "array", in: `[{"session_id":"abc"}]`, wantErr: "not a JSON object"},
		{name: "missing session id", in: `{"hook_event_name":"Stop"}`, wantErr: "no session_id"},
		{name: "blank session id", in: `{"session_id":"  "}`, wantErr: "no session_id"},
		{name: "session id of the wrong type", in: `{"session_id":42}`, wantErr: "hook input"},
		{name: "session id with a slash", in: `{"session_id":"a/b"}`, wantErr: "session_id"},
		{name: "session id dot dot", in: `{"session_id":".."}`, wantErr: "session_id"},
		{name: "reserved session id", in: `{"session_id":"NUL"}`, wantErr: "reserved"},
		{name: "too large", in: `{"session_id":"abc","pad":"` + strings.Repeat("x", 1<<20) + `"}`, wantErr: "larger than 1 MiB"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseHookInput(strings.NewReader(tt.in))
			if tt.wantErr != "" {
				if err == nil {
					t.Fatalf("got %+v, want an error containing %q", got, tt.wantErr)
				}
				if !errors.Is(err, store.ErrInput) || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %q: want store.ErrInput and %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if *got != *tt.want {
				t.Fatalf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestFindTranscript(t *testing.T) {
	const sid = "abc-123"
	type file struct {
		path string // relative to the temp root
		age  time.Duration
	}
	tests := []struct {
		name    string
		files   []file
		env     string // CLAUDE_CONFIG_DIR relative to the temp root ("" unset, "~/x" kept as is)
		sid     string
		want    string // relative to the temp root
		wantErr error
		errHas  string
	}{
		{
			name:  "home default",
			files: []file{{"home/.claude/projects/-home-u-proj/abc-123.jsonl", 0}},
			want:  "home/.claude/projects/-home-u-proj/abc-123.jsonl",
		},
		{
			name:  "CLAUDE_CONFIG_DIR wins over home",
			files: []file{{"home/.claude/projects/-p/abc-123.jsonl", 0}, {"cfg/projects/-p/abc-123.jsonl", time.Hour}},
			env:   "cfg",
			want:  "cfg/projects/-p/abc-123.jsonl",
		},
		{
			name:  "CLAUDE_CONFIG_DIR naming the projects folder",
			files: []file{{"cfg/projects/-p/abc-123.jsonl", 0}},
			env:   "cfg/projects",
			want:  "cfg/projects/-p/abc-123.jsonl",
		},
		{
			name:  "CLAUDE_CONFIG_DIR with a tilde",
			files: []file{{"home/alt/projects/-p/abc-123.jsonl", 0}},
			env:   "~/alt",
			want:  "home/alt/projects/-p/abc-123.jsonl",
		},
		{
			name: "two candidates, the newest wins",
			files: []file{
				{"home/.claude/projects/-a/abc-123.jsonl", 2 * time.Hour},
				{"home/.claude/projects/-b/abc-123.jsonl", time.Minute},
				{"home/.claude/projects/-c/abc-123.jsonl", time.Hour},
				{"home/.claude/projects/-d/other.jsonl", 0},
			},
			want: "home/.claude/projects/-b/abc-123.jsonl",
		},
		{
			name:    "other sessions only",
			files:   []file{{"home/.claude/projects/-p/other.jsonl", 0}, {"home/.claude/projects/-p/abc-123.jsonl.bak", 0}},
			wantErr: ErrNoTranscript,
			errHas:  "no abc-123.jsonl in any project folder of {root}/home/.claude/projects",
		},
		{
			name:    "no projects folder",
			files:   []file{{"home/.claude/settings.json", 0}},
			wantErr: ErrNoTranscript,
			errHas:  "{root}/home/.claude/projects does not exist",
		},
		{
			name:    "no projects folder under CLAUDE_CONFIG_DIR",
			env:     "cfg",
			wantErr: ErrNoTranscript,
			errHas:  "{root}/cfg/projects does not exist",
		},
		{name: "session id with a slash", sid: "-p/abc-123", wantErr: store.ErrInput},
		{name: "session id dot dot", sid: "..", wantErr: store.ErrInput},
		{name: "empty session id", sid: "", wantErr: store.ErrInput},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			now := time.Now()
			for _, f := range tt.files {
				p := filepath.Join(root, filepath.FromSlash(f.path))
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte("{}\n"), 0o644); err != nil {
					t.Fatal(err)
				}
				if err := os.Chtimes(p, now.Add(-f.age), now.Add(-f.age)); err != nil {
					t.Fatal(err)
				}
			}
			env := map[string]string{}
			switch {
			case strings.HasPrefix(tt.env, "~"):
				env["CLAUDE_CONFIG_DIR"] = tt.env
			case tt.env != "":
				env["CLAUDE_CONFIG_DIR"] = filepath.Join(root, tt.env)
			}
			getenv := func(k string) string { return env[k] }
			sid := sid
			if tt.sid != "" || tt.wantErr == store.ErrInput {
				sid = tt.sid
			}
			got, err := FindTranscript(sid, getenv, filepath.Join(root, "home"))
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("got %q, %v; want %v", got, err, tt.wantErr)
				}
				if want := strings.ReplaceAll(tt.errHas, "{root}", root); !strings.Contains(err.Error(), filepath.FromSlash(want)) {
					t.Fatalf("error %q does not say %q", err, want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if want := filepath.Join(root, filepath.FromSlash(tt.want)); got != want {
				t.Fatalf("got %s, want %s", got, want)
			}
		})
	}
}

func TestFindTranscriptNoHome(t *testing.T) {
	_, err := FindTranscript("abc", func(string) string { return "" }, "")
	if !errors.Is(err, ErrNoTranscript) || !strings.Contains(err.Error(), "CLAUDE_CONFIG_DIR") {
		t.Fatalf("got %v", err)
	}
}

// claudeUUIDLines returns the lines of a transcript that carry a uuid, each with
// its newline.
func claudeUUIDLines(t *testing.T, data []byte) []byte {
	t.Helper()
	var out bytes.Buffer
	for _, line := range bytes.Split(data, []byte("\n")) {
		var head struct {
			UUID string `json:"uuid"`
		}
		if json.Unmarshal(line, &head) == nil && head.UUID != "" {
			out.Write(line)
			out.WriteByte('\n')
		}
	}
	return out.Bytes()
}

func claudeNewWorkspace(t *testing.T) *store.Workspace {
	t.Helper()
	ws, err := store.OpenWorkspace(filepath.Join(t.TempDir(), "ws"))
	if err != nil {
		t.Fatal(err)
	}
	if err := ws.Init(); err != nil {
		t.Fatal(err)
	}
	return ws
}

func claudeAppendTo(t *testing.T, path, s string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

func claudeEntryLine(uuid, parent, ts, text string) string {
	b, _ := json.Marshal(map[string]any{
		"parentUuid": parent, "isSidechain": false, "type": "user", "sessionId": claudeFixtureSID,
		"message": map[string]any{"role": "user", "content": text}, "uuid": uuid, "timestamp": ts,
	})
	return string(b)
}

func TestCopyTranscript(t *testing.T) {
	fixture := claudeReadFixture(t)
	wantFirst := claudeUUIDLines(t, fixture)
	nFirst := bytes.Count(wantFirst, []byte("\n"))
	if nFirst < 20 {
		t.Fatalf("fixture has only %d uuid lines", nFirst)
	}

	ws := claudeNewWorkspace(t)
	transcript := filepath.Join(t.TempDir(), claudeFixtureSID+".jsonl")
	if err := os.WriteFile(transcript, fixture, 0o644); err != nil {
		t.Fatal(err)
	}
	copyAbs := ws.Abs(CopyPath(claudeFixtureSID))
	readCopy := func() []byte {
		t.Helper()
		b, err := os.ReadFile(copyAbs)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	// backdate makes a rewrite visible even on coarse-mtime filesystems.
	past := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	backdate := func() {
		t.Helper()
		if err := os.Chtimes(copyAbs, past, past); err != nil {
			t.Fatal(err)
		}
	}
	mtime := func() time.Time {
		t.Helper()
		fi, err := os.Stat(copyAbs)
		if err != nil {
			t.Fatal(err)
		}
		return fi.ModTime()
	}

	// 1. First copy: every uuid line, verbatim, in order; the rest left out.
	res, err := CopyTranscript(ws, claudeFixtureSID, transcript, 0)
	if err != nil {
		t.Fatal(err)
	}
	if res.Path != "session/claude_code/"+claudeFixtureSID+".jsonl" {
		t.Fatalf("path %q", res.Path)
	}
	if res.New != nFirst || len(res.Entries) != nFirst || res.SkippedLines != 0 {
		t.Fatalf("first copy: new %d entries %d skipped %d; want %d, %d, 0", res.New, len(res.Entries), res.SkippedLines, nFirst, nFirst)
	}
	if got := readCopy(); !bytes.Equal(got, wantFirst) {
		t.Fatalf("copy is not the fixture's uuid lines:\n%s", got)
	}
	for i, e := range res.Entries {
		if !bytes.Contains(fixture, e.Raw) || e.UUID == "" || e.Timestamp == "" {
			t.Fatalf("entry %d: %+v", i, e)
		}
	}
	if res.Entries[0].Type != "user" || !res.Entries[0].IsMeta || res.Entries[0].ParentUUID != "" {
		t.Fatalf("first entry %+v", res.Entries[0])
	}

	// 2. Two more lines: exactly those are appended.
	lastUUID := res.Entries[len(res.Entries)-1].UUID
	l1 := claudeEntryLine("aa000001-0000-4000-8000-000000000001", lastUUID, "2026-06-20T09:20:00.000Z", "One more thing: log every 429 at debug level.")
	l2 := claudeEntryLine("aa000002-0000-4000-8000-000000000002", "aa000001-0000-4000-8000-000000000001", "2026-06-20T09:20:05.000Z", "Thanks!")
	claudeAppendTo(t, transcript, l1+"\n"+`{"type":"last-prompt","lastPrompt":"Thanks!"}`+"\n"+l2+"\n")
	backdate()
	res, err = CopyTranscript(ws, claudeFixtureSID, transcript, 0)
	if err != nil {
		t.Fatal(err)
	}
	if res.New != 2 || len(res.Entries) != nFirst+2 {
		t.Fatalf("second copy: new %d entries %d", res.New, len(res.Entries))
	}
	if got, want := readCopy(), string(wantFirst)+l1+"\n"+l2+"\n"; string(got) != want {
		t.Fatalf("second copy:\n%s\nwant:\n%s", got, want)
	}
	if nw := res.NewEntries(); len(nw) != 2 || string(nw[0].Raw) != l1 || string(nw[1].Raw) != l2 {
		t.Fatalf("new entries %+v", nw)
	}

	// 3. Nothing new: nothing written.
	backdate()
	before := readCopy()
	res, err = CopyTranscript(ws, claudeFixtureSID, transcript, 0)
	if err != nil {
		t.Fatal(err)
	}
	if res.New != 0 || len(res.Entries) != nFirst+2 || len(res.NewEntries()) != 0 {
		t.Fatalf("third copy: new %d entries %d", res.New, len(res.Entries))
	}
	if !mtime().Equal(past) || !bytes.Equal(readCopy(), before) {
		t.Fatal("a copy with nothing new touched the file")
	}

	// 4. A line still being written is skipped and counted, then copied once complete.
	l3 := claudeEntryLine("aa000003-0000-4000-8000-000000000003", "aa000002-0000-4000-8000-000000000002", "2026-06-20T09:21:00.000Z", "And add a metric for rejected requests.")
	claudeAppendTo(t, transcript, l3[:len(l3)/2])
	res, err = CopyTranscript(ws, claudeFixtureSID, transcript, 0)
	if err != nil {
		t.Fatal(err)
	}
	if res.New != 0 || res.SkippedLines != 1 {
		t.Fatalf("truncated line: new %d skipped %d", res.New, res.SkippedLines)
	}
	if !mtime().Equal(past) || !bytes.Equal(readCopy(), before) {
		t.Fatal("a truncated line changed the copy")
	}
	claudeAppendTo(t, transcript, l3[len(l3)/2:]+"\n")
	res, err = CopyTranscript(ws, claudeFixtureSID, transcript, 0)
	if err != nil {
		t.Fatal(err)
	}
	if res.New != 1 || res.SkippedLines != 0 || string(res.NewEntries()[0].Raw) != l3 {
		t.Fatalf("completed line: new %d skipped %d", res.New, res.SkippedLines)
	}
	if got := readCopy(); string(got) != string(before)+l3+"\n" {
		t.Fatalf("completed line not appended:\n%s", got[len(before):])
	}
}

func TestCopyTranscriptCopyProblems(t *testing.T) {
	line := func(n int) string {
		return claudeEntryLine("bb00000"+string(rune('0'+n))+"-0000-4000-8000-000000000000", "", "2026-06-20T10:00:0"+string(rune('0'+n))+".000Z", "message")
	}
	tests := []struct {
		name       string
		copy       string // existing copy ("" none)
		transcript string
		wantCopy   string // "" when an error is expected
		wantErr    string
	}{
		{
			name:       "copy without a final newline",
			copy:       line(1),
			transcript: line(1) + "\n" + line(2) + "\n",
			wantCopy:   line(1) + "\n" + line(2) + "\n",
		},
		{
			name:       "blank lines and lines without uuid are left out",
			transcript: "\n" + `{"type":"queue-operation","operation":"dequeue"}` + "\n\n" + line(1) + "\r\n" + `{"type":"user","uuid":""}` + "\n",
			wantCopy:   line(1) + "\n",
		},
		{
			name:       "a uuid repeated in the transcript is copied once",
			transcript: line(1) + "\n" + line(1) + "\n",
			wantCopy:   line(1) + "\n",
		},
		{
			name:       "a damaged copy is never rewritten",
			copy:       line(1) + "\n" + `{"uuid":"bb` + "\n",
			transcript: line(1) + "\n" + line(2) + "\n",
			wantErr:    "line 2 is not a JSON object",
		},
		{
			name:       "a copy line that is not an object",
			copy:       `["not","an","entry"]` + "\n",
			transcript: line(2) + "\n",
			wantErr:    "line 1 is not a JSON object",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ws := claudeNewWorkspace(t)
			const sid = "sess-1"
			abs := ws.Abs(CopyPath(sid))
			if tt.copy != "" {
				if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(abs, []byte(tt.copy), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			tr := filepath.Join(t.TempDir(), sid+".jsonl")
			if err := os.WriteFile(tr, []byte(tt.transcript), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := CopyTranscript(ws, sid, tr, 0)
			got, _ := os.ReadFile(abs)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want %q", err, tt.wantErr)
				}
				if string(got) != tt.copy {
					t.Fatalf("copy changed to %q", got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.wantCopy {
				t.Fatalf("copy:\n%q\nwant:\n%q", got, tt.wantCopy)
			}
		})
	}
}

func TestCopyTranscriptRefusesBadInput(t *testing.T) {
	tests := []struct {
		name    string
		sid     string
		missing bool // the transcript does not exist
		wantErr error
	}{
		{name: "slash", sid: "../../etc/x", wantErr: store.ErrInput},
		{name: "dot dot", sid: "..", wantErr: store.ErrInput},
		{name: "subfolder", sid: "a/b", wantErr: store.ErrInput},
		{name: "backslash", sid: `a\b`, wantErr: store.ErrInput},
		{name: "reserved", sid: "COM1", wantErr: store.ErrInput},
		{name: "empty", sid: "", wantErr: store.ErrInput},
		{name: "missing transcript", sid: "abc", missing: true, wantErr: fs.ErrNotExist},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ws := claudeNewWorkspace(t)
			tr := filepath.Join(t.TempDir(), "t.jsonl")
			if !tt.missing {
				if err := os.WriteFile(tr, claudeReadFixture(t), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			before := claudeListTree(t, filepath.Dir(ws.Root))
			_, err := CopyTranscript(ws, tt.sid, tr, 0)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("error %v, want %v", err, tt.wantErr)
			}
			if after := claudeListTree(t, filepath.Dir(ws.Root)); after != before {
				t.Fatalf("files changed:\nbefore %s\nafter  %s", before, after)
			}
		})
	}
}

func claudeListTree(t *testing.T, root string) string {
	t.Helper()
	var paths []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		paths = append(paths, p)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return strings.Join(paths, "\n")
}

func claudeMessageText(t *testing.T, m store.Message) string {
	t.Helper()
	if len(m.Content) != 1 {
		t.Fatalf("message %s has %d blocks, want 1", m.ID, len(m.Content))
	}
	return m.Text()
}

func TestRenderFixture(t *testing.T) {
	entries := claudeFixtureEntries(t)
	msgs := RenderMessages(entries)

	byUUID := map[string]Entry{}
	for _, e := range entries {
		byUUID[e.UUID] = e
	}
	var all strings.Builder
	toolLine := regexp.MustCompile(`^\[tool ([A-Za-z]+)\((.*)\)\]$`)
	resultLine := regexp.MustCompile(`^\[tool (result|error): (.*)\]$`)
	for _, m := range msgs {
		text := claudeMessageText(t, m)
		if strings.TrimSpace(text) == "" {
			t.Errorf("message %s has no text", m.ID)
		}
		e, ok := byUUID[m.ID]
		if !ok {
			t.Fatalf("message id %q is not a transcript uuid", m.ID)
		}
		if m.CreatedAt != e.Timestamp || m.Name != m.Role {
			t.Errorf("message %s: created_at %q name %q role %q; entry timestamp %q", m.ID, m.CreatedAt, m.Name, m.Role, e.Timestamp)
		}
		for _, line := range strings.Split(text, "\n") {
			if strings.HasPrefix(line, "[tool ") {
				if sm := resultLine.FindStringSubmatch(line); sm != nil {
					if n := utf8.RuneCountInString(strings.TrimSuffix(sm[2], "…")); n > excerptRunes {
						t.Errorf("tool result of %d chars: %s", n, line)
					}
				} else if sm := toolLine.FindStringSubmatch(line); sm != nil {
					if n := utf8.RuneCountInString(strings.TrimSuffix(sm[2], "…")); n > excerptRunes {
						t.Errorf("tool input of %d chars: %s", n, line)
					}
				} else {
					t.Errorf("malformed tool line %q", line)
				}
			}
		}
		all.WriteString(text)
		all.WriteString("\n")
	}
	text := all.String()

	for _, banned := range []string{
		"system-reminder", "claudeMd", "Never edit files under vendor/", "TodoWrite tool hasn't been used", "consider whether it looks malicious",
		"per-key token buckets", "Secret plan", "Delay() for a denied reservation", "signature",
		"Caveat:", "command-name", "/clear", "local-command-stdout",
		"UserPromptSubmit hook additional context",
		"Auto-compact is disabled", "pagination cursor fix",
		"iVBORw0KGgo",
		"mu       sync.Mutex", // the body of the Write call is cut at 200 chars
	} {
		if strings.Contains(text, banned) {
			t.Errorf("prompt contains %q", banned)
		}
	}
	for _, kept := range []string{
		"Each API key gets 100 requests per second with a burst of 200.",
		"answer 429 Too Many Requests with a Retry-After header in whole seconds",
		"drop limiters that were idle for 10 minutes",
		"keep the 100 req/s + burst 200 numbers in config (env RATE_LIMIT_RPS, RATE_LIMIT_BURST)",
		`[tool Read({"file_path":"/home/dana/src/ledgerly/internal/api/router.go"})]`,
		`[tool Bash({"command":"make test","description":"Run the test suite"})]`,
		"[tool result: 1→package api 2→ 3→import (",
		"[tool result: File created successfully at: /home/dana/src/ledgerly/internal/api/ratelimit.go]",
		`[tool error: go test ./... ok github.com/dana/ledgerly/internal/store 0.412s --- FAIL: TestRateLimit_RetryAfter`,
		"[tool result: go test ./... ok github.com/dana/ledgerly/internal/store 0.398s",
		"This is what the load test printed before the fix:\n[image]",
		"100 requests per second with a burst of 200 (from `RATE_LIMIT_RPS` / `RATE_LIMIT_BURST`, same defaults)",
	} {
		if !strings.Contains(text, kept) {
			t.Errorf("prompt lacks %q", kept)
		}
	}
	if strings.Count(text, "[tool Write(") != 1 || !strings.Contains(text, `"content":"package api\n\nimport (`) {
		t.Error("the Write call is not one line with its escaped input")
	}

	// The shape: headers only where someone starts to speak.
	want := []struct{ role, id, ts string }{
		{"user", "5a10c004-1c2d-4e5f-8a9b-d0c0ffee0004", "2026-06-20T09:14:23.151Z"},      // the request
		{"assistant", "5a10c006-1c2d-4e5f-8a9b-d0c0ffee0006", "2026-06-20T09:14:27.699Z"}, // + Read + result
		{"assistant", "5a10c009-1c2d-4e5f-8a9b-d0c0ffee0009", "2026-06-20T09:14:32.384Z"}, // + Write, Edit, Bash + results
		{"assistant", "5a10c011-1c2d-4e5f-8a9b-d0c0ffee0011", "2026-06-20T09:15:13.001Z"}, // + Edit, Bash + results
		{"user", "5a10c017-1c2d-4e5f-8a9b-d0c0ffee0017", "2026-06-20T09:16:27.139Z"},      // follow-up
		{"assistant", "5a10c019-1c2d-4e5f-8a9b-d0c0ffee0019", "2026-06-20T09:16:33.961Z"}, // + Edit + result
		{"user", "5a10c01b-1c2d-4e5f-8a9b-d0c0ffee001b", "2026-06-20T09:17:05.345Z"},      // screenshot
		{"assistant", "5a10c01c-1c2d-4e5f-8a9b-d0c0ffee001c", "2026-06-20T09:17:10.030Z"}, // summary
	}
	if len(msgs) != len(want) {
		for _, m := range msgs {
			t.Logf("%s %s %q", m.Role, m.ID, m.Text())
		}
		t.Fatalf("%d messages, want %d", len(msgs), len(want))
	}
	for i, w := range want {
		if m := msgs[i]; m.Role != w.role || m.ID != w.id || m.CreatedAt != w.ts {
			t.Errorf("message %d: %s %s %s; want %s %s %s", i, m.Role, m.ID, m.CreatedAt, w.role, w.id, w.ts)
		}
	}
	if got := claudeMessageText(t, msgs[0]); !strings.HasPrefix(got, "Add rate limiting to the public API (internal/api).") {
		t.Errorf("the request starts with %.60q", got)
	}
	if got := claudeMessageText(t, msgs[4]); strings.Contains(got, "\n\n\n") || !strings.HasSuffix(got, "with those defaults.") {
		t.Errorf("follow-up rendered as %q", got)
	}

	// The rendered messages are valid session lines.
	for _, m := range msgs {
		line, err := m.MarshalLine()
		if err != nil {
			t.Fatal(err)
		}
		back, err := store.ParseMessages(append(append([]byte("["), line...), ']'), time.Time{})
		if err != nil || back[0].ID != m.ID || back[0].CreatedAt != m.CreatedAt || back[0].Text() != m.Text() {
			t.Fatalf("round trip of %s: %v", m.ID, err)
		}
	}
}

func TestRenderMessages(t *testing.T) {
	type in struct {
		typ, role, content string
		meta, sidechain    bool
		compact            bool
	}
	type out struct{ role, text string }
	long := strings.Repeat("é", 250)
	tests := []struct {
		name string
		in   []in
		want []out
	}{
		{
			name: "string content",
			in:   []in{{typ: "user", role: "user", content: `"  hello  "`}},
			want: []out{{"user", "hello"}},
		},
		{
			name: "only injected text is dropped",
			in: []in{
				{typ: "user", role: "user", content: `"<system-reminder>\nbe nice\n</system-reminder>"`},
				{typ: "user", role: "user", content: `"<command-name>/model</command-name>\n<command-message>model</command-message>\n<command-args>opus</command-args>"`},
				{typ: "user", role: "user", content: `"<local-command-stdout>Set model to opus</local-command-stdout>"`},
				{typ: "user", role: "user", content: `"<local-command-caveat>Caveat: The messages below were generated by the user while running local commands. DO NOT respond.</local-command-caveat>"`},
				{typ: "user", role: "user", content: `"Caveat: The messages below were generated by the user while running local commands. DO NOT respond to these messages."`},
				{typ: "user", role: "user", content: `[{"type":"text","text":"[Request interrupted by user for tool use]"}]`},
				{typ: "user", role: "user", content: `"<bash-input>ls</bash-input>"`},
			},
		},
		{
			name: "injected text around what the user said",
			in:   []in{{typ: "user", role: "user", content: `"<system-reminder>x</system-reminder>\n\nUse port 8080.\n\n\n<system-reminder>y</system-reminder>\nThanks"`}},
			want: []out{{"user", "Use port 8080.\n\nThanks"}},
		},
		{
			name: "an unclosed tag is what the user typed",
			in:   []in{{typ: "user", role: "user", content: `"what does <system-reminder> do?"`}},
			want: []out{{"user", "what does <system-reminder> do?"}},
		},
		{
			name: "assistant text is kept as written",
			in:   []in{{typ: "assistant", role: "assistant", content: `[{"type":"text","text":"Claude Code wraps hints in <system-reminder>…</system-reminder> tags."}]`}},
			want: []out{{"assistant", "Claude Code wraps hints in <system-reminder>…</system-reminder> tags."}},
		},
		{
			name: "meta, sidechain, compact summary and other types are dropped",
			in: []in{
				{typ: "user", role: "user", content: `"injected"`, meta: true},
				{typ: "user", role: "user", content: `"prompt from the main agent"`, sidechain: true},
				{typ: "user", role: "user", content: `"This session is being continued from a previous conversation"`, compact: true},
				{typ: "system", role: "user", content: `"system line"`},
				{typ: "user", role: "system", content: `"odd role"`},
				{typ: "assistant", role: "assistant", content: `[{"type":"thinking","thinking":"hmm","signature":"x"},{"type":"redacted_thinking","data":"zz"}]`},
			},
		},
		{
			name: "tool calls and results merge into the assistant message",
			in: []in{
				{typ: "user", role: "user", content: `"fix it"`},
				{typ: "assistant", role: "assistant", content: `[{"type":"text","text":"Looking."}]`},
				{typ: "assistant", role: "assistant", content: `[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"ls -la\n/tmp"}}]`},
				{typ: "user", role: "user", content: `[{"type":"tool_result","tool_use_id":"t1","content":"a\n  b\tc"}]`},
				{typ: "assistant", role: "assistant", content: `[{"type":"tool_use","id":"t2","name":"Read","input":{}}]`},
				{typ: "user", role: "user", content: `[{"type":"tool_result","tool_use_id":"t2","content":[{"type":"text","text":"one"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"AAAA"}}],"is_error":true}]`},
				{typ: "assistant", role: "assistant", content: `[{"type":"text","text":"Done."}]`},
			},
			want: []out{
				{"user", "fix it"},
				{"assistant", "Looking.\n[tool Bash({\"command\":\"ls -la\\n/tmp\"})]\n[tool result: a b c]\n[tool Read({})]\n[tool error: one [image]]"},
				{"assistant", "Done."},
			},
		},
		{
			name: "tool lines with no assistant message before them",
			in: []in{
				{typ: "user", role: "user", content: `"go"`},
				{typ: "assistant", role: "assistant", content: `[{"type":"thinking","thinking":"plan","signature":"s"}]`},
				{typ: "assistant", role: "assistant", content: `[{"type":"tool_use","id":"t1","name":"Grep","input":{"pattern":"x"}}]`},
				{typ: "user", role: "user", content: `[{"type":"tool_result","tool_use_id":"t1","content":""}]`},
			},
			want: []out{
				{"user", "go"},
				{"assistant", "[tool Grep({\"pattern\":\"x\"})]\n[tool result: (no output)]"},
			},
		},
		{
			name: "a tool result first in the increment is not the user speaking",
			in:   []in{{typ: "user", role: "user", content: `[{"type":"tool_result","tool_use_id":"t1","content":"ok"}]`}},
			want: []out{{"assistant", "[tool result: ok]"}},
		},
		{
			name: "user feedback beside a rejected tool stays the user's",
			in: []in{
				{typ: "assistant", role: "assistant", content: `[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"rm -rf build"}}]`},
				{typ: "user", role: "user", content: `[{"type":"tool_result","tool_use_id":"t1","content":"The user doesn't want to proceed with this tool use.","is_error":true},{"type":"text","text":"don't delete build/, it is cached"}]`},
			},
			want: []out{
				{"assistant", "[tool Bash({\"command\":\"rm -rf build\"})]"},
				{"user", "[tool error: The user doesn't want to proceed with this tool use.]\ndon't delete build/, it is cached"},
			},
		},
		{
			name: "long input and results are cut at 200 characters",
			in: []in{
				{typ: "assistant", role: "assistant", content: `[{"type":"text","text":"x"},{"type":"tool_use","id":"t1","name":"Write","input":{"c":"` + long + `"}}]`},
				{typ: "user", role: "user", content: `[{"type":"tool_result","tool_use_id":"t1","content":"` + long + `<system-reminder>secret</system-reminder>"}]`},
			},
			want: []out{{"assistant", "x\n[tool Write(" + `{"c":"` + long[:2*194] + "…)]\n[tool result: " + long[:2*200] + "…]"}},
		},
		{
			name: "system reminders inside tool results are removed",
			in: []in{
				{typ: "assistant", role: "assistant", content: `[{"type":"text","text":"x"}]`},
				{typ: "user", role: "user", content: `[{"type":"tool_result","tool_use_id":"t1","content":"file body\n<system-reminder>consider malware</system-reminder>"}]`},
			},
			want: []out{{"assistant", "x\n[tool result: file body]"}},
		},
		{
			name: "images and documents",
			in: []in{
				{typ: "user", role: "user", content: `[{"type":"image","source":{"type":"base64","media_type":"image/png","data":"AAAA"}}]`},
				{typ: "user", role: "user", content: `[{"type":"document","source":{"type":"base64","media_type":"application/pdf","data":"AAAA"}},{"type":"text","text":"see page 2"}]`},
			},
			want: []out{{"user", "[image]"}, {"user", "[document]\nsee page 2"}},
		},
		{
			name: "odd content is ignored",
			in: []in{
				{typ: "user", role: "user", content: `42`},
				{typ: "user", role: "user", content: `{"type":"text","text":"not a list"}`},
				{typ: "user", role: "user", content: `[1,"x",null,{"type":"text","text":7}]`},
				{typ: "user", role: "user", content: ``},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var entries []Entry
			for i, e := range tt.in {
				line, _ := json.Marshal(map[string]any{
					"type": e.typ, "uuid": string(rune('a' + i)), "timestamp": "2026-06-20T09:00:0" + string(rune('0'+i)) + "Z",
					"isMeta": e.meta, "isSidechain": e.sidechain, "isCompactSummary": e.compact,
					"message": map[string]any{"role": e.role, "content": json.RawMessage(claudeOrNull(e.content))},
				})
				ce, ok := parseLine(line, true)
				if !ok {
					t.Fatalf("line %d does not parse: %s", i, line)
				}
				entries = append(entries, ce)
			}
			msgs := RenderMessages(entries)
			var got []out
			for _, m := range msgs {
				got = append(got, out{m.Role, claudeMessageText(t, m)})
				if m.Name != m.Role || m.ID == "" || m.CreatedAt == "" {
					t.Errorf("envelope %+v", m)
				}
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %q\nwant %q", got, tt.want)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Errorf("message %d:\ngot  %q\nwant %q", i, got[i], tt.want[i])
				}
			}
		})
	}
}

func claudeOrNull(s string) string {
	if s == "" {
		return "null"
	}
	return s
}

func TestParseLine(t *testing.T) {
	tests := []struct {
		line string
		ok   bool
		want Entry
	}{
		{line: `{"type":"summary","summary":"x","leafUuid":"u"}`, ok: true, want: Entry{Type: "summary"}},
		{line: `{"uuid":"u1","parentUuid":null,"type":"user","timestamp":"t","isMeta":true,"message":{"role":"user","content":"hi"}}`, ok: true,
			want: Entry{UUID: "u1", Type: "user", Timestamp: "t", IsMeta: true, Role: "user", Content: json.RawMessage(`"hi"`)}},
		{line: `{"uuid":7,"type":["x"],"isMeta":"yes","message":"m"}`, ok: true, want: Entry{}},
		{line: `{"uuid":"u1","type":"user","message":{"role":"user","content":"hi"`},
		{line: `[1,2]`},
		{line: `"x"`},
		{line: `null`},
		{line: `not json`},
	}
	for _, tt := range tests {
		t.Run(tt.line, func(t *testing.T) {
			got, ok := parseLine([]byte(tt.line), true)
			if ok != tt.ok {
				t.Fatalf("ok %v, want %v", ok, tt.ok)
			}
			if !ok {
				return
			}
			if string(got.Raw) != tt.line {
				t.Errorf("raw %s", got.Raw)
			}
			got.Raw = nil
			if string(got.Content) != string(tt.want.Content) {
				t.Errorf("content %s, want %s", got.Content, tt.want.Content)
			}
			got.Content, tt.want.Content = nil, nil
			if !claudeEqualEntry(got, tt.want) {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func claudeEqualEntry(a, b Entry) bool {
	return a.UUID == b.UUID && a.ParentUUID == b.ParentUUID && a.Type == b.Type && a.Timestamp == b.Timestamp &&
		a.IsMeta == b.IsMeta && a.IsSidechain == b.IsSidechain && a.IsCompactSummary == b.IsCompactSummary && a.Role == b.Role
}

func FuzzParseHookInput(f *testing.F) {
	for _, s := range []string{``, `{}`, `{"session_id":"abc"}`, `{"session_id":"a/b"}`, `{"session_id":"abc","cwd":7}`, `[`, "\x00"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		in, err := ParseHookInput(bytes.NewReader(data))
		if err != nil {
			if in != nil || !errors.Is(err, store.ErrInput) {
				t.Fatalf("in %+v err %v", in, err)
			}
			return
		}
		if store.ValidateName(in.SessionID) != nil {
			t.Fatalf("accepted session id %q", in.SessionID)
		}
	})
}

func FuzzRender(f *testing.F) {
	for _, line := range bytes.Split(claudeReadFixtureF(f), []byte("\n")) {
		f.Add(line)
	}
	f.Add([]byte(`{"type":"user","uuid":"u","message":{"role":"user","content":"<system-reminder>a</system-reminder>b<command-name>"}}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		e, ok := parseLine(line, true)
		if !ok {
			return
		}
		for _, m := range RenderMessages([]Entry{e, e}) {
			text := m.Text()
			if strings.TrimSpace(text) == "" || (m.Role != "user" && m.Role != "assistant") {
				t.Fatalf("message %+v", m)
			}
			if m.Role == "user" && strings.Contains(text, "</system-reminder>") && regexp.MustCompile(`(?s)<system-reminder>.*</system-reminder>`).MatchString(text) {
				t.Fatalf("system reminder left in %q", text)
			}
		}
	})
}

func claudeReadFixtureF(f *testing.F) []byte {
	dir, _ := os.Getwd()
	for {
		if b, err := os.ReadFile(filepath.Join(dir, "testdata", "claude", "transcript.jsonl")); err == nil {
			return b
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			f.Fatal("fixture not found")
		}
		dir = parent
	}
}

// TestCopyTranscriptBounds: a transcript that is not a regular file
// (/dev/zero grows without end) or that is larger than the limit is
// refused with a clear error before the copy changes; the copy is read
// line by line and not held whole.
func TestCopyTranscriptBounds(t *testing.T) {
	ws := claudeNewWorkspace(t)
	sid := "bounds-1"
	if _, err := os.Stat("/dev/zero"); err == nil {
		_, err := CopyTranscript(ws, sid, "/dev/zero", 0)
		if err == nil || !strings.Contains(err.Error(), "is not a regular file") {
			t.Fatalf("/dev/zero: %v", err)
		}
	}
	tr := filepath.Join(t.TempDir(), "t.jsonl")
	big := claudeEntryLine("u1", "", "2026-06-20T10:00:00Z", strings.Repeat("x", 4096)) + "\n"
	if err := os.WriteFile(tr, []byte(big), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := CopyTranscript(ws, sid, tr, 1024)
	if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "auto_memory.max_transcript_bytes") {
		t.Fatalf("over the limit: %v", err)
	}
	if ws.Exists(CopyPath(sid)) {
		t.Error("the copy was written for a refused transcript")
	}
	if res, err := CopyTranscript(ws, sid, tr, 1<<20); err != nil || res.New != 1 {
		t.Fatalf("within the limit: %+v %v", res, err)
	}
}

// TestCopyTranscriptRepairsTornTail: a copy whose last line a crash cut is
// repaired by the next call, whether it compares the whole transcript or
// takes the hook's fast path: the torn bytes are set aside into
// <copy>.corrupt (nothing is deleted), the entry is copied again from the
// transcript, and the session is never blocked.
func TestCopyTranscriptRepairsTornTail(t *testing.T) {
	l1 := claudeEntryLine("u1", "", "2026-06-20T10:00:00Z", "first")
	l2 := claudeEntryLine("u2", "u1", "2026-06-20T10:01:00Z", "second")
	l3 := claudeEntryLine("u3", "u2", "2026-06-20T10:02:00Z", "third")
	torn := l2[:len(l2)/2]
	check := func(t *testing.T, ws *store.Workspace, sid string, aside *store.SetAside, want string) {
		t.Helper()
		if aside == nil || aside.To != CopyPath(sid)+store.CorruptSuffix || aside.Bytes != len(torn) {
			t.Fatalf("set aside: %+v", aside)
		}
		b, _ := os.ReadFile(ws.Abs(CopyPath(sid)))
		if string(b) != want {
			t.Errorf("copy:\n%s", b)
		}
		if b, err := os.ReadFile(ws.Abs(aside.To)); err != nil || string(b) != torn+"\n" {
			t.Errorf("%s = %q, %v", aside.To, b, err)
		}
	}
	t.Run("whole", func(t *testing.T) {
		ws := claudeNewWorkspace(t)
		sid := "torn-1"
		tr := filepath.Join(t.TempDir(), "t.jsonl")
		if err := os.WriteFile(tr, []byte(l1+"\n"+l2+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := ws.WriteFile(CopyPath(sid), []byte(l1+"\n"+torn)); err != nil {
			t.Fatal(err)
		}
		res, err := CopyTranscript(ws, sid, tr, 0)
		if err != nil || res.New != 1 || len(res.Entries) != 2 {
			t.Fatalf("%+v %v", res, err)
		}
		check(t, ws, sid, res.SetAside, l1+"\n"+l2+"\n")
	})
	t.Run("hook", func(t *testing.T) {
		ws := claudeNewWorkspace(t)
		sid := "torn-2"
		tr := filepath.Join(t.TempDir(), "t.jsonl")
		if err := os.WriteFile(tr, []byte(l1+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := Append(ws, sid, tr, 0); err != nil {
			t.Fatal(err)
		}
		// a crash cut the next append short
		if err := os.WriteFile(ws.Abs(CopyPath(sid)), []byte(l1+"\n"+torn), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(tr, []byte(l1+"\n"+l2+"\n"+l3+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		ap, err := Append(ws, sid, tr, 0)
		if err != nil || ap.New != 2 {
			t.Fatalf("%+v %v", ap, err)
		}
		check(t, ws, sid, ap.SetAside, l1+"\n"+l2+"\n"+l3+"\n")
	})
	ws := claudeNewWorkspace(t)
	sid := "torn-1"
	tr := filepath.Join(t.TempDir(), "t.jsonl")
	if err := os.WriteFile(tr, []byte(l1+"\n"+l2+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// a damaged line in the middle is still an error: it is not ours to drop
	if err := ws.WriteFile(CopyPath(sid), []byte(l1+"\n{broken\n"+l2+"\n")); err != nil {
		t.Fatal(err)
	}
	if _, err := CopyTranscript(ws, sid, tr, 0); err == nil || !strings.Contains(err.Error(), "line 2 is not a JSON object") {
		t.Fatalf("damaged middle: %v", err)
	}
}

// TestCopyRedactsWithRedactSessions: with redact.sessions the copy holds
// the transcript's entries masked, on the hook's fast path as on a whole
// comparison, and a later call does not copy them again.
func TestCopyRedactsWithRedactSessions(t *testing.T) {
	ws := claudeNewWorkspace(t)
	ws.RedactSessions = true
	key := "ghp_" + "R8mK2pW9xQ4vT7nZ3bL6cY1dF5hJ0sA8eG2u"
	tr := filepath.Join(t.TempDir(), "t.jsonl")
	l1 := claudeEntryLine("u1", "", "2026-06-20T10:00:00Z", "push with "+key)
	l2 := claudeEntryLine("u2", "u1", "2026-06-20T10:01:00Z", "password=hunter2hunter2 in the .env")
	if err := os.WriteFile(tr, []byte(l1+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if ap, err := Append(ws, "r1", tr, 0); err != nil || ap.New != 1 {
		t.Fatalf("%+v %v", ap, err)
	}
	claudeAppendTo(t, tr, l2+"\n")
	if ap, err := Append(ws, "r1", tr, 0); err != nil || ap.New != 1 || ap.Whole {
		t.Fatalf("fast path: %+v %v", ap, err)
	}
	if cp, err := CopyTranscript(ws, "r1", tr, 0); err != nil || cp.New != 0 || len(cp.Entries) != 2 {
		t.Fatalf("whole comparison: %+v %v", cp, err)
	}
	b, _ := os.ReadFile(ws.Abs(CopyPath("r1")))
	if strings.Contains(string(b), key) || strings.Contains(string(b), "hunter2") ||
		!strings.Contains(string(b), "push with [redacted:github-token]") || !strings.Contains(string(b), "password=[redacted:password]") {
		t.Errorf("copy:\n%s", b)
	}
}
