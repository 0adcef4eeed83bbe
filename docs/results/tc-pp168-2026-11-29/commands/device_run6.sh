#!/usr/bin/env bash
# Run 6 (H200): the fp8 shape map of this tree (pingpong_width with 168 and 176 columns, the
# short-K widths), the whole tensor grid. bf16's plans did not change.
set -u
R=$OUT/r6; mkdir -p $R
SHAPES_TIMEOUT=300 bash benchmarks/run_shapes_tc_device.sh $R/maps fp8 2>&1 | tail -4
cd $OUT && tar cJf r6.tar.xz r6 && rm -rf r6
