#!/usr/bin/env bash
# Runs every fuzz target (or those of the packages given) for FUZZTIME each
# and prints what each did: executions, executions per second (over the
# whole run, minimising and the baseline included) and the inputs that
# reached new code. A failure prints go test's output and fails the script.
#
#   scripts/fuzz.sh                       # FUZZTIME=10s per target
#   FUZZTIME=2m scripts/fuzz.sh ./store   # one package, longer
#
# MINIMIZE bounds the minimising of each input that reaches new code
# (go test's default is 60s, which can take a short run's whole time; a
# target with a big instrumented dependency then does ~0 executions/s).
#
# Go 1.26's fuzzing coordinator can fail a run with a bare "context
# deadline exceeded" when -fuzztime ends (go.dev/issue/75804, fixed in Go
# 1.27). Such a run wrote no failing input and reports nothing else; it is
# counted as passed, with a note. Any other failure fails the script.
set -euo pipefail
cd "$(dirname "$0")/.."
FUZZTIME=${FUZZTIME:-10s}
MINIMIZE=${MINIMIZE:-1s}
if [ $# -eq 0 ]; then
  set -- $(go list ./...)
fi

# seconds turns go's durations ("9s", "1m3s", "2h0m1s") into seconds.
seconds() {
  awk -v d="$1" 'BEGIN { s = 0; n = ""
    for (i = 1; i <= length(d); i++) { c = substr(d, i, 1)
      if (c ~ /[0-9.]/) { n = n c } else { s += n * (c == "h" ? 3600 : c == "m" ? 60 : 1); n = "" } }
    print s }'
}

status=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
log="$tmp/log"
cache="$(go env GOCACHE)/fuzz"
module=$(go list -m)
for pkg in "$@"; do
  read -r dir path < <(go list -f '{{.Dir}} {{.ImportPath}}' "$pkg")
  grep -qs '^func Fuzz' "$dir"/*_test.go || continue
  # One instrumented test binary per package, run once per target from the
  # package folder (as go test does), saves go test's start-up per target.
  bin="$tmp/pkg.test"
  go test -c -fuzz=. -o "$bin" "$pkg"
  for target in $("$bin" -test.list '^Fuzz' | grep '^Fuzz'); do
    corpus="$dir/testdata/fuzz/$target"
    before=$(ls "$corpus" 2>/dev/null || true)
    if ! (cd "$dir" && "$bin" -test.run='^$' -test.fuzz="^${target}\$" -test.fuzztime="$FUZZTIME" \
      -test.fuzzminimizetime="$MINIMIZE" -test.fuzzcachedir="$cache/$path" -test.paniconexit0) >"$log" 2>&1; then
      after=$(ls "$corpus" 2>/dev/null || true)
      failures=$(grep -cE '^ +[^ f]' "$log" || true) # indented failure lines, "fuzz:" progress aside
      if [ "$before" = "$after" ] && grep -qx '    context deadline exceeded' "$log" && [ "$failures" -eq 1 ]; then
        echo "note: $target ended with Go's fuzztime race (go.dev/issue/75804); no failing input"
      else
        cat "$log"
        echo "FAIL $pkg $target"
        status=1
        continue
      fi
    fi
    last=$(grep -E '^fuzz: elapsed: [^,]+, execs: ' "$log" | tail -1 || true)
    elapsed=$(echo "$last" | sed -E 's/^fuzz: elapsed: ([^,]+), .*/\1/')
    execs=$(echo "$last" | sed -E 's/.* execs: ([0-9]+) .*/\1/')
    found=$(echo "$last" | sed -E 's/.*new interesting: ([0-9]+).*/\1/')
    secs=$(seconds "${elapsed:-0s}")
    rate=$(awk -v e="${execs:-0}" -v s="$secs" 'BEGIN { printf "%d", (s > 0 ? e / s : 0) }')
    shown=${path#"$module"}
    printf '%-24s %-26s %10s execs %8s/s %5s new\n' "./${shown#/}" "$target" "${execs:-0}" "$rate" "${found:-0}"
  done
done
exit $status
