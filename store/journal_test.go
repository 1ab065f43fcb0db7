package store

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

var errCrash = errors.New("simulated crash")

func journalWorkspace(t testing.TB, files map[string]string) *Workspace {
	t.Helper()
	ws, err := OpenWorkspace(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := ws.Init(); err != nil {
		t.Fatal(err)
	}
	for p, c := range files {
		if err := ws.WriteFile(p, []byte(c)); err != nil {
			t.Fatal(err)
		}
	}
	return ws
}

// tree reads every file outside metadata/.
func tree(t *testing.T, ws *Workspace) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(ws.Root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(ws.Root, p)
		if d.IsDir() && rel == MetadataDir {
			return filepath.SkipDir
		}
		if d.Type().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			out[filepath.ToSlash(rel)] = string(b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func fixedClock() func() time.Time {
	t := time.Date(2026, 6, 22, 10, 0, 0, 0, time.UTC)
	return func() time.Time { t = t.Add(time.Second); return t }
}

func newTestJournal(ws *Workspace, fault func(string) error) *Journal {
	return NewJournal(ws, JournalOptions{Now: fixedClock(), Fault: fault})
}

var journalFiles = map[string]string{
	"daily/2026-06-20/a.md": "---\nname: a\n---\n\nalpha\n",
	"daily/2026-06-20/b.md": "bravo\r\nwith CRLF and no final newline",
	"digest/wiki/c.md":      "charlie\n",
}

// changeAll is a run that touches files in every way a run can.
func changeAll(r *Run) error {
	if err := r.WriteFile("daily/2026-06-20/a.md", []byte("---\nname: a\n---\n\nalpha, edited\n"), Why{Reason: "edit"}); err != nil {
		return err
	}
	if err := r.WriteFile("daily/2026-06-21/new.md", []byte("brand new\n"), Why{Reason: "create", Model: "m1", Prompt: "p1"}); err != nil {
		return err
	}
	if err := r.Remove("daily/2026-06-20/b.md", Why{Reason: "delete"}); err != nil {
		return err
	}
	if err := r.Rename("digest/wiki/c.md", "archive/digest/wiki/c.md", []byte("charlie (archived)\n"), ActionArchive, false, Why{Reason: "archive"}); err != nil {
		return err
	}
	// a second change to a file the run already changed
	return r.WriteFile("daily/2026-06-20/a.md", []byte("third version\n"), Why{Reason: "again"})
}

func TestJournalUndoRestoresEveryFile(t *testing.T) {
	ws := journalWorkspace(t, journalFiles)
	before := tree(t, ws)
	j := newTestJournal(ws, nil)
	r, err := j.Begin(RunInfo{Command: "test", Trigger: TriggerCron, Model: "default-model"})
	if err != nil {
		t.Fatal(err)
	}
	if err := changeAll(r); err != nil {
		t.Fatal(err)
	}
	if err := r.End(nil); err != nil {
		t.Fatal(err)
	}
	after := tree(t, ws)
	if _, ok := after["archive/digest/wiki/c.md"]; !ok || after["daily/2026-06-20/a.md"] != "third version\n" {
		t.Fatalf("run did not apply: %v", after)
	}
	sum, err := j.FindRun(r.ID)
	if err != nil {
		t.Fatal(err)
	}
	var actions []string
	for _, c := range sum.Changes {
		actions = append(actions, c.Action+" "+c.Path)
	}
	want := []string{"update daily/2026-06-20/a.md", "create daily/2026-06-21/new.md", "delete daily/2026-06-20/b.md",
		"archive archive/digest/wiki/c.md", "update daily/2026-06-20/a.md"}
	if diff := cmp.Diff(want, actions); diff != "" {
		t.Errorf("journal lines (-want +got):\n%s", diff)
	}
	if sum.Status != StatusOK || sum.Trigger != TriggerCron || sum.Changes[1].Model != "m1" || sum.Changes[0].Model != "default-model" {
		t.Errorf("summary %+v", sum)
	}
	if _, err := os.Stat(filepath.Join(ws.Root, "metadata/journal/open", r.ID+".lock")); err == nil {
		t.Error("an ended run left its lock")
	}

	last, err := j.LastRun()
	if err != nil || last != r.ID {
		t.Fatalf("last run %q %v", last, err)
	}
	res, err := j.Undo(last, false, TriggerCLI)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(before, tree(t, ws)); diff != "" {
		t.Errorf("undo did not restore byte for byte (-want +got):\n%s", diff)
	}
	if len(res.Restored) == 0 || len(res.Conflicts) != 0 {
		t.Errorf("undo result %+v", res)
	}
	// the undo is a run of its own, and undoing it redoes the change
	if last, _ := j.LastRun(); last != res.Run {
		t.Errorf("last run after undo is %s, want the undo %s", last, res.Run)
	}
	if _, err := j.Undo(res.Run, false, TriggerCLI); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(after, tree(t, ws)); diff != "" {
		t.Errorf("undo of the undo (-want +got):\n%s", diff)
	}
}

func TestJournalUndoRefusesAFileChangedSince(t *testing.T) {
	ws := journalWorkspace(t, journalFiles)
	j := newTestJournal(ws, nil)
	r, _ := j.Begin(RunInfo{Command: "test"})
	if err := changeAll(r); err != nil {
		t.Fatal(err)
	}
	r.End(nil)
	// hand edits after the run
	if err := ws.WriteFile("daily/2026-06-21/new.md", []byte("edited by hand\n")); err != nil {
		t.Fatal(err)
	}
	edited := tree(t, ws)
	_, err := j.Undo(r.ID, false, TriggerCLI)
	if !errors.Is(err, ErrChangedSince) || !strings.Contains(err.Error(), "daily/2026-06-21/new.md") {
		t.Fatalf("undo over a hand edit: %v", err)
	}
	if diff := cmp.Diff(edited, tree(t, ws)); diff != "" {
		t.Errorf("a refused undo changed files:\n%s", diff)
	}
	// --force restores, and the hand edit stays recoverable by undoing the undo
	res, err := j.Undo(r.ID, true, TriggerCLI)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(journalFiles, tree(t, ws)); diff != "" {
		t.Errorf("forced undo (-want +got):\n%s", diff)
	}
	if !cmp.Equal(res.Conflicts, []string{"daily/2026-06-21/new.md"}) {
		t.Errorf("conflicts %v", res.Conflicts)
	}
	if _, err := j.Undo(res.Run, false, TriggerCLI); err != nil {
		t.Fatal(err)
	}
	if got := tree(t, ws)["daily/2026-06-21/new.md"]; got != "edited by hand\n" {
		t.Errorf("hand edit lost: %q", got)
	}
}

func TestJournalCorruptLinesNeverBlockOtherRuns(t *testing.T) {
	ws := journalWorkspace(t, journalFiles)
	var logBuf bytes.Buffer
	j := NewJournal(ws, JournalOptions{Now: fixedClock(), Log: slog.New(slog.NewTextHandler(&logBuf, nil))})
	r1, _ := j.Begin(RunInfo{Command: "first"})
	if err := r1.WriteFile("digest/wiki/c.md", []byte("c2\n"), Why{}); err != nil {
		t.Fatal(err)
	}
	r1.End(nil)
	month := filepath.Join(ws.Root, "metadata/journal", monthOf(r1.ID)+".jsonl")
	f, err := os.OpenFile(month, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	// garbage, a line naming a file outside the workspace, and a torn tail
	hostile := fmt.Sprintf(`{"run":%q,"kind":"change","action":"update","path":"../../etc/passwd","sha256_before":"%s"}`, r1.ID, strings.Repeat("a", 64))
	fmt.Fprintf(f, "not json at all\n%s\n{\"run\":\"2026", hostile)
	f.Close()
	r2, err := j.Begin(RunInfo{Command: "second"})
	if err != nil {
		t.Fatal(err)
	}
	if err := r2.WriteFile("daily/2026-06-20/a.md", []byte("a2\n"), Why{}); err != nil {
		t.Fatal(err)
	}
	r2.End(nil)
	runs, err := j.Runs()
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 2 || runs[1].ID != r2.ID || len(runs[1].Changes) != 1 {
		t.Fatalf("runs %+v", runs)
	}
	if !strings.Contains(logBuf.String(), "skipping a journal line") {
		t.Error("no warning for the corrupt lines")
	}
	if _, err := j.Undo(r2.ID, false, TriggerCLI); err != nil {
		t.Fatalf("a corrupt line blocked the undo of another run: %v", err)
	}
	if got := tree(t, ws)["daily/2026-06-20/a.md"]; got != journalFiles["daily/2026-06-20/a.md"] {
		t.Errorf("a.md %q", got)
	}
	// the run with an unreadable line is undone only with --force
	if _, err := j.Undo(r1.ID, false, TriggerCLI); err == nil || !strings.Contains(err.Error(), "cannot be read") {
		t.Errorf("undo of a run with an unreadable line: %v", err)
	}
	if _, err := j.Undo(r1.ID, true, TriggerCLI); err != nil {
		t.Fatal(err)
	}
	if got := tree(t, ws)["digest/wiki/c.md"]; got != "charlie\n" {
		t.Errorf("c.md %q", got)
	}
}

func TestJournalRefusesPathsOutsideTheWorkspace(t *testing.T) {
	ws := journalWorkspace(t, journalFiles)
	j := newTestJournal(ws, nil)
	r, _ := j.Begin(RunInfo{Command: "test"})
	defer r.End(nil)
	for _, p := range []string{"../x.md", "/etc/passwd", "metadata/index.db", "daily/../../x", "daily/a:b.md"} {
		if err := r.WriteFile(p, []byte("x"), Why{}); err == nil {
			t.Errorf("write %s accepted", p)
		}
	}
	if r.Err() != nil {
		t.Errorf("a refused path stopped the run: %v", r.Err())
	}
}

// TestJournalCrashAtEveryStep stops a run after each step, as kill -9
// would, and checks that the next command rolls back exactly what happened.
func TestJournalCrashAtEveryStep(t *testing.T) {
	var steps []string
	ws := journalWorkspace(t, journalFiles)
	rec := newTestJournal(ws, func(s string) error { steps = append(steps, s); return nil })
	r, _ := rec.Begin(RunInfo{Command: "test"})
	if err := changeAll(r); err != nil {
		t.Fatal(err)
	}
	r.End(nil)
	if len(steps) < 10 {
		t.Fatalf("steps %v", steps)
	}
	for i, step := range steps {
		t.Run(fmt.Sprint(i, " ", step), func(t *testing.T) {
			ws := journalWorkspace(t, journalFiles)
			seen := 0
			j := newTestJournal(ws, func(s string) error {
				if seen++; seen == i+1 {
					return errCrash
				}
				return nil
			})
			r, _ := j.Begin(RunInfo{Command: "test"})
			if err := changeAll(r); !errors.Is(err, errCrash) {
				t.Fatalf("did not stop: %v", err)
			}
			r.End(errCrash)
			// the next command
			next := newTestJournal(ws, nil)
			orphans, err := next.Orphans()
			if err != nil || len(orphans) != 1 {
				t.Fatalf("orphans %v %v", orphans, err)
			}
			if _, err := orphans[0].Rollback(); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(journalFiles, tree(t, ws)); diff != "" {
				t.Errorf("rollback (-want +got):\n%s", diff)
			}
			if o, _ := next.Orphans(); len(o) != 0 {
				t.Errorf("still orphaned: %d", len(o))
			}
			s, _ := next.FindRun(r.ID)
			if s.Status != StatusRolledBack {
				t.Errorf("status %s", s.Status)
			}
			if _, err := next.Undo(r.ID, false, TriggerCLI); err == nil {
				t.Error("a rolled back run was undone")
			}
		})
	}
}

func TestJournalLeavesLiveRunsAlone(t *testing.T) {
	ws := journalWorkspace(t, journalFiles)
	j := newTestJournal(ws, nil)
	r, _ := j.Begin(RunInfo{Command: "long"})
	if err := r.WriteFile("digest/wiki/c.md", []byte("x\n"), Why{}); err != nil {
		t.Fatal(err)
	}
	other := newTestJournal(ws, nil)
	if o, err := other.Orphans(); err != nil || len(o) != 0 {
		t.Fatalf("a live run was taken over: %v %v", o, err)
	}
	if err := r.End(nil); err != nil {
		t.Fatal(err)
	}
	if got := tree(t, ws)["digest/wiki/c.md"]; got != "x\n" {
		t.Errorf("live run's change lost: %q", got)
	}
}

func TestJournalRollbackLeavesHandEditsAlone(t *testing.T) {
	ws := journalWorkspace(t, journalFiles)
	crashAt := 0
	j := newTestJournal(ws, func(s string) error {
		if crashAt++; s == "applied daily/2026-06-21/new.md" {
			return errCrash
		}
		return nil
	})
	r, _ := j.Begin(RunInfo{Command: "test"})
	changeAll(r)
	r.End(errCrash)
	ws.WriteFile("daily/2026-06-21/new.md", []byte("hand edit after the crash\n"))
	var logBuf bytes.Buffer
	next := NewJournal(ws, JournalOptions{Log: slog.New(slog.NewTextHandler(&logBuf, nil))})
	orphans, _ := next.Orphans()
	if len(orphans) != 1 {
		t.Fatal("no orphan")
	}
	if _, err := orphans[0].Rollback(); !errors.Is(err, ErrChangedSince) {
		t.Fatalf("rollback over a hand edit: %v", err)
	}
	if got := tree(t, ws)["daily/2026-06-21/new.md"]; got != "hand edit after the crash\n" {
		t.Errorf("hand edit overwritten: %q", got)
	}
	// set aside: recovery made progress and does not try again
	if o, _ := next.Orphans(); len(o) != 0 {
		t.Error("abandoned run is still pending")
	}
	s, _ := next.FindRun(r.ID)
	if s.Status != StatusAbandoned || !strings.Contains(s.Error, "daily/2026-06-21/new.md") {
		t.Errorf("status %s %q", s.Status, s.Error)
	}
}

func TestJournalPrune(t *testing.T) {
	ws := journalWorkspace(t, journalFiles)
	j := newTestJournal(ws, nil)
	r, _ := j.Begin(RunInfo{Command: "test"})
	changeAll(r)
	r.End(nil)
	res, err := j.Prune(time.Now().Add(time.Hour), false)
	if err != nil {
		t.Fatal(err)
	}
	if res.Objects != 4 || res.Bytes == 0 { // a.md twice, b.md, c.md
		t.Errorf("prune %+v", res)
	}
	if _, err := j.Undo(r.ID, false, TriggerCLI); !errors.Is(err, ErrPreimageMissing) {
		t.Errorf("undo after prune: %v", err)
	}
	// a prune with a cutoff before the run keeps everything
	ws2 := journalWorkspace(t, journalFiles)
	j2 := newTestJournal(ws2, nil)
	r2, _ := j2.Begin(RunInfo{Command: "test"})
	changeAll(r2)
	r2.End(nil)
	if res, _ := j2.Prune(time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC), false); res.Objects != 0 {
		t.Errorf("pruned recent preimages: %+v", res)
	}
}

// A preimage stored again (a new change needs the same old bytes) counts
// as new for a prune that runs meanwhile: its line may not be written yet,
// so only the file's time keeps the prune from taking it.
func TestJournalPruneKeepsObjectStoredAgain(t *testing.T) {
	ws := journalWorkspace(t, nil)
	j := newTestJournal(ws, nil)
	data := []byte("old version\n")
	sum := Sum(data)
	if err := j.storeObject(sum, data); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-48 * time.Hour)
	if err := os.Chtimes(j.ObjectPath(sum), old, old); err != nil {
		t.Fatal(err)
	}
	if err := j.storeObject(sum, data); err != nil {
		t.Fatal(err)
	}
	res, err := j.Prune(time.Now().Add(-24*time.Hour), false)
	if err != nil {
		t.Fatal(err)
	}
	if res.Objects != 0 {
		t.Errorf("pruned %d object(s)", res.Objects)
	}
	if _, err := j.Object(sum); err != nil {
		t.Errorf("preimage stored again was pruned: %v", err)
	}
}

// BenchmarkJournal1000Changes journals 1,000 updates of 2 KB notes (the
// size of a typical card) and reports the journal's size per 1,000
// changes: the JSONL lines, and the preimages (one copy of each old
// version, deduplicated by content).
func BenchmarkJournal1000Changes(b *testing.B) {
	base := strings.Repeat("a typical card line with some words in it\n", 48) // ~2 KB
	var lineBytes, objectBytes int64
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		ws := journalWorkspace(b, nil)
		for k := 0; k < 100; k++ {
			ws.WriteFile(fmt.Sprintf("daily/2026-06-%02d/card-%03d.md", k%28+1, k), []byte(base+fmt.Sprint(k)))
		}
		j := NewJournal(ws, JournalOptions{})
		r, err := j.Begin(RunInfo{Command: "bench", Trigger: TriggerCron})
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		for c := 0; c < 1000; c++ {
			p := fmt.Sprintf("daily/2026-06-%02d/card-%03d.md", (c%100)%28+1, c%100)
			if err := r.WriteFile(p, []byte(base+fmt.Sprint(c%100, "v", c)), Why{Reason: "maintain: an edit", Model: "command-a-03-2025", Prompt: "maintain-review/1"}); err != nil {
				b.Fatal(err)
			}
		}
		r.End(nil)
		b.StopTimer()
		lineBytes, objectBytes = dirSize(b, filepath.Join(ws.Root, "metadata/journal"), ".jsonl"), dirSize(b, filepath.Join(ws.Root, "metadata/journal/objects"), "")
	}
	b.ReportMetric(float64(lineBytes)/1024, "KB-lines/1000")
	b.ReportMetric(float64(objectBytes)/1024, "KB-preimages/1000")
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/1000, "µs/change")
}

func dirSize(tb testing.TB, dir, suffix string) int64 {
	var n int64
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() && strings.HasSuffix(p, suffix) {
			if info, err := d.Info(); err == nil {
				n += info.Size()
			}
		}
		return nil
	})
	return n
}

// A run lock being created (opened, not yet locked) must not be taken for
// one that a dead process left: only an old one is removed.
func TestJournalKeepsALockBeingCreated(t *testing.T) {
	ws := journalWorkspace(t, nil)
	dir := filepath.Join(ws.Root, "metadata/journal/open")
	os.MkdirAll(dir, 0o755)
	young := filepath.Join(dir, ".20260622T100000Z-aaaaaa.tmp")
	old := filepath.Join(dir, ".20260622T100000Z-bbbbbb.tmp")
	for _, p := range []string{young, old} {
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	past := time.Now().Add(-time.Hour)
	os.Chtimes(old, past, past)
	if _, err := newTestJournal(ws, nil).Orphans(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(young); err != nil {
		t.Error("a lock being created was removed")
	}
	if _, err := os.Stat(old); err == nil {
		t.Error("a lock left by a dead process was kept")
	}
}
