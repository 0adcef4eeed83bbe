#!/usr/bin/env bash
# session scratch (H100): fp8 ping-pong tiles (128x128pp, 128x128c2pp, 64x256pp; uncommitted) -
# correctness in the every-config GPU test, then timed against the cooperative tiles and cuBLASLt
set -u
R=$OUT/r2; mkdir -p $R
export PYTHONPATH=$PWD/src:$PWD/tests PYTHONUNBUFFERED=1 GEMMLAB_CACHE_DIR=/tmp/glc
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv > $R/device.txt; date -u >> $R/device.txt
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
timeout 200 python3 -m pytest -q -p no:cacheprovider tests/gpu/test_dispatch_tc_gpu.py -k "test_every_config_and_split and fp8" -rs > $R/gpu_tests.log 2>&1; el "gpu tests $?"; tail -n 5 $R/gpu_tests.log
S="2048,2048,2048;4096,4096,4096;8192,8192,8192;2048,11008,4096;2048,1600,6400;8192,4800,1600;2048,4800,1600;8192,6144,4096;1024,1024,1024"
timeout 300 python3 benchmarks/tc_dispatch_compare.py --dtype fp8 --shapes "$S" --rounds 3 \
  --only "128x256c1 S=1,128x256c2 S=1,128x128c1 S=1,128x128pp,128x128c2pp,64x256pp" --json $R/pp_fp8.json > $R/pp_fp8.txt 2>&1; el "pp fp8 $?"
grep -h "^[0-9]\|  [0-9a-z]\|WRONG\|rror" $R/pp_fp8.txt | cut -c1-120
tar czf $OUT/r2.tgz -C $OUT r2
