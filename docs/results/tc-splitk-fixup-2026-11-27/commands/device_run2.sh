#!/usr/bin/env bash
# session scratch (H100): why split-K costs so much - Nsight Compute (--set full, SASS-level
# stall samples) of the same tile unsplit and split 2: fp8 128x4800x1600 128x256c1 (one round of
# CTAs either way) and bf16 128x4096x14336 64x64; gemmlab analyze of each report (hot lines)
set -u
R=$OUT/r2; mkdir -p $R
export PYTHONPATH=$PWD/src:$PWD/tests:/opt/nvidia/nsight-compute/2025.3.1/extras/python PYTHONUNBUFFERED=1 GEMMLAB_CACHE_DIR=/tmp/glc
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv > $R/device.txt; date -u >> $R/device.txt
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
NCU=$(command -v ncu || echo /opt/nvidia/nsight-compute/2025.3.1/ncu)
prof() {  # name dtype shape policy
  local name=$1 dt=$2 sh=$3 pol=$4
  timeout 60 python3 benchmarks/tc_plan_once.py --dtype $dt --shape $sh --runs 20 --policy "$pol" > $R/${name}_time.log 2>&1
  timeout 100 $NCU --set full --import-source no --profile-from-start off --launch-skip 2 --launch-count 1 -o $R/$name -f \
    python3 benchmarks/tc_plan_once.py --dtype $dt --shape $sh --runs 3 --policy "$pol" > $R/$name.log 2>&1
  el "$name ncu $?"; tail -n 1 $R/${name}_time.log
  COLUMNS=200 timeout 60 python3 -m gemmlab analyze $R/$name.ncu-rep > $R/${name}_analyze.txt 2>&1
  timeout 60 python3 -m gemmlab analyze $R/$name.ncu-rep --json > $R/${name}_analyze.json 2>/dev/null
  $NCU -i $R/$name.ncu-rep --csv --page raw > $R/${name}_raw.csv 2>/dev/null
}
prof f8_256 fp8 128,4800,1600 '{"config": "128x256c1"}'
prof f8_256_s2 fp8 128,4800,1600 '{"config": "128x256c1", "split": 2}'
prof b16_64 bf16 128,4096,14336 '{"config": "64x64"}'
prof b16_64_s2 bf16 128,4096,14336 '{"config": "64x64", "split": 2}'
for n in f8_256 f8_256_s2 b16_64 b16_64_s2; do echo "== $n"; tail -n1 $R/${n}_time.log; grep -i -A40 "hot\|line" $R/${n}_analyze.txt | head -60; done > $R/summary.txt 2>&1
head -c 6000 $R/summary.txt
tar cJf $OUT/r2.tar.xz -C $OUT r2
