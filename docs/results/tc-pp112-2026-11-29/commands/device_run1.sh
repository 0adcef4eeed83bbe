#!/usr/bin/env bash
# Run 1 (H200): fp8 ping-pong 128 x 112 and 128 x 144 - both tiles checked (forced), then the
# tuning set: the rules' plan and the forced 128-row tiles, interleaved rounds.
set -u
R=$OUT/r1; mkdir -p $R
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv; date -u; git log -1 --format=%H; } > $R/device.txt 2>&1
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/src
t0=$(date +%s)
S=2048,1792,4096
( for c in 128x112pp 128x128pp; do python3 benchmarks/tc_plan_once.py --dtype fp8 --shape $S --runs 1 --policy "{\"config\":\"$c\"}"; done ) > $R/warm1.log 2>&1 &
( for c in 128x144pp 128x160pp; do python3 benchmarks/tc_plan_once.py --dtype fp8 --shape $S --runs 1 --policy "{\"config\":\"$c\"}"; done ) > $R/warm2.log 2>&1 &
( for c in 128x168pp 128x176pp; do python3 benchmarks/tc_plan_once.py --dtype fp8 --shape $S --runs 1 --policy "{\"config\":\"$c\"}"; done ) > $R/warm3.log 2>&1 &
( for c in 128x256c1 128x200c1 128x160c1; do python3 benchmarks/tc_plan_once.py --dtype fp8 --shape $S --runs 1 --policy "{\"config\":\"$c\"}"; done ) > $R/warm4.log 2>&1 &
wait; echo "warm $(( $(date +%s) - t0 )) s"
timeout 120 python3 _dev/pp_check.py 128x112pp 128x144pp > $R/pp_check.log 2>&1
echo "pp_check rc $? $(tail -1 $R/pp_check.log) $(( $(date +%s) - t0 )) s"
T="2048,1792,4096;256,14592,4096;1024,18432,4096;1536,9472,4096;512,27904,4096;256,9472,4096;1536,1536,8192;4096,4096,4096;8192,4096,4096;512,9472,4096;1536,6144,4096;2048,5888,4096;6144,7936,4096"
timeout 380 python3 benchmarks/tc_dispatch_compare.py --dtype fp8 --shapes "$T" \
  --only "128x112pp S=1,128x144pp S=1,128x128pp S=1,128x160pp S=1,128x168pp S=1,128x176pp S=1,128x256c1 S=1" --rounds 2 --rep-ms 8 --json $R/fp8.json > $R/fp8.log 2>&1
echo "fp8 rc $? $(( $(date +%s) - t0 )) s"
cd $OUT && tar cJf r1.tar.xz r1 && rm -rf r1
