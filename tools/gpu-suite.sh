#!/usr/bin/env bash
# The whole GPU cycle in one call on a lent GPU host (no npm there: node_modules/.bin on PATH).
#   tools/gpu-suite.sh tests   -> kernels, the GPU test suite (every GPU), the several-GPU tests again
#                                 on one GPU (skipped by name), the demo, compute-sanitizer
#   tools/gpu-suite.sh bench   -> npm run bench (C, Python peers, tscuda, engine metrics), and the
#                                 landed tree's STFT job rows in the same call (.base/, below)
#   tools/gpu-suite.sh signal  -> the signal functions' GPU tests (test/gpu/signal, the NVRTC fallback) and their
#                                 bench rows against CuPy and PyTorch (npm run bench:signal); about 4 minutes
#   tools/gpu-suite.sh one-gpu -> the whole GPU test suite again with only GPU 0 visible (the two-GPU
#                                 tests skip by name): issue 23's second condition
#   tools/gpu-suite.sh multi [--quick] -> the several-GPU bench and the queue bench (two worker
#                                 processes, against bare BullMQ's floor); about 3 minutes, --quick 2
#   tools/gpu-suite.sh serve [--quick] [bench options] -> the HTTP load bench: every row against its
#                                 bare node:http floor (1, 2 and the default workers), fusing off/on,
#                                 overload, the Python peer, the fault run; about 7 minutes, --quick 3
#   tools/gpu-suite.sh serve-before-after -> the short serve bench on .base/ (landed tree) and on this tree
# Logs and artifacts go to $OUT (or ./gpu-out). A redis-server for the queue tests and bench is
# taken from .gpu-redis/ (Debian's package, extracted; see docs/scale-out.md) when present.
set -uo pipefail
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
export NCCL_NVLS_ENABLE=0
[ -x .gpu-redis/redis-server ] && export TSCUDA_REDIS_SERVER=$PWD/.gpu-redis/redis-server
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
# The results are the Node line's as much as the GPU's (the doors' costs differ between lines): run on
# a supported line, carried by scripts/gpu-node.sh.
echo "node $(node --version)"
node_major=$(node -p 'process.versions.node.split(".")[0]')
if [ "$node_major" -lt 22 ]; then
  echo "gpu-suite: Node $(node --version) is not a supported line (>= 22.12): carry one with scripts/gpu-node.sh 22 and source .gpu-node22/enter.sh"
  # Measurements on it would say nothing of what users run (TSCUDA_ALLOW_OLD_NODE=1 to measure anyway).
  case "${1:-tests}" in bench|signal|multi|serve|serve-before-after) [ "${TSCUDA_ALLOW_OLD_NODE:-0}" = 1 ] || exit 2 ;; esac
