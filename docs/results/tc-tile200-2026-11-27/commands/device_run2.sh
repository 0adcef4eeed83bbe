#!/bin/bash
# Run 2 (H100): did f22acff's stage loop cost bf16's ping-pong at 2048 x 4800 x 1600 (97.7 in the
# last map, 92.2 / 90.7 in this stop's two)? main0 (82a6b46, before it), head (HEAD), and head with
# one part undone: noint (each 64-row block's K-steps one after the other) and nopeek (no
# test_wait look-ahead). Alternating processes, order reversed in pass 2.
set -u
R=$OUT/r2; mkdir -p $R; nvidia-smi > $R/device.txt 2>&1
export PYTHONUNBUFFERED=1
F8="2048,11008,4096;2048,2048,2048;2048,1600,6400"
B16="2048,4800,1600;2048,11008,4096;8192,1600,6400"
V="main0 head noint nopeek"
tree() { echo $PWD/_t/$1/src; }
date
for v in $V; do
  for d in fp8 bf16; do
    S=$([ $d = fp8 ] && echo "$F8" || echo "$B16")
    ( IFS=';'; for s in $S; do env PYTHONPATH=$(tree $v):$PWD/tests GEMMLAB_CACHE_DIR=/tmp/glc_$v \
        python3 benchmarks/tc_plan_once.py --dtype $d --shape $s --runs 1; done
      env PYTHONPATH=$(tree $v):$PWD/tests GEMMLAB_CACHE_DIR=/tmp/glc_$v \
        python3 benchmarks/tc_plan_once.py --dtype $d --shape 2048,2048,2048 --runs 1 --policy '{"config":"128x128pp"}'
    ) > $R/warm_${v}_$d.log 2>&1 &
  done
done
wait; date
for pass in 1 2; do
  order="$V"; [ $pass = 2 ] && order="nopeek noint head main0"
  for v in $order; do
    for d in bf16 fp8; do
      S=$([ $d = fp8 ] && echo "$F8" || echo "$B16")
      env PYTHONPATH=$(tree $v):$PWD/tests GEMMLAB_CACHE_DIR=/tmp/glc_$v timeout 80 python3 benchmarks/tc_dispatch_compare.py \
        --dtype $d --shapes "$S" --only "128x128pp S=1" --rounds 3 --rep-ms 8 --json $R/${d}_${v}_$pass.json > $R/${d}_${v}_$pass.log 2>&1
      echo "$pass $v $d $(date +%T)"
    done
  done
  cd $OUT && tar cJf r2.tar.xz r2; cd - > /dev/null
done
cd $OUT && rm -f r2.tar.xz && tar cJf r2.tar.xz r2 && rm -rf r2
