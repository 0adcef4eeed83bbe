#!/usr/bin/env bash
# session scratch (H100): the timer's retry of a batch the host fell behind in (harness GPU tests);
# bf16 decode kernels against the tiles at 1 and 16 tokens on wide N (LLaMA up/gate 28672, vocab
# 32000 and 128256 - the last two outside the map's grid); 128 x 256 / 128 x 128 in pairs sharing
# A (c1x2, uncommitted table entries) against the rules' tiles where the map falls short
set -u
R=$OUT/r1; mkdir -p $R
export PYTHONPATH=$PWD/src:$PWD/tests PYTHONUNBUFFERED=1 GEMMLAB_CACHE_DIR=/tmp/glc
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv > $R/device.txt; date -u >> $R/device.txt
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
timeout 90 python3 -m pytest -q -p no:cacheprovider tests/gpu/test_harness_gpu.py -k "hold or slow_host or fell_behind" -rs > $R/harness_tests.log 2>&1; el "harness $?"; tail -n 3 $R/harness_tests.log; cp $OUT/harness_gpu.jsonl $R/ 2>/dev/null; cat $R/harness_gpu.jsonl
D="1,28672,4096;1,28672,8192;1,32000,4096;1,128256,4096;16,28672,4096;16,28672,8192;16,32000,4096;16,8192,8192;16,11008,4096;16,10240,8192;16,6144,4096"
timeout 170 python3 benchmarks/tc_dispatch_compare.py --dtype bf16 --shapes "$D" --rounds 3 \
  --only "gemv,mma,64x128 S=1,64x64 S=1" --json $R/dec_bf16.json > $R/dec_bf16.txt 2>&1; el "dec bf16 $?"
grep -h "^[0-9]\|  [0-9a-z]" $R/dec_bf16.txt | cut -c1-120
S="2048,2048,2048;4096,4096,4096;2048,11008,4096;2048,1600,6400;8192,4800,1600;2048,4800,1600;8192,1600,6400"
for dt in fp8 bf16; do
  timeout 150 python3 benchmarks/tc_dispatch_compare.py --dtype $dt --shapes "$S" --rounds 3 \
    --only "128x256c1 S=1,128x256c1x2 S=1,128x128c1 S=1,128x128c1x2 S=1,128x256c2 S=1" --json $R/ca_$dt.json > $R/ca_$dt.txt 2>&1; el "ca $dt $?"
  grep -h "^[0-9]\|  [0-9a-z]" $R/ca_$dt.txt | cut -c1-120
done
tar czf $OUT/r1.tgz -C $OUT r1
