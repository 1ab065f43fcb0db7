package index

import (
	"database/sql"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/reme-dev/reme/store"
)

// obsidianFiles is a workspace written partly by ReMe (literal paths) and
// partly in Obsidian (short links, markdown links, links in properties).
func obsidianFiles() map[string]string {
	return map[string]string{
		"digest/wiki/solar power.md": card("solar power", "panels and inverters", "Inverters.\n"),
		"digest/wiki/oidc.md":        card("oidc", "the protocol", "OpenID Connect.\n"),
		"digest/personal/oidc.md":    card("oidc", "my notes on it", "Tokens.\n"),
		"daily/2026-06-19/retro.md":  card("retro", "the retro", "Went well.\n"),
		"daily/2026-06-20/plan.md": "---\nname: plan\ndescription: the plan\nrelated: '[[solar power]]'\nsee_also:\n- '[[daily/2026-06-19/retro.md]]'\n---\n\n" +
			"Short [[solar power]], with folder [[wiki/solar power|panels]] (as short as it can be), literal [[digest/wiki/solar power.md#Inverters]].\n" +
			"Markdown [the retro](../2026-06-19/retro.md) and [solar](../../digest/wiki/solar%20power.md#Inverters \"t\").\n" +
			"Ambiguous [[oidc]], disambiguated [[personal/oidc]], broken [[nowhere]], attachment ![[diagram.png]].\n",
		"assets/diagram.png": "png",
	}
}

func linkSummary(ls []LinkInfo) []string {
	var out []string
	for _, l := range ls {
		s := l.From + ":" + l.Field + ":" + l.Written + " -> " + l.Status + " " + l.Target
		if len(l.Candidates) > 0 {
			s += " " + strings.Join(l.Candidates, ",")
		}
		out = append(out, s)
	}
	return out
}

func TestObsidianLinksAreResolved(t *testing.T) {
	ws := newWorkspace(t, obsidianFiles())
	ix := openIndex(t, ws, Options{})
	mustSync(t, ix)
	rep, err := ix.Links(ctx, LinkQuery{Path: "daily/2026-06-20/plan.md"})
	if err != nil {
		t.Fatal(err)
	}
	const p = "daily/2026-06-20/plan.md"
	want := []string{
		p + ":related:solar power -> short digest/wiki/solar power.md",
		p + ":see_also:daily/2026-06-19/retro.md -> exact daily/2026-06-19/retro.md",
		p + "::solar power -> short digest/wiki/solar power.md",
		p + "::wiki/solar power -> short digest/wiki/solar power.md",
		p + "::digest/wiki/solar power.md -> exact digest/wiki/solar power.md",
		p + "::../2026-06-19/retro.md -> exact daily/2026-06-19/retro.md",
		p + "::../../digest/wiki/solar power.md -> exact digest/wiki/solar power.md",
		p + "::oidc -> ambiguous oidc digest/personal/oidc.md,digest/wiki/oidc.md",
		p + "::personal/oidc -> short digest/personal/oidc.md",
		p + "::nowhere -> missing nowhere",
		p + "::diagram.png -> short assets/diagram.png",
	}
	if diff := cmp.Diff(want, linkSummary(rep.Outlinks)); diff != "" {
		t.Errorf("outlinks (-want +got):\n%s", diff)
	}
	rep, err = ix.Links(ctx, LinkQuery{Path: "digest/wiki/oidc.md"})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{p + "::oidc -> ambiguous oidc digest/personal/oidc.md,digest/wiki/oidc.md"}, linkSummary(rep.Inlinks)); diff != "" {
		t.Errorf("inlinks of an ambiguous target (-want +got):\n%s", diff)
	}
	rep, err = ix.Links(ctx, LinkQuery{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{p + "::oidc -> ambiguous oidc digest/personal/oidc.md,digest/wiki/oidc.md", p + "::nowhere -> missing nowhere"},
		linkSummary(rep.Problems)); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
	// search's link expansion knows them (body links only, as ReMe)
	res := search(t, ix, "inverters", SearchOptions{Links: true})
	for _, r := range res {
		if r.Path != "digest/wiki/solar power.md" {
			continue
		}
		if len(r.Inlinks) != 1 || r.Inlinks[0].Path != p {
			t.Errorf("inlinks of solar power: %+v", r.Inlinks)
		}
	}
}

