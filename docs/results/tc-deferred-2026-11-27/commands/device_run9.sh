# Run 9 (H100): gemmlab analyze (c8f7395: a barrier sample on WARPGROUP.DEPBAR reads as a wgmma wait)
# on two real -lineinfo reports of this session: main's fp8 128x256c2 (run 2) and the ping-pong
# 128x160c2 (run 7), terminal cards and --json.
set -u
R=$OUT/r9; mkdir -p $R
export PYTHONPATH=$PWD/src:/opt/nvidia/nsight-compute/2025.3.1/extras/python COLUMNS=200
for n in main_f8192x4800x1600 pp160c2_f8192x4800x1600; do
  timeout 100 python3 -m gemmlab analyze scratch_reps/r9/$n.ncu-rep > $R/${n}_analyze.txt 2>&1; echo "$n text $?"
  timeout 100 python3 -m gemmlab analyze scratch_reps/r9/$n.ncu-rep --json > $R/${n}_analyze.json 2> $R/${n}_analyze.err; echo "$n json $?"
done
grep -n "wgmma\|barrier" $R/*_analyze.txt | cut -c1-220 | head -20
cd $OUT && tar cJf r9.tar.xz r9 && rm -rf r9
