#!/usr/bin/env bash
# session scratch: why the 2-D clusters lose - how many clusters fit at once (cuOccupancyMaxActiveClusters),
# and B multicast alone (64x64c2), A multicast alone (64x64c1x2) and both (64x64c2x2) against 64 x 64
set -u
R=$OUT/r2; mkdir -p $R
export PYTHONPATH=$PWD/src:$PWD/tests PYTHONUNBUFFERED=1 GEMMLAB_CACHE_DIR=/tmp/glc
nvidia-smi --query-gpu=name,driver_version --format=csv > $R/device.txt; date -u >> $R/device.txt
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
timeout 60 python3 benchmarks/probes/max_active_clusters.py > $R/clusters.txt 2>&1; el "clusters $?"; cat $R/clusters.txt
for dt in bf16 fp8; do
  timeout 100 python3 benchmarks/tc_dispatch_compare.py --dtype $dt --shapes "128,4096,4096;128,1600,6400" --rounds 3 \
    --only "64x64 S=1,64x64c2 S=1,64x64c1x2 S=1,64x64c2x2 S=1,64x32c2x4 S=1" --json $R/cmp_$dt.json > $R/cmp_$dt.txt 2>&1; el "cmp $dt $?"
  grep -h "^[0-9]\|  [0-9a-z]" $R/cmp_$dt.txt | grep -v " SK[0-9]" | cut -c1-130
done
tar czf $OUT/r2.tgz -C $OUT r2
