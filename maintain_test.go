package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/reme-dev/reme/jobs"
	"github.com/reme-dev/reme/jobs/llm/llmtest"
	"github.com/reme-dev/reme/store"
	"github.com/rogpeppe/go-internal/testscript"
)

// seedMemory writes a workspace for maintain: cards daily cards (five a
// day, from 2026-06-01) and entries long-term entries, all different.
func seedMemory(root string, cards, entries int) error {
	topics := []string{"deploy", "search", "billing", "login", "oncall", "roadmap", "editor"}
	for i := 0; i < cards; i++ {
		date := fmt.Sprintf("2026-06-%02d", i/5+1)
		p := filepath.Join(root, "daily", date, fmt.Sprintf("card-%03d.md", i))
		body := fmt.Sprintf("---\nname: card-%03d\ndescription: card %d about %s\n---\n\n## Notes\nWorked on %s item %d; decision %d stands.\n",
			i, i, topics[i%len(topics)], topics[i%len(topics)], i, i*7%13)
		if err := writeSeed(p, body); err != nil {
			return err
		}
	}
	for i := 0; i < entries; i++ {
		p := filepath.Join(root, "memory", "entries", fmt.Sprintf("fact-%02d.md", i))
		body := fmt.Sprintf("---\ntype: reference\nname: fact %d\ndescription: where to look for %s %d\ncreated: 2026-05-%02d\nupdated: 2026-05-%02d\nsource: \"[[daily/2026-06-01/card-000.md]]\"\n---\n\nFor %s question %d see the team wiki page %d.\n",
			i, topics[i%len(topics)], i, i%28+1, i%28+1, topics[i%len(topics)], i, i*3)
		if err := writeSeed(p, body); err != nil {
			return err
		}
	}
	return nil
}

func writeSeed(p, body string) error {
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	return os.WriteFile(p, []byte(body), 0o644)
}

// treeSums lists every file outside metadata/ with the sha256 of its
// bytes, sorted: equal listings mean byte-for-byte equal workspaces.
func treeSums(root string) (string, error) {
	var lines []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if d.IsDir() && rel == "metadata" {
			return filepath.SkipDir
		}
		if d.Type().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			lines = append(lines, fmt.Sprintf("%x  %s", sha256.Sum256(b), filepath.ToSlash(rel)))
		}
		return nil
	})
	sort.Strings(lines)
	return strings.Join(lines, "\n") + "\n", err
}

// cmdSeedMemory is "seedmemory DIR CARDS ENTRIES".
func cmdSeedMemory(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 3 {
		ts.Fatalf("usage: seedmemory DIR CARDS ENTRIES")
	}
	cards, err1 := strconv.Atoi(args[1])
	entries, err2 := strconv.Atoi(args[2])
	if err1 != nil || err2 != nil {
		ts.Fatalf("seedmemory: counts must be numbers")
	}
	ts.Check(seedMemory(ts.MkAbs(args[0]), cards, entries))
}

// cmdTreeSums is "treesums DIR FILE": the file gets the tree's listing.
func cmdTreeSums(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: treesums DIR FILE")
	}
	s, err := treeSums(ts.MkAbs(args[0]))
	ts.Check(err)
	ts.Check(os.WriteFile(ts.MkAbs(args[1]), []byte(s), 0o644))
}

var plain struct {
	once sync.Once
	path string
}

// processBinary is the reme command the process tests start: the test
// binary itself (testscript puts it on PATH as "reme"), except under the
// race detector, where the fault tests' hundreds of processes would take
// minutes: there a plain build of the same code runs them. The race
// detector still checks the in-process tests.
func processBinary() string {
	if !raceEnabled {
		return "reme"
	}
	plain.once.Do(func() {
		dir := filepath.Join(os.TempDir(), "reme-plain-for-race-tests")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			panic(err)
		}
		tmp, err := os.CreateTemp(dir, "build-*")
		if err != nil {
			panic(err)
		}
		tmp.Close()
		if out, err := exec.Command("go", "build", "-o", tmp.Name(), ".").CombinedOutput(); err != nil {
			panic(fmt.Sprintf("build reme: %v\n%s", err, out))
		}
		plain.path = filepath.Join(dir, "reme")
		if err := os.Rename(tmp.Name(), plain.path); err != nil {
			panic(err)
		}
	})
	return plain.path
}

