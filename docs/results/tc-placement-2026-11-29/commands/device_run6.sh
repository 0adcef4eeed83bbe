#!/usr/bin/env bash
# run 6: persistent grids capped at the clusters that fit (persistent_clusters): the forced
# 64x32c2x4 tile (clusters of 8) - sanitizer on its split and stream-K cases, and its time
# against the tree before (HEAD's src in _dev/told), processes alternating
set -u
R=$OUT/r6; mkdir -p $R
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv; date -u; git log -1 --format=%H; } > $R/device.txt 2>&1
export PYTHONUNBUFFERED=1
T0=$(date +%s)
for tool in memcheck racecheck; do
  PYTHONPATH=$PWD/src timeout 150 compute-sanitizer --tool $tool --report-api-errors no --error-exitcode 3 \
    python3 benchmarks/sanitize_dispatch_tc.py --set $([ $tool = memcheck ] && echo memcheck || echo racecheck) --match 64x32c2x4 > $R/$tool.log 2>&1
  echo "$tool rc $? $(( $(date +%s) - T0 )) s"; tail -3 $R/$tool.log
done
for t in new old new old; do
  n=$(ls $R | grep -c "^cmp_${t}_")
  P=$PWD/src; [ $t = old ] && P=$PWD/_dev/told/src
  for dt in fp8 bf16; do
  PYTHONPATH=$P GEMMLAB_CACHE_DIR=/tmp/glc_$t timeout 100 python3 benchmarks/tc_dispatch_compare.py --dtype $dt \
    --only "64x32c2x4 S=1" --shapes "128,4096,4096;512,4096,4096;128,1600,6400" --rounds 2 --rep-ms 8 \
    --json $R/cmp_${t}_${n}_$dt.json > $R/cmp_${t}_${n}_$dt.log 2>&1
  echo "$t $dt pass $n rc $? $(( $(date +%s) - T0 )) s"
  grep -h "  64x32c2x4\|WRONG\|rror" $R/cmp_${t}_${n}_$dt.log | cut -c1-100
  done
done
cd $OUT && tar cJf r6.tar.xz r6 && rm -rf r6
