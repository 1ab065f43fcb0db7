#!/usr/bin/env bash
# Measures reme as a user runs it: whole processes on a generated workspace of
# N cards (default 10,000). Prints one line per figure (medians of RUNS runs).
#
#   scripts/bench.sh                  # N=10000 RUNS=11
#   N=100000 RUNS=11 scripts/bench.sh # 100k cards: several minutes
#   N=2000 RUNS=5 ONLY=search scripts/bench.sh
#
# ONLY=search measures the index and search figures only (no auto_memory,
# watch latency or vision); HYBRID=0 leaves out hybrid search.
set -euo pipefail
cd "$(dirname "$0")/.."
N=${N:-10000}
RUNS=${RUNS:-11}
REINDEX_RUNS=${REINDEX_RUNS:-3}
HYBRID=${HYBRID:-1}
ONLY=${ONLY:-}
dir=$(mktemp -d "${TMPDIR:-/tmp}/reme-bench.XXXXXX")
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  rm -rf "$dir"
}
trap cleanup EXIT

CGO_ENABLED=0 go build -o "$dir/reme" .
go build -o "$dir/benchrun" ./scripts/benchrun
go build -o "$dir/fakecohere" ./scripts/fakecohere
reme="$dir/reme"
run="$dir/benchrun"
ws="$dir/ws"
# Keyword figures must not depend on keys in the caller's environment.
unset COHERE_API_KEY CO_API_KEY OPENAI_API_KEY LLM_API_KEY EMBEDDING_API_KEY REME_LLM_BASE_URL 2>/dev/null || true

echo "# reme $("$reme" version | cut -d' ' -f2-), $(nproc) cores, $(go env GOOS)/$(go env GOARCH), $(date -u +%Y-%m-%d)"
echo "binary (CGO_ENABLED=0)             $(($(stat -c %s "$reme") / 1024 / 1024)) MB"
CGO_ENABLED=0 go build -ldflags='-s -w' -o "$dir/reme-stripped" .
echo "binary (CGO_ENABLED=0, -s -w)      $(($(stat -c %s "$dir/reme-stripped") / 1024 / 1024)) MB"
go run ./scripts/gencorpus -n "$N" -out "$ws" 2>/dev/null
cards=$(find "$ws/daily" -name '*.md' -printf '%s\n' | awk '{s += $1} END {print s}')
echo "corpus                             $N cards, $((cards / 1024 / 1024)) MB of markdown"

"$run" -name "reindex $N cards" -n "$REINDEX_RUNS" -warmup 0 -before "rm -rf '$ws/metadata'" -- "$reme" -w "$ws" reindex 2>/dev/null
db=$(stat -c %s "$ws/metadata/index.db")
awk -v d="$db" -v c="$cards" 'BEGIN {printf "index.db                           %.1f MB, %.2f x the cards\n", d / 1048576, d / c}'

# median NAME: the median (ms) of the last benchrun line with that name
median() { awk -v n="$1" 'index($0, n) == 1 {for (i = 1; i <= NF; i++) if ($i == "median") m = $(i + 1)} END {print m}' "$dir/out"; }
ratio() { awk -v a="$(median "$1")" -v b="$(median "$2")" -v l="$3" 'BEGIN {printf "%-34s %.2f x\n", l, a / b}'; }
queries=("applyShard" "release" "what did we decide about the login flow" "deploy rollback canary" "登录流程" "p99 latency regression")
searches() { # label suffix, extra flags
  local s=$1
  shift
  : > "$dir/out"
  for q in "${queries[@]}"; do
    "$run" -name "search$s: $q" -n "$RUNS" -- "$reme" -w "$ws" search --no-hybrid "$@" "$q" | tee -a "$dir/out"
  done
  ratio "search$s: release" "search$s: applyShard" "  word in 87% of cards / rare word"
  ratio "search$s: what did we decide about the login flow" "search$s: applyShard" "  3-word question / rare word"
}

echo "## search, no watcher: every search stats every note"
searches ""

