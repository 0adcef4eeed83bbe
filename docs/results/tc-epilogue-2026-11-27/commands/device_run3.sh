# Run 3 (H100): is the epilogue's cost its global writes? v2 (this tree: stmatrix, alternating
# halves) against HEAD, v2 staging to shared memory without the TMA stores (stsonly: C not
# written, a diagnostic) and v2 copying the staged pieces to C with 16-byte LSU stores (lsu).
set -u
R=$OUT/r3; mkdir -p $R; nvidia-smi > $R/device.txt 2>&1
export PYTHONUNBUFFERED=1
F8="4096,4096,4096;8192,4800,1600;8192,6144,4096;2048,11008,4096"
B16="8192,4800,1600;2048,4800,1600;4096,4096,4096"
tree() { case $1 in v2) echo $PWD/src;; head) echo $PWD/_exp/head/src;; *) echo $PWD/_exp/$1/src;; esac; }
for v in head v2 stsonly lsu; do
  for d in fp8 bf16; do
    S=$([ $d = fp8 ] && echo "$F8" || echo "$B16")
    ( IFS=';'; for s in $S; do env PYTHONPATH=$(tree $v):$PWD/tests GEMMLAB_CACHE_DIR=/tmp/glc_$v \
        python3 benchmarks/tc_plan_once.py --dtype $d --shape $s --runs 1; done
      [ $d = fp8 ] && env PYTHONPATH=$(tree $v):$PWD/tests GEMMLAB_CACHE_DIR=/tmp/glc_$v \
        python3 benchmarks/tc_plan_once.py --dtype fp8 --shape 4096,4096,4096 --runs 1 --policy '{"config":"128x128pp"}'
    ) > $R/warm_${v}_$d.log 2>&1 &
  done
done
wait
echo warmed; date
for pass in 1 2; do
  order="head v2 stsonly lsu"; [ $pass = 2 ] && order="lsu stsonly v2 head"
  for v in $order; do
    env PYTHONPATH=$(tree $v):$PWD/tests GEMMLAB_CACHE_DIR=/tmp/glc_$v timeout 200 python3 benchmarks/tc_dispatch_compare.py \
      --dtype fp8 --shapes "$F8" --quick --rounds 2 --rep-ms 8 --json $R/fp8_${v}_$pass.json > $R/fp8_${v}_$pass.log 2>&1
    env PYTHONPATH=$(tree $v):$PWD/tests GEMMLAB_CACHE_DIR=/tmp/glc_$v timeout 200 python3 benchmarks/tc_dispatch_compare.py \
      --dtype bf16 --shapes "$B16" --quick --rounds 2 --rep-ms 8 --json $R/bf16_${v}_$pass.json > $R/bf16_${v}_$pass.log 2>&1
  done
  echo pass $pass; date
done
for v in head v2; do
  env PYTHONPATH=$(tree $v):$PWD/tests GEMMLAB_CACHE_DIR=/tmp/glc_$v timeout 120 python3 benchmarks/tc_dispatch_compare.py \
    --dtype fp8 --shapes "4096,4096,4096;8192,4800,1600" --only "128x128pp S=1" --rounds 2 --rep-ms 8 --json $R/pp_fp8_${v}.json > $R/pp_fp8_${v}.log 2>&1
done
date
cd $OUT && tar cJf r3.tar.xz r3 && rm -rf r3
