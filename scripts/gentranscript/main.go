// Command gentranscript writes turns of a Claude Code session transcript in
// the JSONL shape Claude Code writes (user prompt, assistant thinking, text,
// a tool call and its result, a closing answer), for benchmarks of the Stop
// hook. Turns from..from+n-1 are written to stdout; the output is a pure
// function of the flags, so appending turn k after turns 0..k-1 gives the
// transcript a session of k+1 turns would have.
//
//	go run ./scripts/gentranscript -session ID -from 0 -n 300 > transcript.jsonl
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"
)

func main() {
	sid := flag.String("session", "6f1c2a3b-4d5e-4f60-8172-93a4b5c6d7e8", "session id")
	from := flag.Int("from", 0, "first turn")
	n := flag.Int("n", 1, "number of turns")
	flag.Parse()
	w := bufio.NewWriter(os.Stdout)
	defer w.Flush()
	start := time.Date(2026, 6, 21, 8, 0, 0, 0, time.UTC)
	for t := *from; t < *from+*n; t++ {
		for _, e := range turn(*sid, t, start.Add(time.Duration(t)*time.Minute)) {
			b, err := json.Marshal(e)
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
			w.Write(b)
			w.WriteByte('\n')
		}
	}
}

func uuid(t, k int) string { return fmt.Sprintf("%08x-0000-4000-8000-%012x", t, k) }

// turn is one exchange of about 4 KB.
func turn(sid string, t int, at time.Time) []map[string]any {
	stamp := func(s int) string { return at.Add(time.Duration(s) * time.Second).Format("2006-01-02T15:04:05.000Z") }
	prev := any(nil)
	if t > 0 {
		prev = uuid(t-1, 5)
	}
	entry := func(k int, typ string, msg map[string]any) map[string]any {
		e := map[string]any{"parentUuid": prev, "isSidechain": false, "userType": "external", "cwd": "/home/dana/src/ledgerly",
			"sessionId": sid, "version": "2.1.27", "gitBranch": "main", "type": typ, "message": msg,
			"uuid": uuid(t, k), "timestamp": stamp(k * 7)}
		prev = e["uuid"]
		return e
	}
	assistant := func(content ...map[string]any) map[string]any {
		return map[string]any{"id": fmt.Sprintf("msg_%06d", t), "type": "message", "role": "assistant", "model": "claude-opus-4-6",
			"content": content, "stop_reason": nil, "usage": map[string]any{"input_tokens": 6, "cache_read_input_tokens": 21000, "output_tokens": 180}}
	}
	output := strings.Repeat(fmt.Sprintf("ok  \tgithub.com/ledgerly/internal/pkg%d\t0.%03ds\n", t%17, t%1000), 30)
	return []map[string]any{
		entry(0, "user", map[string]any{"role": "user", "content": fmt.Sprintf(
			"Step %d: the export job for account %d still logs a warning about page size; make the page size configurable with a default of 1000, keep the CSV format byte-identical, and add a test that covers an account with more than ten thousand invoices.", t, 1000+t)}),
		entry(1, "assistant", assistant(map[string]any{"type": "thinking", "thinking": strings.Repeat("I should read the exporter and its configuration before changing the page size. ", 6), "signature": strings.Repeat("Eq", 60)})),
		entry(2, "assistant", assistant(map[string]any{"type": "text", "text": "I'll read the exporter first, then run the tests."})),
		entry(3, "assistant", assistant(map[string]any{"type": "tool_use", "id": fmt.Sprintf("toolu_%06d", t), "name": "Bash", "input": map[string]any{"command": "go test ./...", "description": "Run the tests"}})),
		entry(4, "user", map[string]any{"role": "user", "content": []any{map[string]any{"tool_use_id": fmt.Sprintf("toolu_%06d", t), "type": "tool_result", "content": output}}}),
		entry(5, "assistant", assistant(map[string]any{"type": "text", "text": fmt.Sprintf("Done with step %d: the page size is now export.page_size (default 1000) and TestLargeExport covers 12,000 invoices.", t)})),
	}
}
