#!/bin/bash
# Run 1 (H100): the fp8 best-fraction rule (fraction_tile) at 16 held-out shapes chosen after the
# rule was written (none among the 21 that set it): the rules' plan (dispatch) and the four
# candidate tiles forced, pass 1 (shapes in this order).
set -u
R=$OUT/r1; mkdir -p $R; nvidia-smi > $R/device.txt 2>&1
export PYTHONPATH=$PWD/src:$PWD/tests PYTHONUNBUFFERED=1 GEMMLAB_CACHE_DIR=/tmp/glc
S="3072,3072,3072;2560,4096,4096;2816,2816,5120;2048,3840,4096;4096,1280,6144;2500,3000,4096;3584,1600,4096;1792,4096,8192;3072,3200,4096;2560,3400,4096;2048,4000,4096;4096,1600,5120;2048,2400,8192;4096,2048,4096;2048,6144,2048;2048,2800,5120"
date +%T
for c in 128x200c1 128x160c1 128x256c1 128x128pp; do
  python3 benchmarks/tc_plan_once.py --dtype fp8 --shape 2048,2048,2048 --runs 1 --policy "{\"config\":\"$c\"}" > $R/warm_$c.log 2>&1 &
done
wait; date +%T
timeout 480 python3 benchmarks/tc_dispatch_compare.py --dtype fp8 --shapes "$S" \
  --only "128x200c1 S=1,128x160c1 S=1,128x256c1 S=1,128x128pp S=1" --rounds 3 --rep-ms 8 \
  --json $R/fp8_heldout_1.json > $R/fp8_heldout_1.log 2>&1
echo "pass 1 rc $? $(date +%T)"
cd $OUT && tar cJf r1.tar.xz r1 && rm -rf r1
