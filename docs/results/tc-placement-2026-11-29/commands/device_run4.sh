#!/usr/bin/env bash
# (as run: the timing loop below started in $OUT after the first tar - it found no benchmarks/;
# run 5 timed these again)
# run 4: band height (GROUP) of the lone and paired ping-pong tiles - DRAM bytes (ncu) and time
set -u
R=$OUT/r4; mkdir -p $R
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv; date -u; } > $R/device.txt 2>&1
export PYTHONUNBUFFERED=1
NCU=/opt/nvidia/nsight-compute/2025.3.1/ncu
[ -x $NCU ] || NCU=ncu
M="gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_srcunit_tex.sum,lts__t_sectors_srcunit_tex_lookup_miss.sum,lts__t_sectors_srcunit_ltcfabric.sum"
VS="128x128pp 128x128G4pp 128x128G16pp 128x128G32pp 128x128c2pp 128x128c2G2pp 128x128c2G4pp 128x128c2G16pp 128x112pp 128x112G16pp 128x112c2pp 128x112c2G4pp 128x112c2G16pp"
T0=$(date +%s)
for shp in 4096,4096,4096 8192,4096,4096; do
for v in $VS; do
  PYTHONPATH=$PWD/_dev/tV/src GEMMLAB_CACHE_DIR=/tmp/glc_tV timeout 100 $NCU --clock-control none --profile-from-start off -k regex:gemmlab_dispatch --launch-skip 1 --launch-count 3 \
    --metrics "$M" --csv python3 benchmarks/tc_plan_once.py --dtype fp8 --shape $shp --policy "{\"config\":\"$v\"}" --runs 5 > $R/ncu_${shp//,/x}_$v.csv 2> $R/ncu_${shp//,/x}_$v.err
  echo "$shp $v rc $? $(( $(date +%s) - T0 )) s"
done; done
cd $OUT && tar cJf r4.tar.xz r4
ONLY=$(echo $VS | sed 's/ / S=1,/g; s/$/ S=1/')
for n in 0 1; do
  PYTHONPATH=$PWD/_dev/tV/src GEMMLAB_CACHE_DIR=/tmp/glc_tV timeout 150 python3 benchmarks/tc_dispatch_compare.py --dtype fp8 \
    --only "$ONLY" --shapes "4096,4096,4096;8192,4096,4096" --rounds 2 --rep-ms 8 --json $R/tV_$n.json > $R/tV_$n.log 2>&1
  echo "tV pass $n rc $? $(( $(date +%s) - T0 )) s"
  grep -h "  128x\|  dispatch\|WRONG\|rror" $R/tV_$n.log | cut -c1-110
  cd $OUT && tar cJf r4.tar.xz r4 && cd - > /dev/null
done
rm -rf $OUT/r4
