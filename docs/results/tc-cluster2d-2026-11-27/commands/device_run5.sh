#!/usr/bin/env bash
# session scratch: the host-behind test on the GPU timeline (bench.timer) - the harness GPU tests of the
# hold, then the H100 shape maps again, to count the (host) flags against device_run3.sh's maps
set -u
R=$OUT/r5; mkdir -p $R
export PYTHONPATH=$PWD/src:$PWD/tests PYTHONUNBUFFERED=1 GEMMLAB_CACHE_DIR=/tmp/glc
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
timeout 60 python3 -m pytest -q -p no:cacheprovider tests/gpu/test_harness_gpu.py -k "hold or slow_host" -rs > $R/harness_tests.log 2>&1; el "harness $?"; tail -n 3 $R/harness_tests.log; cp $OUT/harness_gpu.jsonl $R/ 2>/dev/null; cat $R/harness_gpu.jsonl
SHAPES_TIMEOUT=250 bash benchmarks/run_shapes_tc_device.sh $R/map bf16 fp8 > $R/map.log 2>&1; el "map $?"
grep -h "geometric\|below the 95\|^(host)" $R/map/shapes_*.txt | cut -c1-400
tar czf $OUT/r5.tgz -C $OUT r5
