package main

// The fault suite: reme on a full disk, killed mid-write, racing itself, on
// a read-only workspace and fed hostile files. Every case holds reme to the
// promise of the design: no message a caller handed over is lost, no card
// is overwritten, nothing outside the workspace is read or written, and
// the next command works.
//
// Adding a case: write a TestFault<Area><What>(t *testing.T) function in
// this file (or in faults_<area>_test.go for a large area) from the helpers
// below, and say in its comment which promise it checks. `go test ./...`
// (and so CI) runs it; `go test -run TestFault .` runs the suite alone.
//
//   - newWorkspaceDir(t) is an empty workspace folder on the test's temp
//     disk; diskFullFS(t, size) mounts a small tmpfs (skipping, with the
//     reason, where that is impossible) and fillDisk(t, mnt, free) leaves
//     free bytes (whole pages) on it until the returned release is called.
//   - remeIn(t, ws, stdin, args...) runs the CLI in this process and
//     returns stdout, stderr and the exit code; remeCmd(ws, env, args...)
//     is the real binary as a child process, for kill -9 (crashAt runs it
//     with REME_CRASH_AT=step and waits for the kill) and for races.
//   - conversation(ids...) is a messages JSON with those message ids;
//     savedIDs(t, ws, sid) lists the ids in the session file, failing on a
//     line that is not a message.
//   - mustNotExist / mustContain and noTempFiles check the disk afterwards.

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/reme-dev/reme/jobs/llm/llmtest"
	"github.com/reme-dev/reme/store"
)

// --- helpers ---

// faultEnv is the environment of every fault case: a fixed clock and zone,
// and no model unless a case starts one.
func faultEnv(t *testing.T) {
	t.Setenv("REME_TIMEZONE", "UTC")
	t.Setenv("REME_NOW", "2026-06-22T10:00:00Z")
	t.Setenv("COHERE_API_KEY", "")
}

func newWorkspaceDir(t *testing.T) string {
	t.Helper()
	return filepath.Join(t.TempDir(), "ws")
}

// diskFullFS mounts a tmpfs of size bytes and returns its folder.
func diskFullFS(t *testing.T, size int64) string {
	t.Helper()
	dir := t.TempDir()
	out, err := exec.Command("mount", "-t", "tmpfs", "-o", fmt.Sprintf("size=%d,mode=0755", size), "tmpfs", dir).CombinedOutput()
	if err != nil {
		t.Skipf("skipping a disk-full case: it needs a small real filesystem, and mounting a tmpfs at %s failed (%v: %s); run the tests as root on Linux to include it",
			dir, err, bytes.TrimSpace(out))
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", dir, err, out)
		}
	})
	return dir
}

// fillDisk fills the filesystem of mnt, then frees free bytes of it (tmpfs
// frees whole pages, so free is rounded down to one). release frees the
// rest.
func fillDisk(t *testing.T, mnt string, free int64) (release func()) {
	t.Helper()
	p := filepath.Join(mnt, "filler")
	f, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		t.Fatalf("create filler: %v", err)
	}
	buf := make([]byte, 64<<10)
	var size int64
	for {
		n, err := f.Write(buf)
		size += int64(n)
		if err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("fill %s: %v", mnt, err)
			}
			break
		}
	}
	if err := f.Truncate(max(0, size-free)); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return func() {
		if err := os.Remove(p); err != nil {
			t.Fatal(err)
		}
	}
}

type remeResult struct {
	stdout, stderr string
	code           int
}

// remeIn runs reme in this process on workspace ws.
func remeIn(t *testing.T, ws string, stdin string, args ...string) remeResult {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), append([]string{"-w", ws}, args...), strings.NewReader(stdin), &out, &errb)
	if strings.Contains(errb.String(), "panic") {
		t.Fatalf("reme %s panicked:\n%s", store.TruncateRunes(strings.Join(args, " "), 120, "…"), errb.String())
	}
	return remeResult{out.String(), errb.String(), code}
}

