set -u
# Run 5: tma.py with L2_PROMOTION read from GEMMLAB_TMA_L2_PROMOTION (default L2_128B; a _dev edit, not committed)
R=$OUT/m128; mkdir -p $R
export PYTHONPATH=$PWD/src:$PWD/tests PYTHONUNBUFFERED=1 GEMMLAB_CACHE_DIR=/tmp/glc
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv,noheader; date -u; git rev-parse HEAD; } > $R/device.txt
T0=$(date +%s)
S="128,28672,4096;128,10240,8192;128,11008,4096;128,6144,4096"
for pr in L2_256B L2_128B L2_128B L2_256B; do
  [ $(( $(date +%s) - T0 )) -gt 200 ] && break
  n=$(ls $R | grep -c "^${pr}_")
  GEMMLAB_TMA_L2_PROMOTION=$pr timeout 70 python3 benchmarks/tc_dispatch_compare.py --dtype bf16 --shapes "$S" --quick --rounds 3 --rep-ms 6 --json $R/${pr}_$n.json > $R/${pr}_$n.log 2>&1
  echo "$pr $n rc $? $(( $(date +%s) - T0 )) s"; grep "dispatch " $R/${pr}_$n.log
done
cd $OUT && tar cJf m128.tar.xz m128 && rm -rf m128
