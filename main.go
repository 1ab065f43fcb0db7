// Command reme gives LLM agents a long-term memory people can read: markdown
// cards in a workspace, mirrored into an embedded SQLite index for search.
package main

import (
	"context"
	_ "embed"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"
	_ "time/tzdata" // IANA time zones work on systems without a zoneinfo database
)

//go:embed schema.sql
var schemaSQL string

func main() { os.Exit(mainCode()) }

// mainCode is main without the exit, so that tests can run the real thing.
func mainCode() int {
	// reme is mostly a short-lived command whose heap stays small: collect
	// less often, but never let the heap run past a soft limit.
	debug.SetGCPercent(400)
	debug.SetMemoryLimit(256 << 20)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
}
