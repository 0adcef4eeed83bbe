# Run 3 (H100): main, the deferred epilogue (head), deferred with direct 4-byte global stores from the
# packed registers (defdirect: no shared memory), and deferred staged after the stage's release (defrel).
set -u
R=$OUT/r3; mkdir -p $R; nvidia-smi > $R/device.txt 2>&1
export PYTHONUNBUFFERED=1
F8="4096,4096,4096;8192,4800,1600;8192,6144,4096;2048,1600,6400"
B16="8192,4800,1600;8192,1600,6400;4096,4096,4096"
tree() { case $1 in head) echo $PWD/src;; *) echo $PWD/_t/$1/src;; esac; }
date
for v in main head defdirect defrel; do
  for d in fp8 bf16; do
    S=$([ $d = fp8 ] && echo "$F8" || echo "$B16")
    ( IFS=';'; for s in $S; do env PYTHONPATH=$(tree $v):$PWD/tests GEMMLAB_CACHE_DIR=/tmp/glc_$v \
        python3 benchmarks/tc_plan_once.py --dtype $d --shape $s --runs 1; done ) > $R/warm_${v}_$d.log 2>&1 &
  done
done
wait; date
for pass in 1 2; do
  order="main head defdirect defrel"; [ $pass = 2 ] && order="defrel defdirect head main"
  for v in $order; do
    for d in fp8 bf16; do
      S=$([ $d = fp8 ] && echo "$F8" || echo "$B16")
      env PYTHONPATH=$(tree $v):$PWD/tests GEMMLAB_CACHE_DIR=/tmp/glc_$v timeout 90 python3 benchmarks/tc_dispatch_compare.py \
        --dtype $d --shapes "$S" --quick --rounds 2 --rep-ms 8 --json $R/${d}_${v}_$pass.json > $R/${d}_${v}_$pass.log 2>&1
      echo "$pass $v $d $(date +%T)"
    done
  done
done
cd $OUT && tar cJf r3.tar.xz r3 && rm -rf r3
