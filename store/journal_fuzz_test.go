package store

import (
	"bufio"
	"bytes"
	"errors"
	"strings"
	"testing"
)

// FuzzJournalLines feeds arbitrary bytes to the journal reader: it must
// never fail on them, and every line it accepts names only clean
// workspace paths and well-formed hashes.
func FuzzJournalLines(f *testing.F) {
	f.Add([]byte(`{"run":"20260622T100000Z-abcdef","time":"2026-06-22T10:00:00Z","kind":"begin","command":"move","trigger":"cli"}` + "\n"))
	f.Add([]byte(`{"run":"20260622T100000Z-abcdef","kind":"change","action":"update","path":"daily/a.md","sha256_before":"` + strings.Repeat("a", 64) + `","preimage":"` + strings.Repeat("a", 64) + `"}` + "\n"))
	f.Add([]byte(`{"run":"20260622T100000Z-abcdef","kind":"change","action":"rename","path":"daily/b.md","from":"../../etc/passwd","from_sha256":"` + strings.Repeat("b", 64) + `"}`))
	f.Add([]byte("not json\n{\"run\":\"2026"))
	ws, err := OpenWorkspace(f.TempDir())
	if err != nil {
		f.Fatal(err)
	}
	j := NewJournal(ws, JournalOptions{})
	f.Fuzz(func(t *testing.T, data []byte) {
		bad := map[string]int{}
		es, err := j.parseLines(bytes.NewReader(data), "fuzz.jsonl", bad)
		if err != nil && !errors.Is(err, bufio.ErrTooLong) {
			t.Fatalf("read: %v", err)
		}
		for _, e := range es {
			for _, p := range []string{e.Path, e.From} {
				if p == "" {
					continue
				}
				if rel, err := ws.Rel(p); err != nil || rel != p || strings.HasPrefix(p, MetadataDir+"/") {
					t.Fatalf("accepted path %q (%v)", p, err)
				}
			}
			for _, s := range []string{e.Before, e.After, e.Preimage, e.FromSHA, e.FromImage} {
				if s != "" && !validSum(s) {
					t.Fatalf("accepted hash %q", s)
				}
			}
		}
		groupRuns(es, bad)
	})
}
