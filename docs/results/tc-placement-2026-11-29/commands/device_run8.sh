#!/usr/bin/env bash
# run 8: per-tile timelines (tree tTV = tV + the trace) of the lone ping-pong tile, the same
# launched in pairs, and the pairs banded 4 rows deep (their DRAM bytes the lone tile's), fp8 4096^3
set -u
R=$OUT/r8; mkdir -p $R
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv; date -u; } > $R/device.txt 2>&1
export PYTHONUNBUFFERED=1
T0=$(date +%s)
PYTHONPATH=$PWD/_dev/tTV/src GEMMLAB_CACHE_DIR=/tmp/glc_tTV timeout 200 python3 _dev/trace.py $R b \
  "4096,4096,4096" "128x128pp,128x128L2pp,128x128c2G2pp" 4 > $R/trace_b.log 2>&1
echo "trace rc $? $(( $(date +%s) - T0 )) s"; tail -4 $R/trace_b.log
cd $OUT && tar cJf r8.tar.xz r8 && rm -rf r8
