#!/bin/bash
# Run 5 (H100): why does 128 x 200 pay ~1.2 us more per tile than 128 x 256 (run 2's exact
# shapes)? Nsight Compute (--set full, one launch each) of the forced tiles at the exact shapes,
# K = 1600 (4224 x 1600 / 2048 / 1280: 264 tiles of 200 / 256 / 160, two rounds), and of 200
# and 256 at the grid's fp8 8192 x 4800 x 1600 (12 and 10 rounds).
set -u
R=$OUT/r5; mkdir -p $R; nvidia-smi > $R/device.txt 2>&1
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/src:$PWD/tests GEMMLAB_CACHE_DIR=/tmp/glc
NCU=$(command -v ncu || echo /opt/nvidia/nsight-compute/2025.3.1/ncu)
prof() {  # shape config name
  timeout 150 $NCU --set full --import-source no --profile-from-start off --launch-skip 2 --launch-count 1 \
    -o $R/$3 python3 benchmarks/tc_plan_once.py --dtype fp8 --shape $1 --runs 3 --policy "{\"config\":\"$2\"}" > $R/$3.log 2>&1
  echo "ncu $3 $? $(date +%T)"
}
for c in 128x200c1 128x256c1 128x160c1; do
  python3 benchmarks/tc_plan_once.py --dtype fp8 --shape 2048,2048,2048 --runs 1 --policy "{\"config\":\"$c\"}" > $R/warm_$c.log 2>&1 &
done
wait; date +%T
prof 4224,1600,1600 128x200c1 x200_k1600
prof 4224,2048,1600 128x256c1 x256_k1600
prof 4224,1280,1600 128x160c1 x160_k1600
prof 8192,4800,1600 128x200c1 g200_f8192x4800x1600
prof 8192,4800,1600 128x256c1 g256_f8192x4800x1600
cd $R && tar cJf reports.tar.xz *.ncu-rep && rm -f *.ncu-rep; cd - > /dev/null
cd $OUT && tar cJf r5.tar.xz r5 && rm -rf r5
