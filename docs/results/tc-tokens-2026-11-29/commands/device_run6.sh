#!/usr/bin/env bash
# Run 6: multicast pairs (two 8-token tiles of a strip sharing its B) - GPU tests, sanitizer
# memcheck and racecheck of their cases, then both dtypes at the grid's 16-token shapes: the
# rules vs the pair at the rules' ring and every ring.
set -u
export PYTHONPATH=src PYTHONUNBUFFERED=1
R=$OUT/r6; mkdir -p $R
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv; date -u; } > $R/device.txt 2>&1
t0=$(date +%s)
timeout 120 python -m pytest -q -p no:cacheprovider tests/gpu/test_dispatch_tc_gpu.py -k "token_tiles" > $R/gpu_tests.txt 2>&1
echo "exit $? after $(( $(date +%s) - t0 )) s" >> $R/gpu_tests.txt; tail -2 $R/gpu_tests.txt
CS=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
for spec in memcheck:memcheck racecheck:racecheck; do
  IFS=: read -r tool set_ <<< "$spec"; t0=$(date +%s)
  timeout 60 "$CS" --tool $tool --error-exitcode 3 --print-limit 20 --report-api-errors no \
    python benchmarks/sanitize_dispatch_tc.py --set $set_ --match multicast > $R/$tool.log 2>&1
  echo "exit $? after $(( $(date +%s) - t0 )) s" >> $R/$tool.log; echo "== $tool"; tail -2 $R/$tool.log
done
SIX="16,6144,4096;16,4096,4096;16,28672,4096;16,4096,14336;16,10240,8192;16,8192,8192;16,28672,8192;16,8192,28672;16,11008,4096;16,4800,1600;16,1600,6400"
for dt in fp8 bf16; do
  t0=$(date +%s)
  timeout 140 python benchmarks/tc_dispatch_compare.py --dtype $dt --decode --shapes "$SIX" \
    --only "swap t=8 mc" --json $R/mc_$dt.json > $R/mc_$dt.log 2>&1
  echo "exit $? after $(( $(date +%s) - t0 )) s" >> $R/mc_$dt.log; tail -2 $R/mc_$dt.log
done
