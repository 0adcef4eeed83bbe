#!/bin/bash
# compute-sanitizer (memcheck, initcheck, racecheck, synccheck) on the swapped-operand decode kernel's cases
export PYTHONPATH=$PWD/src:$PWD/tests PYTHONUNBUFFERED=1 GEMMLAB_CACHE_DIR=/tmp/glc
timeout 120 python -m pytest -q -p no:cacheprovider tests/gpu/test_dispatch_tc_gpu.py -k decode_rule 2>&1 | tail -3 > $OUT/gpu_tests_rule.log; cat $OUT/gpu_tests_rule.log
MATCH=swap bash benchmarks/run_sanitizer_device.sh $OUT/san tc 2>&1 | tail -8
grep -h "swap" $OUT/san/plain.log | head -20
