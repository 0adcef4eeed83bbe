# the experiment's dispatch_tc.py change (not committed): _TILES["64x64c2"] = (64, 64, 2, 12); FP8_ONLY += ("64x64c2",)
#!/usr/bin/env bash
# session scratch: why pairs of 64 x 64 CTAs sharing B (fp8, clusters of 2) lose to single CTAs -
# ncu at 128x4096x4096 (single: ~96-100% of cuBLASLt) and 128x1600x6400, both with source counters
set -u
R=$OUT/r10; mkdir -p $R
export PYTHONPATH=$PWD/src:$PWD/tests PYTHONUNBUFFERED=1 GEMMLAB_CACHE_DIR=/tmp/glc
NCU=$(command -v ncu || echo /opt/nvidia/nsight-compute/2025.3.1/ncu)
nvidia-smi --query-gpu=name,driver_version --format=csv > $R/device.txt; date -u >> $R/device.txt
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
for shape in 128,4096,4096 128,1600,6400; do for cfg in 64x64 64x64c2; do
  n=fp8_${shape//,/x}_$cfg
  timeout 120 $NCU --set full --import-source yes --profile-from-start off --launch-skip 1 --launch-count 1 -o $R/$n -f \
    python3 benchmarks/tc_plan_once.py --dtype fp8 --shape $shape --runs 3 --policy "{\"config\": \"$cfg\"}" > $R/$n.log 2>&1
  el "$n $?"; tail -n 1 $R/$n.log
done; done
python3 benchmarks/tc_plan_once.py --dtype fp8 --shape 128,4096,4096 --runs 20 --policy '{"config": "64x64"}' | tail -1
python3 benchmarks/tc_plan_once.py --dtype fp8 --shape 128,4096,4096 --runs 20 --policy '{"config": "64x64c2"}' | tail -1
tar czf $OUT/r10.tgz -C $OUT r10