// mustRun runs reme in process and fails the test unless it exits 0.
func mustRun(t *testing.T, ws, stdin string, args ...string) remeResult {
	t.Helper()
	r := remeIn(t, ws, stdin, args...)
	if r.code != 0 {
		t.Fatalf("reme %s: exit %d\n%s%s", store.TruncateRunes(strings.Join(args, " "), 120, "…"), r.code, r.stdout, r.stderr)
	}
	return r
}

// conversation is a messages JSON list with the given message ids (as
// msgIDs makes them), in the order of their numbers, each with text long
// enough to span pages in bulk.
func conversation(ids ...string) string {
	var msgs []map[string]any
	for _, id := range ids {
		var n int
		fmt.Sscanf(id[strings.LastIndexByte(id, '-')+1:], "%d", &n)
		at := time.Date(2026, 6, 22, 9, 0, 0, 0, time.UTC).Add(time.Duration(n) * time.Second)
		msgs = append(msgs, map[string]any{
			"id": id, "role": "user", "created_at": at.Format("2006-01-02T15:04:05"),
			"content": fmt.Sprintf("message %s: the deploy freeze starts on 2026-12-20. %s", id, strings.Repeat("padding ", 200)),
		})
	}
	b, _ := json.Marshal(msgs)
	return string(b)
}

// msgIDs numbers message ids: msgIDs("a", 0, 3) is a-00, a-01, a-02.
func msgIDs(prefix string, from, n int) []string {
	var out []string
	for i := from; i < from+n; i++ {
		out = append(out, fmt.Sprintf("%s-%02d", prefix, i))
	}
	return out
}

// savedIDs lists the message ids of a session file in order.
func savedIDs(t *testing.T, ws, sid string) []string {
	t.Helper()
	w := openWS(t, ws)
	msgs, _, err := w.ReadDialog(store.DialogPath(sid))
	if err != nil {
		t.Fatalf("session %s does not read: %v", sid, err)
	}
	var ids []string
	for _, m := range msgs {
		ids = append(ids, m.ID)
	}
	return ids
}

func openWS(t *testing.T, ws string) *store.Workspace {
	t.Helper()
	w, err := store.OpenWorkspace(ws)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func mustContain(t *testing.T, got []string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !slices.Contains(got, w) {
			t.Fatalf("%q missing from %q", w, got)
		}
	}
}

func mustNotExist(t *testing.T, p string) {
	t.Helper()
	if _, err := os.Lstat(p); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("%s exists (%v)", p, err)
	}
}

func noTempFiles(t *testing.T, root string) {
	t.Helper()
	_ = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && strings.HasPrefix(d.Name(), store.TempPrefix) {
			t.Errorf("temp file left behind: %s", p)
		}
		return nil
	})
}

