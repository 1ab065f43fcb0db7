package index

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/reme-dev/reme/store"
)

var ctx = context.Background()

func baseFiles() map[string]string {
	return map[string]string{
		"daily/2026-06-20/login-refactor.md": card("login-refactor", "Decided to move login to OIDC with PKCE.",
			"## Decisions\n- OIDC authorization code flow with PKCE.\n- Rejected magic links.\n\nSee [[daily/2026-06-19/retrieval.md#Numbers|the numbers]].\n",
			"session_id: s1", `source_conversation: "[[session/dialog/s1.jsonl]]"`, "memory_tags: [auth, Security]"),
		"daily/2026-06-19/retrieval.md": card("retrieval", "Retrieval regression after the tokenizer change.",
			"## Numbers\nrecall@10 dropped from 0.83 to 0.61.\n\nBack to [[daily/2026-06-20/login-refactor.md]] and ![[daily/2026-06-20/login-refactor.md]].\n",
			"memory_tags: [search]"),
		"daily/2026-06-18/登录流程.md":      card("登录流程", "陈伟讨论登录流程重构。", "## 方案\n我们决定重构登录流程，部署在周五之前完成。\n", "memory_tags: [auth]"),
		"digest/wiki/oidc.md":           card("oidc", "What OIDC is.", "OpenID Connect builds on OAuth 2.0. Used by [[daily/2026-06-20/login-refactor.md]].\n"),
		"resource/2026-06-20/report.md": "# raw resource, never indexed\nOIDC OIDC OIDC\n",
		"session/dialog/s1.jsonl":       `{"role":"user","content":"OIDC please"}` + "\n",
	}
}

func TestSyncDetectsAddModifyDelete(t *testing.T) {
	ws := newWorkspace(t, baseFiles())
	ix := openIndex(t, ws, Options{})
	rep := mustSync(t, ix)
	if rep.Added != 4 || rep.Modified != 0 || rep.Deleted != 0 {
		t.Fatalf("first sync: %+v", rep)
	}
	if rep := mustSync(t, ix); rep.Added+rep.Modified+rep.Deleted != 0 || rep.Unchanged != 4 {
		t.Fatalf("second sync should change nothing: %+v", rep)
	}
	writeFile(t, ws, "daily/2026-06-19/retrieval.md", card("retrieval", "changed", "new words here\n"))
	writeFile(t, ws, "daily/2026-06-21/new.md", card("new", "a new card", "fresh\n"))
	if err := os.Remove(ws.Abs("digest/wiki/oidc.md")); err != nil {
		t.Fatal(err)
	}
	rep = mustSync(t, ix)
	if rep.Added != 1 || rep.Modified != 1 || rep.Deleted != 1 {
		t.Fatalf("third sync: %+v", rep)
	}
	// A touch (same bytes, new mtime) is not a modification.
	future := time.Now().Add(time.Hour)
	if err := os.Chtimes(ws.Abs("daily/2026-06-21/new.md"), future, future); err != nil {
		t.Fatal(err)
	}
	if rep := mustSync(t, ix); rep.Modified != 0 || rep.Added != 0 {
		t.Fatalf("touch: %+v", rep)
	}
	if rep := mustSync(t, ix); rep.Unchanged != 4 {
		t.Fatalf("after touch the stat must be cached: %+v", rep)
	}
	// A whole folder removed.
	if err := os.RemoveAll(ws.Abs("daily/2026-06-20")); err != nil {
		t.Fatal(err)
	}
	if rep := mustSync(t, ix); rep.Deleted != 1 {
		t.Fatalf("folder removal: %+v", rep)
	}
}

