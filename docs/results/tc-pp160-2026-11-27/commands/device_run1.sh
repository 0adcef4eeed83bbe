#!/bin/bash
# Run 1 (H100): fp8's ping-pong 128 x 160 (160 accumulator registers per consumer thread, the
# tile cuBLASLt runs at 8192 x 4800 x 1600 in clusters of 2) - correctness of every forced fp8
# configuration, then forced beside the rules' plan and the 128 x 160 / 128 x 128 / 128 x 256
# tiles at the fp8 shapes still under 95-100%, two passes; cuBLAS's kernel names at the bf16
# shapes under the bar (Nsight Compute, one launch each).
set -u
R=$OUT/r1; mkdir -p $R; nvidia-smi > $R/device.txt 2>&1
export PYTHONPATH=$PWD/src:$PWD/tests PYTHONUNBUFFERED=1 GEMMLAB_CACHE_DIR=/tmp/glc
NCU=/opt/nvidia/nsight-compute/2025.3.1/ncu; [ -x $NCU ] || NCU=ncu
date +%T
for c in 128x160pp 128x160c1 128x256c1 128x128pp 128x256c2; do
  python3 benchmarks/tc_plan_once.py --dtype fp8 --shape 2048,2048,2048 --runs 1 --policy "{\"config\":\"$c\"}" > $R/warm_$c.log 2>&1 &
done
wait; date +%T
timeout 200 python3 -m pytest -q -p no:cacheprovider tests/gpu/test_dispatch_tc_gpu.py -k "every_config_and_split and fp8" > $R/gpu_tests.log 2>&1
echo "gpu tests rc $? $(date +%T)"; tail -n 3 $R/gpu_tests.log
S="8192,4800,1600;2048,4800,1600;8192,1600,6400;8192,6144,4096;4096,4096,4096;2048,11008,4096;4096,4800,1600;8192,3200,1600"
for pass in 1 2; do
  timeout 150 python3 benchmarks/tc_dispatch_compare.py --dtype fp8 --shapes "$S" \
    --only "128x160pp S=1,128x160c1 S=1,128x128pp S=1,128x256c1 S=1,128x256c2 S=1" --rounds 3 --rep-ms 8 \
    --json $R/fp8_pp160_$pass.json > $R/fp8_pp160_$pass.log 2>&1
  echo "pass $pass rc $? $(date +%T)"
done
for s in 8192,4800,1600 8192,1600,6400 2048,4800,1600 4096,4096,4096; do
  timeout 40 $NCU --metrics gpu__time_duration.sum,launch__grid_size,launch__block_size,launch__cluster_dim_x,launch__cluster_dim_y --profile-from-start off \
    python3 benchmarks/tc_plan_once.py --dtype bf16 --shape $s --runs 1 --cublas > $R/names_bf16_$s.log 2>&1
done
echo "names $(date +%T)"
cd $OUT && tar cJf r1.tar.xz r1 && rm -rf r1
