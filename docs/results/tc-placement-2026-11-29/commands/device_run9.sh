#!/usr/bin/env bash
# run 9: tree tS - the last, partial round of tiles dealt over the SM groups ("S" configs) for
# the lone tile launched in pairs and for the pairs, beside the same without
set -u
R=$OUT/r9; mkdir -p $R
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv; date -u; } > $R/device.txt 2>&1
export PYTHONUNBUFFERED=1
T0=$(date +%s)
ONLY="128x128pp S=1,128x128L2pp S=1,128x128L2Spp S=1,128x128c2G2pp S=1,128x128c2G2Spp S=1,128x112c2G4Spp S=1"
for n in 0 1; do
  PYTHONPATH=$PWD/_dev/tS/src GEMMLAB_CACHE_DIR=/tmp/glc_tS timeout $([ $n = 0 ] && echo 120 || echo 70) python3 benchmarks/tc_dispatch_compare.py --dtype fp8 \
    --only "$ONLY" --shapes "4096,4096,4096;8192,4096,4096" --rounds 2 --rep-ms 8 --json $R/tS_$n.json > $R/tS_$n.log 2>&1
  echo "tS pass $n rc $? $(( $(date +%s) - T0 )) s"
  grep -h "  128x\|  dispatch\|WRONG\|rror" $R/tS_$n.log | cut -c1-100
done
cd $OUT && tar cJf r9.tar.xz r9 && rm -rf r9
