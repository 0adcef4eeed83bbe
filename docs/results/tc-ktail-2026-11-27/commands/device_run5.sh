#!/usr/bin/env bash
# session scratch (H100): the shape maps of this tree (the K-tail change; bf16's 128 x 192 rule
# of the last stop, which its maps predated), after a short look at stream-K and 128 x 160 where
# fp8's 128 x 256 leaves a partial last wave (8192x4800x1600, 2048x11008x4096)
set -u
R=$OUT/r5; mkdir -p $R
export PYTHONPATH=$PWD/src:$PWD/tests PYTHONUNBUFFERED=1 GEMMLAB_CACHE_DIR=/tmp/glc
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv > $R/device.txt; date -u >> $R/device.txt
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
timeout 90 python3 benchmarks/tc_dispatch_compare.py --dtype fp8 --rounds 3 \
  --only "128x160c1 S=1,128x256c2 S=1,128x256c2 SK,128x256c1 SK,128x128pp S=1" \
  --shapes "8192,4800,1600;2048,11008,4096" --json $R/sk_fp8.json > $R/sk_fp8.txt 2>&1; el "cmp $?"
grep -h "^[0-9]\|  [0-9a-z]\|WRONG\|rror" $R/sk_fp8.txt | cut -c1-100
tar czf $OUT/r5.tgz -C $OUT r5
SHAPES_TIMEOUT=250 bash benchmarks/run_shapes_tc_device.sh $R/maps bf16 fp8 > $R/maps.log 2>&1; el "maps $?"
grep -h "exit\|geometric\|Geometric" $R/maps/*.txt | cut -c1-160
tar czf $OUT/r5.tgz -C $OUT r5
