set -u
R=$OUT/alt; mkdir -p $R
export PYTHONPATH=$PWD/src:$PWD/tests PYTHONUNBUFFERED=1 GEMMLAB_CACHE_DIR=/tmp/glc
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv,noheader; date -u; git rev-parse HEAD; } > $R/device.txt
T0=$(date +%s)
CS=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
timeout 90 $CS --tool memcheck --report-api-errors no --error-exitcode 3 python3 benchmarks/sanitize_dispatch_tc.py --set memcheck > $R/memcheck.log 2>&1; echo "memcheck rc $? $(( $(date +%s) - T0 )) s" | tee -a $R/memcheck.log
timeout $(( 440 - ($(date +%s) - T0) )) python3 benchmarks/tc_dispatch_compare.py --dtype fp8 --shapes "128,10240,8192;128,11008,4096;128,28672,4096;2048,11008,4096" \
  --rounds 3 --rep-ms 6 --json $R/alt_fp8.json > $R/alt_fp8.log 2>&1; echo "alt rc $? $(( $(date +%s) - T0 )) s"
tail -2 $R/memcheck.log; grep -A3 "x.*: cuBLAS" $R/alt_fp8.log | head -30
cd $OUT && tar cJf alt.tar.xz alt && rm -rf alt
