#!/usr/bin/env bash
# Does the queue bench's run length move queue_two_worker_speedup (issue 25)? Runs
# `tsx bench/queue/main.ts` alternately with each --jobs count given (default: 2000 8000), ROUNDS
# times, on a two-GPU host with .gpu-redis/ carried; prints each run's speedup, pairs, overhead and
# the clients' finishing spread, and leaves every run's results in $OUT/queue-jobs-ab.tgz.
#   bash bench/probe/queue-jobs-ab.sh [JOBS ...]
set -uo pipefail
OUT=${OUT:-$PWD/gpu-out}
ROUNDS=${ROUNDS:-2}
if [ $# -gt 0 ]; then COUNTS=("$@"); else COUNTS=(2000 8000); fi
[ -x .gpu-redis/redis-server ] && export TSCUDA_REDIS_SERVER=$PWD/.gpu-redis/redis-server
tsx codegen/kernels/build.ts 2>&1 | tail -1
for round in $(seq 1 "$ROUNDS"); do
  for jobs in "${COUNTS[@]}"; do
    d=$OUT/queue-jobs-$jobs-$round; mkdir -p "$d"; start=$(date +%s)
    TSCUDA_BENCH_OUT=$d timeout 200 tsx bench/queue/main.ts --jobs "$jobs" --pairs 2 --fault-jobs 0 --overhead-runs 200 > "$d/stdout.log" 2>&1
    echo "=== --jobs $jobs, round $round ($(( $(date +%s) - start )) s)"
    grep -ahE "^\| queue_(two|overhead|stft_jobs)|alternated pair|clients finished" "$d"/*.md | cut -c1-400
  done
done
(cd "$OUT" && tar czf queue-jobs-ab.tgz queue-jobs-* && rm -rf queue-jobs-*/)
