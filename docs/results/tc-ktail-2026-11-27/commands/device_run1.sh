#!/usr/bin/env bash
# session scratch (H100): the whole-tile epilogue piece (128x256c{1,2}e: 3 stages + 2 x 32 KB
# staging) against the 4-stage, 128-column-piece 128 x 256 tiles, fp8 then bf16, interleaved
set -u
R=$OUT/r1; mkdir -p $R
export PYTHONPATH=$PWD/src:$PWD/tests PYTHONUNBUFFERED=1 GEMMLAB_CACHE_DIR=/tmp/glc
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv > $R/device.txt; date -u >> $R/device.txt
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
timeout 300 python3 benchmarks/tc_dispatch_compare.py --dtype fp8 --rounds 3 \
  --shapes "4096,4096,4096;8192,6144,4096;2048,28672,4096;8192,4800,1600;2048,1600,6400;2048,2048,2048;8192,8192,8192;2048,11008,4096" \
  --only "128x256c1 S=1,128x256c1e S=1,128x256c2 S=1,128x256c2e S=1" --json $R/epi_fp8.json > $R/epi_fp8.txt 2>&1; el "fp8 $?"
grep -h "^[0-9]\|  [0-9a-z]\|WRONG\|rror" $R/epi_fp8.txt | cut -c1-100
tar czf $OUT/r1.tgz -C $OUT r1
timeout 200 python3 benchmarks/tc_dispatch_compare.py --dtype bf16 --rounds 3 \
  --shapes "4096,4096,4096;8192,8192,8192;2048,8192,28672;2048,2048,2048;8192,6144,4096" \
  --only "128x256c1 S=1,128x256c1e S=1,128x256c2 S=1,128x256c2e S=1" --json $R/epi_bf16.json > $R/epi_bf16.txt 2>&1; el "bf16 $?"
grep -h "^[0-9]\|  [0-9a-z]\|WRONG\|rror" $R/epi_bf16.txt | cut -c1-100
tar czf $OUT/r1.tgz -C $OUT r1