// Where a short link leads depends on the other notes: a sync that sees a
// note added or removed resolves the links that name it again, and the
// result equals a rebuild.
func TestLinkResolutionFollowsAddedAndRemovedNotes(t *testing.T) {
	ws := newWorkspace(t, map[string]string{
		"daily/2026-06-20/a.md": card("a", "links", "[[solo]] and [[later]] and [x](solo.md)\n"),
		"digest/wiki/solo.md":   card("solo", "the only one", "x\n"),
	})
	ix := openIndex(t, ws, Options{})
	status := func() []string {
		t.Helper()
		mustSync(t, ix)
		rep, err := ix.Links(ctx, LinkQuery{Path: "daily/2026-06-20/a.md"})
		if err != nil {
			t.Fatal(err)
		}
		checkEqualsRebuild(t, ix, ws, "")
		return linkSummary(rep.Outlinks)
	}
	const a = "daily/2026-06-20/a.md::"
	steps := []struct {
		do   func()
		want []string
	}{
		{func() {}, []string{a + "solo -> short digest/wiki/solo.md", a + "later -> missing later", a + "solo.md -> short digest/wiki/solo.md"}},
		{func() { writeFile(t, ws, "digest/other/Solo.md", card("Solo", "a second one", "y\n")) },
			[]string{a + "solo -> ambiguous solo digest/other/Solo.md,digest/wiki/solo.md", a + "later -> missing later",
				a + "solo.md -> ambiguous daily/2026-06-20/solo.md digest/other/Solo.md,digest/wiki/solo.md"}},
		{func() { writeFile(t, ws, "daily/2026-06-21/later.md", card("later", "now it exists", "z\n")) },
			[]string{a + "solo -> ambiguous solo digest/other/Solo.md,digest/wiki/solo.md", a + "later -> short daily/2026-06-21/later.md",
				a + "solo.md -> ambiguous daily/2026-06-20/solo.md digest/other/Solo.md,digest/wiki/solo.md"}},
		{func() { os.Remove(ws.Abs("digest/wiki/solo.md")) },
			[]string{a + "solo -> short digest/other/Solo.md", a + "later -> short daily/2026-06-21/later.md", a + "solo.md -> short digest/other/Solo.md"}},
		{func() { writeFile(t, ws, "daily/2026-06-20/solo.md", card("solo", "a sibling", "s\n")) },
			[]string{a + "solo -> ambiguous solo daily/2026-06-20/solo.md,digest/other/Solo.md", a + "later -> short daily/2026-06-21/later.md",
				a + "solo.md -> exact daily/2026-06-20/solo.md"}},
		{func() { os.Remove(ws.Abs("daily/2026-06-21/later.md")) },
			[]string{a + "solo -> ambiguous solo daily/2026-06-20/solo.md,digest/other/Solo.md", a + "later -> missing later",
				a + "solo.md -> exact daily/2026-06-20/solo.md"}},
	}
	for i, s := range steps {
		s.do()
		if diff := cmp.Diff(s.want, status()); diff != "" {
			t.Fatalf("step %d (-want +got):\n%s", i, diff)
		}
	}
}

