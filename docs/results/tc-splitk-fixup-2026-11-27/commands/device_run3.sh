#!/usr/bin/env bash
# session scratch (H100): split-K through the stream-K fixup (register-order slots, TMA-store
# epilogue) against HEAD's split-K (S x M x N partials, direct epilogue): same run, trees
# alternating, at the shapes where the rules split K; then every split variant of the stream
# tiles at the 128-row shapes (this tree only)
set -u
R=$OUT/r3; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv > $R/device.txt; date -u >> $R/device.txt
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
OLD="env PYTHONPATH=$PWD/_old/src:$PWD/tests PYTHONUNBUFFERED=1 GEMMLAB_CACHE_DIR=/tmp/glc_old"
NEW="env PYTHONPATH=$PWD/src:$PWD/tests PYTHONUNBUFFERED=1 GEMMLAB_CACHE_DIR=/tmp/glc"
F8="32,4096,14336;64,4096,14336;17,4096,14336;256,512,16384"
B16="256,512,16384;512,256,8192;256,256,8192"
for i in 1 2; do
  for side in OLD NEW; do
    timeout 120 ${!side} python3 benchmarks/tc_dispatch_compare.py --dtype fp8 --quick --rounds 2 --rep-ms 8 --shapes "$F8" --json $R/ab_fp8_${side}_$i.json > $R/ab_fp8_${side}_$i.txt 2>&1; el "ab fp8 $side $i $?"
    timeout 120 ${!side} python3 benchmarks/tc_dispatch_compare.py --dtype bf16 --quick --rounds 2 --rep-ms 8 --shapes "$B16" --json $R/ab_bf16_${side}_$i.json > $R/ab_bf16_${side}_$i.txt 2>&1; el "ab bf16 $side $i $?"
  done
done
ONLY="64x64 S=,64x128 S=,128x64c1 S=,128x128c1 S=,64x256 S=,128x256c1 S="
SH="128,4096,14336;128,4096,4096;128,4800,1600;128,1600,6400;128,11008,4096"
timeout 150 $NEW python3 benchmarks/tc_dispatch_compare.py --dtype bf16 --rounds 2 --rep-ms 8 --only "$ONLY" --shapes "$SH" --json $R/sw_bf16.json > $R/sw_bf16.txt 2>&1; el "sweep bf16 $?"
timeout 150 $NEW python3 benchmarks/tc_dispatch_compare.py --dtype fp8 --rounds 2 --rep-ms 8 --only "$ONLY" --shapes "$SH" --json $R/sw_fp8.json > $R/sw_fp8.txt 2>&1; el "sweep fp8 $?"
grep -h "dispatch\|cuBLAS" $R/ab_*.txt | cut -c1-110
grep -v "^\s*$" $R/sw_bf16.txt $R/sw_fp8.txt | grep -v "Warn\|_warn" | grep -v "S=6\|S=8\|S=12\|S=16" | cut -c1-118
tar cJf $OUT/r3.tar.xz -C $OUT r3
