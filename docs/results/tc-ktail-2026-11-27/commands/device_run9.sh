#!/usr/bin/env bash
# session scratch (H100): tile_loop() builds the consumers' TileLoop for both persistent kernels
# (same arithmetic, PTX reordered): the K-tail GPU tests again, and the rules' plan at two shapes
set -u
R=$OUT/r9; mkdir -p $R
export PYTHONPATH=$PWD/src:$PWD/tests PYTHONUNBUFFERED=1 GEMMLAB_CACHE_DIR=/tmp/glc
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv > $R/device.txt; date -u >> $R/device.txt
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
timeout 330 python3 -m pytest -q -p no:cacheprovider tests/gpu/test_dispatch_tc_gpu.py \
  -k "edge_shape or every_config_and_split or every_config_with_stream_k or model_shapes" -rs > $R/gpu_tests.log 2>&1; el "gpu tests $?"; tail -n 2 $R/gpu_tests.log
grep -h "^E " $R/gpu_tests.log | cut -c1-300 | head -4
timeout 60 python3 benchmarks/tc_dispatch_compare.py --dtype fp8 --quick --rounds 3 --shapes "8192,4800,1600;4096,4096,4096" \
  --json $R/quick_fp8.json > $R/quick_fp8.txt 2>&1; el "cmp $?"; grep -h "^  dispatch\|WRONG" $R/quick_fp8.txt | cut -c1-90
tar czf $OUT/r9.tgz -C $OUT r9
