#!/usr/bin/env bash
# Which sub-unit carries each Speed-of-Light throughput, per kernel (device machine, repo root):
#
#   bash benchmarks/probes/sol_breakdown.sh "$OUT" [CASE_REGEX]
#
# gemmlab's targeted collection derives sm__throughput, l1tex__throughput, lts__throughput and
# gpu__compute_memory_throughput from a few of their sub-units (gemmlab.profile.metrics, DERIVED_SOL),
# since the breakdown metrics cost 26 replay passes. This captures every sub-unit of the four
# (ncu's breakdown: prefix) over the grown corpus workload, so the derivation can be checked against
# the throughput itself and a missing sub-unit found (benchmarks/probes/sol_breakdown_check.py).
set -uo pipefail
OUT=${1:?usage: sol_breakdown.sh OUT [CASE_REGEX]}
ONLY=${2:-}
mkdir -p "$OUT"
export PYTHONPATH="$PWD/src${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
NCU=$(command -v ncu || echo /opt/nvidia/nsight-compute/2025.3.1/ncu)
# ncu_report (for index.py) ships in extras/python beside the real ncu
export PYTHONPATH="$PYTHONPATH:$(dirname "$(readlink -f "$NCU")")/extras/python:$(ls -d /opt/nvidia/nsight-compute/*/extras/python 2>/dev/null | tail -1)"
M=""
for t in sm__throughput l1tex__throughput lts__throughput gpu__compute_memory_throughput; do
  M="$M${M:+,}breakdown:$t.avg.pct_of_peak_sustained_elapsed"
done
ARGS=(python3 benchmarks/corpus/workload_grown.py)
[ -n "$ONLY" ] && ARGS+=(--only "$ONLY")
t0=$SECONDS
"$NCU" --profile-from-start off --nvtx --nvtx-push-pop-scope process --clock-control none --target-processes all \
  --metrics "$M" -o "$OUT/sol_breakdown" -f "${ARGS[@]}" > "$OUT/sol_breakdown.log" 2>&1
echo "ncu: exit $? in $((SECONDS - t0)) s; $(grep -c '==PROF== Profiling' "$OUT/sol_breakdown.log") kernels"
"$NCU" -i "$OUT/sol_breakdown.ncu-rep" --page raw --csv > "$OUT/sol_breakdown_raw.csv"
python3 benchmarks/corpus/index.py "$OUT/sol_breakdown.ncu-rep" > "$OUT/sol_breakdown_index.json"
xz -9 "$OUT/sol_breakdown_raw.csv"
rm -f "$OUT/sol_breakdown.ncu-rep"
ls -la "$OUT"
