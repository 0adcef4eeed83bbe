#!/bin/bash
# Run 3 (H100): fp8's new 128 x 200 tile against the 128 x 256, 128 x 160 and ping-pong 128 x 128
# tiles (forced) and the rules' plan, at N = 1600 / 4800 shapes of the grid, two held-out shapes
# with N a multiple of 200 (4096x3200x4096, 3072x2400x8192) and the one-wave squares (2048^3 and
# held-out 1536x2560x4096, 2048x2048x8192); two processes. Then the fp8 dispatch GPU tests
# (every config - 128x200c1 included - and split, stream-K, edge shapes).
set -u
R=$OUT/r3; mkdir -p $R; nvidia-smi > $R/device.txt 2>&1
export PYTHONPATH=$PWD/src:$PWD/tests PYTHONUNBUFFERED=1 GEMMLAB_CACHE_DIR=/tmp/glc
S="2048,1600,6400;8192,1600,6400;2048,4800,1600;8192,4800,1600;4096,3200,4096;3072,2400,8192;2048,2048,2048;1536,2560,4096;2048,2048,8192"
date
( IFS=';'; for s in $S; do python3 benchmarks/tc_plan_once.py --dtype fp8 --shape $s --runs 1; done ) > $R/warm_rules.log 2>&1 &
for c in 128x200c1 128x160c1 128x256c1 128x128pp; do
  python3 benchmarks/tc_plan_once.py --dtype fp8 --shape 2048,2048,2048 --runs 1 --policy "{\"config\":\"$c\"}" > $R/warm_$c.log 2>&1 &
done
wait; date; tail -2 $R/warm_128x200c1.log
for pass in 1 2; do
  timeout 200 python3 benchmarks/tc_dispatch_compare.py --dtype fp8 --shapes "$S" \
    --only "128x200c1 S=1,128x160c1 S=1,128x256c1 S=1,128x128pp S=1" --rounds 3 --rep-ms 8 \
    --json $R/fp8_t200_$pass.json > $R/fp8_t200_$pass.log 2>&1
  echo "pass $pass rc $? $(date +%T)"
  cd $OUT && tar cJf r3.tar.xz r3; cd - > /dev/null
done
timeout 200 python3 -m pytest -q -p no:cacheprovider tests/gpu/test_dispatch_tc_gpu.py \
  -k "fp8 and (every_config_and_split or every_config_with_stream_k or every_edge_shape)" > $R/gpu_tests.log 2>&1
echo "gpu tests rc $?"; tail -3 $R/gpu_tests.log
cd $OUT && rm -f r3.tar.xz && tar cJf r3.tar.xz r3 && rm -rf r3
