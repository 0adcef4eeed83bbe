#!/usr/bin/env bash
# Run 2: torch_ops' fast path (repeat on raw pointers): its GPU tests, the dispatch GPU tests (repeat
# refactored out of __call__), host time by step, and the overhead benchmark for bf16 and fp8.
set -u
export PYTHONPATH=src GEMMLAB_CACHE_DIR=$PWD/.carry/kcache
mkdir -p $OUT/r2 && (cd .carry && xz -dc kcache.tar.xz | tar x)
nvidia-smi --query-gpu=name,driver_version,power.limit,clocks.max.sm --format=csv > $OUT/r2/device.txt; date -u >> $OUT/r2/device.txt
timeout 120 python _dev/host_parts.py $OUT/r2/host_parts.json > $OUT/r2/host_parts.txt 2>&1; tail -3 $OUT/r2/host_parts.txt
for dt in bf16 fp8; do
  timeout 100 python benchmarks/torch_ops_overhead.py --dtype $dt --weights 32 --json $OUT/r2/overhead_${dt}_w32.json \
    > $OUT/r2/overhead_${dt}_w32.txt 2>&1; cat $OUT/r2/overhead_${dt}_w32.txt | tail -5
done
timeout 380 python -m pytest -q -rs --durations=8 -p no:cacheprovider tests/gpu/test_torch_ops_gpu.py \
  tests/gpu/test_dispatch_tc_gpu.py > $OUT/r2/pytest.txt 2>&1; echo "pytest rc=$?" >> $OUT/r2/pytest.txt
tail -12 $OUT/r2/pytest.txt
