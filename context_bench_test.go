package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkContext runs reme context in process on 1,000 entries and
// 10,000 small cards (scripts/bench.sh times the whole process on the
// generated corpus).
func BenchmarkContext(b *testing.B) {
	ws := b.TempDir()
	types := []string{"user", "feedback", "project", "reference"}
	topics := []string{"deploy", "search", "billing", "login", "oncall", "roadmap", "editor", "review", "backup", "alerts"}
	must := func(err error) {
		if err != nil {
			b.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(ws, "memory", "entries"), 0o755))
	for i := 0; i < 1000; i++ {
		t, topic := types[i%4], topics[i%10]
		body := fmt.Sprintf("The %s fact number %d: look at page %d of the %s runbook.", topic, i, i*7%101, topic)
		if t == "feedback" {
			body = fmt.Sprintf("Prefer %s answers of style %d.\nWhy: said so.\nHow to apply: use style %d.", topic, i, i)
		}
		must(os.WriteFile(filepath.Join(ws, "memory", "entries", fmt.Sprintf("entry-%04d.md", i)),
			[]byte(fmt.Sprintf("---\ntype: %s\nname: entry-%04d\ndescription: %s note %d\ncreated: 2025-06-01\nupdated: 2025-06-01\n---\n\n%s\n", t, i, topic, i, body)), 0o644))
	}
	for i := 0; i < 10000; i++ {
		day := fmt.Sprintf("2025-%02d-%02d", 1+i%12, 1+i%28)
		if i < 60 {
			day = []string{"2025-12-30", "2025-12-31"}[i%2]
		}
		dir := filepath.Join(ws, "daily", day)
		must(os.MkdirAll(dir, 0o755))
		topic := topics[i%10]
		must(os.WriteFile(filepath.Join(dir, fmt.Sprintf("card-%05d.md", i)),
			[]byte(fmt.Sprintf("---\nname: card-%05d\ndescription: Work on %s, item %d.\n---\n\n## Notes\n\n- %s %s\n", i, topic, i, topic, strings.Repeat("detail ", 40))), 0o644))
	}
	os.Setenv("REME_NOW", "2025-12-31T12:00:00Z")
	os.Setenv("REME_TIMEZONE", "UTC")
	defer os.Unsetenv("REME_NOW")
	defer os.Unsetenv("REME_TIMEZONE")
	ctx := context.Background()
	for _, args := range [][]string{{"-w", ws, "reindex"}, {"-w", ws, "memory_reindex"}} {
		if code := run(ctx, args, strings.NewReader(""), io.Discard, io.Discard); code != 0 {
			b.Fatalf("%v: exit %d", args, code)
		}
	}
	for _, q := range []string{"how should I format deploy answers", "登录流程"} {
		b.Run(q, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if code := run(ctx, []string{"-w", ws, "context", q}, strings.NewReader(""), io.Discard, io.Discard); code != 0 {
					b.Fatalf("exit %d", code)
				}
			}
		})
	}
}
