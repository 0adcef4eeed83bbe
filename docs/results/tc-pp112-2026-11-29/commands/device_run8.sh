#!/usr/bin/env bash
# Run 8 (H200): every forced plan at the serving-batch shapes furthest under 95% in the
# tensor-batches map of tc-lastrows run 5 (40 / 64 x 4096 x 4096 on the swapped kernel; 96 x 28672
# x 4096 on 128 x 256; 64 x 6144 x 4096 on 64-row tiles), both dtypes, interleaved rounds.
set -u
R=$OUT/r8; mkdir -p $R
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv; date -u; git log -1 --format=%H; } > $R/device.txt 2>&1
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/src
t0=$(date +%s)
G="40,4096,4096;64,4096,4096;96,28672,4096;64,6144,4096"
timeout 280 python3 benchmarks/tc_dispatch_compare.py --dtype fp8 --shapes "$G" --rounds 2 --rep-ms 8 --json $R/fp8.json > $R/fp8.log 2>&1
echo "fp8 rc $? $(( $(date +%s) - t0 )) s"
cd $OUT && tar cJf r8a.tar.xz r8 && cd - > /dev/null
timeout 280 python3 benchmarks/tc_dispatch_compare.py --dtype bf16 --shapes "$G" --rounds 2 --rep-ms 8 --json $R/bf16.json > $R/bf16.log 2>&1
echo "bf16 rc $? $(( $(date +%s) - t0 )) s"
cd $OUT && rm -f r8a.tar.xz && tar cJf r8.tar.xz r8 && rm -rf r8
