#!/usr/bin/env bash
# Run 4 (H200): the shape maps of this tree (pingpong_short_k, the turn passed once a mainloop is
# issued), both dtypes, the whole tensor grid.
set -u
R=$OUT/r4; mkdir -p $R
SHAPES_TIMEOUT=270 bash benchmarks/run_shapes_tc_device.sh $R/maps bf16 fp8 2>&1 | tail -4
cd $OUT && tar cJf r4.tar.xz r4 && rm -rf r4
