#!/usr/bin/env bash
# Run 9 (H200): serving batches of 24-64 tokens - the swapped kernel (the rules' plan) against
# 64 x 64 and the plan the rules would run without it (keep_r9.json). Tuning: 32 / 64 tokens x
# N 2048 / 4096 / 5120 x K 4096 / 14336; held out (chosen before the run, scored after the rule
# is set from the tuning rows alone): six shapes of 24-56 tokens.
set -u
R=$OUT/r9; mkdir -p $R
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv; date -u; git log -1 --format=%H; } > $R/device.txt 2>&1
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/src
t0=$(date +%s)
T="32,2048,4096;32,2048,14336;32,4096,4096;32,4096,14336;32,5120,4096;32,5120,14336;64,2048,4096;64,2048,14336;64,4096,4096;64,4096,14336;64,5120,4096;64,5120,14336"
H="24,3584,6144;40,2560,8192;48,4608,6144;56,5632,8192;40,3072,4096;48,1536,8192"
for d in fp8 bf16; do
  timeout 130 python3 benchmarks/tc_dispatch_compare.py --dtype $d --shapes "$T" --keep-plans _dev/cmd/keep_r9.json --rounds 2 --rep-ms 8 --json $R/tune_$d.json > $R/tune_$d.log 2>&1
  echo "tune $d rc $? $(( $(date +%s) - t0 )) s"
  cd $OUT && tar cJf r9_$d.tar.xz r9 && cd - > /dev/null
done
for d in fp8 bf16; do
  timeout 70 python3 benchmarks/tc_dispatch_compare.py --dtype $d --shapes "$H" --keep-plans _dev/cmd/keep_r9.json --rounds 2 --rep-ms 8 --json $R/held_$d.json > $R/held_$d.log 2>&1
  echo "held $d rc $? $(( $(date +%s) - t0 )) s"
done
cd $OUT && rm -f r9_*.tar.xz && tar cJf r9.tar.xz r9 && rm -rf r9
