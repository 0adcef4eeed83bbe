# the experiment's uncommitted changes: dispatch_tc.py _TILES["64x64c2"] = (64, 64, 2, 12), FP8_ONLY += ("64x64c2",);
# tc_dispatch_compare.py's M <= 128 filter also kept "64x64c2"
#!/usr/bin/env bash
# session scratch: relaxed cluster barriers (start: arrive.relaxed after fence.mbarrier_init; end: a
# producer tail instead of the closing release barrier). Pairs of fp8 64 x 64 (an uncommitted table
# entry) against single CTAs, the clustered wide tile at 8192^3, every tc GPU test, the tc sanitizer
set -u
R=$OUT/r11; mkdir -p $R
export PYTHONPATH=$PWD/src:$PWD/tests PYTHONUNBUFFERED=1 GEMMLAB_CACHE_DIR=/tmp/glc
nvidia-smi --query-gpu=name,driver_version --format=csv > $R/device.txt; date -u >> $R/device.txt
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
timeout 90 python3 benchmarks/tc_dispatch_compare.py --dtype fp8 --shapes "128,4096,4096;128,1600,6400" --only "64x64 S=1,64x64c2 S=1" --json $R/pairs_fp8.json > $R/pairs_fp8.txt 2>&1; el "pairs $?"
for dt in bf16 fp8; do timeout 90 python3 benchmarks/tc_dispatch_compare.py --dtype $dt --shapes "8192,8192,8192" --only "128x256c1 S=1" --json $R/c2_$dt.json > $R/c2_$dt.txt 2>&1; el "c2 $dt $?"; done
grep -h "^[0-9]\|  [0-9a-z]" $R/pairs_fp8.txt $R/c2_*.txt | cut -c1-120
timeout 260 python3 -m pytest -q -p no:cacheprovider tests/gpu/test_dispatch_tc_gpu.py -rs > $R/gpu_tests.log 2>&1; el "gpu tests $?"; tail -n 2 $R/gpu_tests.log
timeout 150 bash benchmarks/run_sanitizer_device.sh $R/san tc > /dev/null 2>&1; el "san $?"; cat $R/san/summary.txt
tar czf $OUT/r11.tgz -C $OUT r11
