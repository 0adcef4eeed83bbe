#!/usr/bin/env bash
# Run 4 (H200): (a) the GPU test that cluster_slots never counts on more clusters or CTAs an SM
# than the driver holds (after run 3's counts replaced the GPC model); (b) fp8's 128 x 128
# ping-pong as the short-K fallback in place of the cooperative tile (up to 24 k-tiles), held
# out: 10 changed shapes drawn before the run (draw_pp128c.py), the rules' plan against
# 093c1e7's. _dev/ holds a copy of old_plans_pp128c.json.
set -u
R=$OUT/r4; mkdir -p $R
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv; date -u; git log -1 --format=%H; } > $R/device.txt 2>&1
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/src
t0=$(date +%s)
pack() { cd $OUT && tar cJf r4.tar.xz r4 && cd - > /dev/null; }
PP="6144,2048,3072;3072,19712,2048;6400,8448,3072;3584,3328,3072;7680,3328,2048;7936,1024,2048;4096,19712,1024;5632,13056,1024;6656,20736,2048;8192,12544,2048"
timeout 100 python3 -m pytest -q -p no:cacheprovider tests/gpu/test_dispatch_tc_gpu.py -k "swap_clusters_fit" > $R/gpu_test.log 2>&1
echo "gpu test rc $? $(( $(date +%s) - t0 )) s"; tail -1 $R/gpu_test.log; pack
timeout 150 python3 benchmarks/tc_dispatch_compare.py --dtype fp8 --shapes "$PP" --keep-plans _dev/old_plans_pp128c.json --rounds 2 --rep-ms 8 --json $R/pp128c.json > $R/pp128c.log 2>&1
echo "pp128c rc $? $(( $(date +%s) - t0 )) s"; pack
rm -rf $R
