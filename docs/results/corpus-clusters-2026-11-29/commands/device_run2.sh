#!/usr/bin/env bash
# run 2: ncu's metric lists per chip (all of them this time), a metric name ncu does not know, and
# gemmlab profile end to end on a launch of more clusters than fit
set -u
R=$OUT/r2; mkdir -p $R
export PYTHONPATH=$PWD/src PYTHONUNBUFFERED=1
NCU=$(command -v ncu || echo /opt/nvidia/nsight-compute/2025.3.1/ncu)
T0=$(date +%s)
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv,noheader; "$NCU" --version | tail -1; date -u; } > $R/device.txt 2>&1
for c in tu102 ga100 ga102 ad102 gh100 gb100 gb202; do "$NCU" --query-metrics --chip $c > $R/q_$c.txt 2>&1; done
"$NCU" --query-metrics --query-metrics-mode all --chip ga100 > $R/q_all_ga100.txt 2>&1
"$NCU" --query-metrics --query-metrics-mode all --chip gh100 > $R/q_all_gh100.txt 2>&1
"$NCU" --query-metrics-collection launch > $R/q_launch.txt 2>&1
cat > /tmp/probe.py <<'PY'
import cupy
k = cupy.RawKernel(r'extern "C" __global__ void gemmlab_probe(float* x) { x[threadIdx.x] += 1.0f; }', "gemmlab_probe")
x = cupy.zeros(32, dtype=cupy.float32)
k((1,), (32,), (x,)); cupy.cuda.Device().synchronize(); print("probe ran", float(x[0]))
PY
"$NCU" --csv --metrics gpu__time_duration.sum,launch__no_such_metric python3 /tmp/probe.py > $R/unknown_launch_metric.txt 2>&1; echo "rc $?" >> $R/unknown_launch_metric.txt
"$NCU" --csv --metrics gpu__time_duration.sum,sm__no_such_counter.avg.pct_of_peak_sustained_active python3 /tmp/probe.py > $R/unknown_sm_metric.txt 2>&1; echo "rc $?" >> $R/unknown_sm_metric.txt
"$NCU" --csv --metrics gpu__time_duration.sum,sm__inst_executed_pipe_tensor_op_gmma.avg.pct_of_peak_sustained_active,smsp__pcsamp_warps_issue_stalled_no_such python3 /tmp/probe.py > $R/unknown_pcsamp.txt 2>&1; echo "rc $?" >> $R/unknown_pcsamp.txt
echo "probes $(( $(date +%s) - T0 )) s"
timeout 200 python3 -m gemmlab profile -k planted_cluster4_fma --launch-skip 2 -o $R/cluster4 --script docs/results/corpus-clusters-2026-11-29/commands/cluster4.py > $R/profile_cluster4.txt 2>&1; echo "profile rc $?" >> $R/profile_cluster4.txt
python3 -m gemmlab analyze $R/cluster4.ncu-rep --json > $R/analyze_cluster4.json 2> $R/analyze_cluster4.err
echo "profile $(( $(date +%s) - T0 )) s"; tail -30 $R/profile_cluster4.txt
cd $OUT && tar cJf r2.tar.xz r2 && ls -la $OUT
