#!/usr/bin/env bash
# Run 3: `gemmlab shapes` over the grid's 22 decode shapes (the only grid shapes whose plans
# changed: 1 token on the 8-token tile), both dtypes; then compute-sanitizer memcheck over every
# dispatch path (benchmarks/sanitize_dispatch_tc.py --set memcheck).
set -u
export PYTHONPATH=src PYTHONUNBUFFERED=1
R=$OUT/r3; mkdir -p $R
DEC="1,6144,4096;16,6144,4096;1,4096,4096;16,4096,4096;1,28672,4096;16,28672,4096;1,4096,14336;16,4096,14336;1,10240,8192;16,10240,8192;1,8192,8192;16,8192,8192;1,28672,8192;16,28672,8192;1,8192,28672;16,8192,28672;1,11008,4096;16,11008,4096;1,4800,1600;16,4800,1600;1,1600,6400;16,1600,6400"
SHAPES_TIMEOUT=150 bash benchmarks/run_shapes_tc_device.sh $R/maps bf16 fp8 -- --shapes "$DEC"
CS=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
t0=$(date +%s)
timeout 260 "$CS" --tool memcheck --error-exitcode 3 --print-limit 20 --report-api-errors no \
  python benchmarks/sanitize_dispatch_tc.py --set memcheck > $R/memcheck.log 2>&1
echo "exit $? after $(( $(date +%s) - t0 )) s" >> $R/memcheck.log; tail -4 $R/memcheck.log
