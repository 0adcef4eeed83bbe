#!/usr/bin/env bash
# run 3: Nsight Compute - L2 fabric, hits, DRAM bytes and clocks of the placements at fp8 4096^3
set -u
R=$OUT/r3; mkdir -p $R
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv; date -u; } > $R/device.txt 2>&1
export PYTHONUNBUFFERED=1
NCU=/opt/nvidia/nsight-compute/2025.3.1/ncu
[ -x $NCU ] || NCU=ncu
$NCU --query-metrics --chip gh100 2>&1 | grep -i "fabric\|ltcfabric" > $R/fabric_metrics.txt
M="gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second,sm__cycles_elapsed.max,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors.sum,lts__t_sectors_srcunit_tex.sum,lts__t_sectors_srcunit_tex_lookup_hit.sum,lts__t_sectors_srcunit_tex_lookup_miss.sum,regex:lts__t_sectors_srcunit_ltcfabric.*\.sum$,regex:lts__ltcfabric.*\.sum$,sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_elapsed"
T0=$(date +%s)
for shp in 4096,4096,4096 8192,4096,4096; do
for v in 128x128pp 128x128L2pp 128x128Tpp 128x128L2Tpp 128x128c2pp 128x112c2pp 128x256c1 cublas; do
  if [ $v = cublas ]; then A="--cublas"; K="regex:nvjet|sm90|gemm"; else A="--policy {\"config\":\"$v\"}"; K="regex:gemmlab_dispatch"; fi
  PYTHONPATH=$PWD/_dev/tV/src GEMMLAB_CACHE_DIR=/tmp/glc_tV timeout 120 $NCU --clock-control none --profile-from-start off -k "$K" --launch-skip 1 --launch-count 3 \
    --metrics "$M" --csv python3 benchmarks/tc_plan_once.py --dtype fp8 --shape $shp $A --runs 5 > $R/ncu_${shp//,/x}_$v.csv 2> $R/ncu_${shp//,/x}_$v.err
  echo "$shp $v rc $? $(( $(date +%s) - T0 )) s $(wc -l < $R/ncu_${shp//,/x}_$v.csv) lines"
done; done
cd $OUT && tar cJf r3.tar.xz r3 && rm -rf r3