// maintainFixture is a small workspace with one of each thing maintain acts on.
var maintainFixture = map[string]string{
	"memory/entries/pref.md":      "---\ntype: feedback\nname: bullets\ncreated: 2026-05-01\nupdated: 2026-05-01\n---\n\nAnswer in bullets.\nWhy: scanning.\nHow to apply: bullets.\n",
	"memory/entries/pref-copy.md": "---\ntype: feedback\nname: bullets again\ncreated: 2026-06-01\nupdated: 2026-06-01\n---\n\nanswer in bullets.\nWhy: scanning.\nHow to apply: bullets.\n",
	"memory/entries/old.md":       "---\ntype: user\nname: editor\nupdated: 2026-05-01\n---\n\nvim\n",
	"memory/entries/new.md":       "---\ntype: user\nname: Editor\nupdated: 2026-06-01\n---\n\nhelix\n",
	"memory/entries/trip.md":      "---\ntype: project\nname: trip\nexpires: 2026-06-10\n---\n\nLisbon offsite.\n",
	"daily/2026-06-20/a.md":       "---\nname: a\n---\n\nSee [[memory/entries/trip.md]].\n",
	"daily/2026-06-20/b.md":       "---\nname: b\n---\n\nsame words\n",
	"daily/2026-06-20/c.md":       "---\nname: c\n---\n\nSame words\n",
}

func maintainWorkspace(t *testing.T, root string) {
	t.Helper()
	for p, c := range maintainFixture {
		if err := writeSeed(filepath.Join(root, filepath.FromSlash(p)), c); err != nil {
			t.Fatal(err)
		}
	}
	if err := seedMemory(root, 20, 40); err != nil {
		t.Fatal(err)
	}
	if out, err := remeCmd(root, nil, "reindex").CombinedOutput(); err != nil {
		t.Fatalf("reindex: %v\n%s", err, out)
	}
}

func remeCmd(root string, env []string, args ...string) *exec.Cmd {
	cmd := exec.Command(processBinary(), append([]string{"-w", root}, args...)...)
	cmd.Env = append(os.Environ(), "REME_NOW=2026-06-22T10:00:00+08:00", "REME_TIMEZONE=Asia/Shanghai", "COHERE_API_KEY=")
	cmd.Env = append(cmd.Env, env...)
	return cmd
}

