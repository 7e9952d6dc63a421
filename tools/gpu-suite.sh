#!/usr/bin/env bash
# The whole GPU cycle in one call on a lent GPU host (no npm there: node_modules/.bin on PATH).
#   tools/gpu-suite.sh tests   -> kernels, the GPU test suite, the demo, compute-sanitizer
#   tools/gpu-suite.sh bench   -> npm run bench (C, Python peers, tscuda, engine metrics)
#   tools/gpu-suite.sh serve   -> the HTTP load bench against the Python peer
# Logs and artifacts go to $OUT (or ./gpu-out).
set -uo pipefail
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
export NCCL_NVLS_ENABLE=0
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
tsx codegen/kernels/build.ts 2>&1 | tail -4
case "${1:-tests}" in
  tests)
    TSCUDA_REQUIRE_GPU=1 vitest run --project gpu 2>&1 | tee "$OUT/gpu-tests.log" | grep -aE "^ (✓|×|↓)| FAIL |Test Files|Tests |Errors " | grep -av "^ ✓" | tail -40
    grep -aE "Test Files|Tests " "$OUT/gpu-tests.log" | tail -2
    mkdir -p "$OUT/demo"
    timeout 120 tsx src/cli/main.ts demo --seconds 5 --out "$OUT/demo" 2>&1 | tail -30
    timeout 240 bash bench/sanitizer/run.sh 2>&1 | tee "$OUT/sanitizer.log" | tail -8
    ;;
  bench)
    TSCUDA_BENCH_OUT="$OUT" timeout 560 tsx bench/main.ts "${@:2}" 2>&1 | tee "$OUT/bench.log" | tail -60
    ;;
  serve)
    TSCUDA_BENCH_OUT="$OUT" timeout 560 tsx bench/serve/main.ts "${@:2}" 2>&1 | tee "$OUT/serve.log" | tail -40
    ;;
esac
