#!/usr/bin/env bash
# Run 1: token tiles of the swapped decode kernel - GPU tests, then the fp8 sweep at the grid's
# 22 decode shapes (the rules' plan vs the 8-token tile at the rules' split/ring and ks 1-2 x
# every ring).
set -u
export PYTHONPATH=src PYTHONUNBUFFERED=1
R=$OUT/r1; mkdir -p $R
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv; date -u; } > $R/device.txt 2>&1
t0=$(date +%s)
timeout 170 python -m pytest -q -p no:cacheprovider tests/gpu/test_dispatch_tc_gpu.py -k "token_tiles or decode_rule" > $R/gpu_tests.txt 2>&1
echo "exit $? after $(( $(date +%s) - t0 )) s" >> $R/gpu_tests.txt; tail -3 $R/gpu_tests.txt
SH="1,6144,4096;16,6144,4096;1,4096,4096;16,4096,4096;1,28672,4096;16,28672,4096;1,4096,14336;16,4096,14336;1,10240,8192;16,10240,8192;1,8192,8192;16,8192,8192;1,28672,8192;16,28672,8192;1,8192,28672;16,8192,28672;1,11008,4096;16,11008,4096;1,4800,1600;16,4800,1600;1,1600,6400;16,1600,6400"
t0=$(date +%s)
timeout 360 python benchmarks/tc_dispatch_compare.py --dtype fp8 --decode --shapes "$SH" \
  --only "swap t=8 auto,swap t=8 ks=1,swap t=8 ks=2" --json $R/tt_fp8.json > $R/tt_fp8.log 2>&1
echo "exit $? after $(( $(date +%s) - t0 )) s" >> $R/tt_fp8.log; tail -3 $R/tt_fp8.log
