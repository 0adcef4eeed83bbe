#!/bin/bash
# Run 2 (H200; run 1's 17 MB tar did not come back): Nsight Compute (--set full) of the swapped
# decode kernel and cuBLASLt's at fp8 16x8192x8192 and 16x4096x4096; the shape maps of HEAD
# (fp8, then bf16); then the swapped kernel's splits and rings at three fp8 decode shapes.
# Every file that comes back is compressed and under 16 MB.
set -u
T0=$(date +%s)
el() { echo $(( $(date +%s) - T0 )); }
R=$OUT/r2; mkdir -p $R/ncu
export PYTHONPATH=$PWD/src:$PWD/tests PYTHONUNBUFFERED=1 GEMMLAB_CACHE_DIR=/tmp/glc
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv,noheader > $R/device.txt; date -u >> $R/device.txt
NCU=$(command -v ncu || echo /opt/nvidia/nsight-compute/2025.3.1/ncu)
for s in 16,8192,8192 16,4096,4096; do
  n=fp8_${s//,/x}
  timeout 50 $NCU --set full --import-source yes --profile-from-start off --launch-skip 2 --launch-count 1 \
    -k regex:gemmlab -o $R/ncu/ours_$n python3 benchmarks/tc_plan_once.py --dtype fp8 --shape $s --runs 3 > $R/ncu/ours_$n.log 2>&1
  echo "ncu ours $n rc $? $(el) s"
  timeout 50 $NCU --set full --profile-from-start off --launch-skip 2 --launch-count 1 \
    -o $R/ncu/cublas_$n python3 benchmarks/tc_plan_once.py --dtype fp8 --shape $s --runs 3 --cublas > $R/ncu/cublas_$n.log 2>&1
  echo "ncu cublas $n rc $? $(el) s"
done
ls -la $R/ncu > $R/ncu_sizes.txt
( cd $R && tar cf - ncu | xz -9 -T4 > $OUT/r2_ncu.tar.xz && rm -rf ncu ) &
SHAPES_TIMEOUT=230 bash benchmarks/run_shapes_tc_device.sh $R/maps fp8 2>&1 | grep -E "geometric|meet|exit"
echo "fp8 map $(el) s"
SHAPES_TIMEOUT=$(( 560 - $(el) )) bash benchmarks/run_shapes_tc_device.sh $R/maps bf16 2>&1 | grep -E "geometric|meet|exit"
echo "bf16 map $(el) s"
left=$(( 575 - $(el) ))
if [ $left -gt 40 ]; then
  timeout $left python3 benchmarks/tc_dispatch_compare.py --dtype fp8 --shapes "16,8192,8192;16,4096,4096;16,10240,8192" \
    --decode --only "swap" --rounds 2 --rep-ms 6 --json $R/swap_sweep.json > $R/swap_sweep.log 2>&1
  echo "sweep rc $? $(el) s"
fi
wait
cd $R/maps && xz -9 -T4 *.json shapes.sqlite 2>/dev/null; cd $OUT && tar cf r2.tar r2 && rm -rf r2
ls -la $OUT
