#!/usr/bin/env bash
# Run 3 (H200): racecheck / synccheck on the 112 / 144 cases (run 2's set lacked them); then every
# forced plan at the fp8 grid's 128-row shapes nearest the 95% bar (the map of b12b246).
set -u
R=$OUT/r3; mkdir -p $R
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv; date -u; git log -1 --format=%H; } > $R/device.txt 2>&1
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/src
t0=$(date +%s)
MATCH="128x112pp|128x144pp" timeout 150 bash benchmarks/run_sanitizer_device.sh $R/sanitizer tc > /dev/null 2>&1
echo "sanitizer rc $? $(( $(date +%s) - t0 )) s"; cat $R/sanitizer/summary.txt
cd $OUT && tar cJf r3a.tar.xz r3 && cd - > /dev/null
G="128,6144,4096;128,10240,8192;128,11008,4096;128,28672,4096"
timeout 380 python3 benchmarks/tc_dispatch_compare.py --dtype fp8 --shapes "$G" --rounds 2 --rep-ms 8 --json $R/m128.json > $R/m128.log 2>&1
echo "m128 rc $? $(( $(date +%s) - t0 )) s"
cd $OUT && rm -f r3a.tar.xz && tar cJf r3.tar.xz r3 && rm -rf r3
