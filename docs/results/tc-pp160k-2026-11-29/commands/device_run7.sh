#!/usr/bin/env bash
# Run 7 (H200): SM clock and power while the ping-pong and cooperative tiles run back to back at
# 8192 x 4800 x 1600 (tc_plan_once, 10000 calls each; coop, pp, cuBLAS, pp, coop per dtype):
# the H200 side of the H100's free-running loss (the ping-pong tiles' cycles match across the
# GPUs at locked clocks). nvidia-smi samples every 20 ms.
set -u
R=$OUT/r7; mkdir -p $R
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv; date -u; } > $R/device.txt 2>&1
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/src GEMMLAB_CACHE_DIR=/tmp/glc_r7
S=8192,4800,1600
for spec in "bf16 128x192c2" "bf16 128x128pp" "fp8 128x256c2" "fp8 128x160pp"; do
  set -- $spec; python3 benchmarks/tc_plan_once.py --dtype $1 --shape $S --runs 1 --policy "{\"config\":\"$2\"}" > /dev/null 2>&1 &
done; wait
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu,clocks_event_reasons.active --format=csv,noheader -lms 20 > $R/smi.csv &
SMI=$!
for d in bf16 fp8; do
  coop=$([ $d = bf16 ] && echo 128x192c2 || echo 128x256c2); pp=$([ $d = bf16 ] && echo 128x128pp || echo 128x160pp)
  for v in $coop $pp cublas $pp $coop; do
    echo "$(date +%T.%N) start $d $v" >> $R/marks.txt
    if [ $v = cublas ]; then a="--cublas"; else a="--policy {\"config\":\"$v\"}"; fi
    python3 benchmarks/tc_plan_once.py --dtype $d --shape $S --runs 10000 $a > $R/${d}_$v.log 2>&1
    echo "$(date +%T.%N) end $d $v $(tail -1 $R/${d}_$v.log)" >> $R/marks.txt
  done
done
kill $SMI
cd $OUT && tar cJf r7.tar.xz r7 && rm -rf r7
