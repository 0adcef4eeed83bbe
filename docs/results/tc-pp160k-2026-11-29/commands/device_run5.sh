#!/usr/bin/env bash
# Run 5 (H200): correctness of this tree: every ping-pong tile (pp_check), the dispatch GPU tests,
# compute-sanitizer on the ping-pong cases (memcheck, initcheck, racecheck, synccheck).
set -u
R=$OUT/r5; mkdir -p $R
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/src GEMMLAB_CACHE_DIR=/tmp/glc_r5
t0=$(date +%s)
timeout 90 python3 _dev/pp_check.py > $R/pp_check.log 2>&1
echo "pp_check rc $? $(tail -1 $R/pp_check.log) $(( $(date +%s) - t0 )) s"
MATCH="128x160pp|128x128pp" timeout 150 bash benchmarks/run_sanitizer_device.sh $R/sanitizer tc > /dev/null 2>&1
tail -5 $R/sanitizer/summary.txt; echo "sanitizer $(( $(date +%s) - t0 )) s"
cd $OUT && tar cJf r5.tar.xz r5 && cd - > /dev/null
timeout 280 python3 -m pytest -q -p no:cacheprovider tests/gpu/test_dispatch_tc_gpu.py > $R/gpu_tests.txt 2>&1
echo "gpu tests rc $? $(tail -1 $R/gpu_tests.txt) $(( $(date +%s) - t0 )) s"
cd $OUT && rm -f r5.tar.xz && tar cJf r5.tar.xz r5 && rm -rf r5
