#!/usr/bin/env bash
# Run 3 (H200): tuning shapes for two extensions - a 176-column ping-pong width (pingpong_width),
# and fp8's short-K ping-pong (pingpong_short_k) at any width: forced ping-pong widths beside the
# cooperative tiles and the rules' plan; every ping-pong tile checked first (128 x 176 new).
set -u
R=$OUT/r3; mkdir -p $R
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv; date -u; } > $R/device.txt 2>&1
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/src
t0=$(date +%s)
( for c in 128x176pp 128x168pp; do python3 benchmarks/tc_plan_once.py --dtype fp8 --shape 2048,2816,4096 --runs 1 --policy "{\"config\":\"$c\"}"; done ) > $R/warm1.log 2>&1 &
( for c in 128x160pp 128x128pp; do python3 benchmarks/tc_plan_once.py --dtype fp8 --shape 2048,2816,4096 --runs 1 --policy "{\"config\":\"$c\"}"; done ) > $R/warm2.log 2>&1 &
( for c in 128x256c2 128x256c1; do python3 benchmarks/tc_plan_once.py --dtype fp8 --shape 2048,2816,4096 --runs 1 --policy "{\"config\":\"$c\"}"; done; python3 benchmarks/tc_plan_once.py --dtype bf16 --shape 2048,4800,1600 --runs 1 --policy '{"config":"128x128pp"}' ) > $R/warm3.log 2>&1 &
wait; echo "warm $(( $(date +%s) - t0 )) s"
timeout 150 python3 _dev/pp_check.py > $R/pp_check.log 2>&1
echo "pp_check rc $? $(tail -1 $R/pp_check.log) $(( $(date +%s) - t0 )) s"
A="1024,5632,4096;2048,2816,4096;512,5632,4096"
timeout 150 python3 benchmarks/tc_dispatch_compare.py --dtype fp8 --shapes "$A" \
  --only "128x128pp S=1,128x160pp S=1,128x168pp S=1,128x176pp S=1,128x256c1 S=1" --rounds 2 --rep-ms 8 --json $R/width176.json > $R/width176.log 2>&1
echo "width176 rc $? $(( $(date +%s) - t0 )) s"
B="8192,6144,4096;6144,7168,4096;4096,11008,4096;8192,10240,4096;16384,5120,2048"
timeout 240 python3 benchmarks/tc_dispatch_compare.py --dtype fp8 --shapes "$B" \
  --only "128x128pp S=1,128x160pp S=1,128x168pp S=1,128x176pp S=1,128x256c2 S=1" --rounds 2 --rep-ms 8 --json $R/shortk.json > $R/shortk.log 2>&1
echo "shortk rc $? $(( $(date +%s) - t0 )) s"
cd $OUT && tar cJf r3.tar.xz r3 && rm -rf r3
