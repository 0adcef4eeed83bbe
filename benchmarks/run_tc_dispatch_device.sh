#!/usr/bin/env bash
# The tensor-core dispatch rungs (dispatch_bf16, dispatch_fp8; issue #20) on an H100/H200.
#   step "tests":   a smoke check (three shapes per dtype, printed), then the GPU tests of
#                   tests/gpu/test_dispatch_tc_gpu.py (edge shapes, model shapes, every
#                   configuration and split, odd and misaligned operands);
#   step "compare": benchmarks/tc_dispatch_compare.py for bf16 and fp8 (every alternative
#                   interleaved with cuBLAS at its best), JSON and text per dtype;
#   step "quick":   the same, default plans only (the rules' choices), for the recorded map;
#   step "decode":  every alternative at the decode shapes only (M <= 16: the decode kernels'
#                   column strips against the 64-row TMA tile);
#   step "mma":     bf16 only: the tensor-core decode kernel's strips and cluster sizes against
#                   the 64-row TMA tile at the grid's 1- and 16-token shapes;
#   step "streamk": stream-K (every tile configuration; the partial wave plus 0, 1 or 2 full
#                   waves) and every unsplit tile against the rules' plan at the grid's M >= 128
#                   shapes whose tiles
#                   leave a last wave partly idle; DTYPES (default "bf16 fp8") picks the dtypes.
# Usage, from the repository root on the device machine:
#   bash benchmarks/run_tc_dispatch_device.sh OUT tests|compare|quick [extra compare args]
set -uo pipefail
OUT="${1:?usage: run_tc_dispatch_device.sh OUT tests|compare|quick}"
STEP="${2:?step}"
shift 2
mkdir -p "$OUT"
export PYTHONPATH="$PWD/src:$PWD/tests" PYTHONUNBUFFERED=1
W=$(mktemp -d /tmp/gemmlab-tc.XXXXXX)
export GEMMLAB_DB="$W/runs.sqlite" GEMMLAB_CACHE_DIR="${GEMMLAB_CACHE_DIR:-/tmp/gemmlab-tc-cache}"
PY=${PYTHON:-python3}
{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit,compute_cap --format=csv
  date -u; git rev-parse HEAD 2>/dev/null
  $PY -c 'import cupy, sys; print("python", sys.version.split()[0], "cupy", cupy.__version__)'
} > "$OUT/device_$STEP.txt" 2>&1
case "$STEP" in
  tests)
    timeout 120 $PY - > "$OUT/smoke.txt" 2>&1 <<'PYEOF'
import cupy, zlib
from gemmlab.bench.check import Checker
from gemmlab.kernels.registry import get
from gemmlab.runtime.dispatch_tc_gemm import TcDispatchedGemm
for dtype in ("bf16", "fp8"):
    for shape in [(256, 512, 512), (1, 4096, 4096), (1000, 3001, 77), (4096, 4096, 4096)]:
        try:
            run = TcDispatchedGemm(get(f"dispatch_{dtype}"), *shape)
            ck = Checker(xp=cupy, seed=1, synchronize=cupy.cuda.get_current_stream().synchronize)
            res = ck.check(run, *shape, 1.25, -0.5, dtype, "bf16")
            print(dtype, shape, run.plan.name, "OK" if res.ok else f"WRONG {res.reason}", flush=True)
        except Exception as e:
            print(dtype, shape, "ERROR", type(e).__name__, e, flush=True)
PYEOF
    echo "smoke exit $?" >> "$OUT/smoke.txt"
    timeout 400 $PY -m pytest -q -p no:cacheprovider tests/gpu/test_dispatch_tc_gpu.py -rs \
      > "$OUT/gpu_tests.log" 2>&1
    echo "pytest exit $?" >> "$OUT/gpu_tests.log"
    ;;
  decode)
    for dt in bf16 fp8; do
      S="1,4096,4096;8,4096,4096;16,4096,4096;1,14336,4096;1,4096,14336;16,4096,14336;1,6144,4096;16,6144,4096;16,8192,28672;1,28672,4096"
      timeout 280 $PY benchmarks/tc_dispatch_compare.py --dtype $dt --decode --shapes "$S" --json "$OUT/decode_$dt.json" "$@" \
        > "$OUT/decode_$dt.txt" 2>&1
      echo "exit $?" >> "$OUT/decode_$dt.txt"
    done
    ;;
  mma)
    S="16,4096,4096;16,6144,4096;16,4096,14336;16,1600,6400;16,4800,1600;16,8192,8192;16,11008,4096;16,28672,4096;16,8192,28672;1,4096,4096;1,1600,6400;1,4800,1600;1,6144,4096;1,28672,4096"
    timeout 400 $PY benchmarks/tc_dispatch_compare.py --dtype bf16 --decode --only "64x128,mma" --shapes "$S" --json "$OUT/mma_bf16.json" "$@" \
      > "$OUT/mma_bf16.txt" 2>&1
    echo "exit $?" >> "$OUT/mma_bf16.txt"
    ;;
  streamk)
    S="8192,1600,6400;8192,4800,1600;2048,4800,1600;8192,6144,4096;2048,1600,6400;2048,11008,4096;128,28672,4096;128,28672,8192;128,1600,6400;128,4096,14336;128,4096,4096;128,11008,4096;128,10240,8192;4096,4096,4096;8192,8192,8192;2048,2048,2048;1024,1024,1024;512,512,512"
    SK="128x256c1 SK,128x256c2 SK,128x128c1 SK,128x128c2 SK,64x128 SK,64x256 SK,128x256c1 S=1,128x256c2 S=1,128x128c1 S=1,128x128c2 S=1,64x128 S=1,64x256 S=1"
    for dt in ${DTYPES:-bf16 fp8}; do
      timeout ${SK_TIMEOUT:-240} $PY benchmarks/tc_dispatch_compare.py --dtype $dt --only "$SK" --shapes "$S" --json "$OUT/streamk_$dt.json" "$@" \
        > "$OUT/streamk_$dt.txt" 2>&1
      echo "exit $?" >> "$OUT/streamk_$dt.txt"
    done
    ;;
  compare|quick)
    Q=""; [ "$STEP" = quick ] && Q="--quick"
    for dt in bf16 fp8; do
      timeout 280 $PY benchmarks/tc_dispatch_compare.py --dtype $dt $Q --json "$OUT/${STEP}_$dt.json" "$@" \
        > "$OUT/${STEP}_$dt.txt" 2>&1
      echo "exit $?" >> "$OUT/${STEP}_$dt.txt"
    done
    ;;
esac
