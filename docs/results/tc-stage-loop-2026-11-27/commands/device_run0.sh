# One H100 call (~5 min) for wip/uniform-warpgroup. Before it, on the CPU, from the repository root:
#   mkdir -p _t/main && git archive main src/gemmlab | tar -x -C _t/main
#   mv tests/fixtures/corpus /tmp/corpus_aside; mv docs/results /tmp/results_aside   (the 64 MiB limit)
# Trees: main, head = this branch (the warpgroup index read from lane 0). Rules' plans and the forced
# ping-pong 128x128, alternating processes, order reversed in pass 2; then this branch's GPU tests.
set -u
R=$OUT/ab; mkdir -p $R; nvidia-smi > $R/device.txt 2>&1
export PYTHONUNBUFFERED=1
F8="8192,4800,1600;8192,6144,4096;4096,4096,4096;2048,11008,4096;2048,1600,6400"
B16="8192,4800,1600;8192,1600,6400;4096,4096,4096;2048,4800,1600"
tree() { case $1 in head) echo $PWD/src;; *) echo $PWD/_t/$1/src;; esac; }
for v in main head; do
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
  order="main head"; [ $pass = 2 ] && order="head main"
  for v in $order; do
    for d in fp8 bf16; do
      S=$([ $d = fp8 ] && echo "$F8" || echo "$B16")
      env PYTHONPATH=$(tree $v):$PWD/tests GEMMLAB_CACHE_DIR=/tmp/glc_$v timeout 100 python3 benchmarks/tc_dispatch_compare.py \
        --dtype $d --shapes "$S" --only "128x128pp S=1" --rounds 2 --rep-ms 8 --json $R/${d}_${v}_$pass.json > $R/${d}_${v}_$pass.log 2>&1
      echo "$pass $v $d $(date +%T)"
    done
  done
done
env PYTHONPATH=$PWD/src:$PWD/tests GEMMLAB_CACHE_DIR=/tmp/glc_head timeout 280 python3 -m pytest -q -p no:cacheprovider \
  tests/gpu/test_dispatch_tc_gpu.py -k "every_edge_shape or model_shapes or every_config_and_split or every_config_with_stream_k" \
  > $R/gpu_tests.log 2>&1; tail -1 $R/gpu_tests.log
cd $OUT && tar cJf ab.tar.xz ab && rm -rf ab
# next call if it wins: tests/gpu/test_bf16_gpu.py + test_fp8_gpu.py -k persistent (NVRTC), and
# MATCH="128x256|128x128pp|128x160c1" bash benchmarks/run_sanitizer_device.sh $OUT/sanitizer tc
