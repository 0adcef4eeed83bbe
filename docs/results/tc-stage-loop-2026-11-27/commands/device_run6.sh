# Run 6 (H100): bf16 only - new with bf16 descriptors rebuilt from addresses per K-step (b16desc), new
# with bf16 warpgroup index from threadIdx (b16wg), new and main; 2048 x 11008 x 4096 (128x128pp), 8192
# x 1600 x 6400 (+ forced 128x128pp), 2048 x 4800 x 1600, 4096^3. Alternating, order reversed in pass 2.
set -u
R=$OUT/r6; mkdir -p $R; nvidia-smi > $R/device.txt 2>&1
export PYTHONUNBUFFERED=1
F8="2048,11008,4096"
B16="2048,11008,4096;8192,1600,6400;2048,4800,1600;4096,4096,4096"
tree() { echo $PWD/_t/$1/src; }
date
for v in main new b16desc b16wg; do
  ( env PYTHONPATH=$(tree $v):$PWD/tests GEMMLAB_CACHE_DIR=/tmp/glc_$v python3 benchmarks/tc_plan_once.py --dtype bf16 --shape 2048,4800,1600 --runs 1 --policy '{"config":"128x128pp"}'
    env PYTHONPATH=$(tree $v):$PWD/tests GEMMLAB_CACHE_DIR=/tmp/glc_$v python3 benchmarks/tc_plan_once.py --dtype bf16 --shape 8192,1600,6400 --runs 1
    env PYTHONPATH=$(tree $v):$PWD/tests GEMMLAB_CACHE_DIR=/tmp/glc_$v python3 benchmarks/tc_plan_once.py --dtype bf16 --shape 4096,4096,4096 --runs 1
  ) > $R/warm_$v.log 2>&1 &
done
wait; date
for pass in 1 2; do
  order="main new b16desc b16wg"; [ $pass = 2 ] && order="b16wg b16desc new main"
  for v in $order; do
    for d in bf16; do
      S=$([ $d = fp8 ] && echo "$F8" || echo "$B16")
      env PYTHONPATH=$(tree $v):$PWD/tests GEMMLAB_CACHE_DIR=/tmp/glc_$v timeout 100 python3 benchmarks/tc_dispatch_compare.py \
        --dtype $d --shapes "$S" --only "128x128pp S=1" --rounds 2 --rep-ms 8 \
        --json $R/${d}_${v}_$pass.json > $R/${d}_${v}_$pass.log 2>&1
      echo "$pass $v $d $(date +%T)"
    done
  done
done
cd $OUT && tar cJf r6.tar.xz r6 && rm -rf r6
