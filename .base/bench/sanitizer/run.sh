#!/usr/bin/env bash
# compute-sanitizer over every product kernel (bench/sanitizer/all-kernels.ts), one tool at a time.
# Prints each tool's summary line and ends with one line per tool; exit status 1 if a tool found
# errors or the script failed. Kernels are built with -lineinfo (codegen/kernels/build.ts), so
# reports name source lines.
#
#   bash bench/sanitizer/run.sh                 # memcheck racecheck synccheck initcheck
#   bash bench/sanitizer/run.sh memcheck        # one tool
#   SANITIZER=/usr/local/cuda/bin/compute-sanitizer bash bench/sanitizer/run.sh
set -u
cd "$(dirname "$0")/../.."
SANITIZER="${SANITIZER:-$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)}"
if [ ! -x "$SANITIZER" ]; then
  echo "compute-sanitizer not found (set SANITIZER=/path/to/compute-sanitizer)"
  exit 2
fi
TOOLS=("$@")
[ ${#TOOLS[@]} -eq 0 ] && TOOLS=(memcheck racecheck synccheck initcheck)
OUT="${OUT_DIR:-${TMPDIR:-/tmp}/tscuda-sanitizer}"
mkdir -p "$OUT"
SCRIPT=(node --import tsx bench/sanitizer/all-kernels.ts)
summary=()
status=0
for tool in "${TOOLS[@]}"; do
  extra=()
  # Node itself and libraries the driver loads are not ours: check only device code we launch,
  # and keep going past the first report so one run lists every error.
  case "$tool" in
    memcheck) extra=(--leak-check no --report-api-errors no) ;;
    initcheck) extra=() ;;
  esac
  log="$OUT/$tool.log"
  echo "== $tool"
  "$SANITIZER" --tool "$tool" "${extra[@]}" --error-exitcode 99 --print-limit 100 "${SCRIPT[@]}" >"$log" 2>&1
  rc=$?
  # compute-sanitizer's own last line: "========= ERROR SUMMARY: N errors" (racecheck adds hazards).
  line=$(grep -E '^========= (ERROR|RACECHECK) SUMMARY' "$log" | tail -2 | tr '\n' ' ')
  script=$(grep -E '^all-kernels:' "$log" | tail -1)
  tail -n 25 "$log" | grep -E '^(FAIL|=========)' | head -20
  [ -z "$line" ] && line="(no summary: see $log)"
  summary+=("$tool: ${line}| exit $rc | ${script:-script printed no summary}")
  [ "$rc" -ne 0 ] && status=1
done
echo
echo "compute-sanitizer summary ($(date -u +%FT%TZ), logs in $OUT/):"
for s in "${summary[@]}"; do echo "  $s"; done
exit $status
