#!/usr/bin/env bash
# compute-sanitizer over every path of the dispatch rung (issue #12: "compute-sanitizer clean"), or
# with "tc" every path of the tensor-core dispatch rungs (issue #20; sanitize_dispatch_tc.py).
#
#   bash benchmarks/run_sanitizer_device.sh OUT [tc]      (MATCH=128x160: only the tc cases containing it)
#
# 0. the cases once without a sanitizer (fills the kernel cache, checks the results)  -> OUT/plain.log
# 1. memcheck (out-of-bounds and misaligned accesses, every path)                     -> OUT/memcheck.log
# 2. initcheck (reads of never-written device memory: padding, workspace)             -> OUT/initcheck.log
# 3. racecheck (shared-memory hazards, small shapes of every kernel)                  -> OUT/racecheck.log
# 4. synccheck (barrier misuse, the same shapes)                                      -> OUT/synccheck.log
# plus OUT/summary.txt: each tool's exit status and its ERROR SUMMARY line.
set -uo pipefail
OUT=${1:?usage: benchmarks/run_sanitizer_device.sh OUT [tc]}
SCRIPT=benchmarks/sanitize_dispatch.py
[ "${2:-}" = tc ] && SCRIPT=benchmarks/sanitize_dispatch_tc.py
mkdir -p "$OUT"
export PYTHONPATH=${PYTHONPATH:-src} PYTHONUNBUFFERED=1
export GEMMLAB_CACHE_DIR=${GEMMLAB_CACHE_DIR:-/tmp/gemmlab-sanitizer-cache}
PY=${PYTHON:-python3}
CS=${COMPUTE_SANITIZER:-$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)}
S="$OUT/summary.txt"
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; "$CS" --version | tail -1; date -u; } > "$S" 2>&1
timeout 90 $PY $SCRIPT --set memcheck ${MATCH:+--match "$MATCH"} > "$OUT/plain.log" 2>&1
echo "plain (no sanitizer): exit $? - $(tail -1 "$OUT/plain.log")" >> "$S"
# tool:case set:seconds (under 8 minutes in all: the device's per-command limit is 10)
# --report-api-errors no: the tensor-core paths encode TMA descriptors through cuda.bindings, whose
# first call probes versioned driver entry points (cuGetProcAddress_v2 answers INVALID_VALUE for
# the versions this driver lacks, 34 times on the H100, tma.py's encode): host-side lookups, not
# kernel errors. A real API failure raises in Python and fails the case (exit 1).
for spec in memcheck:memcheck:200 initcheck:initcheck:80 racecheck:racecheck:80 synccheck:racecheck:60; do
  IFS=: read -r tool set_ secs <<< "$spec"
  timeout "$secs" "$CS" --tool "$tool" --error-exitcode 3 --print-limit 20 --report-api-errors no \
    $PY $SCRIPT --set "$set_" ${MATCH:+--match "$MATCH"} > "$OUT/$tool.log" 2>&1
  rc=$?
  echo "$tool (--set $set_): exit $rc - $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/$tool.log" | tail -1) - $(grep -E 'cases, ' "$OUT/$tool.log" | tail -1)" >> "$S"
done
cat "$S"
