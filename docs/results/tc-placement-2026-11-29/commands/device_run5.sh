#!/usr/bin/env bash
# run 5: bands of 4 rows (GROUP = 4) for the lone 128x128 ping-pong, and the pairs' best bands from
# run 4's DRAM bytes, timed with the harness (run 4's timing passes did not start)
set -u
R=$OUT/r5; mkdir -p $R
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv; date -u; } > $R/device.txt 2>&1
export PYTHONUNBUFFERED=1
T0=$(date +%s)
ONLY="128x128pp S=1,128x128G4pp S=1,128x128c2G2pp S=1,128x112c2G4pp S=1"
for n in 0 1 2; do
  PYTHONPATH=$PWD/_dev/tV/src GEMMLAB_CACHE_DIR=/tmp/glc_tV timeout 170 python3 benchmarks/tc_dispatch_compare.py --dtype fp8 \
    --only "$ONLY" --shapes "4096,4096,4096;8192,4096,4096;4096,4096,2048;16384,4096,4096" --rounds 2 --rep-ms 8 --json $R/tV_$n.json > $R/tV_$n.log 2>&1
  echo "tV pass $n rc $? $(( $(date +%s) - T0 )) s"
  grep -h "  128x\|  dispatch\|WRONG\|rror" $R/tV_$n.log | cut -c1-100
done
cd $OUT && tar cJf r5.tar.xz r5 && rm -rf r5
