#!/bin/bash
# Run 2: the H200 shape maps of bde9c9e (run from the repository root with OUT set)
SHAPES_TIMEOUT=250 bash benchmarks/run_shapes_tc_device.sh $OUT/maps bf16 fp8 2>&1 | tail -30
cd $OUT && tar cJf maps.tar.xz maps && rm -rf maps
