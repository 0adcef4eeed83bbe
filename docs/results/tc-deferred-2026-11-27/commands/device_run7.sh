# Run 7 (H100): Nsight Compute (--set full, source lines) of the forced ping-pong 128 x 160 in
# clusters of 2 at fp8 8192 x 4800 x 1600 - cuBLASLt's arrangement there (run 4 profiled its kernel)
# - for a metric-by-metric comparison of the same tiling; raw CSV, per-line dump, gemmlab analyze.
set -u
R=$OUT/r7; mkdir -p $R; nvidia-smi > $R/device.txt 2>&1
NCUPY=/opt/nvidia/nsight-compute/2025.3.1/extras/python
NCU=$(command -v ncu || echo /opt/nvidia/nsight-compute/2025.3.1/ncu)
export PYTHONUNBUFFERED=1 GEMMLAB_CACHE_DIR=/tmp/glc
n=pp160c2_f8192x4800x1600
env PYTHONPATH=$PWD/_t/pp160/src:$PWD/tests timeout 150 $NCU --set full --import-source no --profile-from-start off \
  --launch-skip 2 --launch-count 1 -o $R/$n python3 benchmarks/tc_plan_once.py --dtype fp8 --shape 8192,4800,1600 \
  --runs 3 --policy '{"config":"128x160c2pp"}' > $R/$n.log 2>&1
echo "ncu $? $(date +%T)"
$NCU -i $R/$n.ncu-rep --csv --page raw > $R/${n}_raw.csv 2>/dev/null
env PYTHONPATH=$PWD/_t/pp160/src:$PWD/tests:$NCUPY timeout 60 python3 dump_lines.py $R/$n.ncu-rep $R/${n}_lines.json >> $R/$n.log 2>&1
env PYTHONPATH=$PWD/_t/pp160/src:$PWD/tests:$NCUPY timeout 60 python3 -m gemmlab analyze $R/$n.ncu-rep --json > $R/${n}_analyze.json 2>> $R/$n.log
cd $OUT && tar cJf r7.tar.xz r7 && rm -rf r7
