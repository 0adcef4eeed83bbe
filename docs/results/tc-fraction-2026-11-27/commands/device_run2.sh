#!/bin/bash
# Run 2 (H100): (1) the held-out shapes again, order reversed, second process; (2) each candidate
# tile alone where every tile makes exactly two rounds with no column wasted (M = 33 x 128 rows,
# N = 8 tiles: 264 tiles of each), K = 1600 / 4096 / 8192 - its time per tile-column is its cost
# per MAC against the others; (3) ping-pong: the turn passed once the MMAs are issued, with the
# item's setup before the wait (_t/ppturn) against the same tree without (_t/base), forced
# 128x128pp, two processes each, alternating.
set -u
R=$OUT/r2; mkdir -p $R; nvidia-smi > $R/device.txt 2>&1
export PYTHONUNBUFFERED=1 GEMMLAB_CACHE_DIR=/tmp/glc
ONLY="128x200c1 S=1,128x160c1 S=1,128x256c1 S=1,128x128pp S=1"
S="2048,2800,5120;2048,6144,2048;4096,2048,4096;2048,2400,8192;4096,1600,5120;2048,4000,4096;2560,3400,4096;3072,3200,4096;1792,4096,8192;3584,1600,4096;2500,3000,4096;4096,1280,6144;2048,3840,4096;2816,2816,5120;2560,4096,4096;3072,3072,3072"
date +%T
for c in 128x200c1 128x160c1 128x256c1 128x128pp; do
  PYTHONPATH=$PWD/src:$PWD/tests python3 benchmarks/tc_plan_once.py --dtype fp8 --shape 2048,2048,2048 --runs 1 --policy "{\"config\":\"$c\"}" > $R/warm_$c.log 2>&1 &
done
for t in base ppturn; do for dt in fp8 bf16; do
  PYTHONPATH=$PWD/_t/$t/src:$PWD/tests python3 benchmarks/tc_plan_once.py --dtype $dt --shape 2048,2048,2048 --runs 1 --policy '{"config":"128x128pp"}' > $R/warm_${t}_$dt.log 2>&1 &
done; done
wait; date +%T
PYTHONPATH=$PWD/src:$PWD/tests timeout 150 python3 benchmarks/tc_dispatch_compare.py --dtype fp8 --shapes "$S" \
  --only "$ONLY" --rounds 3 --rep-ms 8 --json $R/fp8_heldout_2.json > $R/fp8_heldout_2.log 2>&1
echo "pass 2 rc $? $(date +%T)"
for c in 128x256c1:2048 128x200c1:1600 128x160c1:1280 128x128pp:1024; do
  cfg=${c%%:*}; n=${c##*:}
  PYTHONPATH=$PWD/src:$PWD/tests timeout 60 python3 benchmarks/tc_dispatch_compare.py --dtype fp8 \
    --shapes "4224,$n,1600;4224,$n,4096;4224,$n,8192" --only "$cfg S=1" --rounds 3 --rep-ms 8 \
    --json $R/fp8_exact_$cfg.json > $R/fp8_exact_$cfg.log 2>&1
  echo "exact $cfg rc $?"
done
date +%T
cd $OUT && tar cJf r2.tar.xz r2; cd - > /dev/null
F="2048,2048,2048;2048,11008,4096;2048,6144,2048;2560,3400,4096;3584,1600,4096;4096,4096,4096;2048,2800,5120"
B="2048,4800,1600;2048,11008,4096;2048,2048,2048;4096,4096,4096"
for pass in 1 2; do
  order="base ppturn"; [ $pass = 2 ] && order="ppturn base"
  for t in $order; do
    PYTHONPATH=$PWD/_t/$t/src:$PWD/tests timeout 60 python3 benchmarks/tc_dispatch_compare.py --dtype fp8 --shapes "$F" \
      --only "128x128pp S=1" --rounds 3 --rep-ms 8 --json $R/fp8_${t}_$pass.json > $R/fp8_${t}_$pass.log 2>&1
    PYTHONPATH=$PWD/_t/$t/src:$PWD/tests timeout 45 python3 benchmarks/tc_dispatch_compare.py --dtype bf16 --shapes "$B" \
      --only "128x128pp S=1" --rounds 3 --rep-ms 8 --json $R/bf16_${t}_$pass.json > $R/bf16_${t}_$pass.log 2>&1
    echo "pp $t pass $pass rc $? $(date +%T)"
  done
done
cd $OUT && rm -f r2.tar.xz && tar cJf r2.tar.xz r2 && rm -rf r2
