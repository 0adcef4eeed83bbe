#!/bin/bash
# Run 1 (H200): Nsight Compute (--set full, source) of the swapped decode kernel and cuBLASLt's
# kernel at three decode shapes; then the shape maps of HEAD, both dtypes.
# Its output did not come back: the tar was 17 MB (the ncu reports with --import-source, 6 MB each),
# over the 16 MiB a returned file may hold. Run 2 repeats it with every file compressed.
set -u
T0=$(date +%s)
R=$OUT/r1; mkdir -p $R/ncu
export PYTHONPATH=$PWD/src:$PWD/tests PYTHONUNBUFFERED=1 GEMMLAB_CACHE_DIR=/tmp/glc
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv,noheader > $R/device.txt; date -u >> $R/device.txt
NCU=$(command -v ncu || echo /opt/nvidia/nsight-compute/2025.3.1/ncu)
for spec in "fp8 16,8192,8192" "fp8 16,4096,4096" "bf16 16,4096,14336"; do
  set -- $spec; d=$1; s=$2; n=${d}_${s//,/x}
  timeout 60 $NCU --set full --import-source yes --profile-from-start off --launch-skip 2 --launch-count 1 \
    -k regex:gemmlab -o $R/ncu/ours_$n python3 benchmarks/tc_plan_once.py --dtype $d --shape $s --runs 3 > $R/ncu/ours_$n.log 2>&1
  echo "ncu ours $n rc $? $(( $(date +%s) - T0 )) s"
  timeout 60 $NCU --set full --profile-from-start off --launch-skip 2 --launch-count 1 \
    -o $R/ncu/cublas_$n python3 benchmarks/tc_plan_once.py --dtype $d --shape $s --runs 3 --cublas > $R/ncu/cublas_$n.log 2>&1
  echo "ncu cublas $n rc $? $(( $(date +%s) - T0 )) s"
done
SHAPES_TIMEOUT=240 bash benchmarks/run_shapes_tc_device.sh $R/maps bf16 fp8 2>&1 | grep -E "geometric|meet|exit"
echo "maps done $(( $(date +%s) - T0 )) s"
cd $R/maps && xz -9 *.json shapes.sqlite 2>/dev/null; cd $OUT && tar cf r1.tar r1 && rm -rf r1
