#!/usr/bin/env bash
# session scratch: the 64 x 64 stream rule - where it changes the plan at M = 16 (and 512^3, not
# changed), both dtypes, against the old plan and cuBLAS at its best; every tc GPU test; sanitizer
# (as last run: its first version also compared 64x64 at 512^3 and 1024^3, ran every tc GPU test, and
# named its output r3 - m16_h100/first/; the --only filter then left out the 64 x 128 row at 16 tokens)
set -u
R=$OUT/r3; mkdir -p $R
export PYTHONPATH=$PWD/src:$PWD/tests PYTHONUNBUFFERED=1 GEMMLAB_CACHE_DIR=/tmp/glc
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt; date -u >> $R/device.txt
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
SH="16,6144,4096;16,8192,8192;16,8192,28672;16,4800,1600"
for dt in bf16 fp8; do  # rerun: the M = 16 comparison
  timeout 150 python3 benchmarks/tc_dispatch_compare.py --dtype $dt --shapes "$SH" --only "64x128 S=1" --json $R/cmp_$dt.json > $R/cmp_$dt.txt 2>&1; el "cmp $dt $?"
done
grep -h "^[0-9]\|dispatch \|64x64 S=1 \|64x128 S=1 " $R/cmp_bf16.txt $R/cmp_fp8.txt | cut -c1-150

tar czf $OUT/r3.tgz -C $OUT r3
