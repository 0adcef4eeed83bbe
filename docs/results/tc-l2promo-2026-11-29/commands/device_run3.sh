set -u
R=$OUT/chk; mkdir -p $R
export PYTHONPATH=$PWD/src:$PWD/tests PYTHONUNBUFFERED=1 GEMMLAB_CACHE_DIR=/tmp/glc
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv,noheader; date -u; git rev-parse HEAD; } > $R/device.txt
T0=$(date +%s)
timeout 300 python3 -m pytest -q -p no:cacheprovider tests/gpu/test_dispatch_tc_gpu.py > $R/gpu_tests.log 2>&1; echo "tests rc $? $(( $(date +%s) - T0 )) s" | tee -a $R/gpu_tests.log
CS=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
left=$(( 560 - ($(date +%s) - T0) ))
timeout $left $CS --tool memcheck --error-exitcode 3 python3 benchmarks/sanitize_dispatch_tc.py --set memcheck > $R/memcheck.log 2>&1; echo "memcheck rc $? $(( $(date +%s) - T0 )) s" | tee -a $R/memcheck.log
tail -3 $R/gpu_tests.log; tail -4 $R/memcheck.log
cd $OUT && tar cJf chk.tar.xz chk && rm -rf chk
