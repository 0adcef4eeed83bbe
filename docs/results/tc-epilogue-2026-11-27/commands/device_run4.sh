# Run 4 (H100): the stmatrix epilogue with alternating halves (this tree) - the tensor-dispatch GPU
# tests that run every config's epilogue (edge shapes, model shapes, every config with split-K
# and stream-K), compute-sanitizer on the cases of the tiles whose epilogue changed most (ping-pong,
# 128 x 160's 32-column boxes, 128 x 256's halves), and the persistent ladder rungs' GPU tests.
set -u
R=$OUT/r4; mkdir -p $R; nvidia-smi > $R/device.txt 2>&1
export PYTHONPATH=$PWD/src:$PWD/tests PYTHONUNBUFFERED=1 GEMMLAB_CACHE_DIR=/tmp/glc
timeout 280 python3 -m pytest -q -p no:cacheprovider tests/gpu/test_dispatch_tc_gpu.py \
  -k "every_edge_shape or model_shapes or every_config_and_split or every_config_with_stream_k" --durations=10 > $R/gpu_tests.log 2>&1
echo "dispatch tests rc $?" >> $R/gpu_tests.log; tail -3 $R/gpu_tests.log; date
MATCH="128x128pp|128x160c1|128x256" timeout 150 bash benchmarks/run_sanitizer_device.sh $R/sanitizer tc > /dev/null 2>&1
cat $R/sanitizer/summary.txt; date
timeout 70 python3 -m pytest -q -p no:cacheprovider tests/gpu/test_bf16_gpu.py tests/gpu/test_fp8_gpu.py \
  -k "persistent or fp8_rung_correct" > $R/ladder_tests.log 2>&1
echo "ladder tests rc $?" >> $R/ladder_tests.log; tail -3 $R/ladder_tests.log; date
cd $OUT && tar cJf r4.tar.xz r4 && rm -rf r4
