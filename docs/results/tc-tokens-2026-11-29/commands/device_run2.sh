#!/usr/bin/env bash
# Run 2: bf16's one token on the 8-token tile (the grid's 11 one-token shapes: the rules' plan -
# m64n8 - vs the 16-token tile at its rules' split and ring, and m64n8 at every ring of 1-2 CTAs a
# strip); then the held-out shapes (never tuned on), both dtypes: the rules (m64n8 up to 8 tokens)
# vs the 16-token tile; then the swapped kernel's GPU tests.
set -u
export PYTHONPATH=src PYTHONUNBUFFERED=1
R=$OUT/r2; mkdir -p $R
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv; date -u; } > $R/device.txt 2>&1
ONE="1,6144,4096;1,4096,4096;1,28672,4096;1,4096,14336;1,10240,8192;1,8192,8192;1,28672,8192;1,8192,28672;1,11008,4096;1,4800,1600;1,1600,6400"
t0=$(date +%s)
timeout 170 python benchmarks/tc_dispatch_compare.py --dtype bf16 --decode --shapes "$ONE" \
  --only "swap t=16 auto,swap ks=1,swap ks=2" --json $R/one_bf16.json > $R/one_bf16.log 2>&1
echo "exit $? after $(( $(date +%s) - t0 )) s" >> $R/one_bf16.log; tail -2 $R/one_bf16.log
HELD="1,5120,5120;2,13824,5120;4,5120,13824;8,3584,18944;1,18944,3584;4,3072,8192;8,7168,5120;1,14336,5120"
for dt in fp8 bf16; do
  t0=$(date +%s)
  timeout 130 python benchmarks/tc_dispatch_compare.py --dtype $dt --decode --shapes "$HELD" \
    --only "swap t=16 auto" --json $R/held_$dt.json > $R/held_$dt.log 2>&1
  echo "exit $? after $(( $(date +%s) - t0 )) s" >> $R/held_$dt.log; tail -2 $R/held_$dt.log
done
t0=$(date +%s)
timeout 150 python -m pytest -q -p no:cacheprovider tests/gpu/test_dispatch_tc_gpu.py -k "swap or decode_rule" > $R/gpu_tests.txt 2>&1
echo "exit $? after $(( $(date +%s) - t0 )) s" >> $R/gpu_tests.txt; tail -3 $R/gpu_tests.txt
