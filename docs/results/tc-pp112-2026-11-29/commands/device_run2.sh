#!/usr/bin/env bash
# Run 2 (H200): held-out shapes for the 112 / 144 widths (draw_held_out.py, seed 112: a random 10
# where the earlier plan was a ping-pong tile, 10 where it was cooperative; drawn before they ran,
# never used to set the rule): the rules' plan against the earlier rules' plan (old_plans_r2.json),
# interleaved rounds; then compute-sanitizer on the 112 / 144 cases and the fp8 GPU tests.
set -u
R=$OUT/r2; mkdir -p $R
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv; date -u; git log -1 --format=%H; } > $R/device.txt 2>&1
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/src
t0=$(date +%s)
S=2048,1792,4096
( for c in 128x112pp 128x128pp; do python3 benchmarks/tc_plan_once.py --dtype fp8 --shape $S --runs 1 --policy "{\"config\":\"$c\"}"; done ) > $R/warm1.log 2>&1 &
( for c in 128x144pp 128x160pp; do python3 benchmarks/tc_plan_once.py --dtype fp8 --shape $S --runs 1 --policy "{\"config\":\"$c\"}"; done ) > $R/warm2.log 2>&1 &
( for c in 128x176pp 128x256c1; do python3 benchmarks/tc_plan_once.py --dtype fp8 --shape $S --runs 1 --policy "{\"config\":\"$c\"}"; done ) > $R/warm3.log 2>&1 &
( for c in 128x200c1 128x160c1; do python3 benchmarks/tc_plan_once.py --dtype fp8 --shape $S --runs 1 --policy "{\"config\":\"$c\"}"; done ) > $R/warm4.log 2>&1 &
wait; echo "warm $(( $(date +%s) - t0 )) s"
H="4352,1536,6144;6656,6912,6144;512,4352,8192;5632,2560,2048;256,14080,2048;7424,8448,2048;3840,8192,6144;3328,2048,2048;768,4864,2048;6656,4608,6144;1792,6400,4096;4352,2048,6144;2304,5120,2048;512,9472,6144;512,18432,6144;1024,8704,4096;4864,1792,4096;768,11776,6144;2560,3584,6144;512,18944,4096"
timeout 300 python3 benchmarks/tc_dispatch_compare.py --dtype fp8 --shapes "$H" \
  --keep-plans _dev/cmd/old_plans_r2.json --rounds 2 --rep-ms 8 --json $R/held_fp8.json > $R/held_fp8.log 2>&1
echo "held rc $? $(( $(date +%s) - t0 )) s"
cd $OUT && tar cJf r2a.tar.xz r2 && cd - > /dev/null
MATCH="128x112pp|128x144pp" timeout 140 bash benchmarks/run_sanitizer_device.sh $R/sanitizer tc > /dev/null 2>&1
echo "sanitizer rc $? $(( $(date +%s) - t0 )) s"; cat $R/sanitizer/summary.txt
timeout $(( 570 - ($(date +%s) - t0) )) python3 -m pytest -q -x tests/gpu/test_dispatch_tc_gpu.py -k "fp8 and (every_config_and_split or model_shapes)" > $R/gpu_tests.log 2>&1
echo "gpu tests rc $? $(tail -1 $R/gpu_tests.log) $(( $(date +%s) - t0 )) s"
cd $OUT && rm -f r2a.tar.xz && tar cJf r2.tar.xz r2 && rm -rf r2
