#!/usr/bin/env bash
# A CPU profile of `tscuda serve`'s worker under one serve bench row, on a GPU host:
#   tools/profile-serve.sh [small|throughput] [concurrency] [seconds] [workers]
# Writes the .cpuprofile files (primary and workers) and a self-time summary to $OUT/profile.
set -uo pipefail
OUT=${OUT:-$PWD/gpu-out}; mkdir -p "$OUT/profile"
mix=${1:-throughput}; c=${2:-16}; s=${3:-8}; w=${4:-1}
port=$((18000 + RANDOM % 1000))
node --cpu-prof --cpu-prof-dir="$OUT/profile" --import tsx src/cli/main.ts serve --workers "$w" --port "$port" > "$OUT/profile/serve.log" 2>&1 &
pid=$!
for _ in $(seq 1 120); do curl -sf "http://127.0.0.1:$port/v2/health/ready" > /dev/null && break; sleep 0.5; done
tsx bench/serve/profile-drive.ts "http://127.0.0.1:$port" "$mix" "$c" 2 > /dev/null # warm-up
# CPU ticks of every thread of the server's process tree, before and after the measured drive: the JS
# profile sees only each main thread, and a native thread (CUDA's, libuv's pool) spinning would not show there.
thread_ticks() {
  local p
  for p in $pid $(pgrep -P "$pid") $(for q in $(pgrep -P "$pid"); do pgrep -P "$q"; done); do
    for t in /proc/"$p"/task/*; do
      [ -r "$t/stat" ] && echo "$p $(basename "$t") $(tr -d ' ' < "$t/comm") $(sed 's/^.*) //' "$t/stat" | awk '{print $12 + $13}')"
    done
  done
}
thread_ticks > "$OUT/profile/ticks-before.txt"
tsx bench/serve/profile-drive.ts "http://127.0.0.1:$port" "$mix" "$c" "$s" | tee "$OUT/profile/drive.json"
thread_ticks > "$OUT/profile/ticks-after.txt"
echo "CPU seconds per thread over the measured drive (process, thread name; $(getconf CLK_TCK) ticks/s):"
awk -v hz="$(getconf CLK_TCK)" 'NR==FNR { b[$1" "$2]=$4; next } { d=$4-b[$1" "$2]; if (d > 0) printf "%s %s %.2f\n", $1, $3, d/hz }' \
  "$OUT/profile/ticks-before.txt" "$OUT/profile/ticks-after.txt" | sort -k3 -nr | head -20 | tee "$OUT/profile/threads.txt"
kill -TERM "$pid"; wait "$pid"
for f in "$OUT"/profile/*.cpuprofile; do echo "== $(basename "$f")"; node tools/cpuprofile-top.mjs "$f" 25; done > "$OUT/profile/summary.txt"
cat "$OUT/profile/summary.txt" | head -120
