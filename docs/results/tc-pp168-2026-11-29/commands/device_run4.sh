#!/usr/bin/env bash
# Run 4 (H200): held-out shapes for the 176-column ping-pong width (a random 12 of the 29 shapes
# on a 256-step grid where pingpong_width now picks it, drawn before they ran); tuning shapes for
# fp8's short-K ping-pong at any width; compute-sanitizer on the 128 x 176 cases; fp8 GPU tests.
set -u
R=$OUT/r4; mkdir -p $R
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv; date -u; } > $R/device.txt 2>&1
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/src
t0=$(date +%s)
( for c in 128x176pp 128x168pp; do python3 benchmarks/tc_plan_once.py --dtype fp8 --shape 2048,2816,4096 --runs 1 --policy "{\"config\":\"$c\"}"; done ) > $R/warm1.log 2>&1 &
( for c in 128x160pp 128x128pp; do python3 benchmarks/tc_plan_once.py --dtype fp8 --shape 2048,2816,4096 --runs 1 --policy "{\"config\":\"$c\"}"; done ) > $R/warm2.log 2>&1 &
( for c in 128x256c2 128x256c1; do python3 benchmarks/tc_plan_once.py --dtype fp8 --shape 2048,2816,4096 --runs 1 --policy "{\"config\":\"$c\"}"; done ) > $R/warm3.log 2>&1 &
wait; echo "warm $(( $(date +%s) - t0 )) s"
H="256,11264,4096;256,11520,8192;256,22528,4096;512,11520,4096;768,7680,2048;1024,2816,4096;1280,13568,4096;1792,1536,8192;1792,9728,4096;2816,2048,4096;3584,1536,4096;5120,1024,4096"
timeout 150 python3 benchmarks/tc_dispatch_compare.py --dtype fp8 --shapes "$H" \
  --only "128x128pp S=1,128x160pp S=1,128x168pp S=1" --rounds 2 --rep-ms 8 --json $R/held176.json > $R/held176.log 2>&1
echo "held176 rc $? $(( $(date +%s) - t0 )) s"
B="8192,8192,2048;4096,14336,4096;8192,3584,4096;6144,11008,2048;16384,4096,4096;8192,5632,4096;4096,7168,6144;8192,4096,4096"
timeout 200 python3 benchmarks/tc_dispatch_compare.py --dtype fp8 --shapes "$B" \
  --only "128x128pp S=1,128x160pp S=1,128x168pp S=1,128x176pp S=1" --rounds 2 --rep-ms 8 --json $R/shortk.json > $R/shortk.log 2>&1
echo "shortk rc $? $(( $(date +%s) - t0 )) s"
cd $OUT && tar cJf r4a.tar.xz r4 && cd - > /dev/null
MATCH="128x176pp" timeout 120 bash benchmarks/run_sanitizer_device.sh $R/sanitizer tc > /dev/null 2>&1
echo "sanitizer rc $? $(( $(date +%s) - t0 )) s"; cat $R/sanitizer/summary.txt
timeout 120 python3 -m pytest -q -x tests/gpu/test_dispatch_tc_gpu.py -k "fp8 and (every_config_and_split or model_shapes)" > $R/gpu_tests.log 2>&1
echo "gpu tests rc $? $(tail -1 $R/gpu_tests.log) $(( $(date +%s) - t0 )) s"
cd $OUT && rm -f r4a.tar.xz && tar cJf r4.tar.xz r4 && rm -rf r4
