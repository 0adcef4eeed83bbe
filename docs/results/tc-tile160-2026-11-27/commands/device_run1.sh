#!/usr/bin/env bash
# session scratch, not committed: validate next/host-paced-hold + next/tile160-tma-store
set -u
R=$OUT/r1; mkdir -p $R
export PYTHONPATH=$PWD/src:$PWD/tests PYTHONUNBUFFERED=1 GEMMLAB_CACHE_DIR=/tmp/glc OUT=$R
finish() { tar czf $OUT/r1.tgz -C $OUT r1; }
trap finish EXIT
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv > $R/device.txt; date -u >> $R/device.txt; git rev-parse HEAD >> $R/device.txt 2>&1
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
timeout 60 python3 -m pytest -q -p no:cacheprovider tests/gpu/test_harness_gpu.py -k "hold" -rs > $R/harness.log 2>&1; el "harness $?"; tail -n 3 $R/harness.log
COLUMNS=220 timeout 90 python3 -m gemmlab shapes --dtype bf16 --shapes "511,511,511;513,513,513;512,512,512;1000,3001,77;4095,4095,4095" --no-store --out $R/small_bf16.json --force > $R/small_bf16.txt 2>&1; el "shapes $?"; grep -E "511|513|512|3001|4095" $R/small_bf16.txt | head -12
timeout 220 python3 -m pytest -q -p no:cacheprovider tests/gpu/test_dispatch_tc_gpu.py -k "fp8 and (every_config or stream_k)" -rs > $R/gpu_fp8.log 2>&1; el "gpu fp8 $?"; tail -n 3 $R/gpu_fp8.log
S="8192,1600,6400;8192,4800,1600;2048,4800,1600;2048,1600,6400;8192,6400,1600;4096,4096,4096"
timeout 150 python3 benchmarks/tc_dispatch_compare.py --dtype fp8 --only "128x160c1 S=1,128x160c2 S=1,128x256c1 S=1,128x256c2 S=1,128x128c1 S=1" --shapes "$S" --json $R/cmp160.json > $R/cmp160.txt 2>&1; el "cmp $?"; tail -n 45 $R/cmp160.txt
MATCH=128x160 timeout 120 bash benchmarks/run_sanitizer_device.sh $R/san tc > /dev/null 2>&1; el "san $?"; cat $R/san/summary.txt