# the same queries through reme mcp: one server process, round trips of the
# official Go SDK's client (nothing changed between calls)
go build -o "$dir/mcpbench" ./scripts/mcpbench
"$dir/mcpbench" -reme "$reme" -w "$ws" -n $((RUNS * 20)) "${queries[@]}"

# one card changed before each search (a different line appended each time)
card=$(find "$ws/daily" -mindepth 2 -name '*.md' | sort | sed -n "$((N / 2))p")
"$run" -name "search after 1 card changed" -n "$RUNS" -before "echo \"edited \$(date +%s%N)\" >> '$card'" \
  -- "$reme" -w "$ws" search --no-hybrid "deploy rollback canary"

echo "## search while reme watch runs: the watcher vouches for the index"
"$reme" -w "$ws" watch 2> "$dir/watch-idle.log" &
pids+=($!)
for _ in $(seq 600); do
  "$reme" -w "$ws" -v search --no-hybrid applyShard 2>&1 >/dev/null | grep -q 'the watcher vouched' && break
  sleep 0.1
done
searches " (watch)"
"$run" -name "search (watch) after 1 card changed" -n "$RUNS" -before "echo \"edited \$(date +%s%N)\" >> '$card'" \
  -- "$reme" -w "$ws" search --no-hybrid "deploy rollback canary"
kill -INT "${pids[-1]}"
wait "${pids[-1]}" 2>/dev/null || true

# the fake model answers at once: what remains is reme's own work
"$dir/fakecohere" > "$dir/fake.url" &
pids+=($!)
for _ in 1 2 3 4 5 6 7 8 9 10; do [ -s "$dir/fake.url" ] && break; sleep 0.2; done
if [ "$HYBRID" = 1 ]; then
  echo "## hybrid search (embeddings from an instant fake model; the question's own embedding call included)"
  REME_LLM_BASE_URL=$(cat "$dir/fake.url") COHERE_API_KEY=fake-cohere-key-0123456789 "$reme" -w "$ws" reindex > /dev/null 2>&1
  for q in "what did we decide about the login flow" "release"; do
    REME_LLM_BASE_URL=$(cat "$dir/fake.url") COHERE_API_KEY=fake-cohere-key-0123456789 \
      "$run" -name "hybrid search: $q" -n "$RUNS" -- "$reme" -w "$ws" search "$q"
  done
  db=$(stat -c %s "$ws/metadata/index.db")
  awk -v d="$db" -v c="$cards" 'BEGIN {printf "index.db with 1536-dim vectors     %.1f MB, %.2f x the cards\n", d / 1048576, d / c}'
fi
[ "$ONLY" = search ] && exit 0

conv='[{"role":"user","content":"Our rate limit is 100 requests per second with a burst of 200.","created_at":"2025-06-15T09:00:00"},{"role":"assistant","content":"Noted: 100 rps, burst 200.","created_at":"2025-06-15T09:00:05"}]'
export REME_LLM_BASE_URL=$(cat "$dir/fake.url") COHERE_API_KEY=fake-cohere-key-0123456789
"$run" -name "auto_memory (instant fake model)" -n "$RUNS" -- "$reme" -w "$ws" auto_memory "session_id=bench-{n}" "messages=$conv"

# The Claude Code Stop hook: a 300-turn session (1.7 MB transcript), one new
# turn appended before each run; the hook saves it and starts the background
# run (against the instant fake model), whose own time is not counted.
go build -o "$dir/gentranscript" ./scripts/gentranscript
hook="$dir/hook"
mkdir -p "$hook"
"$dir/gentranscript" -n 300 > "$hook/transcript.jsonl"
echo 300 > "$hook/next"
printf '{"session_id":"6f1c2a3b-4d5e-4f60-8172-93a4b5c6d7e8","transcript_path":"%s","cwd":"%s","permission_mode":"default","hook_event_name":"Stop","stop_hook_active":false}\n' \
  "$hook/transcript.jsonl" "$hook" > "$hook/stop.json"
