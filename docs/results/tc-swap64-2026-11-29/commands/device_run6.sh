#!/usr/bin/env bash
# Run 6 (H200): the tensor-batches map (serving batches of 24-112 tokens, both dtypes) of this
# session's tree (848b4ad), to set beside ../tc-lastrows-2026-11-29/r5/batches/.
set -u
R=$OUT/r6; mkdir -p $R
export PYTHONUNBUFFERED=1
SHAPES_TIMEOUT=150 bash benchmarks/run_shapes_tc_device.sh $R/batches bf16 fp8 -- --preset tensor-batches > $R/batches.log 2>&1
echo "rc $?"
cd $R/batches && xz -9 shapes.sqlite shapes_*.json 2>/dev/null; cd $OUT && tar cf r6.tar r6 && rm -rf r6
