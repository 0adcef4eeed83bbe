#!/usr/bin/env bash
# (as run: _dev/trace.py is commands/trace.py here; the trees _dev/t* are built as the README says)
# run 1: 128x128pp launched alone / in clusters of 2 / of 4 (the same kernel code:
# __cluster_dims__ only) - timing (tree tL) and per-tile timelines (tree tT)
set -u
R=$OUT/r1; mkdir -p $R
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv; date -u; } > $R/device.txt 2>&1
export PYTHONUNBUFFERED=1
T0=$(date +%s)
PYTHONPATH=$PWD/_dev/tT/src GEMMLAB_CACHE_DIR=/tmp/glc_tT timeout 200 python3 _dev/trace.py $R a \
  "4096,4096,4096;8192,4096,4096" "128x128pp,128x128L2pp,128x128L4pp" 4 > $R/trace_a.log 2>&1
echo "trace rc $? $(( $(date +%s) - T0 )) s"; tail -8 $R/trace_a.log
for n in 0 1; do
  PYTHONPATH=$PWD/_dev/tL/src GEMMLAB_CACHE_DIR=/tmp/glc_tL timeout 170 python3 benchmarks/tc_dispatch_compare.py --dtype fp8 \
    --only "128x128pp S=1,128x128L2pp S=1,128x128L4pp S=1" --shapes "4096,4096,4096;8192,4096,4096" --rounds 2 --rep-ms 8 \
    --json $R/tL_$n.json > $R/tL_$n.log 2>&1
  echo "tL pass $n rc $? $(( $(date +%s) - T0 )) s"
  grep -h "  128x\|WRONG\|rror" $R/tL_$n.log | cut -c1-110
done
cd $OUT && tar cJf r1.tar.xz r1 && rm -rf r1
