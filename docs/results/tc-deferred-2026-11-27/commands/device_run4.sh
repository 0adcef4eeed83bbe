# Run 4 (H100): every metric of the run-2 profiles (main and the deferred epilogue at fp8
# 8192 x 4800 x 1600) and of cuBLASLt's kernel at that shape, as raw CSV; then main's exact tree's
# persistent ladder rungs under NVRTC (the GPU tests d77af76 fixed, not yet run on main's tree).
set -u
R=$OUT/r4; mkdir -p $R; nvidia-smi > $R/device.txt 2>&1
export PYTHONUNBUFFERED=1
NCU=$(command -v ncu || echo /opt/nvidia/nsight-compute/2025.3.1/ncu)
env PYTHONPATH=$PWD/_t/main/src:$PWD/tests GEMMLAB_CACHE_DIR=/tmp/glc timeout 120 $NCU --set full --import-source no \
  --profile-from-start off --launch-skip 2 --launch-count 1 -o $R/cublas_f8192x4800x1600 \
  python3 benchmarks/tc_plan_once.py --dtype fp8 --shape 8192,4800,1600 --runs 3 --cublas > $R/cublas.log 2>&1
echo "ncu cublas $? $(date +%T)"
for f in scratch_reps/r2/main_f8192x4800x1600.ncu-rep scratch_reps/r2/head_f8192x4800x1600.ncu-rep $R/cublas_f8192x4800x1600.ncu-rep; do
  n=$(basename $f .ncu-rep)
  $NCU -i $f --csv --page raw > $R/${n}_raw.csv 2>/dev/null
  $NCU -i $f --csv --page details > $R/${n}_details.csv 2>/dev/null
done
env PYTHONPATH=$PWD/_t/main/src:$PWD/tests GEMMLAB_CACHE_DIR=/tmp/glc_ladder timeout 300 python3 -m pytest -q -p no:cacheprovider \
  tests/gpu/test_bf16_gpu.py tests/gpu/test_fp8_gpu.py -k "persistent or fp8_rung_correct" > $R/ladder_tests.log 2>&1
echo "ladder tests rc $?" >> $R/ladder_tests.log; tail -3 $R/ladder_tests.log; date
cd $OUT && tar cJf r4.tar.xz r4 && rm -rf r4
