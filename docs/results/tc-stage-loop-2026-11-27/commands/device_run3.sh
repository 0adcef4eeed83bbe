# Run 3 (H100): Nsight Compute (--set full, one launch each) where run 2's new stage loop moved
# most: bf16 2048 x 11008 x 4096 on 128x128pp (the rules' tile; -7.5 points) and fp8 2048 x 11008 x
# 4096 (+4), main against new; and new's forced 128x160c2pp at fp8 8192 x 4800 x 1600 (beside run 7
# of tc-deferred, main's, and cuBLASLt's). Then new's persistent ladder rungs under NVRTC.
set -u
R=$OUT/r3; mkdir -p $R; nvidia-smi > $R/device.txt 2>&1
export PYTHONUNBUFFERED=1
NCU=$(command -v ncu || echo /opt/nvidia/nsight-compute/2025.3.1/ncu)
prof() {  # tree dtype shape config name
  env PYTHONPATH=$PWD/_t/$1/src:$PWD/tests GEMMLAB_CACHE_DIR=/tmp/glc_$1 timeout 150 $NCU --set full --import-source no \
    --profile-from-start off --launch-skip 2 --launch-count 1 -o $R/$5 python3 benchmarks/tc_plan_once.py --dtype $2 \
    --shape $3 --runs 3 --policy "{\"config\":\"$4\"}" > $R/$5.log 2>&1
  echo "ncu $5 $? $(date +%T)"
}
warm() { env PYTHONPATH=$PWD/_t/$1/src:$PWD/tests GEMMLAB_CACHE_DIR=/tmp/glc_$1 python3 benchmarks/tc_plan_once.py \
  --dtype $2 --shape $3 --runs 1 --policy "{\"config\":\"$4\"}" > /dev/null 2>&1; }
for v in main new; do warm $v bf16 2048,11008,4096 128x128pp & warm $v fp8 2048,11008,4096 128x128pp & done
warm new fp8 8192,4800,1600 128x160c2pp &
wait; date
for v in main new; do prof $v bf16 2048,11008,4096 128x128pp ${v}_b2048x11008x4096_pp; done
for v in main new; do prof $v fp8 2048,11008,4096 128x128pp ${v}_f2048x11008x4096_pp; done
prof new fp8 8192,4800,1600 128x160c2pp new_f8192x4800x1600_pp160c2
env PYTHONPATH=$PWD/_t/new/src:$PWD/tests GEMMLAB_CACHE_DIR=/tmp/glc_ladder timeout 240 python3 -m pytest -q -p no:cacheprovider \
  tests/gpu/test_bf16_gpu.py tests/gpu/test_fp8_gpu.py -k "persistent or fp8_rung_correct" > $R/ladder_tests.log 2>&1
echo "ladder tests rc $?" >> $R/ladder_tests.log; tail -3 $R/ladder_tests.log; date
cd $OUT && tar cJf r3.tar.xz r3 && rm -rf r3
