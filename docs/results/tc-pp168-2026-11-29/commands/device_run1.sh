#!/usr/bin/env bash
# Run 1 (H200): fp8 128 x 168 ping-pong - every ping-pong tile checked (forced), then the tuning
# set: the rules' plan and the forced 128-row tiles, interleaved rounds.
set -u
R=$OUT/r1; mkdir -p $R
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv; date -u; git log -1 --format=%H; } > $R/device.txt 2>&1
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/src
t0=$(date +%s)
( for c in 128x168pp 128x128pp; do python3 benchmarks/tc_plan_once.py --dtype fp8 --shape 2048,11008,4096 --runs 1 --policy "{\"config\":\"$c\"}"; done ) > $R/warm1.log 2>&1 &
( for c in 128x160pp 128x256c1 128x200c1; do python3 benchmarks/tc_plan_once.py --dtype fp8 --shape 2048,11008,4096 --runs 1 --policy "{\"config\":\"$c\"}"; done ) > $R/warm2.log 2>&1 &
( python3 benchmarks/tc_plan_once.py --dtype bf16 --shape 2048,4800,1600 --runs 1 --policy '{"config":"128x128pp"}' ) > $R/warm3.log 2>&1 &
wait; echo "warm $(( $(date +%s) - t0 )) s"
timeout 150 python3 _dev/pp_check.py > $R/pp_check.log 2>&1
echo "pp_check rc $? $(tail -1 $R/pp_check.log) $(( $(date +%s) - t0 )) s"
T="2048,11008,4096;768,3584,4096;512,5120,4096;1536,9216,4096"
timeout 300 python3 benchmarks/tc_dispatch_compare.py --dtype fp8 --shapes "$T" \
  --only "128x168pp S=1,128x128pp S=1,128x160pp S=1,128x256c1 S=1,128x200c1 S=1" --rounds 2 --rep-ms 8 --json $R/fp8.json > $R/fp8.log 2>&1
echo "fp8 rc $? $(( $(date +%s) - t0 )) s"
cd $OUT && tar cJf r1.tar.xz r1 && rm -rf r1
