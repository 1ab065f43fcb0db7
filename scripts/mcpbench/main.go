// Command mcpbench times `reme mcp` as an agent uses it: one server process
// on stdio, the official Go SDK's client, and search calls round trip
// (request written, answer read and decoded). It prints the median per
// query, as scripts/benchrun does for whole processes.
//
//	mcpbench -reme ./reme -w WORKSPACE -n 200 "query one" "query two"
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	reme := flag.String("reme", "reme", "the reme binary")
	ws := flag.String("w", "", "workspace")
	n := flag.Int("n", 200, "calls per query")
	flag.Parse()
	if *ws == "" || flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: mcpbench -reme PATH -w WORKSPACE [-n N] QUERY...")
		os.Exit(2)
	}
	if err := run(*reme, *ws, *n, flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "mcpbench:", err)
		os.Exit(1)
	}
}

func run(reme, ws string, n int, queries []string) error {
	ctx := context.Background()
	cmd := exec.Command(reme, "-w", ws, "mcp")
	cmd.Stderr = os.Stderr
	client := mcp.NewClient(&mcp.Implementation{Name: "mcpbench", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		return err
	}
	defer cs.Close()
	call := func(q string) (time.Duration, error) {
		start := time.Now()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "search", Arguments: map[string]any{"query": q}})
		d := time.Since(start)
		if err != nil {
			return 0, err
		}
		if res.IsError {
			return 0, fmt.Errorf("search %q: %v", q, res.Content)
		}
		return d, nil
	}
	// the first call opens the index and checks the files once
	if _, err := call(queries[0]); err != nil {
		return err
	}
	var all []time.Duration
	for _, q := range queries {
		var ds []time.Duration
		for range n {
			d, err := call(q)
			if err != nil {
				return err
			}
			ds = append(ds, d)
		}
		all = append(all, ds...)
		report("mcp search: "+q, ds)
	}
	report("mcp search: all queries", all)
	return nil
}

func report(name string, ds []time.Duration) {
	slices.Sort(ds)
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	fmt.Printf("%-34s median %.2f ms  (min %.2f, p90 %.2f, max %.2f, %d runs)\n", name, ms(ds[len(ds)/2]), ms(ds[0]), ms(ds[len(ds)*9/10]), ms(ds[len(ds)-1]), len(ds))
}