fi
# The kernels for this host's GPU alone (its build goes with the machine): a third of the compile time.
export TSCUDA_KERNEL_ARCH=${TSCUDA_KERNEL_ARCH-$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d .)}
tsx codegen/kernels/build.ts 2>&1 | tail -4
# .base/: the landed tree, for same-call comparisons: its package.json, tsconfig.json, src, bench, codegen,
# test/kernels, tools and scripts (the bench imports test/kernels' launchers) with its own fatbins, packed
# as .gpu/base.tar.xz holding base/ (`git archive <landed> ... | tar -x -C /tmp/base`, `npx tsx
# codegen/kernels/build.ts` inside it where nvcc is, then `tar -cf - -C /tmp base | xz`), unpacked here
# on first use (.base/ is ignored, so the device keeps it between calls).
base_tree() {
  if [ ! -d .base/src ] && [ -s .gpu/base.tar.xz ]; then
    mkdir -p .base && xz -dc .gpu/base.tar.xz | tar -x -C .base --strip-components=1
  fi
  [ -d .base/src ] && ln -sfn "$PWD/node_modules" .base/node_modules
}
summary() { grep -aE "^ (✓|×|↓)| FAIL |Test Files|Tests |Errors |watchdog|stuck" "$1" | grep -av "^ ✓" | tail -40; }
case "${1:-tests}" in
  tests)
    TSCUDA_REQUIRE_GPU=1 vitest run --project gpu > "$OUT/gpu-tests.log" 2>&1
    summary "$OUT/gpu-tests.log"
    # The several-GPU tests again with one GPU visible: only where there are several (on one they just ran so).
    if [ "$(nvidia-smi -L | wc -l)" -gt 1 ]; then
      CUDA_VISIBLE_DEVICES=0 vitest run --project gpu test/gpu/multi test/gpu/engine/multi-device.test.ts test/gpu/queue > "$OUT/one-gpu.log" 2>&1
      echo "one GPU (CUDA_VISIBLE_DEVICES=0):"; grep -aE "Test Files|Tests " "$OUT/one-gpu.log"; grep -aoE "needs 2 GPUs[^)]*|needs 2[^)]*" "$OUT/one-gpu.log" | sort | uniq -c | head -5
    fi
    mkdir -p "$OUT/demo"
    timeout 120 tsx src/cli/main.ts demo --seconds 5 --out "$OUT/demo" 2>&1 | tail -30
    # TSCUDA_SKIP_SANITIZER=1: kernels unchanged since the last clean sanitizer run (saves ~4 min of device time).
    if [ "${TSCUDA_SKIP_SANITIZER:-0}" != 1 ]; then timeout 240 bash bench/sanitizer/run.sh > "$OUT/sanitizer.log" 2>&1; tail -8 "$OUT/sanitizer.log"; fi
    ;;
  signal)
    TSCUDA_REQUIRE_GPU=1 timeout 240 vitest run --project gpu test/gpu/signal test/gpu/kernels/nvrtc-fallback.test.ts > "$OUT/signal-tests.log" 2>&1
    summary "$OUT/signal-tests.log"
    TSCUDA_BENCH_OUT="$OUT" timeout 240 tsx bench/main.ts --only '^signal_' > "$OUT/signal-bench.log" 2>&1; tail -30 "$OUT/signal-bench.log"
    ;;
  one-gpu)
    CUDA_VISIBLE_DEVICES=0 TSCUDA_REQUIRE_GPU=1 vitest run --project gpu > "$OUT/gpu-tests-one-gpu.log" 2>&1
    summary "$OUT/gpu-tests-one-gpu.log"; grep -aoE "needs 2 GPUs[^)]*|needs 2[^)]*" "$OUT/gpu-tests-one-gpu.log" | sort | uniq -c | head -5
    ;;
  bench)
    TSCUDA_BENCH_OUT="$OUT" timeout 420 tsx bench/main.ts "${@:2}" > "$OUT/bench.log" 2>&1; tail -45 "$OUT/bench.log"
    # The landed tree's STFT job rows (f32, pageable, i16 in and f16 out), same host, same call.
    if base_tree; then
      (cd .base && TSCUDA_BENCH_OUT="$OUT/base" timeout 200 tsx bench/main.ts --only '^stft_job' > "$OUT/base-bench.log" 2>&1); echo "landed tree:"; grep -a "^stft_job" "$OUT/base-bench.log" || tail -5 "$OUT/base-bench.log"
    fi
    ;;
  multi)
    # --quick: one pair of queue runs, a shorter fault run, fewer jobs.
    QUEUE_ARGS=(); MULTI_LIMIT=240
    [ "${2:-}" = --quick ] && QUEUE_ARGS=(--jobs 1000 --pairs 1 --fault-jobs 1500 --fault-seconds 8 --overhead-runs 200) && MULTI_LIMIT=120
    # TSCUDA_SKIP_MULTI_BENCH=1: the queue bench alone (the several-GPU bench needs several GPUs to say anything).
    [ "${TSCUDA_SKIP_MULTI_BENCH:-0}" != 1 ] && TSCUDA_BENCH_OUT="$OUT" timeout $MULTI_LIMIT tsx bench/tscuda/multi-gpu.ts --results-dir "$OUT/multi" > "$OUT/multi.log" 2>&1; tail -25 "$OUT/multi.log"
    if [ "${TSCUDA_SKIP_QUEUE_BENCH:-0}" != 1 ]; then TSCUDA_BENCH_OUT="$OUT" timeout 280 tsx bench/queue/main.ts "${QUEUE_ARGS[@]}" > "$OUT/queue.log" 2>&1; tail -25 "$OUT/queue.log"; fi
    ;;
  serve)
    TSCUDA_BENCH_OUT="$OUT" timeout 570 tsx bench/serve/main.ts "${@:2}" > "$OUT/serve.log" 2>&1
    # The headline metrics, the floor rows and their goals, fusing, overload verdicts, notes.
    grep -aE "^\| |^- |^## |wrote " "$OUT/serve.log" | tail -90
    ;;
  serve-before-after)
    # The serve load bench on the landed tree (.base/) and on this one, same host, same options
    # (short: no fault run, no overload); the Python peer runs once, with this tree.
    base_tree || { echo "gpu-suite: no .base/ and no .gpu/base.tar.xz: nothing to compare with"; exit 2; }
    (cd .base && TSCUDA_BENCH_OUT="$OUT/serve-base" timeout 200 tsx bench/serve/main.ts --quick --no-fault --no-overload --no-python "${@:2}" > "$OUT/serve-base.log" 2>&1); echo "landed tree:"; grep -aE "serve_stft_rps|serve_stft_p99|serve_stft_gsamples" "$OUT/serve-base.log" | tail -4
    TSCUDA_BENCH_OUT="$OUT/serve" timeout 300 tsx bench/serve/main.ts --quick --no-fault --no-overload "${@:2}" > "$OUT/serve.log" 2>&1; echo "this tree:"; grep -aE "serve_stft_rps|serve_stft_p99|serve_stft_gsamples" "$OUT/serve.log" | tail -4
    ;;
esac
