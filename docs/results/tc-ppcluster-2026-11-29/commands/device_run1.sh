#!/usr/bin/env bash
# (run 1 of docs/results/tc-ppcluster-2026-11-29, from the repository root with $OUT set; the tree
# carried not_kept/clustered_pingpong_tiles.patch)
# clustered ping-pong 128 x 128 (forced) vs ping-pong alone vs the cooperative 128 x 256 at N = 4096
# and 2048 x 11008; ncu --set full of each at fp8 4096^3 beside cuBLASLt
set -u
R=$OUT/r1; mkdir -p $R
export PYTHONPATH=$PWD/src:$PWD/tests:/opt/nvidia/nsight-compute/2025.3.1/extras/python PYTHONUNBUFFERED=1 GEMMLAB_CACHE_DIR=/tmp/glc
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv > $R/device.txt; date -u >> $R/device.txt
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
PP="128x256c1 S=1,128x128pp S=1,128x128c2pp S=1,128x128c1x2pp S=1"
timeout 230 python3 benchmarks/tc_dispatch_compare.py --dtype fp8 --rounds 2 --rep-ms 8 --only "$PP,128x168pp S=1" \
  --shapes "4096,4096,4096;8192,4096,4096;16384,4096,4096;4096,4096,2048;2048,11008,4096;8192,8192,8192" --json $R/fp8.json > $R/fp8.txt 2>&1; el "fp8 $?"
grep -h "^[0-9]\|  [0-9a-z]\|WRONG\|rror" $R/fp8.txt | cut -c1-110
tar cJf $OUT/r1.tar.xz -C $OUT r1
timeout 130 python3 benchmarks/tc_dispatch_compare.py --dtype bf16 --rounds 2 --rep-ms 8 --only "$PP" \
  --shapes "4096,4096,4096;8192,8192,8192;2048,11008,4096" --json $R/bf16.json > $R/bf16.txt 2>&1; el "bf16 $?"
grep -h "^[0-9]\|  [0-9a-z]\|WRONG\|rror" $R/bf16.txt | cut -c1-110
tar cJf $OUT/r1.tar.xz -C $OUT r1
NCU=$(command -v ncu || echo /opt/nvidia/nsight-compute/2025.3.1/ncu)
for c in 128x256c1 128x128pp 128x128c2pp cublas; do
  if [ $c = cublas ]; then P="--cublas"; else P="--policy {\"config\":\"$c\"}"; fi
  timeout 70 $NCU --set full --import-source yes --profile-from-start off --launch-skip 1 --launch-count 1 -o $R/f4096_$c -f \
    python3 benchmarks/tc_plan_once.py --dtype fp8 --shape 4096,4096,4096 --runs 2 $P > $R/ncu_$c.log 2>&1; el "ncu $c $?"
done
timeout 40 python3 _dev/ncu_dump.py $R/*.ncu-rep > $R/ncu_metrics.json 2> $R/ncu_dump.err; el "dump $?"
for c in 128x256c1 128x128pp 128x128c2pp; do
  COLUMNS=200 timeout 40 python3 -m gemmlab analyze $R/f4096_$c.ncu-rep --no-gemm > $R/analyze_$c.txt 2>&1; el "analyze $c $?"
done
mkdir -p $R/reps && mv $R/*.ncu-rep $R/reps/
tar cJf $OUT/r1.tar.xz -C $OUT r1/device.txt r1/fp8.txt r1/fp8.json r1/bf16.txt r1/bf16.json r1/ncu_metrics.json r1/ncu_dump.err r1/analyze_128x256c1.txt r1/analyze_128x128pp.txt r1/analyze_128x128c2pp.txt r1/ncu_cublas.log r1/ncu_128x128c2pp.log
tar cJf $OUT/reps.tar.xz -C $R reps; ls -la $OUT
