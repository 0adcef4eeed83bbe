#!/usr/bin/env bash
# (run 3; the tree had PP128_MAX_KTILES = 32, and _dev/ a copy of commands/old_plans_pp128_32.json)
# fp8's 128 x 128 ping-pong fallback up to 32 k-tiles (PP128_MAX_KTILES 24 -> 32), H200: held out,
# 12 changed shapes drawn before the run (_dev/draw_pp128_32.py), the new plan against the earlier
# tree's; then the tuning shapes at N = 4096 again
set -u
R=$OUT/r3; mkdir -p $R
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv; date -u; git log -1 --format=%H; } > $R/device.txt 2>&1
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/src GEMMLAB_CACHE_DIR=/tmp/glc
t0=$(date +%s)
HELD="6144,2048,3712;5632,2304,3712;4608,25344,3840;3840,17920,3456;6144,25344,3456;7936,26624,3328;5120,9984,3840;768,11264,3840;5120,28672,3968;6144,23040,3200;7936,25600,3840;1280,16896,3712"
timeout 330 python3 benchmarks/tc_dispatch_compare.py --dtype fp8 --shapes "$HELD" --keep-plans _dev/old_plans_pp128_32.json --rounds 2 --rep-ms 8 --json $R/held.json > $R/held.log 2>&1
echo "held rc $? $(( $(date +%s) - t0 )) s"
grep -h "^[0-9]\|  [0-9a-z]\|WRONG\|rror" $R/held.log | cut -c1-110
cd $OUT && tar cJf r3.tar.xz r3 && cd - > /dev/null
timeout 150 python3 benchmarks/tc_dispatch_compare.py --dtype fp8 --shapes "4096,4096,4096;8192,4096,4096;16384,4096,4096" --only "128x256c1 S=1,128x256c2 S=1" --rounds 3 --rep-ms 8 --json $R/tune.json > $R/tune.log 2>&1
echo "tune rc $? $(( $(date +%s) - t0 )) s"
grep -h "^[0-9]\|  [0-9a-z]\|WRONG\|rror" $R/tune.log | cut -c1-110
cd $OUT && tar cJf r3.tar.xz r3 && cd - > /dev/null
