#!/bin/bash
# Next device run for issue #20's fp8 decode gap (docs/results/tc-launch-2026-11-29/): on this
# branch only (GEMMLAB_TMA_L2_PROMOTION is an experiment's knob in tma.encode, not on main).
#  a. Nsight Compute from the harness's L2 state: --cache-control none, tc_plan_once --flush
#     (the flush kernel is not profiled: -k picks the product's kernel), ours and cuBLASLt's,
#     fp8 16x4096x4096 and 16x8192x8192, --set full; each report xz'd (< 16 MiB a file).
#  b. The TMA maps' L2 promotion (256 B today; NONE, 128 B): the rules' plans at four fp8 decode
#     shapes, bf16 16x4096x14336 and compute-bound controls (fp8 8192x4800x1600, bf16 4096^3), one process per setting,
#     alternating, the order reversed in pass 2.
# Run from the repository root with OUT set, docs/results and tests/fixtures/corpus moved aside.
set -u
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
R=$OUT/w1; mkdir -p $R/ncu
export PYTHONPATH=$PWD/src:$PWD/tests PYTHONUNBUFFERED=1 GEMMLAB_CACHE_DIR=/tmp/glc
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv,noheader > $R/device.txt; date -u >> $R/device.txt
NCU=$(command -v ncu || echo /opt/nvidia/nsight-compute/2025.3.1/ncu)
for s in 16,4096,4096 16,8192,8192; do
  n=fp8_${s//,/x}
  timeout 60 $NCU --set full --cache-control none --profile-from-start off --launch-skip 2 --launch-count 1 \
    -k regex:gemmlab_dispatch -o $R/ncu/flush_ours_$n python3 benchmarks/tc_plan_once.py --dtype fp8 --shape $s --runs 3 --flush > $R/ncu/ours_$n.log 2>&1
  echo "ncu ours $n rc $? $(el) s"
  timeout 60 $NCU --set full --cache-control none --profile-from-start off --launch-skip 2 --launch-count 1 \
    -k regex:nvjet -o $R/ncu/flush_cublas_$n python3 benchmarks/tc_plan_once.py --dtype fp8 --shape $s --runs 3 --cublas --flush > $R/ncu/cublas_$n.log 2>&1
  echo "ncu cublas $n rc $? $(el) s"
done
( cd $R && tar cf - ncu | xz -9 -T4 > $OUT/w1_ncu.tar.xz && rm -rf ncu ) &
F8="16,4096,4096;16,8192,8192;16,10240,8192;1,8192,8192;8192,4800,1600"
B16="16,4096,14336;1,4096,14336;4096,4096,4096"
for pass in 1 2; do
  order="L2_256B NONE L2_128B"; [ $pass = 2 ] && order="L2_128B NONE L2_256B"
  for pr in $order; do
    [ $(el) -gt 480 ] && { echo "stopping at $(el) s: the call limit"; break 2; }
    GEMMLAB_TMA_L2_PROMOTION=$pr timeout 80 python3 benchmarks/tc_dispatch_compare.py --dtype fp8 --shapes "$F8" \
      --quick --rounds 3 --rep-ms 6 --json $R/fp8_${pr}_$pass.json > $R/fp8_${pr}_$pass.log 2>&1
    GEMMLAB_TMA_L2_PROMOTION=$pr timeout 60 python3 benchmarks/tc_dispatch_compare.py --dtype bf16 --shapes "$B16" \
      --quick --rounds 3 --rep-ms 6 --json $R/bf16_${pr}_$pass.json > $R/bf16_${pr}_$pass.log 2>&1
    echo "pass $pass $pr $(el) s"
  done
done
wait
grep -h "dispatch " $R/*.log | head -60
cd $OUT && tar cJf w1.tar.xz w1 && rm -rf w1 && ls -la $OUT
