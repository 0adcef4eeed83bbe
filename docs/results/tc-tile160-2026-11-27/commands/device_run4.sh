#!/usr/bin/env bash
# session scratch: bf16 128x160 (B in 64-byte swizzle chunks) - GPU tests, sanitizer, compare
set -u
R=$OUT/r4; mkdir -p $R
export PYTHONPATH=$PWD/src:$PWD/tests PYTHONUNBUFFERED=1 GEMMLAB_CACHE_DIR=/tmp/glc
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv > $R/device.txt; date -u >> $R/device.txt
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
timeout 60 python3 - > $R/smoke.txt 2>&1 <<'PYEOF'
import cupy
from gemmlab.bench.check import Checker
from gemmlab.kernels.registry import get
from gemmlab.runtime.dispatch_tc import Policy
from gemmlab.runtime.dispatch_tc_gemm import TcDispatchedGemm
for shape in [(256, 160, 64), (128, 320, 128), (1000, 1600, 1024), (129, 4800, 1600)]:
    run = TcDispatchedGemm(get("dispatch_bf16"), *shape, policy=Policy(config="128x160c1"))
    ck = Checker(xp=cupy, seed=1, synchronize=cupy.cuda.get_current_stream().synchronize)
    for a, b in ((1.0, 0.0), (1.25, -0.5)):
        res = ck.check(run, *shape, a, b, "bf16", "bf16")
        print(shape, a, b, run.plan.name, "OK" if res.ok else f"WRONG {res.reason}", flush=True)
PYEOF
el "smoke $?"; cat $R/smoke.txt | tail -n 8
timeout 200 python3 -m pytest -q -p no:cacheprovider tests/gpu/test_dispatch_tc_gpu.py -k "bf16 and (every_config or stream_k)" -rs > $R/gpu_bf16.log 2>&1; el "gpu bf16 $?"; tail -n 3 $R/gpu_bf16.log
S="8192,1600,6400;8192,4800,1600;2048,4800,1600;2048,1600,6400;8192,6400,1600;4096,4096,4096"
timeout 170 python3 benchmarks/tc_dispatch_compare.py --dtype bf16 --only "128x160c1 S=1,128x256c1 S=1,128x256c2 S=1,128x128c1 S=1" --shapes "$S" --json $R/cmp160_bf16.json > $R/cmp160_bf16.txt 2>&1; el "cmp $?"; grep -E "^[0-9]|dispatch|S=1" $R/cmp160_bf16.txt | cut -c1-110
MATCH=128x160 timeout 150 bash benchmarks/run_sanitizer_device.sh $R/san tc > /dev/null 2>&1; el "san $?"; cat $R/san/summary.txt
tar czf $OUT/r4.tgz -C $OUT r4
