# Run 8 (H100): the ping-pong warpgroups pass their turn once past the tile's stage waits (each
# warp arrives), not after the last MMAs complete (ppB), against the current order (pp160: main
# plus the forced-only 128 x 160 ping-pong tiles). Correctness of every ping-pong tile in ppB
# first, then alternating processes, order reversed in pass 2.
set -u
R=$OUT/r8; mkdir -p $R; nvidia-smi > $R/device.txt 2>&1
export PYTHONUNBUFFERED=1
F8="8192,4800,1600;4096,4096,4096;2048,11008,4096;8192,6144,4096"
B16="2048,11008,4096;2048,4800,1600;4096,4096,4096"
tree() { echo $PWD/_t/$1/src; }
date
for v in pp160 ppB; do
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
env PYTHONPATH=$(tree ppB):$PWD/tests GEMMLAB_CACHE_DIR=/tmp/glc_ppB timeout 120 python3 pp_check.py > $R/pp_check_ppB.log 2>&1
echo "check rc $?"; tail -1 $R/pp_check_ppB.log
for pass in 1 2; do
  order="pp160 ppB"; [ $pass = 2 ] && order="ppB pp160"
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
cd $OUT && tar cJf r8.tar.xz r8 && rm -rf r8
