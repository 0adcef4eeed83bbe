#!/usr/bin/env bash
# session scratch (H100): ping-pong passes the turn once its warpgroup has issued a tile's last
# MMAs (a named barrier: every thread past its stage waits), not once they are done. GPU tests
# (every config and split, ping-pong included); the ping-pong tiles (unclustered, clusters of 2
# along M sharing B, 1 x 2 along N sharing A - cuBLASLt's fp8 picks are ping-pong in clusters
# of 2) against 128 x 256; then main's ping-pong (old_src) and this tree's alternately
set -u
R=$OUT/r4; mkdir -p $R
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv > $R/device.txt; date -u >> $R/device.txt
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
NEW="PYTHONPATH=$PWD/src:$PWD/tests GEMMLAB_CACHE_DIR=/tmp/glc"
OLD="PYTHONPATH=$PWD/old_src:$PWD/tests GEMMLAB_CACHE_DIR=/tmp/glc_old"
env $NEW timeout 200 python3 -m pytest -q -p no:cacheprovider tests/gpu/test_dispatch_tc_gpu.py -k "every_config_and_split" -rs > $R/gpu_tests.log 2>&1; el "gpu tests $?"; tail -n 2 $R/gpu_tests.log
grep -h "^E " $R/gpu_tests.log | cut -c1-300 | head -4
PP="128x256c1 S=1,128x256c2 S=1,128x128pp S=1,128x128c2pp S=1,128x128c1x2pp S=1"
env $NEW timeout 200 python3 benchmarks/tc_dispatch_compare.py --dtype fp8 --rounds 3 --only "$PP" \
  --shapes "4096,4096,4096;2048,11008,4096;8192,6144,4096;2048,28672,4096;2048,2048,2048;8192,4800,1600" --json $R/pp_fp8.json > $R/pp_fp8.txt 2>&1; el "fp8 $?"
grep -h "^[0-9]\|  [0-9a-z]\|WRONG\|rror" $R/pp_fp8.txt | cut -c1-100
tar czf $OUT/r4.tgz -C $OUT r4
env $NEW timeout 150 python3 benchmarks/tc_dispatch_compare.py --dtype bf16 --rounds 3 --only "$PP" \
  --shapes "4096,4096,4096;2048,4800,1600;2048,11008,4096;2048,2048,2048;8192,8192,8192" --json $R/pp_bf16.json > $R/pp_bf16.txt 2>&1; el "bf16 $?"
grep -h "^[0-9]\|  [0-9a-z]\|WRONG\|rror" $R/pp_bf16.txt | cut -c1-100
tar czf $OUT/r4.tgz -C $OUT r4
for side in old new; do
  [ $side = old ] && E=$OLD || E=$NEW
  env $E timeout 60 python3 benchmarks/tc_dispatch_compare.py --dtype fp8 --rounds 3 --only "128x128pp S=1" \
    --shapes "4096,4096,4096;2048,11008,4096;2048,4800,1600" --json $R/${side}_pp_fp8.json > $R/${side}_pp_fp8.txt 2>&1; el "$side fp8 $?"
  grep -h "^  128x128pp" $R/${side}_pp_fp8.txt | cut -c1-90
  env $E timeout 60 python3 benchmarks/tc_dispatch_compare.py --dtype bf16 --rounds 3 --only "128x128pp S=1" \
    --shapes "2048,4800,1600;2048,11008,4096" --json $R/${side}_pp_bf16.json > $R/${side}_pp_bf16.txt 2>&1; el "$side bf16 $?"
  grep -h "^  128x128pp" $R/${side}_pp_bf16.txt | cut -c1-90
done
tar czf $OUT/r4.tgz -C $OUT r4
