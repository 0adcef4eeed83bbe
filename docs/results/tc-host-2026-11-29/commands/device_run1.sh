#!/usr/bin/env bash
# Run 1: the GPU tests left unrun with the packed launch (dispatch, 23) and torch_ops' requires-grad case.
set -u
export PYTHONPATH=src GEMMLAB_CACHE_DIR=$PWD/.carry/kcache
mkdir -p "$GEMMLAB_CACHE_DIR" $OUT/r1
nvidia-smi --query-gpu=name,driver_version,power.limit,clocks.max.sm --format=csv > $OUT/r1/device.txt
git log -1 --format='%H %s' >> $OUT/r1/device.txt
date -u >> $OUT/r1/device.txt
timeout 540 python -m pytest -q -rs --durations=15 -p no:cacheprovider \
  tests/gpu/test_torch_ops_gpu.py tests/gpu/test_dispatch_tc_gpu.py > $OUT/r1/pytest.txt 2>&1
echo "pytest rc=$?" >> $OUT/r1/pytest.txt
tail -30 $OUT/r1/pytest.txt
tar -C .carry -cf - kcache | xz -1 -T8 > $OUT/kcache.tar.xz
ls -la $OUT/kcache.tar.xz
