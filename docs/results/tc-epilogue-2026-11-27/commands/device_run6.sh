# Run 6 (H100): HEAD's epilogue against this tree's (stmatrix; alternating halves only where a
# piece is the whole tile width - ping-pong's 128 columns), where run 2/3 disagreed: fp8 8192 x
# 4800 x 1600 (128x256c2) and bf16 2048 x 4800 x 1600 (128x128pp); 3 rounds, alternating processes.
set -u
R=$OUT/r6; mkdir -p $R; nvidia-smi > $R/device.txt 2>&1
export PYTHONUNBUFFERED=1
tree() { case $1 in new) echo $PWD/src;; head) echo $PWD/_exp/head/src;; esac; }
for v in head new; do
  env PYTHONPATH=$(tree $v):$PWD/tests GEMMLAB_CACHE_DIR=/tmp/glc_$v python3 benchmarks/tc_plan_once.py --dtype fp8 --shape 8192,4800,1600 --runs 1 > $R/warm_${v}_f.log 2>&1 &
  env PYTHONPATH=$(tree $v):$PWD/tests GEMMLAB_CACHE_DIR=/tmp/glc_$v python3 benchmarks/tc_plan_once.py --dtype bf16 --shape 2048,4800,1600 --runs 1 > $R/warm_${v}_b.log 2>&1 &
done
wait; date
for pass in 1 2; do
  order="head new"; [ $pass = 2 ] && order="new head"
  for v in $order; do
    env PYTHONPATH=$(tree $v):$PWD/tests GEMMLAB_CACHE_DIR=/tmp/glc_$v timeout 60 python3 benchmarks/tc_dispatch_compare.py \
      --dtype fp8 --shapes "8192,4800,1600" --quick --rounds 3 --rep-ms 8 --json $R/fp8_${v}_$pass.json > $R/fp8_${v}_$pass.log 2>&1
    env PYTHONPATH=$(tree $v):$PWD/tests GEMMLAB_CACHE_DIR=/tmp/glc_$v timeout 60 python3 benchmarks/tc_dispatch_compare.py \
      --dtype bf16 --shapes "2048,4800,1600" --quick --rounds 3 --rep-ms 8 --json $R/bf16_${v}_$pass.json > $R/bf16_${v}_$pass.log 2>&1
  done
  date
done
cd $OUT && tar cJf r6.tar.xz r6 && rm -rf r6
