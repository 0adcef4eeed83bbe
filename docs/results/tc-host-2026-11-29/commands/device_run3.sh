#!/usr/bin/env bash
# Run 3: the swapped decode kernel's ring below 4 stages where 448 CTAs stream (N = 28672): fewer bytes
# in flight than the rules' minimum depth (tree _dev/tS: paths.SWAP_STAGES with 2 and 3 added).
set -u
export GEMMLAB_CACHE_DIR=$PWD/.carry/kcache
mkdir -p $OUT/r3 && (cd .carry && xz -dc kcache.tar.xz | tar x)
nvidia-smi --query-gpu=name,driver_version,power.limit,clocks.max.sm --format=csv > $OUT/r3/device.txt; date -u >> $OUT/r3/device.txt
S="16,28672,4096;1,28672,4096;16,28672,8192;16,10240,8192"
for dt in fp8 bf16; do
  PYTHONPATH=_dev/tS/src timeout 270 python benchmarks/tc_dispatch_compare.py --dtype $dt --shapes "$S" --rounds 3 \
    --only "swap ks=1 s=2,swap ks=1 s=3,swap ks=1 s=4,swap ks=1 s=6" --json $OUT/r3/rings_$dt.json > $OUT/r3/rings_$dt.txt 2>&1
  echo "$dt rc=$?"; grep -E "^[0-9]+x|dispatch|swap" $OUT/r3/rings_$dt.txt | cut -c1-150
done
