# Run 5 (H100): does building a stage's wgmma descriptors once (and scale-d 0 for the first
# K-step) help the ping-pong and 128-column tiles, where one warpgroup issues every MMA of a tile?
# main against nodefer (those two changes, no deferred epilogue), forced tiles beside the rules'
# plan, alternating processes, order reversed in pass 2.
set -u
R=$OUT/r5; mkdir -p $R; nvidia-smi > $R/device.txt 2>&1
export PYTHONUNBUFFERED=1
F8="8192,4800,1600;4096,4096,4096;2048,11008,4096"
B16="2048,11008,4096;2048,4800,1600"
tree() { echo $PWD/_t/$1/src; }
date
for v in main nodefer; do
  for d in fp8 bf16; do
    S=$([ $d = fp8 ] && echo "$F8" || echo "$B16")
    CF="128x128pp 128x128c1"; [ $d = fp8 ] && CF="$CF 128x160c2"
    ( IFS=';'; for s in $S; do env PYTHONPATH=$(tree $v):$PWD/tests GEMMLAB_CACHE_DIR=/tmp/glc_$v \
        python3 benchmarks/tc_plan_once.py --dtype $d --shape $s --runs 1; done
      IFS=' '; for c in $CF; do env PYTHONPATH=$(tree $v):$PWD/tests GEMMLAB_CACHE_DIR=/tmp/glc_$v \
        python3 benchmarks/tc_plan_once.py --dtype $d --shape 2048,4800,1600 --runs 1 --policy "{\"config\":\"$c\"}"; done
    ) > $R/warm_${v}_$d.log 2>&1 &
  done
done
wait; date
for pass in 1 2; do
  order="main nodefer"; [ $pass = 2 ] && order="nodefer main"
  for v in $order; do
    for d in fp8 bf16; do
      S=$([ $d = fp8 ] && echo "$F8" || echo "$B16")
      env PYTHONPATH=$(tree $v):$PWD/tests GEMMLAB_CACHE_DIR=/tmp/glc_$v timeout 100 python3 benchmarks/tc_dispatch_compare.py \
        --dtype $d --shapes "$S" --only "128x128pp S=1,128x128c1 S=1,128x160c2 S=1" --rounds 2 --rep-ms 8 \
        --json $R/${d}_${v}_$pass.json > $R/${d}_${v}_$pass.log 2>&1
      echo "$pass $v $d $(date +%T)"
    done
  done
done
cd $OUT && tar cJf r5.tar.xz r5 && rm -rf r5
