# Run 5 (H100): the persistent ladder rungs under NVRTC with --device-as-default-execution-space
# (run 4: 26 of 36 of these tests failed to compile - NVRTC 13.0 rejects the generic lambdas),
# then the rest of the bf16 / fp8 ladder GPU tests as time allows.
set -u
R=$OUT/r5; mkdir -p $R; nvidia-smi > $R/device.txt 2>&1
export PYTHONPATH=$PWD/src:$PWD/tests PYTHONUNBUFFERED=1 GEMMLAB_CACHE_DIR=/tmp/glc
timeout 170 python3 -m pytest -q -p no:cacheprovider tests/gpu/test_bf16_gpu.py tests/gpu/test_fp8_gpu.py \
  -k "persistent or fp8_rung_correct" > $R/ladder_tests.log 2>&1
echo "ladder tests rc $?" >> $R/ladder_tests.log; tail -3 $R/ladder_tests.log; date
timeout 130 python3 -m pytest -q -p no:cacheprovider tests/gpu/test_bf16_gpu.py tests/gpu/test_fp8_gpu.py \
  -k "not (persistent or fp8_rung_correct)" -x > $R/ladder_rest.log 2>&1
echo "rest rc $?" >> $R/ladder_rest.log; tail -3 $R/ladder_rest.log; date
cd $OUT && tar cJf r5.tar.xz r5 && rm -rf r5
