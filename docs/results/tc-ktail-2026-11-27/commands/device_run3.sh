#!/usr/bin/env bash
# session scratch (H100): the K-tile tail fixed (a last K-tile whose K-steps are all inside K
# runs whole) - GPU tests again, compute-sanitizer on the new tail cases, then Nsight Compute on
# fp8 4096^3 and 2048x11008x4096: the rules' plan beside cuBLASLt at its best
set -u
R=$OUT/r3; mkdir -p $R
export PYTHONPATH=$PWD/src:$PWD/tests PYTHONUNBUFFERED=1 GEMMLAB_CACHE_DIR=/tmp/glc
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv > $R/device.txt; date -u >> $R/device.txt
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
timeout 330 python3 -m pytest -q -p no:cacheprovider tests/gpu/test_dispatch_tc_gpu.py \
  -k "edge_shape or every_config_and_split or every_config_with_stream_k or model_shapes" -rs > $R/gpu_tests.log 2>&1; el "gpu tests $?"; tail -n 2 $R/gpu_tests.log
grep -h "^E " $R/gpu_tests.log | cut -c1-300 | head -6
MATCH=x1016x timeout 150 bash benchmarks/run_sanitizer_device.sh $R/san tc > /dev/null 2>&1; el "san $?"; tail -n 4 $R/san/summary.txt
tar czf $OUT/r3.tgz -C $OUT r3
NCU=$(command -v ncu || echo /opt/nvidia/nsight-compute/2025.3.1/ncu)
prof() {  # name shape args...
  local name=$1 shape=$2; shift 2
  timeout 60 $NCU --set full --import-source yes --profile-from-start off --launch-count 1 -o $R/$name -f \
    python3 benchmarks/tc_plan_once.py --dtype fp8 --shape $shape --runs 2 "$@" > $R/$name.log 2>&1
  el "$name ncu $?"; tail -n 1 $R/$name.log
  $NCU -i $R/$name.ncu-rep --csv --page details > $R/${name}_details.csv 2>/dev/null
}
prof f4096_rule 4096,4096,4096
prof f4096_cublas 4096,4096,4096 --cublas
prof f2048x11008_rule 2048,11008,4096
prof f2048x11008_cublas 2048,11008,4096 --cublas
tar czf $OUT/r3.tgz -C $OUT r3
