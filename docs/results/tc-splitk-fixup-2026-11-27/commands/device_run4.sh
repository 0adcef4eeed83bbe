#!/usr/bin/env bash
# session scratch (H200): split-K through the fixup - every split variant of the stream tiles at
# the H200's 128-row shapes under the bar; then the GPU tests of every config with split-K and
# stream-K (both now through tc::streamk_fixup) and compute-sanitizer on the split/stream-K cases
set -u
R=$OUT/r4; mkdir -p $R
export PYTHONPATH=$PWD/src:$PWD/tests PYTHONUNBUFFERED=1 GEMMLAB_CACHE_DIR=/tmp/glc
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv > $R/device.txt; date -u >> $R/device.txt
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
ONLY="64x64 S=,64x128 S=,128x64c1 S=,128x128c1 S=,64x256 S="
timeout 100 python3 benchmarks/tc_dispatch_compare.py --dtype bf16 --rounds 2 --rep-ms 8 --only "$ONLY" \
  --shapes "128,4096,14336;128,4096,4096;128,11008,4096" --json $R/sw_bf16.json > $R/sw_bf16.txt 2>&1; el "sweep bf16 $?"
timeout 110 python3 benchmarks/tc_dispatch_compare.py --dtype fp8 --rounds 2 --rep-ms 8 --only "$ONLY" \
  --shapes "128,4096,14336;128,4096,4096;128,6144,4096;128,10240,8192" --json $R/sw_fp8.json > $R/sw_fp8.txt 2>&1; el "sweep fp8 $?"
timeout 170 python3 -m pytest -q -p no:cacheprovider tests/gpu/test_dispatch_tc_gpu.py -k "every_config_and_split or every_config_with_stream_k" -rs > $R/gpu_tests.log 2>&1; el "gpu tests $?"; tail -n 3 $R/gpu_tests.log
MATCH="'split': 3|'split': 2|'streamk'" timeout 170 bash benchmarks/run_sanitizer_device.sh $R/san tc > /dev/null 2>&1; el "sanitizer $?"; cat $R/san/summary.txt
tar cJf $OUT/r4.tar.xz -C $OUT r4
