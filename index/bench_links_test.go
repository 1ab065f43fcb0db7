package index

import (
	"fmt"
	"os"
	"testing"
)

// BenchmarkLinks10k lists a card's links both ways (five out, five or six in).
func BenchmarkLinks10k(b *testing.B) {
	ws := benchWorkspace(b, 10000)
	ix := openIndex(b, ws, Options{})
	mustSync(b, ix)
	const p = "daily/2025-02-22/card-05005.md"
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		rep, err := ix.Links(ctx, LinkQuery{Path: p})
		if err != nil {
			b.Fatal(err)
		}
		if len(rep.Outlinks) != 5 || len(rep.Inlinks) < 5 {
			b.Fatalf("%d outlinks, %d inlinks", len(rep.Outlinks), len(rep.Inlinks))
		}
	}
}

// BenchmarkMoveRetarget10k renames a card that five cards (and its day page) link to, and
// back: each move rewrites those links and syncs.
func BenchmarkMoveRetarget10k(b *testing.B) {
	ws := benchWorkspace(b, 10000)
	ix := openIndex(b, ws, Options{})
	mustSync(b, ix)
	const src, dst = "daily/2025-02-22/card-05005.md", "daily/2025-02-22/card-05005-renamed.md"
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, m := range [][2]string{{src, dst}, {dst, src}} {
			res, err := ix.Move(ctx, m[0], m[1], MoveOptions{})
			if err != nil {
				b.Fatal(err)
			}
			if res.Retarget == nil || res.Retarget.LinksChanged < 5 {
				b.Fatalf("retarget: %+v", res.Retarget)
			}
		}
	}
}

// BenchmarkDeleteInbound10k deletes a card that five cards link to (which
// counts those links and syncs), then writes it back and syncs.
func BenchmarkDeleteInbound10k(b *testing.B) {
	ws := benchWorkspace(b, 10000)
	ix := openIndex(b, ws, Options{})
	mustSync(b, ix)
	const p = "daily/2025-02-22/card-05005.md"
	orig, err := os.ReadFile(ws.Abs(p))
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		res, err := ix.Delete(ctx, p, false)
		if err != nil {
			b.Fatal(err)
		}
		if res.Inbound.LinksTotal < 5 {
			b.Fatalf("inbound: %+v", res.Inbound)
		}
		if err := os.WriteFile(ws.Abs(p), orig, 0o644); err != nil {
			b.Fatal(err)
		}
		mustSync(b, ix)
	}
}

// BenchmarkSyncOneChangeMissingLink10k edits a card holding a link to a
// file that does not exist (as every generated card's source_conversation).
func BenchmarkSyncOneChangeMissingLink10k(b *testing.B) {
	ws := benchWorkspace(b, 10000)
	ix := openIndex(b, ws, Options{})
	const p = "daily/2025-02-22/card-05005.md"
	orig, err := os.ReadFile(ws.Abs(p))
	if err != nil {
		b.Fatal(err)
	}
	defer os.WriteFile(ws.Abs(p), orig, 0o644)
	orig = append(orig, "From [[session/dialog/0f8c2a.jsonl]].\n"...)
	if err := os.WriteFile(ws.Abs(p), orig, 0o644); err != nil {
		b.Fatal(err)
	}
	mustSync(b, ix)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := os.WriteFile(ws.Abs(p), append(orig, fmt.Sprintf("edit %d\n", i)...), 0o644); err != nil {
			b.Fatal(err)
		}
		if rep := mustSync(b, ix); rep.Modified != 1 {
			b.Fatalf("modified %d", rep.Modified)
		}
	}
}
