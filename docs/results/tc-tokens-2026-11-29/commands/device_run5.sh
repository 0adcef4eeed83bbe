mkdir -p $OUT/r5; PYTHONPATH=src timeout 560 python -m pytest -q -p no:cacheprovider tests/gpu/test_dispatch_tc_gpu.py > $OUT/r5/gpu_tests.txt 2>&1; echo "exit $?" >> $OUT/r5/gpu_tests.txt
