#!/bin/bash
# Run 2 (H200): held out - fp8's stream-once rule from 65 rows (this tree) against HEAD's 64 x 64
# at rows and K chosen after run 1, bf16 alike (same plans; A's boxes cut to M), trees
# alternating, two passes, plus the swapped kernel unsplit (ks=1, 8 stages) at each; then the
# GPU tests of this tree (edge shapes, model shapes, the decode rule) and racecheck.
set -u
R=$OUT/r2; mkdir -p $R; nvidia-smi > $R/device.txt 2>&1; date -u >> $R/device.txt
export PYTHONUNBUFFERED=1 GEMMLAB_CACHE_DIR=/tmp/glc
S="80,4096,14336;112,4096,14336;72,4096,28672;100,4096,28672;120,4096,14336;88,4096,12288"
for t in base new; do
  for d in bf16 fp8; do
    for pol in '{}' '{"config":"swap","split":1,"stages":8}'; do
      PYTHONPATH=$PWD/_t/$t/src:$PWD/tests python3 benchmarks/tc_plan_once.py --dtype $d --shape 80,4096,14336 --runs 1 --policy "$pol" > /dev/null 2>&1 &
    done
  done
done; wait; echo "warm $(date +%T)"
for pass in 1 2; do
  order="base new"; [ $pass = 2 ] && order="new base"
  for d in bf16 fp8; do
    for t in $order; do
      PYTHONPATH=$PWD/_t/$t/src:$PWD/tests timeout 70 python3 benchmarks/tc_dispatch_compare.py --dtype $d --shapes "$S" \
        --only "swap ks=1 s=8" --rounds 3 --rep-ms 8 --json $R/${d}_${t}_$pass.json > $R/${d}_${t}_$pass.log 2>&1
      echo "pass $pass $d $t rc $? $(date +%T)"
    done
  done
done
export PYTHONPATH=$PWD/src:$PWD/tests
timeout 150 python3 -m pytest -q -p no:cacheprovider tests/gpu/test_dispatch_tc_gpu.py \
  -k "edge_shape or model_shapes or decode_rule" > $R/gpu_tests.log 2>&1
echo "gpu tests rc $? $(date +%T)"; tail -n 3 $R/gpu_tests.log
CS=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
timeout 100 $CS --tool racecheck --error-exitcode 3 --print-limit 20 --report-api-errors no \
  python3 benchmarks/sanitize_dispatch_tc.py --set racecheck > $R/racecheck.log 2>&1
echo "racecheck rc $? $(date +%T)"; grep -E "RACECHECK SUMMARY|cases, " $R/racecheck.log | tail -2
cd $OUT && tar cJf r2.tar.xz r2 && rm -rf r2
