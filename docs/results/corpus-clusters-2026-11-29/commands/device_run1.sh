#!/usr/bin/env bash
# run 1: ncu's metric lists per chip, an unknown metric's effect, the profiler's GPU tests with the
# cluster metrics collected, and the cluster corpus (targeted + full)
set -u
R=$OUT/r1; mkdir -p $R
export PYTHONPATH=$PWD/src PYTHONUNBUFFERED=1
NCU=$(command -v ncu || echo /opt/nvidia/nsight-compute/2025.3.1/ncu)
T0=$(date +%s)
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv,noheader; "$NCU" --version | tail -1; date -u; } > $R/device.txt 2>&1
"$NCU" --list-chips > $R/chips.txt 2>&1
for c in tu102 ga100 ga102 ad102 gh100 gb100 gb202; do "$NCU" --query-metrics --chip $c > $R/q_$c.txt 2>&1; done
cat > /tmp/probe.py <<'PY'
import cupy
k = cupy.RawKernel(r'extern "C" __global__ void gemmlab_probe(float* x) { x[threadIdx.x] += 1.0f; }', "gemmlab_probe")
x = cupy.zeros(32, dtype=cupy.float32)
k((1,), (32,), (x,)); cupy.cuda.Device().synchronize(); print("probe ran", float(x[0]))
PY
"$NCU" --csv --metrics gpu__time_duration.sum,launch__no_such_metric python3 /tmp/probe.py > $R/unknown_metric.txt 2>&1; echo "rc $?" >> $R/unknown_metric.txt
"$NCU" --csv --metrics gpu__time_duration.sum,launch__cluster_size,launch__cluster_max_active,launch__grid_size python3 /tmp/probe.py > $R/cluster_metrics_plain.txt 2>&1; echo "rc $?" >> $R/cluster_metrics_plain.txt
echo "queries done $(( $(date +%s) - T0 )) s"
timeout 150 python3 -m pytest -q -p no:cacheprovider -rs -v tests/gpu/test_profile_gpu.py > $R/gpu_profile.log 2>&1; echo "profile tests rc $? $(( $(date +%s) - T0 )) s" | tee -a $R/gpu_profile.log
tail -8 $R/gpu_profile.log
WORKLOAD=benchmarks/corpus/workload_clusters.py timeout $(( 560 - ($(date +%s) - T0) )) bash benchmarks/corpus/capture.sh $R both
echo "capture done $(( $(date +%s) - T0 )) s"
ls -la $R
