#!/usr/bin/env bash
# The STFT jobs (f32 and i16) by engine shape, alternated so that the link's drift between runs
# shows: copy-stream pairs per device (TSCUDA_ENGINE_COPY_PAIRS), lanes, lane depth, jobs in flight
# per lane. One line per run: each metric's median and the run's both-ways PCIe figure.
#   bash bench/probe/engine-copy-pairs.sh "1 4 2 3" "2 4 2 3" ...   (pairs lanes depth in-flight)
set -uo pipefail
ROUNDS=${ROUNDS:-2}
CONFIGS=("$@")
ONLY=${ONLY:-'^stft_job_(i16_gsamples_per_s|i16_bound_fraction|gsamples_per_s|pcie_fraction)$'}
for round in $(seq 1 "$ROUNDS"); do
  for cfg in "${CONFIGS[@]}"; do
    read -r pairs lanes depth inflight <<< "$cfg"
    echo "=== round $round: copy pairs $pairs, lanes $lanes, depth $depth, in flight per lane $inflight"
    dir=$(mktemp -d)
    TSCUDA_BENCH_OUT=$dir TSCUDA_ENGINE_COPY_PAIRS=$pairs TSCUDA_BENCH_ENGINE_LANES=$lanes TSCUDA_BENCH_ENGINE_DEPTH=$depth TSCUDA_BENCH_ENGINE_IN_FLIGHT=$inflight \
      timeout 120 tsx bench/main.ts --only "$ONLY" --no-peers --no-native --reps 5 > "$dir/stdout.log" 2>&1 || tail -5 "$dir/stdout.log"
    cat "$dir"/*.md 2>/dev/null | grep -aE "^\| stft_job|both directions at once" | sed -E 's/^ *- tscuda: //' | cut -c1-300 | sort -u
  done
done
