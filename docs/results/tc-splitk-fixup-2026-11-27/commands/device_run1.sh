#!/usr/bin/env bash
# session scratch (H200): the 128-row streaming shapes under the bar - every tile and split-K of
# the stream tiles (with the new forced-only 128 x 64) against cuBLAS at its best, interleaved;
# then Nsight Compute at bf16 128x4096x14336: the rule's 64 x 64, 64 x 64 split 2, 128 x 64 split 2, cuBLAS
set -u
R=$OUT/r1; mkdir -p $R
export PYTHONPATH=$PWD/src:$PWD/tests PYTHONUNBUFFERED=1 GEMMLAB_CACHE_DIR=/tmp/glc
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv > $R/device.txt; date -u >> $R/device.txt
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
ONLY="64x64 S=,64x128 S=,128x64c1 S=,128x128c1 S=,64x256 S=,128x256c1 S="
timeout 200 python3 benchmarks/tc_dispatch_compare.py --dtype bf16 --rounds 2 --rep-ms 8 --only "$ONLY" \
  --shapes "128,4096,14336;128,4096,4096;128,11008,4096;128,6144,4096;128,8192,8192" --json $R/cmp_bf16.json > $R/cmp_bf16.txt 2>&1; el "cmp bf16 $?"
timeout 240 python3 benchmarks/tc_dispatch_compare.py --dtype fp8 --rounds 2 --rep-ms 8 --only "$ONLY" \
  --shapes "128,4096,14336;128,4096,4096;128,6144,4096;128,11008,4096;128,10240,8192;128,4800,1600" --json $R/cmp_fp8.json > $R/cmp_fp8.txt 2>&1; el "cmp fp8 $?"
NCU=$(command -v ncu || echo /opt/nvidia/nsight-compute/2025.3.1/ncu)
prof() {  # name args...
  local name=$1; shift
  timeout 90 $NCU --set full --profile-from-start off --launch-skip 2 --launch-count 1 -o $R/$name -f \
    python3 benchmarks/tc_plan_once.py --dtype bf16 --shape 128,4096,14336 --runs 3 "$@" > $R/$name.log 2>&1
  el "$name ncu $?"; tail -n 1 $R/$name.log
  $NCU -i $R/$name.ncu-rep --csv --page details > $R/${name}_details.csv 2>/dev/null
}
prof rule
prof t64_s2 --policy '{"config": "64x64", "split": 2}'
prof t128x64_s2 --policy '{"config": "128x64c1", "split": 2}'
prof cublas --cublas
for n in rule t64_s2 t128x64_s2 cublas; do echo "== $n"; python3 benchmarks/ncu_brief.py $R/${n}_details.csv 2>&1 | cut -c1-160 | sort -u | head -40; done > $R/ncu_brief.txt
grep -v "^\s*$" $R/cmp_bf16.txt $R/cmp_fp8.txt | grep -v Warn | cut -c1-150 | head -160
tar cJf $OUT/r1.tar.xz -C $OUT r1
