#!/usr/bin/env bash
# (run 2; the tree carried not_kept/clustered_pingpong_tiles.patch)
# fp8 at N = 4096: 128 x 112 ping-pong (cuBLASLt's fastest there on this H200 in run 1: tile
# 112x128, clusters 1x2), alone and in clusters of 2 sharing B, against 128 x 128 ping-pong and the
# rules' plan
set -u
R=$OUT/r2; mkdir -p $R
export PYTHONPATH=$PWD/src:$PWD/tests PYTHONUNBUFFERED=1 GEMMLAB_CACHE_DIR=/tmp/glc
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv > $R/device.txt; date -u >> $R/device.txt
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
C="128x112pp S=1,128x112c2pp S=1,128x128pp S=1,128x256c1 S=1"
timeout 300 python3 benchmarks/tc_dispatch_compare.py --dtype fp8 --rounds 3 --rep-ms 8 --only "$C" \
  --shapes "4096,4096,4096;8192,4096,4096;4096,4096,8192;16384,4096,4096;4096,4096,2048;8192,8192,8192" --json $R/fp8.json > $R/fp8.txt 2>&1; el "fp8 $?"
grep -h "^[0-9]\|  [0-9a-z]\|WRONG\|rror" $R/fp8.txt | cut -c1-110
grep -ho "tile [0-9x]* stages [0-9xA-Z]* cluster [0-9x]*" $R/fp8.txt
tar cJf $OUT/r2.tar.xz -C $OUT r2