func writeFile(t *testing.T, p, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// pageSize is tmpfs's allocation unit on the platforms CI runs on.
const pageSize = 4096

// --- disk full ---

// TestFaultDiskFullSessionAppend appends to a session file on a full disk
// at many free-space levels and file lengths (so that the disk runs out at
// every kind of place in a record): the append is all or nothing, the file
// always reads back, and once space is freed the next save works and holds
// every message.
func TestFaultDiskFullSessionAppend(t *testing.T) {
	mnt := diskFullFS(t, 1<<20)
	ws := filepath.Join(mnt, "ws")
	w := openWS(t, ws)
	const sid = "full"
	rel := store.DialogPath(sid)
	parse := func(js string) []store.Message {
		msgs, err := store.ParseMessages([]byte(js), time.Now())
		if err != nil {
			t.Fatal(err)
		}
		return msgs
	}
	cases := 0
	for _, freePages := range []int64{0, 1, 2, 3, 5, 8} {
		for prefix := 1; prefix <= 5; prefix++ {
			name := fmt.Sprintf("free=%dp/prefix=%d", freePages, prefix)
			if err := os.RemoveAll(filepath.Join(ws, "session")); err != nil {
				t.Fatal(err)
			}
			if err := w.Init(); err != nil {
				t.Fatal(err)
			}
			first := msgIDs("p", 0, prefix)
			if _, err := w.SaveDialog(rel, parse(conversation(first...))); err != nil {
				t.Fatalf("%s: prefix: %v", name, err)
			}
			batch := msgIDs("b", 10, 2*prefix)
			release := fillDisk(t, mnt, freePages*pageSize)
			_, err := w.SaveDialog(rel, parse(conversation(batch...)))
			// On the full disk: the file still reads, and holds the batch
			// whole or not at all.
			got := savedIDs(t, ws, sid)
			saved := 0
			for _, id := range batch {
				if slices.Contains(got, id) {
					saved++
				}
			}
			if err == nil && saved != len(batch) || err != nil && saved != 0 {
				t.Fatalf("%s: save returned %v but %d of %d messages are in the file", name, err, saved, len(batch))
			}
			if err != nil {
				cases++
				if !errors.Is(err, syscall.ENOSPC) {
					t.Errorf("%s: error %v is not about the full disk", name, err)
				}
			}
			release()
			// Space is back: the retry and a later call both work.
			next := msgIDs("n", 20, 1)
			if _, err := w.SaveDialog(rel, parse(conversation(batch...))); err != nil {
				t.Fatalf("%s: retry after freeing space: %v", name, err)
			}
			if _, err := w.SaveDialog(rel, parse(conversation(next...))); err != nil {
				t.Fatalf("%s: next save: %v", name, err)
			}
			got = savedIDs(t, ws, sid)
			mustContain(t, got, append(append(first, batch...), next...)...)
			if len(got) != len(first)+len(batch)+len(next) {
				t.Fatalf("%s: %d messages saved, want %d: %q", name, len(got), len(first)+len(batch)+len(next), got)
			}
			noTempFiles(t, ws)
		}
	}
	if cases < 10 {
		t.Fatalf("only %d of the saves ran out of space: the levels do not test a full disk", cases)
	}
}

// TestFaultDiskFullAutoMemory runs auto_memory on a full disk at several
// free-space levels: it may fail (with a message that says the disk is
// full and where, never a panic), but only the save itself may cost the
// call's messages: whatever fails after it (opening the index, writing the
// card) fails with the messages saved. Once space is freed the same call
// and the next command succeed with every message saved.
func TestFaultDiskFullAutoMemory(t *testing.T) {
	faultEnv(t)
	mnt := diskFullFS(t, 8<<20)
	ws := filepath.Join(mnt, "ws")
	msgDir := t.TempDir()
	call := func(ids ...string) remeResult {
		f := filepath.Join(msgDir, "m.json")
		writeFile(t, f, conversation(ids...))
		return remeIn(t, ws, "", "auto_memory", "session_id=s1", "messages=@"+f)
	}
	all := msgIDs("a", 0, 1)
	if r := call(all...); r.code != 0 {
		t.Fatalf("first call: %d %s", r.code, r.stderr)
	}
	var ids []string
	diskFullLevels(t, mnt, func(level int) remeResult {
		ids = msgIDs("a", 1+level*2, 2)
		return call(append(all, ids...)...)
	}, func(r remeResult) bool {
		// only the save itself may cost the call's messages
		return strings.Contains(r.stderr, "s1.jsonl: no space left on device") || containsAll(savedIDs(t, ws, "s1"), ids...)
	}, func() {
		all = append(all, ids...)
		if r := call(all...); r.code != 0 {
			t.Fatalf("the call after freeing space failed (%d):\n%s", r.code, r.stderr)
		}
		mustContain(t, savedIDs(t, ws, "s1"), all...)
		mustRun(t, ws, "", "search", "deploy freeze")
	})
	noTempFiles(t, ws)
}

// diskFullLevels fills the disk of mnt to each of several free-space
// levels and runs call there: it may fail (exit 1, never a panic), only
// with an error that says the disk is full and where, and safe must hold
// after it (what the call was given is saved, or the error is about
// saving it). Once the space is freed, after checks that the next call
// works. At least one level must run out of space.
func diskFullLevels(t *testing.T, mnt string, call func(level int) remeResult, safe func(remeResult) bool, after func()) {
	t.Helper()
	failures := 0
	for level, freePages := range []int64{0, 1, 2, 4, 8, 16, 32, 64} {
		release := fillDisk(t, mnt, freePages*pageSize)
		r := call(level)
		switch r.code {
		case 0:
		case 1:
			failures++
			// SQLite says "database or disk is full", or "disk I/O
			// error" when its shared-memory file cannot grow: reme says
			// what it is, and where.
			if !strings.Contains(r.stderr, "no space left on device") || !strings.Contains(r.stderr, mnt) {
				t.Errorf("free=%d pages: the error does not say that the disk is full, naming the path:\n%s", freePages, r.stderr)
			}
			if !safe(r) {
				t.Errorf("free=%d pages: what the call was given is not saved, and the error is not about saving it:\n%s", freePages, r.stderr)
			}
		default:
			t.Fatalf("free=%d pages: exit %d\n%s", freePages, r.code, r.stderr)
		}
		release()
		after()
	}
	if failures == 0 {
		t.Fatal("no call ran out of space: the levels do not test a full disk")
	}
}

func containsAll(got []string, want ...string) bool {
	for _, w := range want {
		if !slices.Contains(got, w) {
			return false
		}
	}
	return true
}

// codexTurn is one user message as Codex CLI writes it in a rollout.
func codexTurn(i int) string {
	line, _ := json.Marshal(map[string]any{
		"timestamp": fmt.Sprintf("2026-06-22T09:%02d:00.000Z", i),
		"type":      "response_item",
		"payload": map[string]any{"type": "message", "role": "user", "content": []any{map[string]any{
			"type": "input_text", "text": fmt.Sprintf("Decision %d: keep marker-%02d in the release notes. %s", i, i, strings.Repeat("padding ", 200)),
		}}},
	})
	return string(line) + "\n"
}

// TestFaultDiskFullImportedSession runs auto_memory_cc and
// auto_memory_codex (--wait) on a full disk at several free-space levels,
// as TestFaultDiskFullAutoMemory does auto_memory: a failure says that the
// disk is full and where, and unless the copy itself could not be written,
// the transcript's new entries are in the session copy.
func TestFaultDiskFullImportedSession(t *testing.T) {
	for _, tc := range []struct {
		command, folder string
		turn            func(i int) string
	}{
		{"auto_memory_cc", "claude_code", func(i int) string { return claudeTurn("s1", i) }},
		{"auto_memory_codex", "codex", codexTurn},
	} {
		t.Run(tc.command, func(t *testing.T) {
			faultEnv(t)
			mnt := diskFullFS(t, 8<<20)
			ws := filepath.Join(mnt, "ws")
			transcript := filepath.Join(t.TempDir(), "s1.jsonl")
			copyPath := filepath.Join(ws, "session", tc.folder, "s1.jsonl")
			turns := 0
			call := func() remeResult {
				f, err := os.OpenFile(transcript, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := f.WriteString(tc.turn(turns)); err != nil {
					t.Fatal(err)
				}
				f.Close()
				turns++
				return remeIn(t, ws, "", tc.command, "--wait", "session_id=s1", "transcript_path="+transcript)
			}
			copied := func(i int) bool {
				b, err := os.ReadFile(copyPath)
				return err == nil && strings.Contains(string(b), fmt.Sprintf("marker-%02d", i))
			}
			if r := call(); r.code != 0 {
				t.Fatalf("first call: %d %s", r.code, r.stderr)
			}
			diskFullLevels(t, mnt, func(int) remeResult { return call() }, func(r remeResult) bool {
				// only the copy's own write may cost the new entries
				return copied(turns-1) || strings.Contains(r.stderr, tc.folder+"/s1.jsonl")
			}, func() {
				if r := call(); r.code != 0 {
					t.Fatalf("the call after freeing space failed (%d):\n%s", r.code, r.stderr)
				}
				for i := range turns {
					if !copied(i) {
						t.Fatalf("turn %d is not in the copy", i)
					}
				}
			})
			noTempFiles(t, ws)
		})
	}
}

// --- crashes ---

// TestFaultTornSessionLine: a crash in the middle of an append leaves half
// a record at the end of the session file. The next call sets it aside
// into a .corrupt file, says so, and saves the conversation.
func TestFaultTornSessionLine(t *testing.T) {
	faultEnv(t)
	ws := newWorkspaceDir(t)
	mustRun(t, ws, "", "auto_memory", "session_id=s1", "messages="+conversation("a-00"))
	p := filepath.Join(ws, "session", "dialog", "s1.jsonl")
	good, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	torn := `{"name":"user","content":[{"type":"text","text":"half a rec`
	writeFile(t, p, string(good)+torn)
	r := mustRun(t, ws, "", "auto_memory", "session_id=s1", "messages="+conversation("a-00", "a-01"))
	if !strings.Contains(r.stderr, "s1.jsonl.corrupt") {
		t.Errorf("no warning names the .corrupt file:\n%s", r.stderr)
	}
	if got := savedIDs(t, ws, "s1"); !slices.Equal(got, []string{"a-00", "a-01"}) {
		t.Errorf("saved %q", got)
	}
	if b, err := os.ReadFile(p + ".corrupt"); err != nil || string(b) != torn+"\n" {
		t.Errorf(".corrupt = %q, %v", b, err)
	}
}

// TestFaultKilledSessionAppend kills auto_memory (SIGKILL) while it saves
// a large conversation, at a series of moments; whatever the moment, the
// next call works and loses nothing it was given.
func TestFaultKilledSessionAppend(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	faultEnv(t)
	ws := newWorkspaceDir(t)
	msgFile := filepath.Join(t.TempDir(), "big.json")
	all := msgIDs("k", 0, 1)
	mustRun(t, ws, "", "auto_memory", "session_id=k", "messages="+conversation(all...))
	for i, delay := range []time.Duration{0, 2, 5, 10, 20, 40, 80} {
		ids := append(slices.Clone(all), msgIDs("k", 1+i*40, 40)...)
		writeFile(t, msgFile, conversation(ids...))
		cmd := remeCmd(ws, []string{"COHERE_API_KEY=", "REME_NOW=2026-06-22T10:00:00Z", "REME_TIMEZONE=UTC"},
			"auto_memory", "session_id=k", "messages=@"+msgFile)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(delay * time.Millisecond) // where the kill lands varies; the checks below hold for any moment
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		// The next call, with the whole conversation, works.
		all = ids
		mustRun(t, ws, "", "auto_memory", "session_id=k", "messages=@"+msgFile)
		mustContain(t, savedIDs(t, ws, "k"), all...)
	}
}

// --- hostile files ---

// TestFaultHostileFrontmatter: a card whose header holds the day index's
// marker text, and one with 20 000 keys (rendering was quadratic in them).
// The day page stays one block of bounded size and stops changing, and
// search keeps working.
func TestFaultHostileFrontmatter(t *testing.T) {
	faultEnv(t)
	ws := newWorkspaceDir(t)
	day := filepath.Join(ws, "daily", "2026-06-22")
	writeFile(t, filepath.Join(day, "marker.md"), "---\nname: marker\ndescription: \"x <!-- /notes:auto --> y\"\n\"<!-- notes:auto -->\": k\n---\n\nbody\n")
	var b strings.Builder
	b.WriteString("---\nname: wide\n")
	for i := range 20_000 {
		fmt.Fprintf(&b, "k%06d: v\n", i)
	}
	b.WriteString("---\n\nwide body\n")
	writeFile(t, filepath.Join(day, "wide.md"), b.String())
	var first []byte
	for i := range 3 {
		mustRun(t, ws, "", "daily_reindex", "2026-06-22")
		page, err := os.ReadFile(filepath.Join(ws, "daily", "2026-06-22.md"))
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			first = page
			continue
		}
		if !bytes.Equal(page, first) {
			t.Fatalf("refresh %d changed the page (%d -> %d bytes)", i, len(first), len(page))
		}
	}
	if n := bytes.Count(first, []byte(store.DayIndexEnd)); n != 1 {
		t.Errorf("%d end markers", n)
	}
	if len(first) > 32<<10 {
		t.Errorf("day page is %d bytes", len(first))
	}
	if !bytes.Contains(first, []byte("more key(s) not shown")) {
		t.Error("the wide card's line does not say keys were left out")
	}
	r := mustRun(t, ws, "", "daily_list", "2026-06-22")
	if len(r.stdout) > 32<<10 {
		t.Errorf("daily_list printed %d bytes", len(r.stdout))
	}
	mustRun(t, ws, "", "search", "wide body")
}

// TestFaultSymlinkedDayFolder: daily_list and daily_reindex refuse a day
// folder that is a symlink out of the workspace, and nothing outside is
// read into the workspace or changed.
func TestFaultSymlinkedDayFolder(t *testing.T) {
	faultEnv(t)
	ws := newWorkspaceDir(t)
	outside := t.TempDir()
	writeFile(t, filepath.Join(outside, "private.md"), "---\nname: private\ndescription: not yours\n---\n")
	if err := os.MkdirAll(filepath.Join(ws, "daily"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(ws, "daily", "2026-06-22")); err != nil {
		t.Skipf("no symlinks here: %v", err)
	}
	for _, cmd := range []string{"daily_list", "daily_reindex"} {
		r := remeIn(t, ws, "", cmd, "2026-06-22")
		if r.code == 0 || strings.Contains(r.stdout, "private") || !strings.Contains(r.stderr, "outside the workspace") {
			t.Errorf("%s: exit %d\nstdout: %s\nstderr: %s", cmd, r.code, r.stdout, r.stderr)
		}
	}
	mustNotExist(t, filepath.Join(ws, "daily", "2026-06-22.md"))
	if ents, _ := os.ReadDir(outside); len(ents) != 1 {
		t.Errorf("the folder outside changed: %v", ents)
	}
}

// TestFaultStaleTempFiles: temp files a killed run left behind are removed
// by the next command that writes in their folder; a young one (another
// process's write in progress) stays.
func TestFaultStaleTempFiles(t *testing.T) {
	faultEnv(t)
	ws := newWorkspaceDir(t)
	mustRun(t, ws, "", "auto_memory", "session_id=s1", "messages="+conversation("a-00"))
	old := time.Now().Add(-2 * store.TempGrace)
	stale := filepath.Join(ws, "session", "dialog", store.TempPrefix+"0123456789ab")
	young := filepath.Join(ws, "session", "dialog", store.TempPrefix+"ba9876543210")
	for _, p := range []string{stale, young} {
		writeFile(t, p, "half")
	}
	if err := os.Chtimes(stale, old, old); err != nil {
		t.Fatal(err)
	}
	// The next command (a new process) rewrites the session file: an
	// earlier message changed.
	changed := strings.Replace(conversation("a-00", "a-01"), "2026-06-22T09:00:00", "2026-06-22T08:00:00", 1)
	if out, err := remeCmd(ws, nil, "auto_memory", "session_id=s1", "messages="+changed).CombinedOutput(); err != nil {
		t.Fatalf("auto_memory: %v\n%s", err, out)
	}
	mustNotExist(t, stale)
	if _, err := os.Stat(young); err != nil {
		t.Errorf("young temp file removed: %v", err)
	}
}

// --- oversized inputs ---

// TestFaultOversizedImage: a small 16-bit PNG under the pixel limit would
// decode into hundreds of megabytes; auto_resource refuses it from its
// header with a message that says why, writes no card, and asks no model.
func TestFaultOversizedImage(t *testing.T) {
	faultEnv(t)
	ws := newWorkspaceDir(t)
	// 600x600 at 16 bits per channel takes 2.9 MB decoded, over the
	// 2 MiB budget set in config.yaml, though it is far under the pixel
	// limit (the default budget refuses 16-bit images of 22 Mpx and more
	// the same way).
	var buf bytes.Buffer
	img := image.NewNRGBA64(image.Rect(0, 0, 600, 600))
	img.Set(0, 0, color.NRGBA64{R: 65535, A: 65535})
	if err := (&png.Encoder{CompressionLevel: png.BestSpeed}).Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(ws, "resource", "scan.png"), buf.String())
	writeFile(t, filepath.Join(ws, "config.yaml"), "resource:\n  max_image_memory: 2097152\n")
	fake := llmtest.NewFakeCohere()
	srv := startFake(t, fake)
	t.Setenv("REME_LLM_BASE_URL", srv)
	t.Setenv("COHERE_API_KEY", llmtest.FakeAPIKey)
	r := remeIn(t, ws, "", "auto_resource", "resource/scan.png")
	if r.code == 0 {
		t.Fatalf("auto_resource succeeded:\n%s", r.stdout)
	}
	if out := r.stdout + r.stderr; !strings.Contains(out, "16-bit RGBA") || !strings.Contains(out, "image memory limit") {
		t.Errorf("the failure does not say why:\n%s", out)
	}
	if n := len(fake.Requests()); n != 0 {
		t.Errorf("the model was asked %d time(s)", n)
	}
	cards, _ := filepath.Glob(filepath.Join(ws, "daily", "*", "*.md"))
	if len(cards) != 0 {
		t.Errorf("cards written: %v", cards)
	}
}

// TestFaultOversizedConversationImage: the image limits apply to images in
// conversations as to image resources (they were ignored there, so a
// 16-bit PNG went to the decoder under the 256 MiB default). The image is
// refused from its header with a message that says why, no request carries
// it, and the conversation is saved. The limit is read under its name
// images.max_memory and its earlier name resource.max_image_memory.
func TestFaultOversizedConversationImage(t *testing.T) {
	var buf bytes.Buffer
	img := image.NewNRGBA64(image.Rect(0, 0, 600, 600))
	img.Set(0, 0, color.NRGBA64{R: 65535, A: 65535})
	if err := (&png.Encoder{CompressionLevel: png.BestSpeed}).Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	data := base64.StdEncoding.EncodeToString(buf.Bytes())
	msgs := `[{"role":"user","id":"m1","created_at":"2026-06-22T09:00:00","content":[
	  {"type":"text","text":"The scan of the floor plan."},
	  {"type":"data","source":{"type":"base64","media_type":"image/png","data":"` + data + `"}}]}]`
	for _, config := range []string{"images:\n  max_memory: 2097152\n", "resource:\n  max_image_memory: 2097152\n"} {
		t.Run(strings.Fields(config)[0], func(t *testing.T) {
			faultEnv(t)
			ws := newWorkspaceDir(t)
			writeFile(t, filepath.Join(ws, "config.yaml"), config)
			fake := llmtest.NewFakeCohere()
			t.Setenv("REME_LLM_BASE_URL", startFake(t, fake))
			t.Setenv("COHERE_API_KEY", llmtest.FakeAPIKey)
			r := remeIn(t, ws, "", "auto_memory", "session_id=s1", "include_images=true", "messages="+msgs)
			if r.code == 0 {
				t.Fatalf("auto_memory succeeded:\n%s", r.stdout)
			}
			if out := r.stdout + r.stderr; !strings.Contains(out, "16-bit RGBA") || !strings.Contains(out, "image memory limit") {
				t.Errorf("the failure does not say why:\n%s", out)
			}
			for _, body := range fake.Requests() {
				if strings.Contains(string(body), "data:image/") {
					t.Errorf("a request carries the image")
				}
			}
			if got := savedIDs(t, ws, "s1"); !slices.Equal(got, []string{"m1"}) {
				t.Errorf("saved %q", got)
			}
		})
	}
}

// startFake serves a fake Cohere API for the test and returns its URL.
func startFake(t *testing.T, fake *llmtest.FakeCohere) string {
	t.Helper()
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	return srv.URL
}
