# Run 1 (H100): what the epilogue costs the cooperative tiles; where fp8's rules' tiles spend time.
set -u
R=$OUT/r1; mkdir -p $R; nvidia-smi > $R/device.txt 2>&1
NCUPY=/opt/nvidia/nsight-compute/2025.3.1/extras/python
export PYTHONUNBUFFERED=1
F8="4096,4096,4096;8192,4800,1600;2048,1600,6400;2048,11008,4096;8192,6144,4096"
B16="8192,4800,1600;8192,1600,6400;4096,4096,4096"
tree() { case $1 in head) echo $PWD/src;; *) echo $PWD/_exp/$1/src;; esac; }
# warm every tree's kernel cache in parallel (compiles), one process per tree and dtype
for v in head noepi direct nowait; do
  for d in fp8 bf16; do
    S=$([ $d = fp8 ] && echo "$F8" || echo "$B16")
    ( IFS=';'; for s in $S; do env PYTHONPATH=$(tree $v):$PWD/tests GEMMLAB_CACHE_DIR=/tmp/glc_$v \
        python3 benchmarks/tc_plan_once.py --dtype $d --shape $s --runs 1; done ) > $R/warm_${v}_$d.log 2>&1 &
  done
done
wait
echo warmed; date
for pass in 1 2; do
  order="head noepi direct nowait"; [ $pass = 2 ] && order="noepi head"
  for v in $order; do
    env PYTHONPATH=$(tree $v):$PWD/tests GEMMLAB_CACHE_DIR=/tmp/glc_$v timeout 200 python3 benchmarks/tc_dispatch_compare.py \
      --dtype fp8 --shapes "$F8" --quick --rounds 2 --rep-ms 8 --json $R/fp8_${v}_$pass.json > $R/fp8_${v}_$pass.log 2>&1
    env PYTHONPATH=$(tree $v):$PWD/tests GEMMLAB_CACHE_DIR=/tmp/glc_$v timeout 200 python3 benchmarks/tc_dispatch_compare.py \
      --dtype bf16 --shapes "$B16" --quick --rounds 2 --rep-ms 8 --json $R/bf16_${v}_$pass.json > $R/bf16_${v}_$pass.log 2>&1
  done
  echo pass $pass; date
done
# Nsight Compute, the rules' plans (head), source lines
export PYTHONPATH=$PWD/src:$PWD/tests:$NCUPY GEMMLAB_CACHE_DIR=/tmp/glc_head
for s in 4096,4096,4096 8192,4800,1600 2048,11008,4096; do
  n=f${s//,/x}
  timeout 150 ncu --set full --import-source no --profile-from-start off --launch-skip 2 --launch-count 1 -o $R/$n \
    python3 benchmarks/tc_plan_once.py --dtype fp8 --shape $s --runs 3 > $R/$n.log 2>&1
  timeout 100 python3 dump_lines.py $R/$n.ncu-rep $R/${n}_lines.json >> $R/$n.log 2>&1
  timeout 100 python3 -m gemmlab analyze $R/$n.ncu-rep --json > $R/${n}_analyze.json 2>> $R/$n.log
done
date
cd $OUT && tar cJf r1.tar.xz r1 && rm -rf r1
