#!/usr/bin/env bash
# session scratch (H100): compute-sanitizer on the new 128 x 64 cases (split-K with rows past M)
set -u
R=$OUT/r7; mkdir -p $R
export PYTHONPATH=$PWD/src:$PWD/tests PYTHONUNBUFFERED=1
MATCH="128x64c1" timeout 200 bash benchmarks/run_sanitizer_device.sh $R/san tc > /dev/null 2>&1; echo "sanitizer $?"; cat $R/san/summary.txt
tar cJf $OUT/r7.tar.xz -C $OUT r7
