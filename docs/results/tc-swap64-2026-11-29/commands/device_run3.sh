#!/usr/bin/env bash
# Run 3 (H200): (a) the clusters of each split swapped kernel that fit at once against
# cluster_slots (the probe, and the GPU test that the plans never count on more); (b) the
# cluster-residency rule held out: 8 changed shapes a dtype drawn before the run
# (draw_residency.py, seed 3) and run 1's two held-out shapes a dtype the final rule changes, the
# rules' plan against 093c1e7's (old_plans_residency_r3.json); (c) fp8's 128 x 128 ping-pong among
# the short-K widths up to 24 k-tiles, held out: 10 changed shapes drawn before the run
# (draw_pp128k.py). _dev/ holds copies of old_plans_residency_r3.json and old_plans_pp128k.json.
set -u
R=$OUT/r3; mkdir -p $R
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv; date -u; git log -1 --format=%H; } > $R/device.txt 2>&1
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/src
t0=$(date +%s)
pack() { cd $OUT && tar cJf r3.tar.xz r3 && cd - > /dev/null; }
F="38,2048,6144;91,1024,4096;84,1024,15360;119,1024,12288;58,2048,10240;92,2048,7168;73,2048,7168;96,1024,12288;50,1024,11264;44,2048,12288"
B="81,1024,3072;108,2048,14336;84,2048,10240;101,2048,16384;66,2048,1024;38,1024,5120;77,1024,4096;35,1024,10240;50,1024,11264;44,2048,12288"
PP="8192,22528,1024;5376,6656,3072;7168,27136,2048;3584,18688,2048;4096,12032,3072;3328,3840,3072;3584,9472,2048;3328,8192,2048;7936,18176,2048;7936,27392,2048"
timeout 100 python3 benchmarks/probes/max_active_clusters.py --swap --json $R/clusters.json > $R/clusters.log 2>&1
echo "probe rc $? $(( $(date +%s) - t0 )) s"; tail -1 $R/clusters.log
timeout 100 python3 -m pytest -q -p no:cacheprovider tests/gpu/test_dispatch_tc_gpu.py -k "swap_clusters_fit" > $R/gpu_test.log 2>&1
echo "gpu test rc $? $(( $(date +%s) - t0 )) s"; tail -1 $R/gpu_test.log; pack
timeout 90 python3 benchmarks/tc_dispatch_compare.py --dtype fp8 --shapes "$F" --keep-plans _dev/old_plans_residency_r3.json --rounds 2 --rep-ms 8 --json $R/res_fp8.json > $R/res_fp8.log 2>&1
echo "res fp8 rc $? $(( $(date +%s) - t0 )) s"; pack
timeout 90 python3 benchmarks/tc_dispatch_compare.py --dtype bf16 --shapes "$B" --keep-plans _dev/old_plans_residency_r3.json --rounds 2 --rep-ms 8 --json $R/res_bf16.json > $R/res_bf16.log 2>&1
echo "res bf16 rc $? $(( $(date +%s) - t0 )) s"; pack
timeout 150 python3 benchmarks/tc_dispatch_compare.py --dtype fp8 --shapes "$PP" --keep-plans _dev/old_plans_pp128k.json --rounds 2 --rep-ms 8 --json $R/pp128k.json > $R/pp128k.log 2>&1
echo "pp128k rc $? $(( $(date +%s) - t0 )) s"; pack
rm -rf $R
