#!/usr/bin/env bash
# The Hopper rungs of the BF16 ladder (wgmma_bf16, tma_bf16, ws_bf16, persistent_bf16) on an
# H100/H200: a probe per rung (one process each, so a hung pipeline costs one timeout), their
# GPU tests, then `gemmlab ladder --dtype bf16` at 4096^3 and 8192^3 with cuBLAS BF16 timed in
# the same run. Files in OUT: device.txt, probe.txt, gpu_tests.log, ladder_bf16_4096.json,
# ladder_bf16_8192.json, ladder.txt. Usage, from the repository root on the device machine:
#   bash benchmarks/run_hopper_device.sh OUT [RUNG...]
set -uo pipefail
OUT="${1:?usage: run_hopper_device.sh OUT [RUNG...]}"; shift
RUNGS=("$@"); [ ${#RUNGS[@]} -eq 0 ] && RUNGS=(wgmma_bf16 tma_bf16 ws_bf16 persistent_bf16)
mkdir -p "$OUT"
export PYTHONPATH="$PWD/src" PYTHONUNBUFFERED=1
W=$(mktemp -d /tmp/gemmlab-hopper.XXXXXX)
export GEMMLAB_DB="$W/runs.sqlite" GEMMLAB_CACHE_DIR="$W/cache"
PY=${PYTHON:-python3}
{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,compute_cap --format=csv
  date -u; git rev-parse HEAD 2>/dev/null
  $PY -c "import cupy, cuda.bindings; print('cupy', cupy.__version__, 'cuda.bindings', cuda.bindings.__version__)"
} > "$OUT/device.txt" 2>&1

for r in "${RUNGS[@]}"; do
  timeout 90 $PY benchmarks/hopper_probe.py "$r" --time >> "$OUT/probe.txt" 2>&1
  rc=$?; echo "probe $r exit $rc" >> "$OUT/probe.txt"
  if grep -q "^(128, 256, 64): WRONG" <(sed -n "/== $r variant=none/,\$p" "$OUT/probe.txt"); then
    timeout 60 $PY benchmarks/hopper_probe.py "$r" --variant swap_b_desc >> "$OUT/probe.txt" 2>&1
    echo "probe $r swap_b_desc exit $?" >> "$OUT/probe.txt"
  fi
done

timeout 240 $PY -m pytest -q -rs -x -p no:cacheprovider tests/gpu/test_bf16_gpu.py \
  > "$OUT/gpu_tests.log" 2>&1
echo "pytest exit $?" >> "$OUT/gpu_tests.log"

for n in 4096 8192; do
  timeout 120 $PY -m gemmlab ladder --dtype bf16 --size "$n" --rep-ms 100 \
    --out "$OUT/ladder_bf16_$n.json" --force >> "$OUT/ladder.txt" 2>&1
  echo "ladder $n exit $?" >> "$OUT/ladder.txt"
done
