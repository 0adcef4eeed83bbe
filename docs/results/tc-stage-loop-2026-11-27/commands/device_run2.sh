# Run 2 (H100): the consumers' stage loop rebuilt after cuBLASLt's (new): the warpgroup index
# read from lane 0, descriptors of slot 0 stepped by adds, slot and phase stepped rather than
# divided, the next stage's barrier tested while this one's MMAs run, ping-pong MMAs K-step by
# K-step. Against main; both trees carry the forced-only 128 x 160 ping-pong tiles. Timing first
# (alternating processes, order reversed in pass 2), then correctness: every ping-pong tile, and
# the dispatch GPU tests on new.
set -u
R=$OUT/r2; mkdir -p $R; nvidia-smi > $R/device.txt 2>&1
export PYTHONUNBUFFERED=1
F8="8192,4800,1600;4096,4096,4096;2048,11008,4096;8192,6144,4096;2048,1600,6400;2048,4800,1600"
B16="8192,4800,1600;8192,1600,6400;4096,4096,4096;2048,4800,1600;2048,11008,4096"
tree() { echo $PWD/_t/$1/src; }
date
for v in main new; do
  for d in fp8 bf16; do
    S=$([ $d = fp8 ] && echo "$F8" || echo "$B16")
    CF="128x128pp"; [ $d = fp8 ] && CF="$CF 128x160pp 128x160c2pp"
    ( IFS=';'; for s in $S; do env PYTHONPATH=$(tree $v):$PWD/tests GEMMLAB_CACHE_DIR=/tmp/glc_$v \
        python3 benchmarks/tc_plan_once.py --dtype $d --shape $s --runs 1; done
      IFS=' '; for c in $CF; do env PYTHONPATH=$(tree $v):$PWD/tests GEMMLAB_CACHE_DIR=/tmp/glc_$v \
        python3 benchmarks/tc_plan_once.py --dtype $d --shape 2048,4800,1600 --runs 1 --policy "{\"config\":\"$c\"}"; done
    ) > $R/warm_${v}_$d.log 2>&1 &
  done
done
wait; date
for pass in 1 2; do
  order="main new"; [ $pass = 2 ] && order="new main"
  for v in $order; do
    for d in fp8 bf16; do
      S=$([ $d = fp8 ] && echo "$F8" || echo "$B16")
      env PYTHONPATH=$(tree $v):$PWD/tests GEMMLAB_CACHE_DIR=/tmp/glc_$v timeout 100 python3 benchmarks/tc_dispatch_compare.py \
        --dtype $d --shapes "$S" --only "128x128pp S=1,128x160pp S=1,128x160c2pp S=1" --rounds 2 --rep-ms 8 \
        --json $R/${d}_${v}_$pass.json > $R/${d}_${v}_$pass.log 2>&1
      echo "$pass $v $d $(date +%T)"
    done
  done
done
env PYTHONPATH=$(tree new):$PWD/tests GEMMLAB_CACHE_DIR=/tmp/glc_new timeout 120 python3 pp_check.py > $R/pp_check_new.log 2>&1
echo "check rc $?"; tail -1 $R/pp_check_new.log
env PYTHONPATH=$(tree new):$PWD/tests GEMMLAB_CACHE_DIR=/tmp/glc_new timeout 230 python3 -m pytest -q -p no:cacheprovider \
  tests/gpu/test_dispatch_tc_gpu.py -k "every_edge_shape or model_shapes or every_config_and_split or every_config_with_stream_k" \
  > $R/gpu_tests.log 2>&1; tail -1 $R/gpu_tests.log
cd $OUT && tar cJf r2.tar.xz r2 && rm -rf r2
