#!/usr/bin/env bash
# The BF16 and FP8 shape maps on the device machine (issue #20): `gemmlab shapes --dtype bf16|fp8`
# over the tensor grid (squares 511-16385, LLaMA-3-8B/70B, LLaMA-2-7B and GPT-2 XL projections at
# 1, 16, 128, 2048 and 8192 tokens), each shape checked and timed against cuBLAS at its best in
# interleaved rounds, stored in OUT/shapes.sqlite and written as OUT/shapes_<dtype>_<gpu>.json.
#
#   bash benchmarks/run_shapes_tc_device.sh OUT [bf16] [fp8] [-- extra gemmlab shapes options]
#
# Afterwards, on any machine: gemmlab report OUT/shapes.sqlite --run N --out map.html
set -uo pipefail
OUT=${1:?usage: benchmarks/run_shapes_tc_device.sh OUT [bf16] [fp8] [-- options]}
shift
DTYPES=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do DTYPES+=("$1"); shift; done
[ "${1:-}" = "--" ] && shift
[ ${#DTYPES[@]} -eq 0 ] && DTYPES=(bf16 fp8)
mkdir -p "$OUT"
export PYTHONPATH=${PYTHONPATH:-src} PYTHONUNBUFFERED=1
export GEMMLAB_CACHE_DIR=${GEMMLAB_CACHE_DIR:-/tmp/gemmlab-shapes-tc-cache}
PY=${PYTHON:-python3}
GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
KEY=$(echo "${GPU:-gpu}" | tr 'A-Z' 'a-z' | sed -E 's/[^a-z0-9]+/_/g; s/^_+|_+$//g')
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv; date -u
  git rev-parse HEAD 2>/dev/null; } > "$OUT/device_shapes_$KEY.txt" 2>&1
for dt in "${DTYPES[@]}"; do
  t0=$(date +%s)
  COLUMNS=220 timeout "${SHAPES_TIMEOUT:-280}" $PY -m gemmlab shapes --dtype "$dt" --db "$OUT/shapes.sqlite" \
    --out "$OUT/shapes_${dt}_$KEY.json" --force "$@" > "$OUT/shapes_${dt}_$KEY.txt" 2>&1
  echo "exit $? after $(( $(date +%s) - t0 )) s" >> "$OUT/shapes_${dt}_$KEY.txt"
  tail -12 "$OUT/shapes_${dt}_$KEY.txt"
done
