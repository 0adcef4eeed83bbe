#!/usr/bin/env bash
# Run 7 (H200): the swapped decode kernel issuing its first ring's loads with the barriers' set-up
# (before the block barrier) against HEAD's (after it): two trees, one process each, alternating
# old/new/new/old, the rules' plans (--quick). Then compute-sanitizer on the swap cases and the
# swap GPU test, new tree.
set -u
R=$OUT/r7; mkdir -p $R
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv; date -u; } > $R/device.txt 2>&1
export PYTHONUNBUFFERED=1
t0=$(date +%s)
F="16,6144,4096;16,4096,4096;16,10240,8192;16,8192,8192;16,4800,1600;1,10240,8192;1,8192,8192;1,28672,4096;16,5120,5120;16,13824,5120;8,3584,18944"
B="16,4800,1600;16,4096,4096;1,4096,14336"
run() {  # tree tag
  local src=$1 tag=$2
  PYTHONPATH=$src GEMMLAB_CACHE_DIR=/tmp/glc_$tag timeout 100 python3 benchmarks/tc_dispatch_compare.py --dtype fp8 --shapes "$F" --quick --rounds 2 --rep-ms 8 --json $R/fp8_$tag.json > $R/fp8_$tag.log 2>&1
  PYTHONPATH=$src GEMMLAB_CACHE_DIR=/tmp/glc_$tag timeout 60 python3 benchmarks/tc_dispatch_compare.py --dtype bf16 --shapes "$B" --quick --rounds 2 --rep-ms 8 --json $R/bf16_$tag.json > $R/bf16_$tag.log 2>&1
  echo "$tag rc $? $(( $(date +%s) - t0 )) s"
}
run $PWD/_dev/_t/old/src old_1; run $PWD/src new_1; run $PWD/src new_2; run $PWD/_dev/_t/old/src old_2
cd $OUT && tar cJf r7a.tar.xz r7 && cd - > /dev/null
PYTHONPATH=$PWD/src MATCH="swap" timeout 130 bash benchmarks/run_sanitizer_device.sh $R/sanitizer tc > /dev/null 2>&1
echo "sanitizer rc $? $(( $(date +%s) - t0 )) s"; cat $R/sanitizer/summary.txt
PYTHONPATH=$PWD/src timeout 80 python3 -m pytest -q -x tests/gpu/test_dispatch_tc_gpu.py -k "swap" > $R/gpu_tests.log 2>&1
echo "gpu tests rc $? $(tail -1 $R/gpu_tests.log) $(( $(date +%s) - t0 )) s"
cd $OUT && rm -f r7a.tar.xz && tar cJf r7.tar.xz r7 && rm -rf r7
