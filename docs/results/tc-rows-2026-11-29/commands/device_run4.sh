#!/bin/bash
# Run 4 (H200): the swapped kernel trims its token boxes from 64-token tiles on only (16 and 32
# keep whole boxes, byte-identical to HEAD's kernel): HEAD before this stop (_t/base, 3bfd1b6)
# against this tree (_t/new) at 1, 16 and 72 tokens (rules' plans and the unsplit m16 / m128
# kernel) and 2048^3 (a whole-tile shape), trees alternating, two passes; the GPU test of every
# swapped instantiation; memcheck over the swapped kernel's cases.
set -u
R=$OUT/r4; mkdir -p $R; nvidia-smi > $R/device.txt 2>&1; date -u >> $R/device.txt
export PYTHONUNBUFFERED=1 GEMMLAB_CACHE_DIR=/tmp/glc
for t in base new; do
  for d in bf16 fp8; do
    for pol in '{}' '{"config":"swap","split":1,"stages":8}'; do
      PYTHONPATH=$PWD/_t/$t/src:$PWD/tests python3 benchmarks/tc_plan_once.py --dtype $d --shape 16,4096,14336 --runs 1 --policy "$pol" > /dev/null 2>&1 &
    done
    PYTHONPATH=$PWD/_t/$t/src:$PWD/tests python3 benchmarks/tc_plan_once.py --dtype $d --shape 2048,2048,2048 --runs 1 > /dev/null 2>&1 &
  done
done; wait; echo "warm $(date +%T)"
S="16,4096,14336;1,4096,14336;72,4096,14336;2048,2048,2048"
for pass in 1 2; do
  order="base new"; [ $pass = 2 ] && order="new base"
  for d in bf16 fp8; do
    for t in $order; do
      PYTHONPATH=$PWD/_t/$t/src:$PWD/tests timeout 50 python3 benchmarks/tc_dispatch_compare.py --dtype $d --shapes "$S" \
        --only "swap ks=1 s=8" --rounds 3 --rep-ms 8 --json $R/${d}_${t}_$pass.json > $R/${d}_${t}_$pass.log 2>&1
      echo "pass $pass $d $t rc $? $(date +%T)"
    done
  done
done
export PYTHONPATH=$PWD/src:$PWD/tests
timeout 100 python3 -m pytest -q -p no:cacheprovider tests/gpu/test_dispatch_tc_gpu.py -k "swap_decode_instantiation" > $R/gpu_tests.log 2>&1
echo "gpu tests rc $? $(date +%T)"; tail -n 3 $R/gpu_tests.log
CS=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
timeout 90 $CS --tool memcheck --error-exitcode 3 --print-limit 20 --report-api-errors no \
  python3 benchmarks/sanitize_dispatch_tc.py --set memcheck --match "swap" > $R/memcheck_swap.log 2>&1
echo "memcheck rc $? $(date +%T)"; grep -E "ERROR SUMMARY|cases, " $R/memcheck_swap.log | tail -2
cd $OUT && tar cJf r4.tar.xz r4 && rm -rf r4
