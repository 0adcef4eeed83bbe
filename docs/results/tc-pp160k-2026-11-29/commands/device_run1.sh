#!/usr/bin/env bash
# Run 1 (H200): the ping-pong turn passed once the mainloop is issued (early) against after its
# last MMAs complete (late, main's), both trees with the 128 x 160 ping-pong tiles forceable.
# Correctness of every ping-pong tile in early; Nsight Compute's tensor-pipe activity and
# duration of the forced ping-pong tiles in both trees; then the rules' plans and the forced
# ping-pong tiles, trees alternating, order reversed in pass 2.
set -u
R=$OUT/r1; mkdir -p $R
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv; date -u; } > $R/device.txt 2>&1
export PYTHONUNBUFFERED=1
tree() { echo $PWD/_dev/_t/$1/src; }
F8="8192,4800,1600;2048,11008,4096;4096,4096,4096;2048,4800,1600"
B16="2048,4800,1600;2048,11008,4096;8192,4800,1600"
t0=$(date +%s)
for v in late early; do
  ( for s in 8192,4800,1600 2048,11008,4096; do for c in 128x128pp 128x160pp 128x160c2pp; do
      env PYTHONPATH=$(tree $v) GEMMLAB_CACHE_DIR=/tmp/glc_$v python3 benchmarks/tc_plan_once.py --dtype fp8 --shape $s --runs 1 --policy "{\"config\":\"$c\"}"; done; done
    for s in 2048,4800,1600 8192,4800,1600; do
      env PYTHONPATH=$(tree $v) GEMMLAB_CACHE_DIR=/tmp/glc_$v python3 benchmarks/tc_plan_once.py --dtype bf16 --shape $s --runs 1 --policy '{"config":"128x128pp"}'; done
  ) > $R/warm_$v.log 2>&1 &
done
wait; echo "warm $(( $(date +%s) - t0 )) s"
env PYTHONPATH=$(tree early) GEMMLAB_CACHE_DIR=/tmp/glc_early timeout 90 python3 _dev/pp_check.py > $R/pp_check_early.log 2>&1
echo "pp_check rc $? $(tail -1 $R/pp_check_early.log) $(( $(date +%s) - t0 )) s"
NCU=/opt/nvidia/nsight-compute/2025.3.1/ncu
[ -x $NCU ] || NCU=ncu
MET=gpu__time_duration.sum,sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active,sm__cycles_elapsed.avg.per_second,smsp__inst_executed.sum
for v in late early; do
  for spec in "fp8 8192,4800,1600 128x160c2pp" "fp8 8192,4800,1600 128x128pp" "fp8 2048,11008,4096 128x128pp" "bf16 2048,4800,1600 128x128pp"; do
    set -- $spec
    env PYTHONPATH=$(tree $v) GEMMLAB_CACHE_DIR=/tmp/glc_$v timeout 60 $NCU --metrics $MET -k regex:gemmlab_dispatch --launch-skip 1 --launch-count 1 --csv \
      python3 benchmarks/tc_plan_once.py --dtype $1 --shape $2 --runs 2 --policy "{\"config\":\"$3\"}" > $R/ncu_${v}_$1_$2_$3.csv 2>&1
  done
done
echo "ncu done $(( $(date +%s) - t0 )) s"
for pass in 1 2; do
  order="late early"; [ $pass = 2 ] && order="early late"
  for v in $order; do
    env PYTHONPATH=$(tree $v) GEMMLAB_CACHE_DIR=/tmp/glc_$v timeout 110 python3 benchmarks/tc_dispatch_compare.py \
      --dtype fp8 --shapes "$F8" --only "128x128pp S=1,128x160c2pp S=1,128x160pp S=1" --rounds 2 --rep-ms 8 --json $R/fp8_${v}_$pass.json > $R/fp8_${v}_$pass.log 2>&1
    env PYTHONPATH=$(tree $v) GEMMLAB_CACHE_DIR=/tmp/glc_$v timeout 60 python3 benchmarks/tc_dispatch_compare.py \
      --dtype bf16 --shapes "$B16" --only "128x128pp S=1" --rounds 2 --rep-ms 8 --json $R/bf16_${v}_$pass.json > $R/bf16_${v}_$pass.log 2>&1
    echo "$pass $v $(( $(date +%s) - t0 )) s"
  done
done
cd $OUT && tar cJf r1.tar.xz r1 && rm -rf r1
