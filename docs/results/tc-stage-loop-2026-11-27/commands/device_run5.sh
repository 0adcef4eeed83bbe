# Run 5 (H100): which part of new's stage loop costs bf16 ping-pong its points: new without the
# look-ahead test_wait (nopeek), new with the 64-row blocks one after the other (noint), new and
# main; bf16 2048 x 11008 x 4096 (rules: 128x128pp) and 8192 x 1600 x 6400 (forced 128x128pp),
# fp8 2048 x 11008 x 4096. Alternating processes, order reversed in pass 2.
set -u
R=$OUT/r5; mkdir -p $R; nvidia-smi > $R/device.txt 2>&1
export PYTHONUNBUFFERED=1
F8="2048,11008,4096"
B16="2048,11008,4096;8192,1600,6400"
tree() { echo $PWD/_t/$1/src; }
date
for v in main new nopeek noint; do
  ( env PYTHONPATH=$(tree $v):$PWD/tests GEMMLAB_CACHE_DIR=/tmp/glc_$v python3 benchmarks/tc_plan_once.py --dtype bf16 --shape 2048,4800,1600 --runs 1 --policy '{"config":"128x128pp"}'
    env PYTHONPATH=$(tree $v):$PWD/tests GEMMLAB_CACHE_DIR=/tmp/glc_$v python3 benchmarks/tc_plan_once.py --dtype fp8 --shape 2048,4800,1600 --runs 1 --policy '{"config":"128x128pp"}'
  ) > $R/warm_$v.log 2>&1 &
done
wait; date
for pass in 1 2; do
  order="main new nopeek noint"; [ $pass = 2 ] && order="noint nopeek new main"
  for v in $order; do
    for d in bf16 fp8; do
      S=$([ $d = fp8 ] && echo "$F8" || echo "$B16")
      env PYTHONPATH=$(tree $v):$PWD/tests GEMMLAB_CACHE_DIR=/tmp/glc_$v timeout 100 python3 benchmarks/tc_dispatch_compare.py \
        --dtype $d --shapes "$S" --only "128x128pp S=1" --rounds 2 --rep-ms 8 \
        --json $R/${d}_${v}_$pass.json > $R/${d}_${v}_$pass.log 2>&1
      echo "$pass $v $d $(date +%T)"
    done
  done
done
cd $OUT && tar cJf r5.tar.xz r5 && rm -rf r5
