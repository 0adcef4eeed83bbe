#!/usr/bin/env bash
# run 2: tree tV - the launch order of pairs spread over the SM groups (VIRT = 2: "T" configs)
# beside the plain launch, for the lone 128x128pp under a cluster-of-2 launch and the pairs
set -u
R=$OUT/r2; mkdir -p $R
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv; date -u; } > $R/device.txt 2>&1
export PYTHONUNBUFFERED=1
T0=$(date +%s)
V="128x128pp S=1,128x128L2pp S=1,128x128L2Tpp S=1,128x128Tpp S=1,128x128c2pp S=1,128x128c2Tpp S=1,128x112c2pp S=1,128x112c2Tpp S=1,128x112pp S=1"
for n in 0 1 2; do
  PYTHONPATH=$PWD/_dev/tV/src GEMMLAB_CACHE_DIR=/tmp/glc_tV timeout $([ $n = 0 ] && echo 300 || echo 140) python3 benchmarks/tc_dispatch_compare.py --dtype fp8 \
    --only "$V" --shapes "4096,4096,4096;8192,4096,4096" --rounds 2 --rep-ms 8 \
    --json $R/tV_$n.json > $R/tV_$n.log 2>&1
  echo "tV pass $n rc $? $(( $(date +%s) - T0 )) s"
  grep -h "  128x\|  dispatch\|WRONG\|rror" $R/tV_$n.log | cut -c1-110
  cd $OUT && tar cJf r2.tar.xz r2 && cd - > /dev/null
done
