#!/usr/bin/env bash
# run 10: tree H (tree E - no cluster launch, multicast or coupling - with bands of 4 pairs: the
# lone tile's own order of tiles over the SMs, in the pair's code)
# 128x128pp and 128x128c2pp at fp8 4096^3 and 8192 x 4096 x 4096. A: the pairs as built (B
# multicast, each CTA releasing both CTAs' stages). B: no multicast (each CTA loads its whole B
# tile), releases still to both CTAs. C: no multicast, each CTA releases only its own stages - a
# pair that only launches together.
set -u
R=$OUT/r10; mkdir -p $R
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv; date -u; } > $R/device.txt 2>&1
export PYTHONUNBUFFERED=1
T0=$(date +%s)
for t in tH tH; do
  n=$(ls $R | grep -c "^${t}_")
  PYTHONPATH=$PWD/_dev/$t/src GEMMLAB_CACHE_DIR=/tmp/glc_$t timeout 120 python3 benchmarks/tc_dispatch_compare.py --dtype fp8 \
    --only "$([ $t = tX ] && echo "128x128pp S=1" || echo "128x128pp S=1,128x128c2pp S=1")" --shapes "4096,4096,4096;8192,4096,4096" --rounds 2 --rep-ms 8 \
    --json $R/${t}_$n.json > $R/${t}_$n.log 2>&1
  echo "$t pass $n rc $? $(( $(date +%s) - T0 )) s"
  grep -h "  128x\|WRONG\|rror" $R/${t}_$n.log | cut -c1-100
  cd $OUT && tar cJf r10.tar.xz r10 && cd - > /dev/null
done