func mustTreeSums(t *testing.T, root string) string {
	t.Helper()
	s, err := treeSums(root)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// openRuns counts runs still marked open in the journal folder.
func openRuns(t *testing.T, root string) int {
	t.Helper()
	ents, err := os.ReadDir(filepath.Join(root, "metadata", "journal", "open"))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	return len(ents)
}

// maintainEnv wires a job environment over a real index, in process.
func maintainEnv(t *testing.T, root string) (*jobs.Env, jobIndex) {
	t.Helper()
	app := &App{Globals: &Globals{Workspace: root}, Getenv: func(k string) string {
		switch k {
		case "REME_NOW":
			return "2026-06-22T10:00:00+08:00"
		case "REME_TIMEZONE":
			return "Asia/Shanghai"
		}
		return ""
	}, Stdout: &bytes.Buffer{}, Stderr: &bytes.Buffer{}}
	app.setup()
	if err := app.resolveWorkspace(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(app.close)
	env, err := app.jobEnv(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return env, jobIndex{app.ix}
}

func TestMaintainSkipsAFileEditedAfterThePlan(t *testing.T) {
	root := t.TempDir()
	maintainWorkspace(t, root)
	env, ix := maintainEnv(t, root)
	edited := "---\ntype: project\nname: trip\nexpires: 2026-06-10\n---\n\nLisbon offsite, extended: keep this.\n"
	res, err := jobs.Maintain(context.Background(), env, ix, jobs.MaintainOptions{BeforeApply: func() {
		if err := os.WriteFile(filepath.Join(root, "memory/entries/trip.md"), []byte(edited), 0o644); err != nil {
			t.Fatal(err)
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	var trip *jobs.MaintainAction
	for i, a := range res.Actions {
		if a.Path == "memory/entries/trip.md" {
			trip = &res.Actions[i]
		}
	}
	if trip == nil || trip.Status != jobs.StatusSkipped || trip.Error != "changed since the plan" {
		t.Fatalf("the hand-edited entry: %+v", trip)
	}
	b, _ := os.ReadFile(filepath.Join(root, "memory/entries/trip.md"))
	if string(b) != edited {
		t.Errorf("the hand edit was lost: %q", b)
	}
	done := 0
	for _, a := range res.Actions {
		if a.Status == jobs.StatusDone {
			done++
		}
	}
	if done == 0 {
		t.Error("the other actions were not applied")
	}
}

func TestMaintainOneAtATime(t *testing.T) {
	root := t.TempDir()
	maintainWorkspace(t, root)
	ws, err := store.OpenWorkspace(root)
	if err != nil {
		t.Fatal(err)
	}
	lock, ok, err := ws.TryLock("maintain")
	if err != nil || !ok {
		t.Fatalf("lock: %v %v", ok, err)
	}
	before := mustTreeSums(t, root)
	var stderr bytes.Buffer
	cmd := remeCmd(root, nil, "maintain")
	cmd.Stderr = &stderr
	err = cmd.Run()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || !strings.Contains(stderr.String(), "maintain is already running") {
		t.Fatalf("second maintain: %v\n%s", err, stderr.String())
	}
	if got := mustTreeSums(t, root); got != before {
		t.Error("the second maintain changed files")
	}
	// --wait waits for the first to finish
	wait := remeCmd(root, nil, "maintain", "--wait")
	var out bytes.Buffer
	wait.Stdout = &out
	if err := wait.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	if wait.ProcessState != nil {
		t.Fatal("--wait did not wait")
	}
	lock.Unlock()
	if err := wait.Wait(); err != nil {
		t.Fatalf("maintain --wait: %v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "Maintain run ") {
		t.Errorf("output: %s", out.String())
	}
}

func TestMaintainHousekeeping(t *testing.T) {
	root := t.TempDir()
	maintainWorkspace(t, root)
	old := time.Now().Add(-2 * time.Hour)
	for _, p := range []string{"daily/2026-06-20/" + store.TempPrefix + "abc", "metadata/" + store.TempPrefix + "def"} {
		writeSeed(filepath.Join(root, p), "half a file")
		os.Chtimes(filepath.Join(root, p), old, old)
	}
	fresh := filepath.Join(root, "daily", store.TempPrefix+"new")
	writeSeed(fresh, "a write in progress")
	lockFile := filepath.Join(root, "metadata", "locks", "session-x.lock")
	writeSeed(lockFile, "")
	os.Chtimes(lockFile, old, old)
	writeSeed(filepath.Join(root, "session/images/gone-session/msg-1-image-0.png"), "png")
	writeSeed(filepath.Join(root, "session/images/live/msg-1-image-0.png"), "png")
	writeSeed(filepath.Join(root, "session/dialog/live.jsonl"), "")
	out, err := remeCmd(root, nil, "--json", "maintain").Output()
	if err != nil {
		t.Fatal(err)
	}
	var res jobs.MaintainResult
	if err := jsonUnmarshal(out, &res); err != nil {
		t.Fatal(err)
	}
	hk := res.Housekeeping
	if !cmp.Equal(hk.TempFiles, []string{"daily/2026-06-20/" + store.TempPrefix + "abc", "metadata/" + store.TempPrefix + "def"}) {
		t.Errorf("temp files %v", hk.TempFiles)
	}
	if _, err := os.Stat(fresh); err != nil {
		t.Error("a fresh temp file (a write in progress) was removed")
	}
	if !cmp.Equal(hk.StaleLocks, []string{"metadata/locks/session-x.lock"}) {
		t.Errorf("stale locks %v", hk.StaleLocks)
	}
	if !cmp.Equal(hk.OrphanImages, []string{"session/images/gone-session/"}) {
		t.Errorf("orphaned images %v", hk.OrphanImages)
	}
	if !hk.IntegrityOK || !hk.Optimized {
		t.Errorf("index upkeep %+v", hk)
	}
}

// A damaged index is found by the integrity check and rebuilt.
func TestMaintainRebuildsADamagedIndex(t *testing.T) {
	root := t.TempDir()
	maintainWorkspace(t, root)
	db := filepath.Join(root, "metadata", "index.db")
	b, err := os.ReadFile(db)
	if err != nil {
		t.Fatal(err)
	}
	// damage pages past the schema: the database still opens
	for i := len(b) / 2; i < len(b)/2+8192 && i < len(b); i++ {
		b[i] ^= 0x5a
	}
	if err := os.WriteFile(db, b, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := remeCmd(root, nil, "--json", "maintain").CombinedOutput()
	if err != nil {
		t.Fatalf("maintain: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), `"rebuilt": true`) && !strings.Contains(string(out), "rebuilding from the files") {
		t.Errorf("the damaged index was not rebuilt:\n%s", out)
	}
	if out, err := remeCmd(root, nil, "search", "deploy").CombinedOutput(); err != nil || !strings.Contains(string(out), "daily/") {
		t.Errorf("search after rebuild: %v\n%s", err, out)
	}
}

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }

func TestMaintainRetentionDigestAndDates(t *testing.T) {
	root := t.TempDir()
	files := map[string]string{
		"daily/2026-05-01/old-card.md":   "---\nname: old-card\n---\n\nfrom May\n",
		"daily/2026-06-20/new-card.md":   "---\nname: new-card\n---\n\nfrom June\n",
		"digest/wiki/expired.md":         "---\nname: expired\nuntil: 2026-06-01\n---\n\nno longer true\n",
		"digest/wiki/evergreen.md":       "---\nname: evergreen\ndurability: evergreen\nuntil: 2026-06-01\n---\n\nalways true\n",
		"digest/wiki/review.md":          "---\nname: review\nreview_after: 2026-06-01\n---\n\ncheck me\n",
		"digest/wiki/current.md":         "---\nname: current\nuntil: 2027-01-01\n---\n\nstill true\n",
		"memory/entries/bad-date.md":     "---\ntype: project\nname: bad\ndue: next friday\n---\n\nsomething\n",
		"memory/entries/within-grace.md": "---\ntype: project\nname: grace\ndue: 2026-06-18\n---\n\nQ2 wrap-up\n",
	}
	for p, c := range files {
		writeSeed(filepath.Join(root, p), c)
	}
	env, ix := maintainEnv(t, root)
	if _, err := env.WS.RefreshDayIndex("2026-05-01"); err != nil {
		t.Fatal(err)
	}
	res, err := jobs.Maintain(context.Background(), env, ix, jobs.MaintainOptions{DailyRetainDays: 30, DueGraceDays: 7, MaxPercent: 100})
	if err != nil {
		t.Fatal(err)
	}
	var done []string
	for _, a := range res.Actions {
		if a.Status == jobs.StatusDone {
			done = append(done, a.Step+" "+a.Path)
		}
	}
	sort.Strings(done)
	want := []string{"daily_retention daily/2026-05-01/old-card.md", "expired_digest digest/wiki/expired.md"}
	if diff := cmp.Diff(want, done); diff != "" {
		t.Errorf("actions (-want +got):\n%s", diff)
	}
	if !cmp.Equal(res.Housekeeping.ReviewDue, []string{"digest/wiki/review.md (review after 2026-06-01)"}) {
		t.Errorf("review due %v", res.Housekeeping.ReviewDue)
	}
	if len(res.Housekeeping.InvalidDates) != 1 || !strings.Contains(res.Housekeeping.InvalidDates[0], `memory/entries/bad-date.md: due "next friday" is not a date`) {
		t.Errorf("invalid dates %v", res.Housekeeping.InvalidDates)
	}
	if _, err := os.Stat(filepath.Join(root, "archive/daily/2026-05-01/old-card.md")); err != nil {
		t.Error(err)
	}
	// the day page of the emptied day says so
	b, _ := os.ReadFile(filepath.Join(root, "daily/2026-05-01.md"))
	if !strings.Contains(string(b), "No notes today.") {
		t.Errorf("day page:\n%s", b)
	}
}

// With maintain.use_llm, similar entries and milestones past due go to the
// model; an answer that is not a verdict changes nothing.
func TestMaintainModelReview(t *testing.T) {
	root := t.TempDir()
	files := map[string]string{
		"memory/entries/deploy-a.md":  "---\ntype: reference\nname: deploy window\nupdated: 2026-05-01\n---\n\nDeploys happen on Tuesdays and Thursdays after 14:00 with a canary first.\n",
		"memory/entries/deploy-b.md":  "---\ntype: reference\nname: deploy days\nupdated: 2026-06-01\n---\n\nDeploys happen on Tuesdays and Thursdays after 14:00 with a canary first, never on Fridays.\n",
		"memory/entries/launch.md":    "---\ntype: project\nname: launch\ndue: 2026-06-20\n---\n\nPublic launch of the search beta.\n",
		"memory/entries/migrate.md":   "---\ntype: project\nname: migrate\ndue: 2026-06-19\n---\n\nMigrate the billing database.\n",
		"memory/entries/unrelated.md": "---\ntype: user\nname: editor\n---\n\nThe user works in helix.\n",
	}
	for p, c := range files {
		writeSeed(filepath.Join(root, p), c)
	}
	before := mustTreeSums(t, root)
	model := llmtest.NewScripted(
		llmtest.TextReply(`{"verdict": "archive", "keep": "memory/entries/deploy-b.md", "reason": "b says everything a says"}`),
		llmtest.TextReply(`I think you should keep it.`),
		llmtest.TextReply("```json\n{\"verdict\": \"archive\", \"reason\": \"migration finished\"}\n```"),
	)
	env, ix := maintainEnv(t, root)
	env.Model, env.ModelID = model, "test-model"
	res, err := jobs.Maintain(context.Background(), env, ix, jobs.MaintainOptions{UseLLM: true, MaxPercent: 100, DueGraceDays: 7})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, a := range res.Actions {
		got[a.Path] = a.Step + " " + a.Action + " " + a.Status
	}
	want := map[string]string{
		"memory/entries/deploy-a.md": "near_duplicates archive done",
		"memory/entries/launch.md":   "milestone_review review failed",
		"memory/entries/migrate.md":  "milestone_review archive done",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("actions (-want +got):\n%s", diff)
	}
	if len(model.Requests()) != 3 {
		t.Errorf("%d model calls", len(model.Requests()))
	}
	if _, err := os.Stat(filepath.Join(root, "memory/entries/launch.md")); err != nil {
		t.Error("a garbage verdict changed the milestone")
	}
	runs, _ := ix.Journal().Runs()
	last := runs[len(runs)-1]
	for _, c := range last.Changes {
		if c.Action == store.ActionArchive && (c.Model != "test-model" || c.Prompt != jobs.MaintainPromptVersion) {
			t.Errorf("model-driven change without model and prompt: %+v", c)
		}
	}
	if _, err := ix.Journal().Undo(last.ID, false, store.TriggerCLI); err != nil {
		t.Fatal(err)
	}
	if got := mustTreeSums(t, root); got != before {
		t.Errorf("undo:\n%s", cmp.Diff(before, got))
	}
}

// TestMaintainMergeMasksSecrets: entries that hold a pasted key reach the
// model masked, and a merged body the model writes with the key in it (it
// cannot know it; a model that invents one) is written masked.
func TestMaintainMergeMasksSecrets(t *testing.T) {
	root := t.TempDir()
	const key = "AKIA2QZ5K7X4MWRP3T6N"
	files := map[string]string{
		"memory/entries/deploy-a.md": "---\ntype: reference\nname: deploy window\nupdated: 2026-05-01\n---\n\nDeploys happen on Tuesdays and Thursdays after 14:00 with a canary first, key " + key + ".\n",
		"memory/entries/deploy-b.md": "---\ntype: reference\nname: deploy days\nupdated: 2026-06-01\n---\n\nDeploys happen on Tuesdays and Thursdays after 14:00 with a canary first, never on Fridays.\n",
	}
	for p, c := range files {
		writeSeed(filepath.Join(root, p), c)
	}
	model := llmtest.NewScripted(llmtest.TextReply(`{"verdict": "merge", "keep": "memory/entries/deploy-b.md", "body": "Deploys on Tuesdays and Thursdays after 14:00, canary first, never on Fridays; key ` + key + `.", "reason": "same rule"}`))
	env, ix := maintainEnv(t, root)
	env.Model, env.ModelID = model, "test-model"
	if _, err := jobs.Maintain(context.Background(), env, ix, jobs.MaintainOptions{UseLLM: true, MaxPercent: 100, DueGraceDays: 7}); err != nil {
		t.Fatal(err)
	}
	reqs := model.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d model calls", len(reqs))
	}
	if q := reqs[0].Messages[1].Text(); strings.Contains(q, key) || !strings.Contains(q, "key [redacted:aws-access-key]") {
		t.Errorf("the question holds the key:\n%s", q)
	}
	b, err := os.ReadFile(filepath.Join(root, "memory/entries/deploy-b.md"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), key) || !strings.Contains(string(b), "never on Fridays; key [redacted:aws-access-key].") {
		t.Errorf("merged entry:\n%s", b)
	}
}
