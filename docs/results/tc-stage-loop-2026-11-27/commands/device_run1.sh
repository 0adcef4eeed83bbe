# Run 1 (H100): the ping-pong warpgroups issue their MMAs K-step by K-step, the two 64-row
# blocks alternating (inter), against main's block-by-block order; both trees carry the forced-only
# 128 x 160 ping-pong tiles (tc-deferred not_kept/pingpong_128x160_tiles.patch). Correctness of every
# ping-pong tile in inter first, then alternating processes, order reversed in pass 2.
set -u
R=$OUT/r1; mkdir -p $R; nvidia-smi > $R/device.txt 2>&1
export PYTHONUNBUFFERED=1
F8="8192,4800,1600;4096,4096,4096;2048,11008,4096;8192,6144,4096;2048,1600,6400"
B16="2048,11008,4096;2048,4800,1600;4096,4096,4096;8192,4800,1600"
tree() { echo $PWD/_t/$1/src; }
date
for v in main inter; do
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
env PYTHONPATH=$(tree inter):$PWD/tests GEMMLAB_CACHE_DIR=/tmp/glc_inter timeout 120 python3 pp_check.py > $R/pp_check_inter.log 2>&1
echo "check rc $?"; tail -1 $R/pp_check_inter.log
for pass in 1 2; do
  order="main inter"; [ $pass = 2 ] && order="inter main"
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
cd $OUT && tar cJf r1.tar.xz r1 && rm -rf r1