"$reme" -w "$ws" auto_memory_cc < "$hook/stop.json" > /dev/null # the session's first Stop copies all 300 turns
"$run" -name "Stop hook (auto_memory_cc)" -n "$RUNS" -stdin "$hook/stop.json" \
  -before "n=\$(cat '$hook/next'); '$dir/gentranscript' -from \$n >> '$hook/transcript.jsonl'; echo \$((n+1)) > '$hook/next'" \
  -- "$reme" -w "$ws" auto_memory_cc
# let the queued background runs finish before the fake model goes away
for _ in $(seq 600); do
  [ "$(grep -cE '\] (created|updated|unchanged|skipped)' "$ws/metadata/logs/auto_memory_cc.log")" -ge $((RUNS + 2)) ] && break
  sleep 0.1
done

# reme watch: time from writing a new resource to its card existing
"$reme" -w "$ws" watch 2> "$dir/watch.log" &
pids+=($!)
for _ in $(seq 100); do grep -q watching "$dir/watch.log" 2>/dev/null && break; sleep 0.1; done
sleep 1
mkdir -p "$ws/resource/2025-06-15"
lat=()
for i in 1 2 3 4 5; do
  start=$(date +%s%N)
  printf '# Watch test %s\n\nA note for the watcher.\n' "$i" > "$ws/resource/2025-06-15/watch-$i.md"
  until [ -e "$ws/daily/2025-06-15/watch-$i.md" ]; do sleep 0.01; done
  lat+=($((($(date +%s%N) - start) / 1000000)))
done
kill -INT "${pids[-1]}"
wait "${pids[-1]}" 2>/dev/null || true
sorted=($(printf '%s\n' "${lat[@]}" | sort -n))
echo "watch: new resource to card       median ${sorted[2]} ms  (min ${sorted[0]}, max ${sorted[4]}, 5 runs)"

# preparing a 4000x3000 JPEG for the model (go test -bench; median of 5)
go test -run '^$' -bench 'PrepareJPEG4000x3000$' -benchmem -count 5 ./vision/ | awk '/^Benchmark/ {print $3/1e6}' | sort -n |
  awk '{a[NR]=$1} END {printf "vision: prepare 4000x3000 JPEG      median %.0f ms  (min %.0f, max %.0f, %d runs)\n", a[int((NR+1)/2)], a[1], a[NR], NR}'
VISION_PEAK_RSS=1 go test -run TestPeakRSS -v ./vision | sed -n 's/.*peak RSS .* after reading the file, \(.*\) after Prepare/vision: prepare peak RSS               \1/p'

# maintain without a model: N cards and 1,000 long-term entries (a few
# duplicated, renamed, expired or past due), on a workspace of its own
mws="$dir/mws"
go run ./scripts/gencorpus -n "$N" -entries 1000 -out "$mws" 2>/dev/null
"$reme" -w "$mws" reindex > /dev/null 2>&1
cp -a "$mws" "$dir/mws.orig"
"$run" -name "maintain --dry-run ($N cards, 1000 entries)" -n "$RUNS" -- "$reme" -w "$mws" maintain --dry-run
"$run" -name "maintain, first run (20 archives)" -n 5 -before "rm -rf '$dir/mws.run'; cp -a '$dir/mws.orig' '$dir/mws.run'" \
  -- "$reme" -w "$dir/mws.run" maintain
for _ in 1 2 3 4 5; do "$reme" -w "$mws" maintain > /dev/null; done # until nothing is pending
"$run" -name "maintain, nothing to do" -n "$RUNS" -- "$reme" -w "$mws" maintain

# the change journal: bytes and time per 1,000 changes of 2 KB notes
go test -run '^$' -bench 'Journal1000Changes$' -benchtime 1x ./store/ |
  awk '/^Benchmark/ {printf "journal: 1000 changes of 2 KB notes  %s KB of lines, %s KB of preimages, %s µs per change\n", $5, $7, $9}'
