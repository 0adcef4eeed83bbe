# Run 2 (H100): the stmatrix epilogue (v1), with alternating halves (v2 = this tree), and v2 without
# the alpha multiply at alpha = 1 (v3), against HEAD's; same process pattern as run 1.
set -u
R=$OUT/r2; mkdir -p $R; nvidia-smi > $R/device.txt 2>&1
export PYTHONUNBUFFERED=1
F8="4096,4096,4096;8192,4800,1600;2048,1600,6400;2048,11008,4096;8192,6144,4096;2048,4800,1600;8192,8192,8192"
B16="8192,4800,1600;8192,1600,6400;4096,4096,4096;2048,4800,1600;2047,2047,2047"
F8b="4096,4096,4096;8192,4800,1600;8192,6144,4096"
B16b="8192,4800,1600;4096,4096,4096"
tree() { case $1 in v2) echo $PWD/src;; *) echo $PWD/_exp/$1/src;; esac; }
for v in head v1 v2 v3; do
  for d in fp8 bf16; do
    S=$([ $d = fp8 ] && echo "$F8" || echo "$B16")
    ( IFS=';'; for s in $S; do env PYTHONPATH=$(tree $v):$PWD/tests GEMMLAB_CACHE_DIR=/tmp/glc_$v \
        python3 benchmarks/tc_plan_once.py --dtype $d --shape $s --runs 1; done ) > $R/warm_${v}_$d.log 2>&1 &
  done
done
wait
echo warmed; date
for pass in 1 2; do
  order="head v1 v2 v3"; [ $pass = 2 ] && order="v3 v2 v1 head"
  for v in $order; do
    f=$([ $pass = 1 ] && echo "$F8" || echo "$F8b"); b=$([ $pass = 1 ] && echo "$B16" || echo "$B16b")
    env PYTHONPATH=$(tree $v):$PWD/tests GEMMLAB_CACHE_DIR=/tmp/glc_$v timeout 200 python3 benchmarks/tc_dispatch_compare.py \
      --dtype fp8 --shapes "$f" --quick --rounds 2 --rep-ms 8 --json $R/fp8_${v}_$pass.json > $R/fp8_${v}_$pass.log 2>&1
    env PYTHONPATH=$(tree $v):$PWD/tests GEMMLAB_CACHE_DIR=/tmp/glc_$v timeout 200 python3 benchmarks/tc_dispatch_compare.py \
      --dtype bf16 --shapes "$b" --quick --rounds 2 --rep-ms 8 --json $R/bf16_${v}_$pass.json > $R/bf16_${v}_$pass.log 2>&1
  done
  echo pass $pass; date
done
cd $OUT && tar cJf r2.tar.xz r2 && rm -rf r2
