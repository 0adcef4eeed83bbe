#!/usr/bin/env bash
# Everything of the profiling issue that needs a GPU and ncu, for the device machine (repo root):
#
#   bash benchmarks/run_profile_device.sh "$OUT" [tests|table|cli|all]
#
# tests: the GPU tests of tests/gpu/test_profile_gpu.py (default vs --set full on one rung, the
#        no-match listing, the rung target program, CUPTI seeing CuPy kernels)
# table: benchmarks/profile_passes.py on every ladder rung at 2048^3 (+ per-group pass costs)
# cli:   the commands as a user runs them: profile two rungs, diff them, a CUPTI timeline, and the
#        ladder --profile tables from a real ladder run
# Each stage fits well inside 10 minutes on an H100; `all` runs the three in order. Reports go to
# /tmp/gemmlab-device (not $OUT); $OUT gets at most 8 small files.
set -uo pipefail
OUT=${1:?usage: run_profile_device.sh OUT [tests|table|cli|all]}
STAGE=${2:-all}
mkdir -p "$OUT" /tmp/gemmlab-device
export PYTHONPATH="$PWD/src${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
PY=python3

{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  $PY -c "import cupy, torch; print('cupy', cupy.__version__, 'torch', torch.__version__)"
  $PY -c "from gemmlab.profile.runner import find_ncu; print('ncu at', find_ncu(None))"
  date -u +%Y-%m-%dT%H:%M:%SZ; } 2>&1 | tee "$OUT/device.txt"

if [[ $STAGE == tests || $STAGE == all ]]; then
  $PY -m pytest -q -rA tests/gpu/test_profile_gpu.py -p no:cacheprovider 2>&1 | tee "$OUT/gpu_tests.txt"
fi

if [[ $STAGE == table || $STAGE == all ]]; then
  $PY benchmarks/profile_passes.py --shape 2048,2048,2048 --per-group coalesced --timeout 300 \
      --reports /tmp/gemmlab-device/passes --out "$OUT/profile_passes.json" --md "$OUT/profile_passes.md" \
      2>&1 | tee "$OUT/profile_passes.log"
fi

if [[ $STAGE == cli || $STAGE == all ]]; then
  R=/tmp/gemmlab-device/cli-$(date +%s)
  {
    echo "== gemmlab profile smem_tiled"; $PY -m gemmlab profile smem_tiled -o "$R/smem_tiled"
    echo "== gemmlab profile smem_tiled_unroll"; $PY -m gemmlab profile smem_tiled_unroll -o "$R/smem_tiled_unroll"
    echo "== gemmlab diff"; $PY -m gemmlab diff "$R/smem_tiled.ncu-rep" "$R/smem_tiled_unroll.ncu-rep"
    echo "== gemmlab profile (no overwrite)"; $PY -m gemmlab profile smem_tiled -o "$R/smem_tiled" < /dev/null; echo "exit $?"
    echo "== gemmlab profile (no match)"; $PY -m gemmlab profile --kernel '^nope$' -- $PY -m gemmlab.profile.target --rung coalesced --shape 256,256,256 --warmup 1; echo "exit $?"
    echo "== gemmlab timeline (CUPTI)"; $PY -m gemmlab timeline -- $PY -m gemmlab.profile.target --rung coalesced --shape 1024,1024,1024 --warmup 3
  } 2>&1 | tee "$OUT/cli.txt"
  {
    $PY -m gemmlab ladder --size 2048 --profile --no-store --out "$OUT/ladder_profile.json" --force
    echo "exit $?"
  } 2>&1 | tee "$OUT/ladder_profile.txt"
fi
