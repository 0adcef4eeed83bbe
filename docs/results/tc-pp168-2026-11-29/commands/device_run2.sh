#!/usr/bin/env bash
# Run 2 (H200): held-out shapes for pingpong_width (chosen before they ran, never used to set the
# rule): the rules' plan against the earlier plan (128x128pp) and the forced ping-pong widths;
# then compute-sanitizer on the 128 x 168 cases and the fp8 GPU tests.
set -u
R=$OUT/r2; mkdir -p $R
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv; date -u; } > $R/device.txt 2>&1
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/src
t0=$(date +%s)
( for c in 128x168pp 128x128pp 128x160pp; do python3 benchmarks/tc_plan_once.py --dtype fp8 --shape 2048,11008,4096 --runs 1 --policy "{\"config\":\"$c\"}"; done ) > $R/warm.log 2>&1
echo "warm $(( $(date +%s) - t0 )) s"
H="512,11008,4096;512,27648,4096;768,7168,4096;768,28672,4096;1024,2560,4096;1024,22016,4096;1536,1536,4096;1536,3584,4096;1536,14336,4096;3072,7168,4096;6144,3584,4096;512,4608,4096;1024,22016,2048;3072,7168,8192;2048,11008,8192;1536,3584,2048;2048,8704,4096;4096,4352,4096;3584,4864,4096;4096,5376,4096;2560,8704,4096;7936,2816,4096"
timeout 260 python3 benchmarks/tc_dispatch_compare.py --dtype fp8 --shapes "$H" \
  --only "128x128pp S=1,128x160pp S=1,128x168pp S=1" --rounds 2 --rep-ms 8 --json $R/held_fp8.json > $R/held_fp8.log 2>&1
echo "held rc $? $(( $(date +%s) - t0 )) s"
cd $OUT && tar cJf r2a.tar.xz r2 && cd - > /dev/null
MATCH="128x168pp" timeout 150 bash benchmarks/run_sanitizer_device.sh $R/sanitizer tc > /dev/null 2>&1
echo "sanitizer rc $? $(( $(date +%s) - t0 )) s"; cat $R/sanitizer/summary.txt
timeout 170 python3 -m pytest -q -x tests/gpu/test_dispatch_tc_gpu.py -k "fp8 and (every_config_and_split or model_shapes)" > $R/gpu_tests.log 2>&1
echo "gpu tests rc $? $(tail -1 $R/gpu_tests.log) $(( $(date +%s) - t0 )) s"
cd $OUT && rm -f r2a.tar.xz && tar cJf r2.tar.xz r2 && rm -rf r2
