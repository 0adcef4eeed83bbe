#!/usr/bin/env bash
# session scratch (H100): the last K-tile issues only the K-steps that hold K (persistent_bf16 /
# fp8). GPU tests of the edge shapes (K in 1, 7, 127, 1000, 4095, 4097), every config, split-K and
# stream-K; then main (old_src, a copy of HEAD's src) and this tree alternately, the rules' plan
# against cuBLAS at shapes with a partial last K-tile (fp8 K = 1600; bf16 K = 77 / 80) and
# controls without one
set -u
R=$OUT/r2; mkdir -p $R
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv > $R/device.txt; date -u >> $R/device.txt
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
PYTHONPATH=$PWD/src:$PWD/tests GEMMLAB_CACHE_DIR=/tmp/glc timeout 300 python3 -m pytest -q -p no:cacheprovider tests/gpu/test_dispatch_tc_gpu.py \
  -k "edge_shape or every_config_and_split or every_config_with_stream_k or model_shapes" -rs > $R/gpu_tests.log 2>&1; el "gpu tests $?"; tail -n 2 $R/gpu_tests.log
tar czf $OUT/r2.tgz -C $OUT r2
F8="8192,4800,1600;2048,4800,1600;128,4800,1600;4096,4096,4096;2048,11008,4096"
B16="3000,1000,77;1000,3000,80;4096,4096,4096;8192,1600,6400;513,513,513"
for i in 1 2; do
  for side in old new; do
    if [ $side = old ]; then S=$PWD/old_src; C=/tmp/glc_old; else S=$PWD/src; C=/tmp/glc; fi
    for dt in fp8 bf16; do
      [ $dt = fp8 ] && SH=$F8 || SH=$B16
      PYTHONPATH=$S:$PWD/tests GEMMLAB_CACHE_DIR=$C timeout 120 python3 benchmarks/tc_dispatch_compare.py --dtype $dt --quick --rounds 3 \
        --shapes "$SH" --json $R/${side}_${dt}_$i.json > $R/${side}_${dt}_$i.txt 2>&1; el "$side $dt $i $?"
      grep -h "^  dispatch\|WRONG\|rror" $R/${side}_${dt}_$i.txt | cut -c1-90
    done
  done
done
tar czf $OUT/r2.tgz -C $OUT r2
