#!/usr/bin/env bash
# Run 4 (H200): long K (K > 56 k-tiles, where pingpong_short_k does not reach) - is a ping-pong
# width worth its operand bytes where its issued fraction beats the cooperative tile's by 3-14%?
# 14 shapes at K 8192 / 16384 (a random 2-3 per band of fraction gain, seed 5), the rules' plan
# against every ping-pong width, forced, interleaved rounds.
set -u
R=$OUT/r4; mkdir -p $R
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv; date -u; git log -1 --format=%H; } > $R/device.txt 2>&1
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/src
t0=$(date +%s)
S=2048,1792,4096
( for c in 128x112pp 128x128pp; do python3 benchmarks/tc_plan_once.py --dtype fp8 --shape $S --runs 1 --policy "{\"config\":\"$c\"}"; done ) > $R/warm1.log 2>&1 &
( for c in 128x144pp 128x160pp; do python3 benchmarks/tc_plan_once.py --dtype fp8 --shape $S --runs 1 --policy "{\"config\":\"$c\"}"; done ) > $R/warm2.log 2>&1 &
( for c in 128x168pp 128x176pp; do python3 benchmarks/tc_plan_once.py --dtype fp8 --shape $S --runs 1 --policy "{\"config\":\"$c\"}"; done ) > $R/warm3.log 2>&1 &
( for c in 128x256c1 128x256c2 128x200c1 128x160c1; do python3 benchmarks/tc_plan_once.py --dtype fp8 --shape $S --runs 1 --policy "{\"config\":\"$c\"}"; done ) > $R/warm4.log 2>&1 &
wait; echo "warm $(( $(date +%s) - t0 )) s"
T="3840,18432,16384;8192,7936,8192;5120,16128,16384;1792,25344,8192;3840,11776,16384;3584,2560,8192;6656,4096,8192;1536,25856,8192;1536,23040,16384;1024,4608,16384;1792,3840,8192;1792,6144,16384;5376,4864,8192;6144,1792,16384"
timeout 500 python3 benchmarks/tc_dispatch_compare.py --dtype fp8 --shapes "$T" \
  --only "128x112pp S=1,128x128pp S=1,128x144pp S=1,128x160pp S=1,128x168pp S=1,128x176pp S=1" --rounds 2 --rep-ms 8 --json $R/longk.json > $R/longk.log 2>&1
echo "longk rc $? $(( $(date +%s) - t0 )) s"
cd $OUT && tar cJf r4.tar.xz r4 && rm -rf r4
