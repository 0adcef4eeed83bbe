#!/bin/bash
# Run 8 (H100): is 128x200c1's loss at short K and many rounds its pipeline depth or its
# epilogue piece? head (4 stages, one 200-column staging piece), s5 (5 stages, 40-column pieces),
# s4e40 (4 stages, 40-column pieces); trees alternating in separate processes, order reversed in
# pass 2; rules' plan and forced 128x200c1 at one round (2048x1600x6400), short K
# (2048x4800x1600, 2048x3200x1600), many rounds (8192x4800x1600) and two rounds, long K
# (4096x1600x8192).
set -u
R=$OUT/r8; mkdir -p $R; nvidia-smi > $R/device.txt 2>&1
export PYTHONUNBUFFERED=1
S="2048,1600,6400;2048,4800,1600;2048,3200,1600;8192,4800,1600;4096,1600,8192"
V="head s5 s4e40"
tree() { echo $PWD/_t/$1/src; }
date
for v in $V; do
  env PYTHONPATH=$(tree $v):$PWD/tests GEMMLAB_CACHE_DIR=/tmp/glc_$v python3 benchmarks/tc_plan_once.py \
    --dtype fp8 --shape 2048,1600,6400 --runs 1 --policy '{"config":"128x200c1"}' > $R/warm_$v.log 2>&1 &
  env PYTHONPATH=$(tree $v):$PWD/tests GEMMLAB_CACHE_DIR=/tmp/glc_$v python3 benchmarks/tc_plan_once.py \
    --dtype fp8 --shape 2048,4800,1600 --runs 1 > $R/warm_rules_$v.log 2>&1 &
done
wait; date
for pass in 1 2; do
  order="$V"; [ $pass = 2 ] && order="s4e40 s5 head"
  for v in $order; do
    env PYTHONPATH=$(tree $v):$PWD/tests GEMMLAB_CACHE_DIR=/tmp/glc_$v timeout 100 python3 benchmarks/tc_dispatch_compare.py \
      --dtype fp8 --shapes "$S" --only "128x200c1 S=1" --rounds 3 --rep-ms 8 --json $R/fp8_${v}_$pass.json > $R/fp8_${v}_$pass.log 2>&1
    echo "$pass $v $(date +%T)"
  done
  cd $OUT && tar cJf r8.tar.xz r8; cd - > /dev/null
done
cd $OUT && rm -f r8.tar.xz && tar cJf r8.tar.xz r8 && rm -rf r8
