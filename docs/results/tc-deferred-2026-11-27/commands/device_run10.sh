# Run 10 (H100): the tile-order band (GROUP, bands of cluster-rows; 8 on main) at 4 and 16 against
# 8, fp8, the rules' plans; one process per band, 8 first and last (drift).
set -u
R=$OUT/r10; mkdir -p $R; nvidia-smi > $R/device.txt 2>&1
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/_t/grp/src:$PWD/tests
F8="8192,4800,1600;8192,6144,4096;4096,4096,4096;2048,11008,4096"
date
for g in 8 4 16; do
  ( IFS=';'; for s in $F8; do env GEMMLAB_EXP_GROUP=$g GEMMLAB_CACHE_DIR=/tmp/glc_$g \
      python3 benchmarks/tc_plan_once.py --dtype fp8 --shape $s --runs 1; done ) > $R/warm_$g.log 2>&1 &
done
wait; date
i=0
for g in 8 4 16 8; do
  i=$((i+1))
  env GEMMLAB_EXP_GROUP=$g GEMMLAB_CACHE_DIR=/tmp/glc_$g timeout 60 python3 benchmarks/tc_dispatch_compare.py \
    --dtype fp8 --shapes "$F8" --quick --rounds 2 --rep-ms 8 --json $R/fp8_g${g}_$i.json > $R/fp8_g${g}_$i.log 2>&1
  echo "g$g $? $(date +%T)"
done
cd $OUT && tar cJf r10.tar.xz r10 && rm -rf r10
