package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

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

var _ = bytes.NewReader
var _ = context.Background
