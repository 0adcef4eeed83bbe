# Run 7 (H100): the stage loop as it lands (fin: run 2's new loop, bf16's warpgroup index from
# threadIdx as run 6 chose) against main at the open H100 shapes of both dtypes, rules' plans and
# the forced 128x128pp; alternating processes, order reversed in pass 2. Then correctness on fin:
# every ping-pong tile (pp_check), the persistent ladder rungs under NVRTC, the dispatch GPU tests,
# and compute-sanitizer on the ping-pong and clustered 128 x 256 paths.
set -u
R=$OUT/r7; mkdir -p $R; nvidia-smi > $R/device.txt 2>&1
export PYTHONUNBUFFERED=1
F8="8192,4800,1600;2048,11008,4096;2048,1600,6400;8192,6144,4096;2048,28672,4096;4096,4096,4096;2048,4800,1600;128,1600,6400"
B16="8192,4800,1600;8192,1600,6400;2048,11008,4096;2048,4800,1600;4096,4096,4096"
tree() { echo $PWD/_t/$1/src; }
date
for v in main fin; do
  for d in fp8 bf16; do
    S=$([ $d = fp8 ] && echo "$F8" || echo "$B16")
    ( IFS=';'; for s in $S; do env PYTHONPATH=$(tree $v):$PWD/tests GEMMLAB_CACHE_DIR=/tmp/glc_$v \
        python3 benchmarks/tc_plan_once.py --dtype $d --shape $s --runs 1; done
      env PYTHONPATH=$(tree $v):$PWD/tests GEMMLAB_CACHE_DIR=/tmp/glc_$v \
        python3 benchmarks/tc_plan_once.py --dtype $d --shape 2048,4800,1600 --runs 1 --policy '{"config":"128x128pp"}'
    ) > $R/warm_${v}_$d.log 2>&1 &
  done
done
wait; date
for pass in 1 2; do
  order="main fin"; [ $pass = 2 ] && order="fin main"
  for v in $order; do
    for d in fp8 bf16; do
      S=$([ $d = fp8 ] && echo "$F8" || echo "$B16")
      env PYTHONPATH=$(tree $v):$PWD/tests GEMMLAB_CACHE_DIR=/tmp/glc_$v timeout 100 python3 benchmarks/tc_dispatch_compare.py \
        --dtype $d --shapes "$S" --only "128x128pp S=1" --rounds 2 --rep-ms 8 --json $R/${d}_${v}_$pass.json > $R/${d}_${v}_$pass.log 2>&1
      echo "$pass $v $d $(date +%T)"
    done
  done
done
env PYTHONPATH=$(tree fin):$PWD/tests GEMMLAB_CACHE_DIR=/tmp/glc_fin timeout 60 python3 pp_check.py > $R/pp_check_fin.log 2>&1
echo "check rc $?"; tail -1 $R/pp_check_fin.log
env PYTHONPATH=$(tree fin):$PWD/tests GEMMLAB_CACHE_DIR=/tmp/glc_ladder timeout 60 python3 -m pytest -q -p no:cacheprovider \
  tests/gpu/test_bf16_gpu.py tests/gpu/test_fp8_gpu.py -k "persistent or fp8_rung_correct" > $R/ladder_tests.log 2>&1
echo "ladder tests rc $?" >> $R/ladder_tests.log; tail -2 $R/ladder_tests.log
cd $OUT && tar cJf r7.tar.xz r7
cd - > /dev/null
env PYTHONPATH=$(tree fin):$PWD/tests GEMMLAB_CACHE_DIR=/tmp/glc_fin timeout 120 python3 -m pytest -q -p no:cacheprovider \
  tests/gpu/test_dispatch_tc_gpu.py -k "every_edge_shape or every_config_and_split" > $R/gpu_tests.log 2>&1; tail -1 $R/gpu_tests.log
PYTHONPATH=$(tree fin) GEMMLAB_CACHE_DIR=/tmp/glc_fin MATCH="128x128pp|128x256c2" timeout 90 bash benchmarks/run_sanitizer_device.sh $R/sanitizer tc > /dev/null 2>&1
cat $R/sanitizer/summary.txt 2>/dev/null | tail -6
cd $OUT && rm -f r7.tar.xz && tar cJf r7.tar.xz r7 && rm -rf r7
