#!/usr/bin/env bash
# The FP8 (e4m3) rung and the cuBLASLt FP8 reference on an H100/H200 (issue #10):
#   1. benchmarks/fp8_probe.py, standalone (launcher + ctypes cuBLASLt only): correctness at six
#      shapes with an error map and the measured error against the FP8 bound, then a quick timing
#      at 4096^3 and 8192^3 against every cuBLASLt FP8 heuristic algorithm (FAST_ACCUM 1 and 0)
#      and torch._scaled_mm - so a failing integration still says what works. If the smallest
#      shape is wrong, the probe runs again with CLUSTER=1 (no multicast) and with EPI_PIECE=0
#      (no TMA-store epilogue) to locate the fault, and the 8192 ladder is skipped;
#   2. the FP8 GPU tests and the FP8 CPU tests;
#   3. `gemmlab ladder --dtype fp8` at 4096^3 and 8192^3 (cuBLASLt FP8 at its best in the same
#      run), each with --out JSON;
#   4. a summary: each row, then every reference candidate.
# Seven files land in OUT: device.txt, probe.txt, probe.json, gpu_tests.log,
# ladder_fp8_4096.json, ladder_fp8_8192.json, summary.txt. Every step runs under `timeout`;
# expected about 4 minutes on an H100, at most 6 if every step hits its limit.
# Usage, from the repository root on the device machine:  bash benchmarks/run_fp8_device.sh OUT
set -uo pipefail
OUT="${1:?usage: run_fp8_device.sh OUT}"
mkdir -p "$OUT"
export PYTHONPATH="$PWD/src" PYTHONUNBUFFERED=1
W=$(mktemp -d /tmp/gemmlab-fp8.XXXXXX)
export GEMMLAB_DB="$W/runs.sqlite" GEMMLAB_CACHE_DIR="$W/cache"
PY=${PYTHON:-python3}
T0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - T0 )) s] $*" >> "$OUT/gpu_tests.log"; }

{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,compute_cap --format=csv
  date -u; git rev-parse HEAD 2>/dev/null
  $PY -c 'import cupy, sys; print("python", sys.version.split()[0], "cupy", cupy.__version__)'
  $PY -c 'import cuda.bindings as b; print("cuda.bindings", b.__version__)' 2>&1 | tail -1
  $PY -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda)' 2>&1 | tail -1
} > "$OUT/device.txt" 2>&1

: > "$OUT/gpu_tests.log"
stamp "probe"
timeout 100 $PY benchmarks/fp8_probe.py --time --out "$OUT/probe.json" > "$OUT/probe.txt" 2>&1
echo "probe exit $?" >> "$OUT/probe.txt"
BROKEN=0
if ! grep -q "^(128, 256, 128): OK" "$OUT/probe.txt"; then
  BROKEN=1
  for v in CLUSTER=1 EPI_PIECE=0; do
    stamp "probe --set $v"
    timeout 40 $PY benchmarks/fp8_probe.py --quick --set "$v" >> "$OUT/probe.txt" 2>&1
    echo "probe --set $v exit $?" >> "$OUT/probe.txt"
  done
fi

stamp "pytest"
timeout 110 $PY -m pytest -q -rs -p no:cacheprovider tests/gpu/test_fp8_gpu.py \
  tests/test_fp8_numerics.py tests/test_fp8_cpu.py tests/test_fp8_ladder_cpu.py \
  tests/test_cublaslt_fp8.py >> "$OUT/gpu_tests.log" 2>&1
echo "pytest exit $?" >> "$OUT/gpu_tests.log"

for n in 4096 8192; do
  if [ "$n" = 8192 ] && [ "$BROKEN" = 1 ]; then
    stamp "ladder 8192 skipped: the rung is wrong at 128x256x128 (see probe.txt)"
    continue
  fi
  stamp "ladder $n"
  timeout $(( n == 4096 ? 60 : 80 )) $PY -m gemmlab ladder --dtype fp8 --size "$n" \
    --rep-ms 150 --out "$OUT/ladder_fp8_$n.json" --force > "$W/ladder_$n.txt" 2> "$W/ladder_$n.err"
  echo "ladder $n exit $?" >> "$OUT/gpu_tests.log"
  tail -5 "$W/ladder_$n.err" >> "$OUT/gpu_tests.log"
  cat "$W/ladder_$n.txt" >> "$OUT/gpu_tests.log"
done
stamp "done"

timeout 20 $PY - "$OUT" > "$OUT/summary.txt" 2>&1 <<'PYEOF'
import json, pathlib, sys
out = pathlib.Path(sys.argv[1])
f = lambda v, fmt: "-" if v is None else format(v, fmt)
print(f"{'size':>5} {'kernel':<16} {'TFLOP/s':>8} {'% cuBLAS':>9} {'% FP8 peak':>10} {'rel err':>9}  check")
refs = []
for n in (4096, 8192):
    p = out / f"ladder_fp8_{n}.json"
    if not p.exists():
        print(f"{n:>5} (no result: see gpu_tests.log)")
        continue
    res = json.loads(p.read_text())
    for r in res["rows"]:
        print(f"{n:>5} {r['kernel']:<16} {r['gflops'] / 1e3:>8.1f} {f(r.get('pct_of_cublas'), '.1f'):>9} "
              f"{f(r.get('pct_of_peak'), '.1f'):>10} {f(r['check'].get('rel_err'), '.2e'):>9}  "
              f"{'ok' if r['correct'] else 'FAIL: ' + r['check']['reason']}")
        if r["is_reference"]:
            refs.append((n, r))
    for s in res.get("skipped") or []:
        print(f"{n:>5} skipped: {s['reason']}")
for n, r in refs:
    la = r.get("launched") or {}
    print(f"\n{n}^3 reference: {r['info'].get('summary')}")
    print(f"  kernel: {la.get('kernel')}  notes: {la.get('notes')}")
    for c in la.get("candidates") or []:
        print(f"  {c['name'][:84]:<84} {f(c.get('median_ms'), '8.4f')} ms {f(c.get('tflops'), '7.1f')} "
              f"TFLOP/s diff {f(c.get('rel_diff_vs_exact'), '.2e')} {c.get('excluded') or ''} "
              f"{c.get('kernels') or ''}")
PYEOF
tail -4 "$OUT/gpu_tests.log"
cat "$OUT/summary.txt"
