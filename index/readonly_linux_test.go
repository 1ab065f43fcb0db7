package index

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/reme-dev/reme/store"
	"golang.org/x/sys/unix"
)

// readOnlyView bind-mounts dir read-only at a new path: a read-only file
// system, which even root cannot write (permission bits do not stop root).
func readOnlyView(t *testing.T, dir string) string {
	t.Helper()
	view := t.TempDir()
	if err := unix.Mount(dir, view, "", unix.MS_BIND, ""); err != nil {
		t.Skipf("cannot bind-mount a read-only view of the workspace (needs CAP_SYS_ADMIN): %v", err)
	}
	t.Cleanup(func() { unix.Unmount(view, unix.MNT_DETACH) })
	if err := unix.Mount("", view, "", unix.MS_BIND|unix.MS_REMOUNT|unix.MS_RDONLY, ""); err != nil {
		t.Skipf("cannot make the bind mount read-only: %v", err)
	}
	if err := os.WriteFile(filepath.Join(view, "probe"), nil, 0o644); err == nil {
		t.Fatal("the read-only view is writable")
	}
	return view
}

func privateCopies(t *testing.T) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(os.TempDir(), "reme-index-*"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// A read-only workspace can be searched: from its own index while that
// matches the files, from a private copy brought up to date when they
// changed, or from a private index built from the files when it has none.
// Changes are refused with a message naming the read-only path, and
// nothing in the workspace is written.
func TestReadOnlyWorkspace(t *testing.T) {
	for _, tc := range []string{"current index", "stale index", "no index", "interrupted move"} {
		t.Run(tc, func(t *testing.T) {
			ws := newWorkspace(t, baseFiles())
			ix := openIndex(t, ws, Options{})
			mustSync(t, ix)
			ix.Close()
			switch tc {
			case "stale index":
				writeFile(t, ws, "digest/wiki/zebra.md", card("zebra", "added after indexing", "zebra stripes\n"))
			case "no index":
				for _, s := range []string{"", "-wal", "-shm"} {
					os.Remove(ws.MetadataPath("index.db" + s))
				}
			case "interrupted move":
				j := `{"src":"daily/2026-06-19/retrieval.md","dst":"daily/2026-06-19/moved.md","retarget":true,"inbound":[]}`
				if err := os.WriteFile(ws.MetadataPath("move.journal.json"), []byte(j), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			before := snapshot(t, ws)
			copiesBefore := len(privateCopies(t))
			view := readOnlyView(t, ws.Root)
			rows, err := store.OpenWorkspace(view)
			if err != nil {
				t.Fatal(err)
			}
			ro, err := Open(ctx, rows, schemaText(t), Options{})
			if err != nil {
				t.Fatalf("open a read-only workspace: %v", err)
			}
			if ro.ReadOnly() == nil || !strings.Contains(ro.ReadOnly().Error(), filepath.Join(view, "metadata")) {
				t.Errorf("ReadOnly() = %v", ro.ReadOnly())
			}
			// the workspace's own index while it is current, else a private copy
			if wantPrivate := tc == "stale index" || tc == "no index"; (ro.private != "") != wantPrivate {
				t.Errorf("private copy %q, want one: %v", ro.private, wantPrivate)
			}
			res, _, err := ro.SearchFresh(ctx, SearchOptions{Query: "oidc", Limit: 10})
			if err != nil {
				t.Fatalf("search: %v", err)
			}
			if got := sortedPaths(res.Results); !cmp.Equal(got, []string{"daily/2026-06-20/login-refactor.md", "digest/wiki/oidc.md"}) {
				t.Errorf("search oidc: %v", got)
			}
			if tc == "stale index" {
				if got := paths(search(t, ro, "zebra", SearchOptions{})); !cmp.Equal(got, []string{"digest/wiki/zebra.md"}) {
					t.Errorf("a note added since the index was built is not found: %v", got)
				}
			}
			if _, err := ro.ListTags(ctx, TagListOptions{Page: 1, PageSize: 10}); err != nil {
				t.Errorf("list tags: %v", err)
			}
			if _, err := ro.Links(ctx, LinkQuery{Path: "digest/wiki/oidc.md"}); err != nil {
				t.Errorf("links: %v", err)
			}
			// every change is refused, naming the read-only folder
			for name, change := range map[string]func() error{
				"move": func() error {
					_, err := ro.Move(ctx, "digest/wiki/oidc.md", "digest/wiki/openid.md", MoveOptions{})
					return err
				},
				"delete":  func() error { _, err := ro.Delete(ctx, "digest/wiki/oidc.md", false); return err },
				"rebuild": func() error { _, err := ro.Rebuild(ctx, nil); return err },
				"job":     func() error { return ro.Locked(ctx, func() error { return nil }) },
			} {
				err := change()
				if !errors.Is(err, ErrReadOnly) || !strings.Contains(err.Error(), filepath.Join(view, "metadata")) || !strings.Contains(err.Error(), "read-only file system") {
					t.Errorf("%s on a read-only workspace: %v", name, err)
				}
			}
			ro.Close()
			if diff := cmp.Diff(before, snapshot(t, ws)); diff != "" {
				t.Errorf("the read-only workspace changed:\n%s", diff)
			}
			if n := len(privateCopies(t)); n != copiesBefore {
				t.Errorf("%d private index copies left behind", n-copiesBefore)
			}
		})
	}
}
