#!/bin/bash
# Run 2 (H100): bf16's 128 x 160 with B in three 64-column chunks of the 128-byte swizzle (the
# third reaching 32 columns past the tile) in place of five 32-column chunks of the 64-byte one -
# cuBLAS runs 128 x 160 ping-pong in clusters of 2 at 8192 x 4800 x 1600 and 2048 x 4800 x 1600
# (run 1's names). Correctness of every forced configuration (both dtypes), then 128x160 c1 / c2 /
# pp beside the rules' plan and the 128 x 192 / 256 tiles, two passes.
set -u
R=$OUT/r2; mkdir -p $R; nvidia-smi > $R/device.txt 2>&1
export PYTHONPATH=$PWD/src:$PWD/tests PYTHONUNBUFFERED=1 GEMMLAB_CACHE_DIR=/tmp/glc
date +%T
for c in 128x160pp 128x160c1 128x160c2 128x192c1 128x192c2 128x256c2 128x128pp; do
  python3 benchmarks/tc_plan_once.py --dtype bf16 --shape 2048,2048,2048 --runs 1 --policy "{\"config\":\"$c\"}" > $R/warm_$c.log 2>&1 &
done
wait; date +%T
S="8192,4800,1600;2048,4800,1600;8192,1600,6400;4096,4800,1600;4096,4096,4096;2048,1600,6400;8192,3200,1600"
for pass in 1 2; do
  timeout 170 python3 benchmarks/tc_dispatch_compare.py --dtype bf16 --shapes "$S" \
    --only "128x160pp S=1,128x160c1 S=1,128x160c2 S=1,128x192c1 S=1,128x192c2 S=1,128x256c2 S=1,128x256c1 S=1" --rounds 3 --rep-ms 8 \
    --json $R/bf16_t160_$pass.json > $R/bf16_t160_$pass.log 2>&1
  echo "pass $pass rc $? $(date +%T)"
done
timeout 240 python3 -m pytest -q -p no:cacheprovider tests/gpu/test_dispatch_tc_gpu.py -k "every_config_and_split" > $R/gpu_tests.log 2>&1
echo "gpu tests rc $? $(date +%T)"; tail -n 3 $R/gpu_tests.log
cd $OUT && tar cJf r2.tar.xz r2 && rm -rf r2
