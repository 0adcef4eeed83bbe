#!/usr/bin/env bash
# session scratch (H200): the bandwidth-gated stream rule (stream_once_wins) - the rules' new plan
# (128 x 64 split-K 2) against the 64 x 64 tile it replaces, interleaved with cuBLAS at its best,
# three rounds; 128 x 4096 x 4096 as the control the rule leaves alone; then the GPU tests of the
# rules' plans at the grid shapes (the new plan included) and the bandwidth-aware decode rule
set -u
R=$OUT/r5; mkdir -p $R
export PYTHONPATH=$PWD/src:$PWD/tests PYTHONUNBUFFERED=1 GEMMLAB_CACHE_DIR=/tmp/glc
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv > $R/device.txt; date -u >> $R/device.txt
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
SH="128,4096,14336;96,4096,14336;128,4096,4096"
for dt in bf16 fp8; do
  timeout 120 python3 benchmarks/tc_dispatch_compare.py --dtype $dt --rounds 3 --rep-ms 8 --only "64x64 S=1" \
    --shapes "$SH" --json $R/rule_$dt.json > $R/rule_$dt.txt 2>&1; el "rule $dt $?"
done
timeout 200 python3 -m pytest -q -p no:cacheprovider tests/gpu/test_dispatch_tc_gpu.py -k "model_shapes or decode_rule" -rs > $R/gpu_tests.log 2>&1; el "gpu tests $?"; tail -n 3 $R/gpu_tests.log
grep -h "dispatch\|64x64 S=1\|cuBLAS" $R/rule_*.txt | cut -c1-120
tar cJf $OUT/r5.tar.xz -C $OUT r5
