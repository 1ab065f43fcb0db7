package jobs

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/reme-dev/reme/store"
)

// snapshot maps every file outside metadata/ to its bytes.
func snapshot(t *testing.T, ws *store.Workspace) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, rel := range workspaceFiles(t, ws) {
		b, err := os.ReadFile(ws.Abs(rel))
		if err != nil {
			t.Fatal(err)
		}
		out[rel] = string(b)
	}
	return out
}

const bulletFeedback = "Answer with bullet points, not long paragraphs.\n\nWhy: long paragraphs are hard to scan.\nHow to apply: use short bullets for every answer.\n"

func writeBullets(t *testing.T, m *Memory) *MemoryWriteResult {
	t.Helper()
	res, err := m.Write(context.Background(), MemoryWriteRequest{Type: "feedback", Name: "answer-format",
		Description: "Prefers bullet answers over long paragraphs.", Content: bulletFeedback, Source: "[[daily/2026-06-22/chat.md]]"})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestMemoryWriteCreatesAnEntryAndItsIndexLine(t *testing.T) {
	env, ix := newEnv(t, nil)
	m := NewMemory(env, MemorySessionOptions{})
	res := writeBullets(t, m)
	if res.Path != "memory/entries/answer-format.md" || res.Action != "created" || len(res.Hash) != 64 {
		t.Fatalf("result %+v", res)
	}
	got, _ := os.ReadFile(env.WS.Abs(res.Path))
	want := "---\nname: answer-format\ndescription: Prefers bullet answers over long paragraphs.\ntype: feedback\ncreated: \"2026-06-22\"\nupdated: \"2026-06-22\"\nsource: \"[[daily/2026-06-22/chat.md]]\"\n---\n\n" + bulletFeedback
	if diff := cmp.Diff(want, string(got)); diff != "" {
		t.Errorf("entry (-want +got):\n%s", diff)
	}
	page, _ := os.ReadFile(env.WS.Abs(store.MemoryIndexPath))
	if !strings.Contains(string(page), "## Feedback\n\n- [[memory/entries/answer-format.md|answer-format]] — Prefers bullet answers over long paragraphs.\n") {
		t.Errorf("MEMORY.md:\n%s", page)
	}
	if !cmp.Equal(ix.updated, []string{"memory/entries/answer-format.md", "MEMORY.md"}) {
		t.Errorf("index updates %v", ix.updated)
	}
	// the result says what the write did to MEMORY.md: created it
	if res.Index == nil || res.Index.Listed != 1 || !res.Index.Created || !res.Index.Changed {
		t.Errorf("index result %+v", res.Index)
	}
}

func TestMemoryWriteSameNameUpdatesInPlace(t *testing.T) {
	env, _ := newEnv(t, nil)
	first := writeBullets(t, NewMemory(env, MemorySessionOptions{}))
	// a new session (another conversation) repeating it changes nothing
	again := writeBullets(t, NewMemory(env, MemorySessionOptions{}))
	if again.Action != "unchanged" || again.Path != first.Path || again.Hash != first.Hash {
		t.Fatalf("repeat: %+v", again)
	}
	// a later day, more detail: the same entry is updated, its created kept
	env.Now = func() time.Time { return time.Date(2026, 7, 1, 9, 0, 0, 0, shanghai) }
	m := NewMemory(env, MemorySessionOptions{Source: "[[daily/2026-07-01/more.md]]"})
	res, err := m.Write(context.Background(), MemoryWriteRequest{Type: "feedback", Name: "Answer-Format",
		Content: bulletFeedback + "Also for code reviews.\n", Source: "[[ignored.md]]"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Action != "updated" || res.Path != first.Path {
		t.Fatalf("update: %+v", res)
	}
	n, _ := env.WS.ReadNote(res.Path)
	if n.FM.String("created") != "2026-06-22" || n.FM.String("updated") != "2026-07-01" ||
		n.FM.String("source") != "[[daily/2026-07-01/more.md]]" || n.Description() != "Prefers bullet answers over long paragraphs." ||
		!strings.Contains(n.Content(), "code reviews") {
		t.Errorf("updated entry: %v\n%s", n.FM.Map(), n.Content())
	}
	entries, _ := env.WS.ListEntries()
	if len(entries) != 1 {
		t.Errorf("entries %v", entries)
	}
}

func TestMemoryWriteRefusesAnEntryEditedByHand(t *testing.T) {
	env, _ := newEnv(t, nil)
	res := writeBullets(t, NewMemory(env, MemorySessionOptions{}))
	p := env.WS.Abs(res.Path)
	b, _ := os.ReadFile(p)
	edited := strings.Replace(string(b), "short bullets", "short bullets, at most five", 1)
	if err := os.WriteFile(p, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, env.WS)
	m := NewMemory(env, MemorySessionOptions{})
	_, err := m.Write(context.Background(), MemoryWriteRequest{Type: "feedback", Name: "answer-format", Content: bulletFeedback + "More.\n"})
	if !errors.Is(err, ErrStale) || !strings.Contains(err.Error(), "changed since the version reme last wrote") {
		t.Fatalf("err = %v", err)
	}
	if !cmp.Equal(before, snapshot(t, env.WS)) {
		t.Error("a refused write changed the workspace")
	}
	// a stale hash is refused too
	if _, err := m.Write(context.Background(), MemoryWriteRequest{Path: res.Path, Content: "x\nWhy: y\nHow to apply: z\n", Hash: res.Hash}); !errors.Is(err, ErrStale) {
		t.Fatalf("stale hash: %v", err)
	}
	// reading it first makes the session's write go through, merged by the caller
	got, err := m.Get(context.Background(), MemoryRef{Name: "answer-format"})
	if err != nil || !strings.Contains(got.Content, "at most five") {
		t.Fatalf("get: %+v %v", got, err)
	}
	if store.Sum(got.Raw) != got.Hash || !strings.Contains(string(got.Raw), "at most five") {
		t.Errorf("Raw is not the file Hash names: %q, hash %s", got.Raw, got.Hash)
	}
	if _, err := m.Write(context.Background(), MemoryWriteRequest{Path: res.Path, Content: got.Content + "More.\n"}); err != nil {
		t.Fatal(err)
	}
	n, _ := env.WS.ReadNote(res.Path)
	if !strings.Contains(n.Content(), "at most five") || !strings.Contains(n.Content(), "More.") {
		t.Errorf("merged entry:\n%s", n.Content())
	}
	// a person's own entry, never written by reme, needs its hash
	if err := os.WriteFile(env.WS.Abs("memory/entries/mine.md"), []byte("---\ntype: user\nname: mine\n---\nHand-written.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = NewMemory(env, MemorySessionOptions{}).Write(context.Background(), MemoryWriteRequest{Name: "mine", Content: "Overwritten."})
	if !errors.Is(err, ErrStale) || !strings.Contains(err.Error(), "was not written by reme") {
		t.Fatalf("hand-written entry: %v", err)
	}
	mine, _ := NewMemory(env, MemorySessionOptions{}).Get(context.Background(), MemoryRef{Path: "memory/entries/mine.md"})
	if _, err := NewMemory(env, MemorySessionOptions{}).Write(context.Background(), MemoryWriteRequest{Name: "mine", Content: "Rewritten.", Hash: mine.Hash[:12]}); err != nil {
		t.Fatalf("with the hash: %v", err)
	}
}

func TestMemoryBadInputChangesNothing(t *testing.T) {
	big := strings.Repeat("x", 10<<20)
	tests := []struct {
		name string
		req  MemoryWriteRequest
		want string
	}{
		{"unknown type", MemoryWriteRequest{Type: "opinion", Name: "n", Content: "c"}, `type must be one of user, feedback, project, reference, not "opinion"`},
		{"missing type", MemoryWriteRequest{Name: "n", Content: "c"}, "type is required"},
		{"missing name", MemoryWriteRequest{Type: "user", Content: "c"}, "name is required"},
		{"empty content", MemoryWriteRequest{Type: "user", Name: "n", Content: "  "}, "content is empty"},
		{"path outside entries", MemoryWriteRequest{Path: "daily/2026-06-22/x.md", Type: "user", Name: "n", Content: "c"}, "outside memory/entries/"},
		{"path escaping", MemoryWriteRequest{Path: "../../etc/passwd", Type: "user", Name: "n", Content: "c"}, "path"},
		{"path not an entry", MemoryWriteRequest{Path: "memory/entries/none.md", Type: "user", Content: "c"}, "no entry at memory/entries/none.md"},
		{"name of another entry", MemoryWriteRequest{Path: "memory/entries/go-backend.md", Name: "answer-format"}, `the name "answer-format" is taken by another entry, memory/entries/answer-format.md`},
		{"name making another entry's file", MemoryWriteRequest{Type: "user", Name: "odd-file", Content: "c"}, `would make the file memory/entries/odd-file.md, which is another entry (named "something else")`},
		{"two entries with the name", MemoryWriteRequest{Type: "user", Name: "twin", Content: "c"}, "2 entries are named \"twin\""},
		{"10 MB body", MemoryWriteRequest{Type: "user", Name: "big", Content: big}, "an entry holds at most 65536"},
		{"due not a date", MemoryWriteRequest{Type: "project", Name: "q2", Content: "c", Due: "end of June"}, `due must be a date (YYYY-MM-DD), not "end of June"`},
		{"impossible due", MemoryWriteRequest{Type: "project", Name: "q2", Content: "c", Due: "2026-02-30"}, "due must be a date"},
		{"due on a user entry", MemoryWriteRequest{Type: "user", Name: "q2", Content: "c", Due: "2026-06-30"}, "due is for project entries"},
		{"expires not a date", MemoryWriteRequest{Type: "user", Name: "q2", Content: "c", Expires: "soon"}, "expires must be a date"},
		{"feedback without why", MemoryWriteRequest{Type: "feedback", Name: "f", Content: "Use bullets.\nHow to apply: always."}, `no a "Why:" line`},
		{"feedback without how", MemoryWriteRequest{Type: "feedback", Name: "f", Content: "Use bullets.\nWhy: easier."}, `no a "How to apply:" line`},
		{"feedback update losing why", MemoryWriteRequest{Name: "answer-format", Content: "Just bullets."}, "must say why and how"},
		{"profile with broken yaml", MemoryWriteRequest{Path: "memory/profile.md", Content: "new"}, "does not parse"},
		{"profile with a type", MemoryWriteRequest{Path: "memory/profile.md", Type: "user", Content: "new"}, "the profile has no type"},
		{"bad hash", MemoryWriteRequest{Type: "user", Name: "n", Content: "c", Hash: "xyz"}, "hash must be"},
		{"multi-line name", MemoryWriteRequest{Type: "user", Name: "a\nb", Content: "c"}, "one line"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env, _ := newEnv(t, nil)
			writeBullets(t, NewMemory(env, MemorySessionOptions{}))
			if _, err := NewMemory(env, MemorySessionOptions{}).Write(context.Background(), MemoryWriteRequest{Type: "user", Name: "go-backend", Content: "Ten years of Go."}); err != nil {
				t.Fatal(err)
			}
			for rel, text := range map[string]string{
				"memory/entries/odd-file.md":  "---\ntype: user\nname: something else\n---\nx\n",
				"memory/entries/twin.md":      "---\ntype: user\nname: twin\n---\nx\n",
				"memory/entries/twin-copy.md": "---\ntype: user\nname: Twin\n---\ny\n",
				"memory/profile.md":           "---\nname: [broken\n---\nMe.\n",
			} {
				if err := os.WriteFile(env.WS.Abs(rel), []byte(text), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			before := snapshot(t, env.WS)
			_, err := NewMemory(env, MemorySessionOptions{}).Write(context.Background(), tt.req)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
			if after := snapshot(t, env.WS); !cmp.Equal(before, after) {
				t.Errorf("bad input changed the workspace: %s", cmp.Diff(before, after))
			}
		})
	}
}

func TestMemoryDeleteMovesToTrash(t *testing.T) {
	env, _ := newEnv(t, nil)
	res := writeBullets(t, NewMemory(env, MemorySessionOptions{}))
	m := NewMemory(env, MemorySessionOptions{})
	if _, err := m.Delete(context.Background(), MemoryDeleteRequest{Name: "no-such"}); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("unknown name: %v", err)
	}
	if _, err := m.Delete(context.Background(), MemoryDeleteRequest{Path: "memory/profile.md"}); err == nil {
		t.Fatal("the profile was deleted")
	}
	if _, err := m.Delete(context.Background(), MemoryDeleteRequest{Name: "answer-format", Hash: strings.Repeat("0", 64)}); !errors.Is(err, ErrStale) {
		t.Fatalf("wrong hash: %v", err)
	}
	before, _ := os.ReadFile(env.WS.Abs(res.Path))
	del, err := m.Delete(context.Background(), MemoryDeleteRequest{Name: "answer-format"})
	if err != nil {
		t.Fatal(err)
	}
	if del.Trash != "archive/memory/entries/answer-format.md" || env.WS.Exists(res.Path) {
		t.Fatalf("delete %+v", del)
	}
	if del.Index == nil || !del.Index.Changed || del.Index.Entries != 0 {
		t.Errorf("the delete's MEMORY.md result %+v", del.Index)
	}
	kept, _ := env.WS.ReadNote(del.Trash)
	was := store.ParseNote(res.Path, before)
	if kept.FM.String("archived_from") != res.Path || kept.FM.String("archive_reason") != "deleted with memory_delete" ||
		!strings.HasPrefix(kept.Content(), was.Content()) || kept.FM.String("type") != "feedback" ||
		!strings.Contains(kept.Content(), "> Archived by memory_delete on 2026-06-22: deleted with memory_delete.") {
		t.Errorf("the trash does not hold the entry as it was, marked:\n%s", kept.Content())
	}
	// reme undo brings it back byte for byte
	runs, err := env.Journal.Runs()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := env.Journal.Undo(runs[len(runs)-1].ID, false, store.TriggerCLI); err != nil {
		t.Fatal(err)
	}
	back, _ := os.ReadFile(env.WS.Abs(res.Path))
	if string(back) != string(before) || env.WS.Exists(del.Trash) {
		t.Error("undo did not restore the entry byte for byte")
	}
	if _, err := m.Delete(context.Background(), MemoryDeleteRequest{Path: res.Path, Reason: "wrong"}); err != nil {
		t.Fatal(err)
	}
	page, _ := os.ReadFile(env.WS.Abs(store.MemoryIndexPath))
	if strings.Contains(string(page), "answer-format") || !strings.Contains(string(page), "(no entries yet)") {
		t.Errorf("MEMORY.md after delete:\n%s", page)
	}
	// a second entry of that name deleted later does not overwrite the first in the trash
	writeBullets(t, NewMemory(env, MemorySessionOptions{}))
	del2, err := NewMemory(env, MemorySessionOptions{}).Delete(context.Background(), MemoryDeleteRequest{Path: res.Path})
	if err != nil || del2.Trash != "archive/memory/entries/answer-format-2.md" {
		t.Fatalf("second delete %+v %v", del2, err)
	}
	if len(m.Changes) != 2 || m.Changes[0].Action != "deleted" || m.Changes[1].Trash != "archive/memory/entries/answer-format.md" {
		t.Errorf("changes %+v", m.Changes)
	}
	kept, _ = env.WS.ReadNote("archive/memory/entries/answer-format.md")
	if kept.FM.String("archive_reason") != "deleted with memory_delete: wrong" {
		t.Errorf("reason %q", kept.FM.String("archive_reason"))
	}
}

func TestMemoryRenameAndProfile(t *testing.T) {
	env, _ := newEnv(t, nil)
	m := NewMemory(env, MemorySessionOptions{})
	res := writeBullets(t, m)
	ren, err := m.Write(context.Background(), MemoryWriteRequest{Path: res.Path, Name: "reply style"})
	if err != nil {
		t.Fatal(err)
	}
	if ren.Path != "memory/entries/reply style.md" || ren.RenamedFrom != res.Path || env.WS.Exists(res.Path) {
		t.Fatalf("rename %+v", ren)
	}
	// the profile: created at its place, its own name kept, never renamed
	p, err := m.Write(context.Background(), MemoryWriteRequest{Path: "memory/profile.md", Content: "Go backend engineer."})
	if err != nil || p.Path != store.ProfilePath || p.Action != "created" {
		t.Fatalf("profile %+v %v", p, err)
	}
	if err := os.WriteFile(env.WS.Abs(store.ProfilePath), []byte("---\nname: 张三\n---\nGo backend engineer.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := m.Get(context.Background(), MemoryRef{Path: "memory/profile"})
	if err != nil {
		t.Fatal(err)
	}
	p, err = m.Write(context.Background(), MemoryWriteRequest{Path: "memory/profile.md", Content: got.Content + "New to frontend.\n"})
	if err != nil || p.Path != store.ProfilePath {
		t.Fatalf("profile update %+v %v", p, err)
	}
	n, _ := env.WS.ReadNote(store.ProfilePath)
	if n.Name() != "张三" || !strings.Contains(n.Content(), "New to frontend.") {
		t.Errorf("profile: %v %q", n.FM.Map(), n.Content())
	}
	// a model may change the profile only with memory.profile_auto
	agent := NewMemory(env, MemorySessionOptions{Agent: true, Source: "[[x.md]]"})
	if _, err := agent.Get(context.Background(), MemoryRef{Path: store.ProfilePath}); err != nil {
		t.Fatal(err)
	}
	if _, err := agent.Write(context.Background(), MemoryWriteRequest{Path: store.ProfilePath, Content: "x"}); err == nil || !strings.Contains(err.Error(), "memory.profile_auto is off") {
		t.Fatalf("agent profile write: %v", err)
	}
	env.Memory.ProfileAuto = true
	if _, err := agent.Write(context.Background(), MemoryWriteRequest{Path: store.ProfilePath, Content: "x"}); err != nil {
		t.Fatalf("agent profile write with profile_auto: %v", err)
	}
	if _, err := os.Stat(filepath.Join(env.WS.Root, "memory", "张三.md")); err == nil {
		t.Error("the profile was renamed after its name")
	}
}

// TestMemoryUnchangedWriteAdoptsTheVersion: with no record of the entry
// (a crash before it was kept), the same write again changes nothing and
// takes the entry as written by reme, so that the next write goes through.
func TestMemoryUnchangedWriteAdoptsTheVersion(t *testing.T) {
	env, _ := newEnv(t, nil)
	first := writeBullets(t, NewMemory(env, MemorySessionOptions{}))
	if err := os.Remove(writtenHashesPath(env)); err != nil {
		t.Fatal(err)
	}
	again := writeBullets(t, NewMemory(env, MemorySessionOptions{}))
	if again.Action != "unchanged" || again.Hash != first.Hash {
		t.Fatalf("%+v", again)
	}
	if _, err := NewMemory(env, MemorySessionOptions{}).Write(context.Background(), MemoryWriteRequest{Name: "answer-format", Description: "Bullets."}); err != nil {
		t.Fatalf("the next write: %v", err)
	}
}

// TestMemoryWriteAcceptsAnEarlierVersionReMeWrote: an undo or a rolled
// back run brings back a version reme wrote earlier; a write over it needs
// no hash, while a hand edit still does.
func TestMemoryWriteAcceptsAnEarlierVersionReMeWrote(t *testing.T) {
	env, _ := newEnv(t, nil)
	first := writeBullets(t, NewMemory(env, MemorySessionOptions{}))
	v1, _ := os.ReadFile(env.WS.Abs(first.Path))
	if _, err := NewMemory(env, MemorySessionOptions{}).Write(context.Background(), MemoryWriteRequest{Name: "answer-format", Description: "Bullets, always."}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(env.WS.Abs(first.Path), v1, 0o644); err != nil { // as reme undo does
		t.Fatal(err)
	}
	if _, err := NewMemory(env, MemorySessionOptions{}).Write(context.Background(), MemoryWriteRequest{Name: "answer-format", Description: "Bullets, mostly."}); err != nil {
		t.Fatalf("over an earlier version reme wrote: %v", err)
	}
	b, _ := os.ReadFile(env.WS.Abs(first.Path))
	if err := os.WriteFile(env.WS.Abs(first.Path), append(b, "Edited by hand.\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := NewMemory(env, MemorySessionOptions{}).Write(context.Background(), MemoryWriteRequest{Name: "answer-format", Description: "Bullets, never."}); !errors.Is(err, ErrStale) {
		t.Fatalf("over a hand edit: %v", err)
	}
}

// TestMemoryWriteMasksSecrets: a key pasted into what an entry says is
// masked before it is written, and the write says so.
func TestMemoryWriteMasksSecrets(t *testing.T) {
	env, _ := newEnv(t, nil)
	res, err := NewMemory(env, MemorySessionOptions{}).Write(context.Background(), MemoryWriteRequest{Type: "reference", Name: "aws",
		Description: "Deploy account keys.", Content: "The deploy user is AKIAIOSFODNN7EXAMPLE with secret in the vault.\npassword=hunter2hunter2\n"})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(env.WS.Abs(res.Path))
	if strings.Contains(string(b), "AKIAIOSFODNN7EXAMPLE") || strings.Contains(string(b), "hunter2hunter2") || !strings.Contains(string(b), "[redacted:aws-access-key]") {
		t.Errorf("entry:\n%s", b)
	}
	if len(res.Notes) != 1 || !strings.Contains(res.Notes[0], "secrets were masked before writing: 1 aws-access-key, 1 password") {
		t.Errorf("notes %q", res.Notes)
	}
}

// TestMemoryWriteProfileIsJournaled: creating the profile is a change of
// the run like any other, so history lists it and undo removes it.
func TestMemoryWriteProfileIsJournaled(t *testing.T) {
	env, _ := newEnv(t, nil)
	m := NewMemory(env, MemorySessionOptions{})
	if p, err := m.Write(context.Background(), MemoryWriteRequest{Path: store.ProfilePath, Content: "Likes tea."}); err != nil || p.Action != "created" {
		t.Fatalf("%+v %v", p, err)
	}
	id, err := env.Journal.LastRun()
	if err != nil {
		t.Fatal(err)
	}
	run, err := env.Journal.FindRun(id)
	if err != nil {
		t.Fatal(err)
	}
	created := false
	for _, c := range run.Changes {
		created = created || (c.Path == store.ProfilePath && c.Action == store.ActionCreate)
	}
	if !created {
		t.Fatalf("the run does not record the profile: %+v", run.Changes)
	}
	if _, err := env.Journal.Undo(id, false, "test"); err != nil {
		t.Fatal(err)
	}
	if env.WS.Exists(store.ProfilePath) {
		t.Error("undo left the profile")
	}
}
