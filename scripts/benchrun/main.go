//go:build unix

// Command benchrun times whole processes: it runs a command several times
// and prints the median, minimum and maximum wall time and the peak RSS.
// An optional -before command runs (untimed) before each run; "{n}" in the
// arguments becomes the run number, for commands that need a fresh id.
//
//	benchrun -name search -n 11 -- reme -w ws search "login flow"
//	benchrun -name hook -stdin stop.json -- reme -w ws auto_memory_cc
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

func main() {
	name := flag.String("name", "", "label for the output line")
	n := flag.Int("n", 11, "number of timed runs")
	warmup := flag.Int("warmup", 1, "untimed runs first")
	before := flag.String("before", "", "shell command run before each run, untimed")
	stdin := flag.String("stdin", "", "file given to each run on stdin")
	flag.Parse()
	args := flag.Args()
	if len(args) == 0 || *n < 1 {
		fmt.Fprintln(os.Stderr, "usage: benchrun [-name NAME] [-n RUNS] [-before CMD] -- command args...")
		os.Exit(2)
	}
	if *name == "" {
		*name = args[0]
	}
	var walls []time.Duration
	var peakKB int64
	for i := -*warmup; i < *n; i++ {
		if *before != "" {
			pre := exec.Command("/bin/sh", "-c", *before)
			pre.Stdout, pre.Stderr = os.Stderr, os.Stderr
			if err := pre.Run(); err != nil {
				fmt.Fprintf(os.Stderr, "benchrun: before: %v\n", err)
				os.Exit(1)
			}
		}
		run := make([]string, len(args))
		for k, a := range args {
			run[k] = strings.ReplaceAll(a, "{n}", strconv.Itoa(i+*warmup))
		}
		cmd := exec.Command(run[0], run[1:]...)
		cmd.Stderr = os.Stderr // stdout goes to /dev/null: we time reme, not the terminal
		var in *os.File
		if *stdin != "" {
			var err error
			if in, err = os.Open(*stdin); err != nil {
				fmt.Fprintf(os.Stderr, "benchrun: %v\n", err)
				os.Exit(1)
			}
			cmd.Stdin = in
		}
		start := time.Now()
		err := cmd.Run()
		wall := time.Since(start)
		if in != nil {
			in.Close()
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "benchrun: %v\n", err)
			os.Exit(1)
		}
		if i < 0 {
			continue
		}
		walls = append(walls, wall)
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok && ru.Maxrss > peakKB {
			peakKB = ru.Maxrss
		}
	}
	sort.Slice(walls, func(i, j int) bool { return walls[i] < walls[j] })
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	fmt.Printf("%-34s median %8.1f ms  (min %.1f, max %.1f, %d runs)  peak RSS %d MB\n",
		*name, ms(walls[len(walls)/2]), ms(walls[0]), ms(walls[len(walls)-1]), len(walls), (peakKB+512)/1024)
}
