#!/usr/bin/env bash
# session scratch (H200): stream_once_wins over its M and K range - 128 x 64 split-K 2 against
# 64 x 64, same run, three rounds, at 65-128 rows of 4096 x 14336 and at K = 8192
set -u
R=$OUT/r6; mkdir -p $R
export PYTHONPATH=$PWD/src:$PWD/tests PYTHONUNBUFFERED=1 GEMMLAB_CACHE_DIR=/tmp/glc
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv > $R/device.txt; date -u >> $R/device.txt
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
timeout 130 python3 benchmarks/tc_dispatch_compare.py --dtype bf16 --rounds 3 --rep-ms 8 --only "64x64 S=1,128x64c1 S=2" \
  --shapes "128,4096,14336;96,4096,14336;72,4096,14336;128,4096,8192" --json $R/m_bf16.json > $R/m_bf16.txt 2>&1; el "bf16 $?"
timeout 130 python3 benchmarks/tc_dispatch_compare.py --dtype fp8 --rounds 3 --rep-ms 8 --only "64x64 S=1,128x64c1 S=2" \
  --shapes "128,4096,14336;96,4096,14336;72,4096,14336;128,4096,28672" --json $R/m_fp8.json > $R/m_fp8.txt 2>&1; el "fp8 $?"
grep -h "dispatch\|64x64 S=1\|128x64c1 S=2\|cuBLAS" $R/m_*.txt | cut -c1-112
tar cJf $OUT/r6.tar.xz -C $OUT r6
