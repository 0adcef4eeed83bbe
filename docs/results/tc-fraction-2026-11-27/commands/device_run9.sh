#!/bin/bash
# Run 9 (H100), the working tree: a bf16 128 x 200 tile (four 64-column chunks of B a stage, the
# last read for 8 columns; 3 stages; C in one 200-column box) forced beside the rules' plan, two
# processes; then the bf16 dispatch GPU tests that force every configuration.
set -u
R=$OUT/r9; mkdir -p $R; nvidia-smi > $R/device.txt 2>&1
export PYTHONPATH=$PWD/src:$PWD/tests PYTHONUNBUFFERED=1 GEMMLAB_CACHE_DIR=/tmp/glc
S="8192,1600,6400;8192,4800,1600;4096,1600,8192;2048,1600,6400;2048,4800,1600;8192,3200,2048;4096,4096,4096;2000,1560,4096;1000,1000,1000"
SR=$(echo "$S" | tr ';' '\n' | tac | paste -sd';')
python3 benchmarks/tc_plan_once.py --dtype bf16 --shape 2048,2048,2048 --runs 1 --policy '{"config":"128x200c1"}' > $R/warm_200.log 2>&1 &
for s in 8192,1600,6400 8192,4800,1600 4096,4096,4096 2048,1600,6400; do
  python3 benchmarks/tc_plan_once.py --dtype bf16 --shape $s --runs 1 > /dev/null 2>&1 &
done
wait; date +%T; tail -2 $R/warm_200.log
for pass in 1 2; do
  SS="$S"; [ $pass = 2 ] && SS="$SR"
  timeout 150 python3 benchmarks/tc_dispatch_compare.py --dtype bf16 --shapes "$SS" \
    --only "128x200c1 S=1,128x192c1 S=1,128x256c1 S=1" --rounds 3 --rep-ms 8 --json $R/bf16_200_$pass.json > $R/bf16_200_$pass.log 2>&1
  echo "pass $pass rc $? $(date +%T)"
done
cd $OUT && tar cJf r9.tar.xz r9; cd - > /dev/null
timeout 330 python3 -m pytest -q -p no:cacheprovider tests/gpu/test_dispatch_tc_gpu.py \
  -k "bf16 and (every_edge_shape or every_config_and_split or every_config_with_stream_k)" > $R/gpu_tests.log 2>&1
echo "gpu tests rc $? $(date +%T)"; tail -3 $R/gpu_tests.log
cd $OUT && rm -f r9.tar.xz && tar cJf r9.tar.xz r9 && rm -rf r9