func TestMoveRetargetsEveryFormAsWritten(t *testing.T) {
	files := obsidianFiles()
	files["daily/2026-06-20/other.md"] = card("other", "more links", "[[solar power]] and [[wiki/oidc]] and [[oidc#x]]\n")
	files["digest/wiki/solar power.md"] = card("solar power", "panels and inverters", "Back to [the plan](../../daily/2026-06-20/plan.md) and [[oidc]]. Self: [[solar power#Top]].\n")
	ws := newWorkspace(t, files)
	ix := openIndex(t, ws, Options{})
	res, err := ix.Move(ctx, "digest/wiki/solar power.md", "digest/energy/solar panels.md", MoveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got := snapshot(t, ws)
	wantPlan := "---\nname: plan\ndescription: the plan\nrelated: '[[solar panels]]'\nsee_also:\n- '[[daily/2026-06-19/retro.md]]'\n---\n\n" +
		"Short [[solar panels]], with folder [[solar panels|panels]] (as short as it can be), literal [[digest/energy/solar panels.md#Inverters]].\n" +
		"Markdown [the retro](../2026-06-19/retro.md) and [solar](../../digest/energy/solar%20panels.md#Inverters \"t\").\n" +
		"Ambiguous [[oidc]], disambiguated [[personal/oidc]], broken [[nowhere]], attachment ![[diagram.png]].\n"
	if diff := cmp.Diff(wantPlan, got["daily/2026-06-20/plan.md"]); diff != "" {
		t.Errorf("plan.md (-want +got):\n%s", diff)
	}
	wantMoved := card("solar power", "panels and inverters", "Back to [the plan](../../daily/2026-06-20/plan.md) and [[oidc]]. Self: [[solar panels#Top]].\n")
	if diff := cmp.Diff(wantMoved, got["digest/energy/solar panels.md"]); diff != "" {
		t.Errorf("moved note (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(card("other", "more links", "[[solar panels]] and [[wiki/oidc]] and [[oidc#x]]\n"), got["daily/2026-06-20/other.md"]); diff != "" {
		t.Errorf("other.md (-want +got):\n%s", diff)
	}
	wantBy := map[string]int{"daily/2026-06-20/plan.md": 5, "daily/2026-06-20/other.md": 1}
	if diff := cmp.Diff(wantBy, res.Retarget.ByFile); diff != "" {
		t.Errorf("by_file (-want +got):\n%s", diff)
	}
	if len(res.Retarget.Ambiguous) != 0 || len(res.Retarget.NotRetargeted) != 0 {
		t.Errorf("ambiguous %+v, not retargeted %+v", res.Retarget.Ambiguous, res.Retarget.NotRetargeted)
	}
	// nothing dangles: every link that resolved still does
	rep, err := ix.Links(ctx, LinkQuery{})
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range rep.Problems {
		if l.Written != "oidc" && l.Written != "nowhere" {
			t.Errorf("after the move: %+v", l)
		}
	}
}

// A move that gives a note a name another note has keeps the other
// note's short links pointing where they did (as Obsidian does); links
// that were ambiguous already are reported, not guessed.
func TestMoveDisambiguatesAndReportsAmbiguousLinks(t *testing.T) {
	ws := newWorkspace(t, map[string]string{
		"daily/2026-06-20/a.md":  card("a", "links", "[[budget]] and [[draft]] and [[oidc]]\n"),
		"digest/wiki/budget.md":  card("budget", "the budget", "b\n"),
		"daily/2026-06-20/x.md":  card("draft", "a draft", "d\n"),
		"digest/wiki/oidc.md":    card("oidc", "one", "o\n"),
		"digest/team/oidc.md":    card("oidc", "two", "o\n"),
		"daily/2026-06-21/oi.md": card("oi", "x", "[[digest/wiki/oidc.md]]\n"),
	})
	ix := openIndex(t, ws, Options{})
	// x.md becomes budget.md elsewhere: [[budget]] would turn ambiguous
	res, err := ix.Move(ctx, "daily/2026-06-20/x.md", "daily/2026-06-22/budget.md", MoveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got := snapshot(t, ws)["daily/2026-06-20/a.md"]
	if want := card("a", "links", "[[wiki/budget]] and [[draft]] and [[oidc]]\n"); got != want {
		t.Errorf("a.md:\n%s\nwant\n%s", got, want)
	}
	// [[draft]] never led to x.md (its name is x): untouched and still missing
	res, err = ix.Move(ctx, "digest/wiki/oidc.md", "digest/wiki/openid.md", MoveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"daily/2026-06-20/a.md::oidc -> ambiguous oidc digest/team/oidc.md,digest/wiki/oidc.md"},
		linkSummary(res.Retarget.Ambiguous)); diff != "" {
		t.Errorf("ambiguous (-want +got):\n%s", diff)
	}
	files := snapshot(t, ws)
	if !strings.Contains(files["daily/2026-06-20/a.md"], "[[oidc]]") {
		t.Error("an ambiguous link was rewritten")
	}
	if !strings.Contains(files["daily/2026-06-21/oi.md"], "[[digest/wiki/openid.md]]") {
		t.Error("the literal link was not retargeted")
	}
}

func TestDeleteReportsEveryFormAndAmbiguousLinks(t *testing.T) {
	ws := newWorkspace(t, obsidianFiles())
	ix := openIndex(t, ws, Options{})
	res, err := ix.Delete(ctx, "digest/wiki/solar power.md", false)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]int{"daily/2026-06-20/plan.md": 5}, res.Inbound.ByFile); diff != "" {
		t.Errorf("inbound (-want +got):\n%s", diff)
	}
	res, err = ix.Delete(ctx, "digest/wiki/oidc.md", false)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Inbound.ByFile) != 0 ||
		!cmp.Equal(linkSummary(res.Inbound.Ambiguous), []string{"daily/2026-06-20/plan.md::oidc -> ambiguous oidc digest/personal/oidc.md,digest/wiki/oidc.md"}) {
		t.Errorf("inbound %+v", res.Inbound)
	}
	// and the link is no longer ambiguous: one oidc is left
	rep, err := ix.Links(ctx, LinkQuery{Path: "digest/personal/oidc.md"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"daily/2026-06-20/plan.md::oidc -> short digest/personal/oidc.md", "daily/2026-06-20/plan.md::personal/oidc -> short digest/personal/oidc.md"}
	if diff := cmp.Diff(want, linkSummary(rep.Inlinks), cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("inlinks (-want +got):\n%s", diff)
	}
}

// A note's links in frontmatter values follow a move; quoting and the
// other keys stay as PyYAML wrote them.
func TestMoveRetargetsFrontmatterLinks(t *testing.T) {
	const card = "---\ndescription: A card whose description is long enough that PyYAML wraps it at eighty\n" +
		"  columns, which must survive the move untouched.\nname: x\nrelated: '[[daily/2026-06-19/old.md]]'\n" +
		"source_conversation: '[[session/dialog/s.jsonl]]'\n---\n\nbody\n"
	ws := newWorkspace(t, map[string]string{
		"daily/2026-06-20/x.md":   card,
		"daily/2026-06-19/old.md": "---\nname: old\n---\n\nold\n",
	})
	ix := openIndex(t, ws, Options{})
	res, err := ix.Move(ctx, "daily/2026-06-19/old.md", "daily/2026-06-19/new.md", MoveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Replace(card, "old.md", "new.md", 1)
	if got := snapshot(t, ws)["daily/2026-06-20/x.md"]; got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if res.Retarget.ByFile["daily/2026-06-20/x.md"] != 1 {
		t.Errorf("by_file %v", res.Retarget.ByFile)
	}
}

// TestMoveCrashAtEveryStepObsidian is the crash test on a workspace whose
// links take every form.
func TestMoveCrashAtEveryStepObsidian(t *testing.T) {
	const src, dst = "digest/wiki/solar power.md", "digest/energy/solar panels.md"
	ref := newWorkspace(t, obsidianFiles())
	refIx := openIndex(t, ref, Options{})
	if _, err := refIx.Move(ctx, src, dst, MoveOptions{}); err != nil {
		t.Fatal(err)
	}
	wantFiles := snapshot(t, ref)
	var steps []string
	rec := newWorkspace(t, obsidianFiles())
	recIx := openIndex(t, rec, Options{Fault: func(s string) error { steps = append(steps, s); return nil }})
	if _, err := recIx.Move(ctx, src, dst, MoveOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, step := range steps {
		t.Run(step, func(t *testing.T) {
			ws := newWorkspace(t, obsidianFiles())
			ix := openIndex(t, ws, Options{Fault: func(s string) error {
				if s == step {
					return errCrash
				}
				return nil
			}})
			if _, err := ix.Move(ctx, src, dst, MoveOptions{}); err != errCrash {
				t.Fatalf("move did not stop at %s: %v", step, err)
			}
			ix.Close()
			next := openIndex(t, ws, Options{})
			mustSync(t, next)
			if diff := cmp.Diff(wantFiles, snapshot(t, ws)); diff != "" {
				t.Errorf("files after recovery differ (-want +got):\n%s", diff)
			}
		})
	}
}

// Links to files that are not notes resolve the same whether a sync looks
// them up one by one or a rebuild lists the workspace: hidden folders,
// metadata/ and symlinks are never link targets.
func TestLinksToOtherFilesSyncEqualsRebuild(t *testing.T) {
	ws := newWorkspace(t, map[string]string{
		"resource/r.txt":        "r",
		"resource/sub/deep.pdf": "p",
		".obsidian/app.json":    "{}",
		"notes/plain.md":        "not under daily/ or digest/",
	})
	writeFile(t, ws, "metadata/x.txt", "x")
	if err := os.Symlink(ws.Abs("resource"), ws.Abs("linked")); err != nil {
		t.Fatal(err)
	}
	ix := openIndex(t, ws, Options{})
	mustSync(t, ix)
	writeFile(t, ws, "digest/wiki/a.md", card("a", "links out", "[[resource/r.txt]] [[deep.pdf]] [[metadata/x.txt]] [[.obsidian/app.json]] "+
		"[[linked/r.txt]] [[plain]] [x](../../notes/plain.md) [[app.json]]\n"))
	mustSync(t, ix)
	rep, err := ix.Links(ctx, LinkQuery{Path: "digest/wiki/a.md"})
	if err != nil {
		t.Fatal(err)
	}
	const a = "digest/wiki/a.md::"
	want := []string{a + "resource/r.txt -> exact resource/r.txt", a + "deep.pdf -> short resource/sub/deep.pdf",
		a + "metadata/x.txt -> missing metadata/x.txt", a + ".obsidian/app.json -> missing .obsidian/app.json",
		a + "linked/r.txt -> missing linked/r.txt", a + "plain -> short notes/plain.md",
		a + "../../notes/plain.md -> exact notes/plain.md", a + "app.json -> missing app.json"}
	if diff := cmp.Diff(want, linkSummary(rep.Outlinks)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	checkLinkRows(t, ix)
	incremental, _ := ix.Dump(ctx)
	if _, err := ix.Rebuild(ctx, nil); err != nil {
		t.Fatal(err)
	}
	rebuilt, _ := ix.Dump(ctx)
	checkLinkRows(t, ix)
	if diff := cmp.Diff(rebuilt, incremental); diff != "" {
		t.Errorf("incremental differs from rebuild (-rebuilt +incremental):\n%s", diff)
	}
}

// checkEqualsRebuild asserts that an index kept up to date equals one
// rebuilt from the same files, and that both hold their link rows as
// checkLinkRows expects.
func checkEqualsRebuild(t *testing.T, ix *Index, ws *store.Workspace, step string) {
	t.Helper()
	checkLinkRows(t, ix)
	incremental, err := ix.Dump(ctx)
	if err != nil {
		t.Fatal(err)
	}
	fresh := openIndex(t, ws, Options{})
	if _, err := fresh.Rebuild(ctx, nil); err != nil {
		t.Fatal(err)
	}
	checkLinkRows(t, fresh)
	rebuilt, _ := fresh.Dump(ctx)
	fresh.Close()
	if diff := cmp.Diff(stripStats(rebuilt), stripStats(incremental)); diff != "" {
		t.Errorf("%s: incremental differs from rebuild (-rebuilt +incremental):\n%s", step, diff)
	}
}

// checkLinkRows asserts how link rows hold their targets: a note's id when
// the target is an indexed note (never its path), the path otherwise, and
// the target as written only where it differs from the target.
func checkLinkRows(t *testing.T, ix *Index) {
	t.Helper()
	for _, c := range []struct{ what, q string }{
		{"links to a note id no note has", `SELECT count(*) FROM links l WHERE l.target_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM notes WHERE id = l.target_id)`},
		{"links holding an indexed note's path", `SELECT count(*) FROM links l JOIN notes n ON n.path = l.target`},
		{"links with both or neither of target_id and target", `SELECT count(*) FROM links WHERE (target_id IS NULL) = (target IS NULL)`},
		{"links holding the target as written although it is the target", `SELECT count(*) FROM links l LEFT JOIN notes t ON t.id = l.target_id WHERE l.written = coalesce(t.path, l.target)`},
	} {
		var n int
		if err := ix.db.QueryRowContext(ctx, c.q).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != 0 {
			t.Errorf("%d %s", n, c.what)
		}
	}
}

// A link to a note holds the note's id: editing the note keeps it, removing
// the note leaves the link missing with its path, and the note coming back
// (or a note linked to by another added in the same sync) is found again;
// each step equals a rebuild.
func TestLinksByNoteIDFollowEditsRemovalsAndReturns(t *testing.T) {
	const (
		hub    = "daily/2026-06-20/hub.md"
		target = "daily/2026-06-19/target.md"
	)
	ws := newWorkspace(t, map[string]string{
		hub:    card("hub", "links", "[[daily/2026-06-19/target.md]] and [t](../2026-06-19/target.md) and [[target]]\n"),
		target: card("target", "the first", "x\n"),
	})
	ix := openIndex(t, ws, Options{})
	check := func(step string, wantOut, wantIn []string) {
		t.Helper()
		mustSync(t, ix)
		out, err := ix.Links(ctx, LinkQuery{Path: hub})
		if err != nil {
			t.Fatal(err)
		}
		in, err := ix.Links(ctx, LinkQuery{Path: target})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(wantOut, linkSummary(out.Outlinks)); diff != "" {
			t.Errorf("%s: outlinks of the hub (-want +got):\n%s", step, diff)
		}
		if diff := cmp.Diff(wantIn, linkSummary(in.Inlinks)); diff != "" {
			t.Errorf("%s: inlinks of the target (-want +got):\n%s", step, diff)
		}
		checkEqualsRebuild(t, ix, ws, step)
	}
	const h = hub + "::"
	found := []string{h + target + " -> exact " + target, h + "../2026-06-19/target.md -> exact " + target, h + "target -> short " + target}
	check("start", found, found)

	writeFile(t, ws, target, card("target", "edited", "y\nz\n"))
	check("target edited", found, found)

	os.Remove(ws.Abs(target))
	check("target removed", []string{h + target + " -> missing " + target, h + "../2026-06-19/target.md -> missing " + target,
		h + "target -> missing target"}, nil)

	writeFile(t, ws, target, card("target", "back", "w\n"))
	check("target back", found, found)

	// renamed by hand: the short link follows, the paths are left missing
	moved := "digest/wiki/target.md"
	os.MkdirAll(ws.Abs("digest/wiki"), 0o755)
	if err := os.Rename(ws.Abs(target), ws.Abs(moved)); err != nil {
		t.Fatal(err)
	}
	check("target renamed", []string{h + target + " -> missing " + target, h + "../2026-06-19/target.md -> missing " + target,
		h + "target -> short " + moved}, nil)

	// the target and a note linking to it appear in the same sync, the
	// link first in the order notes are stored (by path)
	os.Remove(ws.Abs(moved))
	writeFile(t, ws, target, card("target", "again", "v\n"))
	writeFile(t, ws, "daily/2026-06-18/early.md", card("early", "links", "[[daily/2026-06-19/target.md]]\n"))
	early := "daily/2026-06-18/early.md::" + target + " -> exact " + target
	check("target and a linking note added together", found, append([]string{early}, found...))
}

// A rebuild hands note ids out before it reads the notes: a note gone by
// the time it is read keeps no id, and the links stored before to it hold
// its path.
func TestRebuildLinksToVanishedNoteHoldPaths(t *testing.T) {
	const hub, gone = "daily/2026-06-18/hub.md", "daily/2026-06-19/gone.md"
	ws := newWorkspace(t, map[string]string{
		hub:                        card("hub", "links", "[[daily/2026-06-19/gone.md]] [[daily/2026-06-21/fine.md]]\n"),
		"daily/2026-06-21/fine.md": card("fine", "readable", "x\n"),
	})
	// notes are stored in the order given: the hub before gone.md is found
	// missing, as when a file vanishes between the scan and the read
	ix := openIndex(t, ws, Options{})
	changes := []change{{path: hub, kind: "added"}, {path: gone, kind: "added"}, {path: "daily/2026-06-21/fine.md", kind: "added"}}
	rep := &SyncReport{}
	if err := ix.writeBulk(ctx, func(tx *sql.Tx) error { return ix.apply(ctx, tx, changes, true, rep, nil) }); err != nil {
		t.Fatal(err)
	}
	checkLinkRows(t, ix)
	out, err := ix.Links(ctx, LinkQuery{Path: hub})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{hub + "::" + gone + " -> exact " + gone, hub + "::daily/2026-06-21/fine.md -> exact daily/2026-06-21/fine.md"}
	if diff := cmp.Diff(want, linkSummary(out.Outlinks)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// An edited note's link that led to no file is looked for again among the
// notes and at its path as written, but not among the workspace's other
// files by name (that would list the whole workspace at every edit):
// reindex finds those.
func TestEditedNoteMissingLinkSkipsTheWorkspaceListing(t *testing.T) {
	const a = "daily/2026-06-20/a.md"
	body := "[[session/dialog/s1.jsonl]] [[photo.png]] [[later]] [[also-later]]\n"
	ws := newWorkspace(t, map[string]string{a: card("a", "links", body)})
	ix := openIndex(t, ws, Options{})
	mustSync(t, ix)
	outlinks := func() []string {
		t.Helper()
		rep, err := ix.Links(ctx, LinkQuery{Path: a})
		if err != nil {
			t.Fatal(err)
		}
		return linkSummary(rep.Outlinks)
	}
	const l = a + "::"
	if diff := cmp.Diff([]string{l + "session/dialog/s1.jsonl -> missing session/dialog/s1.jsonl", l + "photo.png -> missing photo.png",
		l + "later -> missing later", l + "also-later -> missing also-later"}, outlinks()); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
	// the session file appears where the link says, an image somewhere
	// else, a note by name (found by the sync that adds it), and another
	// note by name in the same sync as the edit
	writeFile(t, ws, "session/dialog/s1.jsonl", "{}\n")
	writeFile(t, ws, "resource/2026-06-20/photo.png", "png")
	writeFile(t, ws, "digest/wiki/later.md", card("later", "a note", "x\n"))
	mustSync(t, ix)
	writeFile(t, ws, "digest/wiki/also-later.md", card("also-later", "a note", "x\n"))
	writeFile(t, ws, a, card("a", "links, edited", body+"more\n"))
	mustSync(t, ix)
	checkLinkRows(t, ix)
	if diff := cmp.Diff([]string{l + "session/dialog/s1.jsonl -> exact session/dialog/s1.jsonl", l + "photo.png -> missing photo.png",
		l + "later -> short digest/wiki/later.md", l + "also-later -> short digest/wiki/also-later.md"}, outlinks()); diff != "" {
		t.Errorf("after the edit (-want +got):\n%s", diff)
	}
	if _, err := ix.Rebuild(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if got := outlinks(); got[1] != l+"photo.png -> short resource/2026-06-20/photo.png" {
		t.Errorf("after reindex: %v", got)
	}
}
