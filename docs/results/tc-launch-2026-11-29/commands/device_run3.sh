#!/bin/bash
# Run 3 (H200): where the decode gap to cuBLASLt sits - Nsight Compute at the GPU's own clocks
# (--clock-control none, 5 launches each) for the swapped kernel and cuBLASLt's at fp8
# 16x4096x4096 and 16x8192x8192; then benchmarks/probes/launch_floor.py (empty kernels shaped like
# each, and the two products, in the harness).
set -u
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
R=$OUT/r3; mkdir -p $R
export PYTHONPATH=$PWD/src:$PWD/tests PYTHONUNBUFFERED=1 GEMMLAB_CACHE_DIR=/tmp/glc
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv,noheader > $R/device.txt; date -u >> $R/device.txt
NCU=$(command -v ncu || echo /opt/nvidia/nsight-compute/2025.3.1/ncu)
MET=gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second,dram__bytes_read.sum,dram__cycles_elapsed.avg.per_second,launch__grid_size,launch__cluster_dim_x,launch__cluster_dim_y
for s in 16,4096,4096 16,8192,8192; do
  n=fp8_${s//,/x}
  for who in ours cublas; do
    extra=""; [ $who = cublas ] && extra=--cublas
    for cc in none base; do
      timeout 60 $NCU --clock-control $cc --metrics $MET --csv --profile-from-start off --launch-skip 2 --launch-count 5 \
        python3 benchmarks/tc_plan_once.py --dtype fp8 --shape $s --runs 7 $extra > $R/ncu_${who}_${n}_$cc.csv 2> $R/ncu_${who}_${n}_$cc.err
      echo "ncu $who $n $cc rc $? $(el) s"
    done
  done
done
timeout $(( 560 - $(el) )) python3 benchmarks/probes/launch_floor.py --rounds 3 --json $R/launch_floor.json > $R/launch_floor.txt 2>&1
echo "probe rc $? $(el) s"; cat $R/launch_floor.txt | grep -v Warn
cd $OUT && tar cJf r3.tar.xz r3 && rm -rf r3
