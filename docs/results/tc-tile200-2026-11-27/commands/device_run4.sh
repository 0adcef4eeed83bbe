#!/bin/bash
# Run 4 (H100): the new fp8 rules at held-out shapes (none used to set them): 128x200c1 where its
# tiles make one round (2048x1560x6400, 2048x1600x4096; 2304x1600x4096 makes 144: the rules keep
# 128x256c1), one-round ping-pong (1024x4096x4096, 2048x1792x4096), 128x160c1 where 128 divides N
# (8192x3200x2048: fraction ratio 1.12; 2048x3200x8192: 1.07, under the margin), against the
# forced alternatives; two processes. Then compute-sanitizer on the 128x200c1 cases, the fp8
# model-shape GPU test (the rules' plans) and bf16's every-config test (its epilogue template
# changed form).
set -u
R=$OUT/r4; mkdir -p $R; nvidia-smi > $R/device.txt 2>&1
export PYTHONPATH=$PWD/src:$PWD/tests PYTHONUNBUFFERED=1 GEMMLAB_CACHE_DIR=/tmp/glc
S="2048,1560,6400;2048,1600,4096;2304,1600,4096;1024,4096,4096;2048,1792,4096;8192,3200,2048;2048,3200,8192"
date
for c in 128x200c1 128x160c1 128x256c1 128x128pp; do
  python3 benchmarks/tc_plan_once.py --dtype fp8 --shape 2048,2048,2048 --runs 1 --policy "{\"config\":\"$c\"}" > $R/warm_$c.log 2>&1 &
done
wait; date
for pass in 1 2; do
  timeout 200 python3 benchmarks/tc_dispatch_compare.py --dtype fp8 --shapes "$S" \
    --only "128x200c1 S=1,128x160c1 S=1,128x256c1 S=1,128x128pp S=1" --rounds 3 --rep-ms 8 \
    --json $R/fp8_rules_$pass.json > $R/fp8_rules_$pass.log 2>&1
  echo "pass $pass rc $? $(date +%T)"
  cd $OUT && tar cJf r4.tar.xz r4; cd - > /dev/null
done
MATCH="128x200c1" timeout 200 bash benchmarks/run_sanitizer_device.sh $R/sanitizer tc > /dev/null 2>&1
echo "sanitizer rc $?"; cat $R/sanitizer/summary.txt 2>/dev/null | tail -6
cd $OUT && tar cJf r4.tar.xz r4; cd - > /dev/null
timeout 150 python3 -m pytest -q -p no:cacheprovider tests/gpu/test_dispatch_tc_gpu.py \
  -k "(fp8 and model_shapes) or (bf16 and every_config_and_split)" > $R/gpu_tests.log 2>&1
echo "gpu tests rc $?"; tail -3 $R/gpu_tests.log
cd $OUT && rm -f r4.tar.xz && tar cJf r4.tar.xz r4 && rm -rf r4