func TestHandEditIsFoundByTheNextSearch(t *testing.T) {
	ws := newWorkspace(t, baseFiles())
	ix := openIndex(t, ws, Options{})
	mustSync(t, ix)
	if got := search(t, ix, "zeppelin", SearchOptions{}); len(got) != 0 {
		t.Fatalf("unexpected hits %v", paths(got))
	}
	// an editor rewriting the file in place, same size class, new word
	p := ws.Abs("digest/wiki/oidc.md")
	b, _ := os.ReadFile(p)
	if err := os.WriteFile(p, []byte(strings.Replace(string(b), "OpenID", "Zeppelin", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	mustSync(t, ix)
	if got := paths(search(t, ix, "zeppelin", SearchOptions{})); !cmp.Equal(got, []string{"digest/wiki/oidc.md"}) {
		t.Fatalf("after edit got %v", got)
	}
}

func TestSearchBasics(t *testing.T) {
	ws := newWorkspace(t, baseFiles())
	ix := openIndex(t, ws, Options{})
	mustSync(t, ix)
	tests := []struct {
		name  string
		query string
		opt   SearchOptions
		want  []string // sorted paths
	}{
		{"question", "what did we decide about PKCE?", SearchOptions{}, []string{"daily/2026-06-20/login-refactor.md"}},
		{"stemming", "decisions", SearchOptions{}, []string{"daily/2026-06-20/login-refactor.md"}},
		{"number phrase", "recall@10", SearchOptions{}, []string{"daily/2026-06-19/retrieval.md"}},
		{"quoted phrase", `"magic links"`, SearchOptions{}, []string{"daily/2026-06-20/login-refactor.md"}},
		{"phrase must be adjacent", `"links magic"`, SearchOptions{}, nil},
		{"exclusion", "oidc -pkce", SearchOptions{}, []string{"digest/wiki/oidc.md"}},
		{"chinese two chars", "登录", SearchOptions{}, []string{"daily/2026-06-18/登录流程.md"}},
		{"chinese in a sentence", "部署什么时候完成", SearchOptions{}, []string{"daily/2026-06-18/登录流程.md"}},
		{"resources and sessions are not indexed", "please", SearchOptions{}, nil},
		{"date range", "oidc", SearchOptions{StartDate: "2026-06-20"}, []string{"daily/2026-06-20/login-refactor.md", "digest/wiki/oidc.md"}},
		{"strict date range", "oidc", SearchOptions{StartDate: "2026-06-20", StrictDate: true}, []string{"daily/2026-06-20/login-refactor.md"}},
		{"end date", "login", SearchOptions{EndDate: "2026-06-19", StrictDate: true}, []string{"daily/2026-06-19/retrieval.md"}},
		{"tag", "oidc OR 登录", SearchOptions{Tags: []string{"AUTH"}}, []string{"daily/2026-06-18/登录流程.md", "daily/2026-06-20/login-refactor.md"}},
		{"path prefix", "oidc", SearchOptions{PathPrefixes: []string{"digest/"}}, []string{"digest/wiki/oidc.md"}},
		{"prefix query", "regress*", SearchOptions{}, []string{"daily/2026-06-19/retrieval.md"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := sortedPaths(search(t, ix, tt.query, tt.opt))
			if !cmp.Equal(got, tt.want) {
				t.Errorf("search %q = %v, want %v", tt.query, got, tt.want)
			}
		})
	}
}

func TestSearchHostileInputNeverErrors(t *testing.T) {
	ws := newWorkspace(t, baseFiles())
	ix := openIndex(t, ws, Options{})
	mustSync(t, ix)
	for _, q := range []string{"foo-bar", `"`, `""`, "*", "AND", "OR NOT", "NEAR(", "NEAR(a b", "a:b", "col:login", "^login", "{x}", "login)", "-", "--", "'", "\\", "\x00", "🙂"} {
		if _, err := ix.Search(ctx, SearchOptions{Query: q, Limit: 5}); err != nil {
			t.Errorf("query %q: %v", q, err)
		}
	}
	if _, err := ix.Search(ctx, SearchOptions{Query: "  "}); !errors.Is(err, ErrEmptyQuery) {
		t.Errorf("empty query: %v", err)
	}
	if _, err := ix.Search(ctx, SearchOptions{Query: "x", Tags: []string{" ", "!!"}}); !errors.Is(err, ErrNoValidTags) {
		t.Errorf("invalid tags: %v", err)
	}
}

func TestSearchRanksNameAboveBody(t *testing.T) {
	ws := newWorkspace(t, map[string]string{
		"daily/2026-01-01/body.md":  card("notes", "misc", "we talked about kubernetes upgrades for a while and other things\n"),
		"daily/2026-01-02/named.md": card("kubernetes-upgrade", "planning the cluster upgrade", "details follow in another note\n"),
		"daily/2026-01-03/other.md": card("other", "unrelated", "nothing to see\n"),
	})
	ix := openIndex(t, ws, Options{})
	mustSync(t, ix)
	got := paths(search(t, ix, "kubernetes", SearchOptions{}))
	if len(got) != 2 || got[0] != "daily/2026-01-02/named.md" {
		t.Fatalf("ranking %v", got)
	}
}

func TestSearchResultShape(t *testing.T) {
	ws := newWorkspace(t, baseFiles())
	ix := openIndex(t, ws, Options{})
	mustSync(t, ix)
	res := search(t, ix, "recall", SearchOptions{Links: true, Context: 1})
	if len(res) != 1 {
		t.Fatalf("got %d results", len(res))
	}
	r := res[0]
	if r.StartLine != 7 || r.EndLine != 8 || r.Name != "retrieval" || r.Date != "2026-06-19" || !cmp.Equal(r.Tags, []string{"search"}) {
		t.Errorf("result %+v", r)
	}
	if len(r.Outlinks) != 1 || r.Outlinks[0].Path != "daily/2026-06-20/login-refactor.md" || !r.Outlinks[0].Indexed {
		t.Errorf("outlinks %+v (embed and link to the same target are one neighbour)", r.Outlinks)
	}
	var in []string
	for _, n := range r.Inlinks {
		in = append(in, n.Path+"#"+strings.Join(n.Anchors, ","))
	}
	if !cmp.Equal(in, []string{"daily/2026-06-20/login-refactor.md#Numbers"}) {
		t.Errorf("inlinks %v", in)
	}
	if r.Text != "## Numbers\nrecall@10 dropped from 0.83 to 0.61." || r.Match != "all" || r.Scores.Keyword == nil || *r.Scores.Keyword != r.Score {
		t.Errorf("window %q match %s scores %+v", r.Text, r.Match, r.Scores)
	}
	lines := strings.Split(readWS(t, ws, r.Path), "\n")
	if lines[r.StartLine-1] != "## Numbers" {
		t.Errorf("line %d is %q", r.StartLine, lines[r.StartLine-1])
	}
}

func readWS(t *testing.T, ws *store.Workspace, rel string) string {
	t.Helper()
	b, err := os.ReadFile(ws.Abs(rel))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestBrokenYAMLStaysSearchable(t *testing.T) {
	ws := newWorkspace(t, map[string]string{
		"daily/2026-01-01/broken.md": "---\nname: [unclosed\n---\n\nthe body mentions gondola\n",
	})
	ix := openIndex(t, ws, Options{})
	mustSync(t, ix)
	res := search(t, ix, "gondola", SearchOptions{})
	if len(res) != 1 || res[0].Name != "" {
		t.Fatalf("got %+v", res)
	}
	var fmErr string
	if err := ix.db.QueryRow(`SELECT frontmatter_error FROM notes`).Scan(&fmErr); err != nil || fmErr == "" {
		t.Errorf("frontmatter error not recorded: %q %v", fmErr, err)
	}
}

func TestOversizedAndSymlinkedNotesAreSkipped(t *testing.T) {
	ws := newWorkspace(t, baseFiles())
	outside := filepath.Join(t.TempDir(), "secret.md")
	if err := os.WriteFile(outside, []byte("classified zebra\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, ws.Abs("daily/2026-06-20/link.md")); err != nil {
		t.Fatal(err)
	}
	ix := openIndex(t, ws, Options{MaxFileBytes: 200})
	rep := mustSync(t, ix)
	var skipped []string
	for _, p := range rep.Problems {
		if p.Skipped {
			skipped = append(skipped, p.Path+": "+strings.Fields(p.Reason)[0])
		}
	}
	var want []string
	for p := range baseFiles() {
		if fi, err := os.Stat(ws.Abs(p)); err == nil && store.IsNotePath(p, []string{"daily", "digest"}) && fi.Size() > 200 {
			want = append(want, p+": file_too_large")
		}
	}
	want = append(want, "daily/2026-06-20/link.md: symlink")
	sort.Strings(want)
	if len(want) < 3 {
		t.Fatalf("fixture too small: %v", want)
	}
	if !cmp.Equal(skipped, want) {
		t.Errorf("skipped:\n%v\nwant\n%v", skipped, want)
	}
	if got := search(t, ix, "zebra", SearchOptions{}); len(got) != 0 {
		t.Error("a symlink leading out of the workspace was followed")
	}
	// skipped notes are remembered, not re-read on every command
	if rep := mustSync(t, ix); rep.Added+rep.Modified != 0 {
		t.Errorf("second sync re-read skipped files: %+v", rep)
	}
}

func TestIncrementalEqualsRebuild(t *testing.T) {
	ws := newWorkspace(t, baseFiles())
	ix := openIndex(t, ws, Options{})
	mustSync(t, ix)
	writeFile(t, ws, "daily/2026-06-19/retrieval.md", card("retrieval", "v2", "[[digest/wiki/oidc.md]] changed\n", "memory_tags: [a, b, c, d]"))
	writeFile(t, ws, "digest/procedure/deploy.md", card("deploy", "runbook", "# Deploy\n\n## Steps\n1. build\n2. ship\n"))
	if err := os.Remove(ws.Abs("daily/2026-06-18/登录流程.md")); err != nil {
		t.Fatal(err)
	}
	mustSync(t, ix)
	incremental, err := ix.Dump(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ix.Rebuild(ctx, nil); err != nil {
		t.Fatal(err)
	}
	rebuilt, err := ix.Dump(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(rebuilt, incremental); diff != "" {
		t.Errorf("incremental index differs from a rebuild (-rebuilt +incremental):\n%s", diff)
	}
	// and from a brand-new database
	ix.Close()
	for _, s := range []string{"", "-wal", "-shm"} {
		os.Remove(ws.MetadataPath("index.db" + s))
	}
	fresh := openIndex(t, ws, Options{})
	mustSync(t, fresh)
	fromScratch, err := fresh.Dump(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(fromScratch, incremental); diff != "" {
		t.Errorf("incremental index differs from a new database (-new +incremental):\n%s", diff)
	}
}

func TestDamagedDatabaseIsRebuilt(t *testing.T) {
	for _, damage := range []string{"delete", "truncate-zero", "truncate-half", "garbage", "version"} {
		t.Run(damage, func(t *testing.T) {
			ws := newWorkspace(t, baseFiles())
			ix := openIndex(t, ws, Options{})
			mustSync(t, ix)
			want := sortedPaths(search(t, ix, "oidc login 登录", SearchOptions{}))
			if damage == "version" {
				if _, err := ix.db.Exec("PRAGMA user_version = 999"); err != nil {
					t.Fatal(err)
				}
			}
			ix.Close()
			db := ws.MetadataPath("index.db")
			os.Remove(db + "-wal")
			os.Remove(db + "-shm")
			switch damage {
			case "delete":
				os.Remove(db)
			case "truncate-zero":
				os.Truncate(db, 0)
			case "truncate-half":
				fi, _ := os.Stat(db)
				os.Truncate(db, fi.Size()/2)
			case "garbage":
				os.WriteFile(db, []byte(strings.Repeat("not a database ", 500)), 0o644)
			}
			again := openIndex(t, ws, Options{})
			mustSync(t, again)
			if got := sortedPaths(search(t, again, "oidc login 登录", SearchOptions{})); !cmp.Equal(got, want) {
				t.Errorf("after %s: %v, want %v", damage, got, want)
			}
		})
	}
}

func TestListTags(t *testing.T) {
	ws := newWorkspace(t, baseFiles())
	ix := openIndex(t, ws, Options{})
	mustSync(t, ix)
	page, err := ix.ListTags(ctx, TagListOptions{Page: 1, PageSize: 100, OrderBy: "file_count"})
	if err != nil {
		t.Fatal(err)
	}
	want := [][]any{{"auth", 2}, {"search", 1}, {"security", 1}}
	if page.TotalTags != 3 || !cmp.Equal(page.Items, want) || page.Range != [2]int{1, 3} {
		t.Errorf("page %+v", page)
	}
	page, err = ix.ListTags(ctx, TagListOptions{Page: 2, PageSize: 2})
	if err != nil || page.TotalPages != 2 || len(page.Items) != 1 || page.Range != [2]int{3, 3} {
		t.Errorf("page 2: %+v %v", page, err)
	}
	if _, err := ix.ListTags(ctx, TagListOptions{Page: 0, PageSize: 10}); err == nil {
		t.Error("page 0 accepted")
	}
}

// Tags are ReMe's canonical (case-folded) form wherever they appear:
// list_tags, search --tag and the tags of a result agree, whatever
// spelling a note used; Obsidian's tags: and inline #tags count too.
func TestTagsAgreeAcrossSpellingsAndSources(t *testing.T) {
	ws := newWorkspace(t, map[string]string{
		"daily/2026-06-20/a.md": card("a", "alpha", "plain body about kafka\n", "memory_tags: [Security, Straße, new energy, extra]"),
		"daily/2026-06-20/b.md": card("b", "beta", "kafka again #SECURITY and #ops/oncall\n", "tags: [Research, \"#ml\"]"),
		"digest/wiki/c.md":      card("c", "gamma", "kafka in `#code` only\n", "tags: research, infra"),
	})
	ix := openIndex(t, ws, Options{})
	mustSync(t, ix)
	page, err := ix.ListTags(ctx, TagListOptions{Page: 1, PageSize: 100})
	if err != nil {
		t.Fatal(err)
	}
	want := [][]any{{"infra", 1}, {"ml", 1}, {"new_energy", 1}, {"ops/oncall", 1}, {"research", 2}, {"security", 2}, {"strasse", 1}}
	if diff := cmp.Diff(want, page.Items); diff != "" {
		t.Errorf("list_tags (-want +got):\n%s", diff)
	}
	for _, q := range []string{"Security", "SECURITY", "security"} {
		got := sortedPaths(search(t, ix, "kafka", SearchOptions{Tags: []string{q}}))
		if want := []string{"daily/2026-06-20/a.md", "daily/2026-06-20/b.md"}; !cmp.Equal(got, want) {
			t.Errorf("--tag %s: %v, want %v", q, got, want)
		}
	}
	if got := sortedPaths(search(t, ix, "kafka", SearchOptions{Tags: []string{"STRASSE"}})); !cmp.Equal(got, []string{"daily/2026-06-20/a.md"}) {
		t.Errorf("--tag STRASSE: %v", got)
	}
	for _, r := range search(t, ix, "kafka", SearchOptions{}) {
		wantTags := map[string][]string{
			"daily/2026-06-20/a.md": {"security", "strasse", "new_energy"}, // memory_tags: at most three
			"daily/2026-06-20/b.md": {"research", "ml", "security", "ops/oncall"},
			"digest/wiki/c.md":      {"research", "infra"},
		}[r.Path]
		if !cmp.Equal(r.Tags, wantTags) {
			t.Errorf("%s tags %q, want %q", r.Path, r.Tags, wantTags)
		}
	}
}

// Processes that open a new workspace's index at the same moment race to
// create it: while one holds the new file locked, another's first
// statements (switching to WAL) are refused as busy without SQLite's busy
// timeout. Open must wait for the file as the timeout would.
func TestOpenWaitsForAnotherProcessCreatingTheIndex(t *testing.T) {
	ws := newWorkspace(t, map[string]string{"daily/2026-06-01/a.md": card("a", "A card.", "Some text.")})
	if err := os.MkdirAll(ws.MetadataPath(), 0o755); err != nil {
		t.Fatal(err)
	}
	// the other process: a new file, in rollback-journal mode, locked
	other, err := sql.Open("sqlite", "file:"+ws.MetadataPath("index.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	other.SetMaxOpenConns(1)
	tx, err := other.Begin()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec("CREATE TABLE creating (x)"); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec("INSERT INTO creating VALUES (1)"); err != nil {
		t.Fatal(err)
	}
	go func() {
		time.Sleep(300 * time.Millisecond)
		tx.Commit()
	}()
	ix, err := Open(context.Background(), ws, schemaText(t), Options{})
	if err != nil {
		t.Fatalf("open while another process creates the index: %v", err)
	}
	defer ix.Close()
	if _, err := ix.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
}
