#!/usr/bin/env bash
# Run 5: the tensor-dispatch and torch_ops GPU tests at the final tree (__call__ asks for the stream only on a repeat).
set -u
export PYTHONPATH=src GEMMLAB_CACHE_DIR=$PWD/.carry/kcache
mkdir -p $OUT/r5 && (cd .carry && xz -dc kcache.tar.xz | tar x)
nvidia-smi --query-gpu=name,driver_version,power.limit,clocks.max.sm --format=csv > $OUT/r5/device.txt; date -u >> $OUT/r5/device.txt
timeout 400 python -m pytest -q -rs --durations=5 -p no:cacheprovider tests/gpu/test_torch_ops_gpu.py \
  tests/gpu/test_dispatch_tc_gpu.py > $OUT/r5/pytest.txt 2>&1; echo "pytest rc=$?" >> $OUT/r5/pytest.txt
tail -9 $OUT/r5/pytest.txt
