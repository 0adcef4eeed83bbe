# Run 2 (H100): main against scale-d 0 + stepped descriptors without the deferral (nodefer), and
# Nsight Compute source profiles of main and the deferred epilogue (head) at fp8 8192 x 4800 x 1600.
set -u
R=$OUT/r2; mkdir -p $R; nvidia-smi > $R/device.txt 2>&1
NCUPY=/opt/nvidia/nsight-compute/2025.3.1/extras/python
export PYTHONUNBUFFERED=1
F8="4096,4096,4096;8192,4800,1600;8192,6144,4096;2048,1600,6400"
B16="8192,4800,1600;8192,1600,6400;4096,4096,4096"
tree() { case $1 in head) echo $PWD/src;; *) echo $PWD/_t/$1/src;; esac; }
date
for v in main nodefer head; do
  for d in fp8 bf16; do
    [ $v = head ] && [ $d = bf16 ] && continue
    S=$([ $d = fp8 ] && echo "$F8" || echo "$B16")
    [ $v = head ] && S="8192,4800,1600"
    ( IFS=';'; for s in $S; do env PYTHONPATH=$(tree $v):$PWD/tests GEMMLAB_CACHE_DIR=/tmp/glc_$v \
        python3 benchmarks/tc_plan_once.py --dtype $d --shape $s --runs 1; done ) > $R/warm_${v}_$d.log 2>&1 &
  done
done
wait; date
for pass in 1 2; do
  order="main nodefer"; [ $pass = 2 ] && order="nodefer main"
  for v in $order; do
    for d in fp8 bf16; do
      S=$([ $d = fp8 ] && echo "$F8" || echo "$B16")
      env PYTHONPATH=$(tree $v):$PWD/tests GEMMLAB_CACHE_DIR=/tmp/glc_$v timeout 90 python3 benchmarks/tc_dispatch_compare.py \
        --dtype $d --shapes "$S" --quick --rounds 2 --rep-ms 8 --json $R/${d}_${v}_$pass.json > $R/${d}_${v}_$pass.log 2>&1
      echo "$pass $v $d $(date +%T)"
    done
  done
done
for v in main head; do
  n=${v}_f8192x4800x1600
  env PYTHONPATH=$(tree $v):$PWD/tests:$NCUPY GEMMLAB_CACHE_DIR=/tmp/glc_$v timeout 120 ncu --set full --import-source no \
    --profile-from-start off --launch-skip 2 --launch-count 1 -o $R/$n \
    python3 benchmarks/tc_plan_once.py --dtype fp8 --shape 8192,4800,1600 --runs 3 > $R/$n.log 2>&1
  env PYTHONPATH=$(tree $v):$PWD/tests:$NCUPY timeout 60 python3 dump_lines.py $R/$n.ncu-rep $R/${n}_lines.json >> $R/$n.log 2>&1
  env PYTHONPATH=$PWD/src:$PWD/tests:$NCUPY timeout 60 python3 -m gemmlab analyze $R/$n.ncu-rep --json > $R/${n}_analyze.json 2>> $R/$n.log
  echo "ncu $v $(date +%T)"
done
cd $OUT && tar cJf r2.tar.xz r2 && rm -rf r2
