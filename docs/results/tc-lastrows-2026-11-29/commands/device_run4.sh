#!/bin/bash
# Run 4 (H200), tree bd20fad (A's last row-tile boxed to its rows):
#  a. the tensor-batches map (24-112 tokens on the LLaMA-3-8B layer and 70B's down projection),
#     both dtypes, against cuBLAS at its best;
#  b. at 72-112 rows, whether the H200's stream-once rule (128 x 64 split 2 from 65 rows) still
#     leads now that the 64 x 64 tile's last row-tile no longer fills: forced 128x64c1 S=2, 64x64
#     S=1 and the swapped 128-token kernel split 2, beside the rules' plan;
#  c. every alternative at the H200 map's 128-row shapes under the bar (bf16 128 x 28672 x 4096,
#     128 x 4096 x 14336; fp8 128 x 10240 x 8192): data for a rule, none changed here.
set -u
R=$OUT/r4; mkdir -p $R; nvidia-smi > $R/device.txt 2>&1; date -u >> $R/device.txt
export PYTHONUNBUFFERED=1 GEMMLAB_CACHE_DIR=/tmp/glc PYTHONPATH=$PWD/src:$PWD/tests
SB="72,4096,14336;96,4096,14336;112,4096,14336;96,28672,4096"
for d in bf16 fp8; do
  python3 benchmarks/tc_plan_once.py --dtype $d --shape 96,4096,14336 --runs 1 --policy '{"config":"swap","split":2,"stages":8}' > /dev/null 2>&1 &
  python3 benchmarks/tc_plan_once.py --dtype $d --shape 96,4096,14336 --runs 1 --policy '{"config":"64x64"}' > /dev/null 2>&1 &
done; wait; echo "warm $(date +%T)"
SHAPES_TIMEOUT=130 bash benchmarks/run_shapes_tc_device.sh $R/batches bf16 fp8 -- --preset tensor-batches > $R/batches.log 2>&1
echo "map rc $? $(date +%T)"
for d in bf16 fp8; do
  timeout 70 python3 benchmarks/tc_dispatch_compare.py --dtype $d --shapes "$SB" \
    --only "128x64c1 S=2,64x64 S=1,swap ks=2 s=8" --rounds 3 --rep-ms 8 --json $R/rows_$d.json > $R/rows_$d.log 2>&1
  echo "rows $d rc $? $(date +%T)"
done
timeout 100 python3 benchmarks/tc_dispatch_compare.py --dtype bf16 --shapes "128,28672,4096;128,4096,14336" \
  --rounds 3 --rep-ms 8 --json $R/all_bf16.json > $R/all_bf16.log 2>&1; echo "all bf16 rc $? $(date +%T)"
timeout 60 python3 benchmarks/tc_dispatch_compare.py --dtype fp8 --shapes "128,10240,8192" \
  --rounds 3 --rep-ms 8 --json $R/all_fp8.json > $R/all_fp8.log 2>&1; echo "all fp8 rc $? $(date +%T)"
echo done
