#!/bin/bash
# Run 9 (H100): bf16's clustered 128 x 160 rule (bf16_tile160_wins) - the one grid shape it moves,
# 8192 x 1600 x 6400, _t/base (HEAD before it) against _t/new, rules' plans only, trees
# alternating, two passes; then the bf16 shape map of this tree.
set -u
R=$OUT/r9; mkdir -p $R; nvidia-smi > $R/device.txt 2>&1
export PYTHONUNBUFFERED=1 GEMMLAB_CACHE_DIR=/tmp/glc
for t in base new; do
  PYTHONPATH=$PWD/_t/$t/src:$PWD/tests python3 benchmarks/tc_plan_once.py --dtype bf16 --shape 8192,1600,6400 --runs 1 > /dev/null 2>&1 &
done; wait
S="8192,1600,6400;7936,1600,4096"
for pass in 1 2; do
  order="base new"; [ $pass = 2 ] && order="new base"
  for t in $order; do
    PYTHONPATH=$PWD/_t/$t/src:$PWD/tests timeout 60 python3 benchmarks/tc_dispatch_compare.py --dtype bf16 --shapes "$S" \
      --quick --rounds 3 --rep-ms 8 --json $R/bf16_${t}_$pass.json > $R/bf16_${t}_$pass.log 2>&1
  done
  echo "pass $pass $(date +%T)"
done
PYTHONPATH=$PWD/src:$PWD/tests SHAPES_TIMEOUT=280 GEMMLAB_CACHE_DIR=/tmp/glc bash benchmarks/run_shapes_tc_device.sh $R/maps bf16 > $R/maps.log 2>&1
echo "map $(date +%T)"; tail -3 $R/maps.log
cd $OUT && tar cJf r9.tar.xz r9 && rm -rf r9
