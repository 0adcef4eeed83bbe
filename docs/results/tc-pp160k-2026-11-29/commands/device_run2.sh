#!/usr/bin/env bash
# Run 2 (H200): tuning set for a ping-pong 128 x 160 rule. Tree "cand": main + the turn passed once
# the mainloop is issued + 128 x 160 ping-pong tiles forceable for both dtypes (bf16 4 stages).
# Every ping-pong tile checked first; then both dtypes at 12 shapes with N a multiple of 160:
# the rules' plan and the forced 128-row tiles, interleaved rounds.
set -u
R=$OUT/r2; mkdir -p $R
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv; date -u; } > $R/device.txt 2>&1
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/_dev/_t/cand/src GEMMLAB_CACHE_DIR=/tmp/glc_cand
T="8192,4800,1600;2048,4800,1600;8192,1600,6400;2048,1600,6400;2048,10240,8192;8192,10240,8192;4096,4800,1600;6144,4800,1600;8192,4800,4096;16384,1600,4096;4096,3200,4096;8192,6400,1600"
t0=$(date +%s)
( for c in 128x160pp 128x128pp 128x160c1 128x256c1 128x256c2; do python3 benchmarks/tc_plan_once.py --dtype fp8 --shape 8192,4800,1600 --runs 1 --policy "{\"config\":\"$c\"}"; done ) > $R/warm_fp8.log 2>&1 &
( for c in 128x160pp 128x128pp 128x160c2 128x192c2 128x256c2 128x192c1 128x256c1; do python3 benchmarks/tc_plan_once.py --dtype bf16 --shape 8192,4800,1600 --runs 1 --policy "{\"config\":\"$c\"}"; done ) > $R/warm_bf16.log 2>&1 &
wait; echo "warm $(( $(date +%s) - t0 )) s"
timeout 100 python3 _dev/pp_check.py > $R/pp_check.log 2>&1
echo "pp_check rc $? $(tail -1 $R/pp_check.log) $(( $(date +%s) - t0 )) s"
timeout 220 python3 benchmarks/tc_dispatch_compare.py --dtype fp8 --shapes "$T" \
  --only "128x160pp S=1,128x128pp S=1,128x160c1 S=1,128x256c1 S=1,128x256c2 S=1" --rounds 2 --rep-ms 8 --json $R/fp8.json > $R/fp8.log 2>&1
echo "fp8 rc $? $(( $(date +%s) - t0 )) s"
cd $OUT && tar cJf r2a.tar.xz r2 && cd - > /dev/null
timeout 220 python3 benchmarks/tc_dispatch_compare.py --dtype bf16 --shapes "$T" \
  --only "128x160pp S=1,128x128pp S=1,128x160c2 S=1,128x192c2 S=1,128x256c2 S=1,128x192c1 S=1,128x256c1 S=1" --rounds 2 --rep-ms 8 --json $R/bf16.json > $R/bf16.log 2>&1
echo "bf16 rc $? $(( $(date +%s) - t0 )) s"
cd $OUT && rm -f r2a.tar.xz && tar cJf r2.tar.xz r2 && rm -rf r2
