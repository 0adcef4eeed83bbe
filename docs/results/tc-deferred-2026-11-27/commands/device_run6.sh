# Run 6 (H100): ping-pong 128 x 160 tiles (160 accumulator registers per consumer thread), single
# CTAs and clusters of 2 sharing B - cuBLASLt's fastest kernel at fp8 8192 x 4800 x 1600 is
# nvjet_sm90_qqtst_128x160_128x5_2x1_v_bz_TNT (ping-pong: no "coop"). Forced tiles beside the
# rules' plan, each checked against cuBLAS first; two processes.
set -u
R=$OUT/r6; mkdir -p $R; nvidia-smi > $R/device.txt 2>&1
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/_t/pp160/src:$PWD/tests GEMMLAB_CACHE_DIR=/tmp/glc
F8="8192,4800,1600;4096,4096,4096;8192,6144,4096;2048,1600,6400;2048,11008,4096;8192,8192,8192"
date
( IFS=';'; for s in $F8; do python3 benchmarks/tc_plan_once.py --dtype fp8 --shape $s --runs 1; done ) > $R/warm_rules.log 2>&1 &
for c in 128x160pp 128x160c2pp 128x160c2 128x128pp; do
  python3 benchmarks/tc_plan_once.py --dtype fp8 --shape 2048,4800,1600 --runs 1 --policy "{\"config\":\"$c\"}" > $R/warm_$c.log 2>&1 &
done
wait; date; tail -n 2 $R/warm_128x160*pp.log
for pass in 1 2; do
  timeout 200 python3 benchmarks/tc_dispatch_compare.py --dtype fp8 --shapes "$F8" \
    --only "128x160pp S=1,128x160c2pp S=1,128x160c2 S=1,128x128pp S=1" --rounds 2 --rep-ms 8 \
    --json $R/fp8_pp160_$pass.json > $R/fp8_pp160_$pass.log 2>&1
  echo "pass $pass $? $(date +%T)"
done
cd $OUT && tar cJf r6.tar.xz r6 && rm -rf r6
