package index

import (
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/reme-dev/reme/store"
)

func moveFiles() map[string]string {
	return map[string]string{
		"daily/2026-06-20/old-name.md": card("old-name", "the card being renamed", "Self link [[daily/2026-06-20/old-name.md#Top]].\n"),
		"daily/2026-06-20/other.md": card("other", "links to it", "See [[daily/2026-06-20/old-name.md]], "+
			"![[daily/2026-06-20/old-name.md]], [[daily/2026-06-20/old-name.md#Decisions|the decisions]], "+
			"[[old-name]] (short form, as Obsidian writes it) and `[[daily/2026-06-20/old-name.md]]` in code.\n"),
		"digest/wiki/topic.md":          "---\nname: [broken yaml\n---\n\nsource: [[daily/2026-06-20/old-name.md|card]]\n",
		"daily/2026-06-19/unrelated.md": card("unrelated", "no links", "nothing here\n"),
	}
}

// snapshot reads every file of the workspace except derived state.
func snapshot(t *testing.T, ws *store.Workspace) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(ws.Root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(ws.Root, p)
		if d.IsDir() && rel == store.MetadataDir {
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

func TestMoveRetargetsInboundLinks(t *testing.T) {
	ws := newWorkspace(t, moveFiles())
	ix := openIndex(t, ws, Options{})
	mustSync(t, ix)
	if _, err := ws.RefreshDayIndex("2026-06-20"); err != nil {
		t.Fatal(err)
	}
	res, err := ix.Move(ctx, "daily/2026-06-20/old-name.md", "daily/2026-06-20/new-name.md", MoveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wantBy := map[string]int{"daily/2026-06-20.md": 1, "daily/2026-06-20/other.md": 4, "digest/wiki/topic.md": 1}
	if !cmp.Equal(res.Retarget.ByFile, wantBy) || res.Retarget.LinksChanged != 6 || !res.SrcRemoved {
		t.Errorf("result %+v by_file %v", res, res.Retarget.ByFile)
	}
	files := snapshot(t, ws)
	if _, ok := files["daily/2026-06-20/old-name.md"]; ok {
		t.Error("source still exists")
	}
	wantOther := card("other", "links to it", "See [[daily/2026-06-20/new-name.md]], "+
		"![[daily/2026-06-20/new-name.md]], [[daily/2026-06-20/new-name.md#Decisions|the decisions]], "+
		"[[new-name]] (short form, as Obsidian writes it) and `[[daily/2026-06-20/old-name.md]]` in code.\n")
	if diff := cmp.Diff(wantOther, files["daily/2026-06-20/other.md"]); diff != "" {
		t.Errorf("other.md (-want +got):\n%s", diff)
	}
	if got := files["digest/wiki/topic.md"]; got != "---\nname: [broken yaml\n---\n\nsource: [[daily/2026-06-20/new-name.md|card]]\n" {
		t.Errorf("a note with broken YAML must keep its header bytes: %q", got)
	}
	if !strings.Contains(files["daily/2026-06-20/new-name.md"], "[[daily/2026-06-20/new-name.md#Top]]") {
		t.Error("the moved note's link to itself was not retargeted")
	}
	if !strings.Contains(files["daily/2026-06-20.md"], "- [[daily/2026-06-20/new-name.md]] name: old-name") {
		t.Errorf("day index not refreshed:\n%s", files["daily/2026-06-20.md"])
	}
	// the index answers for the new path right away
	in, err := ix.inboundSources(ctx, "daily/2026-06-20/new-name.md")
	if err != nil {
		t.Fatal(err)
	}
	if !cmp.Equal(in, []string{"daily/2026-06-20.md", "daily/2026-06-20/other.md", "digest/wiki/topic.md"}) {
		t.Errorf("inbound after move %v", in)
	}
	if old, _ := ix.inboundSources(ctx, "daily/2026-06-20/old-name.md"); len(old) != 0 {
		t.Errorf("links to the old path remain: %v", old)
	}
	if rep := mustSync(t, ix); rep.Added+rep.Modified+rep.Deleted != 0 {
		t.Errorf("index was not up to date after the move: %+v", rep)
	}
}

func TestMoveWithoutRetargetLeavesLinks(t *testing.T) {
	ws := newWorkspace(t, moveFiles())
	ix := openIndex(t, ws, Options{})
	if _, err := ix.Move(ctx, "daily/2026-06-20/old-name.md", "daily/2026-06-21/old-name.md", MoveOptions{NoRetarget: true}); err != nil {
		t.Fatal(err)
	}
	if got := snapshot(t, ws)["daily/2026-06-20/other.md"]; got != moveFiles()["daily/2026-06-20/other.md"] {
		t.Error("links were rewritten although retargeting was off")
	}
}

func TestMoveRefusals(t *testing.T) {
	ws := newWorkspace(t, moveFiles())
	ix := openIndex(t, ws, Options{})
	before := snapshot(t, ws)
	tests := []struct {
		src, dst string
		opt      MoveOptions
		want     error
	}{
		{"daily/2026-06-20/old-name.md", "daily/2026-06-20/other.md", MoveOptions{}, ErrDestinationExists},
		{"daily/2026-06-20/old-name.md", "daily/2026-06-20/old-name.md", MoveOptions{}, ErrSamePath},
		{"daily/2026-06-20/old-name.md", "bare.md", MoveOptions{}, ErrNeedsDirectory},
		{"daily/2026-06-20/missing.md", "daily/2026-06-20/x.md", MoveOptions{}, store.ErrNotFound},
		{"daily/2026-06-20/old-name.md", "../outside/x.md", MoveOptions{}, store.ErrOutsideWorkspace},
		{"daily/2026-06-20/old-name.md", "daily/2026-06-20/a#b.md", MoveOptions{}, store.ErrInvalidPath},
		{"daily/2026-06-20/old-name.md", "daily/2026-06-20", MoveOptions{Overwrite: true}, ErrIsDirectory},
	}
	for _, tt := range tests {
		if _, err := ix.Move(ctx, tt.src, tt.dst, tt.opt); !errors.Is(err, tt.want) {
			t.Errorf("move %s → %s: %v, want %v", tt.src, tt.dst, err, tt.want)
		}
	}
	if diff := cmp.Diff(before, snapshot(t, ws)); diff != "" {
		t.Errorf("a refused move changed files:\n%s", diff)
	}
	if runs, _ := ix.Journal().Runs(); len(runs) != 0 {
		t.Errorf("a refused move was journaled: %+v", runs)
	}
}

var errCrash = errors.New("simulated crash")

// TestMoveCrashAtEveryStep stops a move after each of its steps (as a
// kill -9 would: no cleanup runs) and checks that the next command finishes
// it: files and index end exactly as after an uninterrupted move.
func TestMoveCrashAtEveryStep(t *testing.T) {
	const src, dst = "daily/2026-06-20/old-name.md", "daily/2026-06-20/new-name.md"
	ref := newWorkspace(t, moveFiles())
	refIx := openIndex(t, ref, Options{})
	if _, err := refIx.Move(ctx, src, dst, MoveOptions{}); err != nil {
		t.Fatal(err)
	}
	wantFiles := snapshot(t, ref)
	wantDump, err := refIx.Dump(ctx)
	if err != nil {
		t.Fatal(err)
	}

	// Discover the steps by recording them.
	var steps []string
	rec := newWorkspace(t, moveFiles())
	recIx := openIndex(t, rec, Options{Fault: func(s string) error { steps = append(steps, s); return nil }})
	if _, err := recIx.Move(ctx, src, dst, MoveOptions{}); err != nil {
		t.Fatal(err)
	}
	if len(steps) < 6 {
		t.Fatalf("only %d steps recorded: %v", len(steps), steps)
	}
	for _, step := range steps {
		t.Run(step, func(t *testing.T) {
			ws := newWorkspace(t, moveFiles())
			ix := openIndex(t, ws, Options{Fault: func(s string) error {
				if s == step {
					return errCrash
				}
				return nil
			}})
			if _, err := ix.Move(ctx, src, dst, MoveOptions{}); !errors.Is(err, errCrash) {
				t.Fatalf("move did not stop at %s: %v", step, err)
			}
			ix.Close()
			if open, _ := os.ReadDir(filepath.Join(ws.Root, "metadata", "journal", "open")); len(open) != 1 {
				t.Fatalf("no open run after a crash at %s", step)
			}
			// the next command: open (recovers), then sync as every reader does
			next := openIndex(t, ws, Options{})
			mustSync(t, next)
			if diff := cmp.Diff(wantFiles, snapshot(t, ws)); diff != "" {
				t.Errorf("files after recovery differ (-want +got):\n%s", diff)
			}
			got, err := next.Dump(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(stripStats(wantDump), stripStats(got)); diff != "" {
				t.Errorf("index after recovery differs (-want +got):\n%s", diff)
			}
			checkLinkRows(t, next)
			runs, err := next.Journal().Runs()
			if err != nil || len(runs) != 1 || runs[0].Status != store.StatusFinished {
				t.Errorf("run after recovery: %+v %v", runs, err)
			}
			if open, _ := os.ReadDir(filepath.Join(ws.Root, "metadata", "journal", "open")); len(open) != 0 {
				t.Error("the run is still open after recovery")
			}
		})
	}
}

// stripStats drops mtimes (and the scan cache built from them), which
// differ between two workspaces with the same content.
func stripStats(dump string) string {
	var out []string
	section := ""
	for _, line := range strings.Split(dump, "\n") {
		if strings.HasPrefix(line, "== ") {
			section = line
			out = append(out, line)
			continue
		}
		switch section {
		case "== scan":
			continue
		case "== notes":
			f := strings.Split(line, "\t")
			if len(f) > 6 {
				f[6] = "mtime"
			}
			line = strings.Join(f, "\t")
		}
		out = append(out, line)
	}
	return strings.Join(out, "\n")
}

func TestDeleteReportsInboundLinks(t *testing.T) {
	ws := newWorkspace(t, moveFiles())
	ix := openIndex(t, ws, Options{})
	mustSync(t, ix)
	if _, err := ws.RefreshDayIndex("2026-06-20"); err != nil {
		t.Fatal(err)
	}
	res, err := ix.Delete(ctx, "daily/2026-06-20/old-name.md", false)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{"daily/2026-06-20/other.md": 4, "digest/wiki/topic.md": 1}
	if !cmp.Equal(res.Inbound.ByFile, want) || res.Inbound.LinksTotal != 5 || res.Inbound.FilesTouched != 2 {
		t.Errorf("inbound %+v (the refreshed day index must not be counted)", res.Inbound)
	}
	if ws.Exists("daily/2026-06-20/old-name.md") {
		t.Error("file still there")
	}
	if got := snapshot(t, ws)["daily/2026-06-20.md"]; strings.Contains(got, "old-name") {
		t.Errorf("day index still lists the card:\n%s", got)
	}
	if _, err := ix.Delete(ctx, "daily/2026-06-20/old-name.md", false); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("second delete: %v", err)
	}
	if _, err := ix.Delete(ctx, "daily/2026-06-20", false); !errors.Is(err, ErrIsDirectory) {
		t.Errorf("folder without --recursive: %v", err)
	}
}

func TestDeleteFolderReportsOnlyOutsideLinks(t *testing.T) {
	ws := newWorkspace(t, moveFiles())
	ix := openIndex(t, ws, Options{})
	res, err := ix.Delete(ctx, "daily/2026-06-20", true)
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(res.Files)
	if !cmp.Equal(res.Files, []string{"daily/2026-06-20/old-name.md", "daily/2026-06-20/other.md"}) {
		t.Errorf("files %v", res.Files)
	}
	if !cmp.Equal(res.Inbound.ByFile, map[string]int{"digest/wiki/topic.md": 1}) {
		t.Errorf("inbound %v", res.Inbound.ByFile)
	}
	if n := len(search(t, ix, "renamed", SearchOptions{})); n != 0 {
		t.Errorf("deleted notes still found: %d", n)
	}
}

func TestMoveUndoRestoresFilesAndIndex(t *testing.T) {
	ws := newWorkspace(t, moveFiles())
	ix := openIndex(t, ws, Options{})
	mustSync(t, ix)
	if _, err := ws.RefreshDayIndex("2026-06-20"); err != nil {
		t.Fatal(err)
	}
	mustSync(t, ix)
	before := snapshot(t, ws)
	wantDump, err := ix.Dump(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ix.Move(ctx, "daily/2026-06-20/old-name.md", "daily/2026-06-21/new-name.md", MoveOptions{}); err != nil {
		t.Fatal(err)
	}
	last, err := ix.Journal().LastRun()
	if err != nil {
		t.Fatal(err)
	}
	res, err := ix.Journal().Undo(last, false, store.TriggerCLI)
	if err != nil {
		t.Fatal(err)
	}
	if err := ix.UpdatePaths(ctx, res.Restored...); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(before, snapshot(t, ws)); diff != "" {
		t.Errorf("undo of a move (-want +got):\n%s", diff)
	}
	got, _ := ix.Dump(ctx)
	if diff := cmp.Diff(stripStats(wantDump), stripStats(got)); diff != "" {
		t.Errorf("index after undo (-want +got):\n%s", diff)
	}
}

func TestDeleteIsUndoable(t *testing.T) {
	ws := newWorkspace(t, moveFiles())
	ix := openIndex(t, ws, Options{})
	before := snapshot(t, ws)
	if _, err := ix.Delete(ctx, "daily/2026-06-20", true); err != nil {
		t.Fatal(err)
	}
	last, _ := ix.Journal().LastRun()
	if _, err := ix.Journal().Undo(last, false, store.TriggerCLI); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(before, snapshot(t, ws)); diff != "" {
		t.Errorf("undo of a delete (-want +got):\n%s", diff)
	}
}

// A move journal left by an earlier version is finished and carried over.
func TestLegacyMoveJournalIsFinished(t *testing.T) {
	ws := newWorkspace(t, moveFiles())
	const src, dst = "daily/2026-06-20/old-name.md", "daily/2026-06-20/new-name.md"
	legacy := `{"src":"` + src + `","dst":"` + dst + `","retarget":true,"inbound":["daily/2026-06-20/other.md"],"started":"2026-06-20T10:00:00Z"}`
	if err := os.WriteFile(filepath.Join(ws.Root, "metadata", "move.journal.json"), []byte(legacy), 0o644); err != nil {
		t.Fatal(err)
	}
	ix := openIndex(t, ws, Options{})
	files := snapshot(t, ws)
	if _, ok := files[src]; ok {
		t.Error("the interrupted move was not finished")
	}
	if !strings.Contains(files["daily/2026-06-20/other.md"], "[["+dst+"]]") {
		t.Error("inbound links not retargeted")
	}
	if _, err := os.Stat(filepath.Join(ws.Root, "metadata", "move.journal.json")); err == nil {
		t.Error("the old journal file is still there")
	}
	runs, _ := ix.Journal().Runs()
	if len(runs) != 1 || runs[0].Command != "move" || runs[0].Status != store.StatusOK {
		t.Errorf("runs %+v", runs)
	}
}

// A move journal whose files are both gone used to block every command.
func TestInapplicableMoveJournalIsSetAside(t *testing.T) {
	ws := newWorkspace(t, moveFiles())
	legacy := `{"src":"daily/2026-06-20/gone.md","dst":"daily/2026-06-20/also-gone.md","retarget":true}`
	jp := filepath.Join(ws.Root, "metadata", "move.journal.json")
	if err := os.WriteFile(jp, []byte(legacy), 0o644); err != nil {
		t.Fatal(err)
	}
	var logs strings.Builder
	ix, err := Open(ctx, ws, schemaText(t), Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatalf("an inapplicable journal blocked the workspace: %v", err)
	}
	defer ix.Close()
	mustSync(t, ix)
	if _, err := os.Stat(jp); err == nil {
		t.Error("journal still in place")
	}
	aside, _ := filepath.Glob(jp + ".inapplicable-*")
	if len(aside) != 1 {
		t.Fatalf("journal not set aside: %v", aside)
	}
	if !strings.Contains(logs.String(), filepath.Base(aside[0])) {
		t.Errorf("the warning does not name the file set aside: %s", logs.String())
	}
	// and the next command is not bothered again
	ix2 := openIndex(t, ws, Options{})
	mustSync(t, ix2)
}

// Paths in a journal are checked like user input: a crafted journal must
// not copy a file from outside the workspace into it.
func TestCraftedMoveJournalCannotReachOutside(t *testing.T) {
	outside := filepath.Join(t.TempDir(), "secret.txt")
	if err := os.WriteFile(outside, []byte("root:x:0:0"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, src := range []string{outside, "../../../../../../../../" + outside, "daily/../../" + filepath.Base(outside)} {
		ws := newWorkspace(t, moveFiles())
		before := snapshot(t, ws)
		b, _ := json.Marshal(map[string]any{"src": src, "dst": "daily/2026-06-20/stolen.md", "retarget": false})
		jp := filepath.Join(ws.Root, "metadata", "move.journal.json")
		if err := os.WriteFile(jp, b, 0o644); err != nil {
			t.Fatal(err)
		}
		ix := openIndex(t, ws, Options{})
		if diff := cmp.Diff(before, snapshot(t, ws)); diff != "" {
			t.Errorf("src %q: a crafted journal changed the workspace:\n%s", src, diff)
		}
		if aside, _ := filepath.Glob(jp + ".inapplicable-*"); len(aside) != 1 {
			t.Errorf("src %q: crafted journal not set aside", src)
		}
		ix.Close()
	}
}

// The same holds for a plan in the new journal.
func TestCraftedRunPlanIsSetAside(t *testing.T) {
	ws := newWorkspace(t, moveFiles())
	outside := filepath.Join(t.TempDir(), "secret.txt")
	os.WriteFile(outside, []byte("secret"), 0o644)
	before := snapshot(t, ws)
	j := store.NewJournal(ws, store.JournalOptions{})
	plan, _ := json.Marshal(map[string]any{"src": outside, "dst": "daily/2026-06-20/stolen.md"})
	crash := errors.New("crash")
	jc := store.NewJournal(ws, store.JournalOptions{Fault: func(string) error { return crash }})
	run, err := jc.Begin(store.RunInfo{Command: "move", Plan: plan})
	if err != nil {
		t.Fatal(err)
	}
	run.Fault("x") // dies here
	run.End(crash)
	ix := openIndex(t, ws, Options{})
	mustSync(t, ix)
	if diff := cmp.Diff(before, snapshot(t, ws)); diff != "" {
		t.Errorf("a crafted plan changed the workspace:\n%s", diff)
	}
	s, err := j.FindRun(run.ID)
	if err != nil || s.Status != store.StatusAbandoned {
		t.Errorf("run %+v %v", s, err)
	}
}
