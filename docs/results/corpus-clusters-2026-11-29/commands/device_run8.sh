set -u
R=$OUT/r8; mkdir -p $R
export PYTHONPATH=$PWD/src PYTHONUNBUFFERED=1
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv,noheader; date -u; } > $R/device.txt 2>&1
T0=$(date +%s)
timeout 540 python3 -m pytest -q -p no:cacheprovider -rs --durations=5 tests/gpu/test_dispatch_tc_gpu.py > $R/gpu_dispatch_tc.log 2>&1; echo "rc $? $(( $(date +%s) - T0 )) s" >> $R/gpu_dispatch_tc.log
tail -12 $R/gpu_dispatch_tc.log
