#!/usr/bin/env bash
# session scratch: Nsight Compute at 128x1600x6400 - the rules' plan, 64 x 64 tiles, cuBLAS at its best
set -u
R=$OUT/r2; mkdir -p $R
export PYTHONPATH=$PWD/src:$PWD/tests PYTHONUNBUFFERED=1 GEMMLAB_CACHE_DIR=/tmp/glc
NCU=$(command -v ncu || echo /opt/nvidia/nsight-compute/2025.3.1/ncu)
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
prof() {  # name dtype args...
  local name=$1 dt=$2; shift 2
  timeout 120 $NCU --set full --import-source yes --profile-from-start off --launch-count 3 -o $R/$name -f \
    python3 benchmarks/tc_plan_once.py --dtype $dt --shape 128,1600,6400 --runs 3 "$@" > $R/$name.log 2>&1
  el "$name ncu $?"; tail -n 1 $R/$name.log
  $NCU -i $R/$name.ncu-rep --csv --page details > $R/${name}_details.csv 2>/dev/null
  python3 benchmarks/ncu_brief.py $R/${name}_details.csv | cut -c1-150 | sort -u | head -30
}
prof bf16_rule bf16
prof bf16_64x64c2 bf16 --policy '{"config": "64x64c2"}'
prof bf16_64x64c2_s2 bf16 --policy '{"config": "64x64c2", "split": 2}'
prof bf16_cublas bf16 --cublas
prof fp8_rule fp8
prof fp8_64x64c2 fp8 --policy '{"config": "64x64c2"}'
prof fp8_cublas fp8 --cublas
tar czf $OUT/r2.tgz -C $OUT r2
