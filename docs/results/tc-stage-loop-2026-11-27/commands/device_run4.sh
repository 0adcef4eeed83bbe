# Run 4 (H100): clocks and power while main's and new's stage loops run back to back (tc_plan_once,
# 3000 calls each, trees alternating main new new main) at bf16 2048 x 11008 x 4096 on 128x128pp
# (new: -7.5 points in run 2's timing, yet faster under Nsight Compute's locked clocks) and fp8 at
# the same shape (new: +4); nvidia-smi samples every 20 ms.
set -u
R=$OUT/r4; mkdir -p $R; nvidia-smi > $R/device.txt 2>&1
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu,clocks_event_reasons.active --format=csv,noheader -lms 20 > $R/smi.csv &
SMI=$!
for d in bf16 fp8; do
  for v in main new new main; do
    echo "$(date +%T.%N) start $d $v" >> $R/marks.txt
    env PYTHONPATH=$PWD/_t/$v/src:$PWD/tests GEMMLAB_CACHE_DIR=/tmp/glc_$v python3 benchmarks/tc_plan_once.py --dtype $d \
      --shape 2048,11008,4096 --runs 3000 --policy '{"config":"128x128pp"}' > $R/${d}_$v.log 2>&1
    echo "$(date +%T.%N) end $d $v $(tail -1 $R/${d}_$v.log)" >> $R/marks.txt
    tail -1 $R/${d}_$v.log
  done
done
kill $SMI
cd $OUT && tar cJf r4.tar.xz r4 && rm -rf r4
