#!/usr/bin/env bash
# BF16 rung 3 (cp_async_bf16) and the best-of cuBLAS BF16 reference on a GPU (issue #10).
#   1. a standalone listing of every cuBLAS candidate (cublasGemmEx default, each cuBLASLt
#      heuristic algorithm with its tile/stages/cluster, torch.matmul) with times, agreement with
#      GemmEx and kernel names - so the lead learns what works even if the integration fails;
#   2. the BF16 GPU tests (every rung and twin incl. cp_async_bf16 at awkward shapes, every
#      cuBLASLt candidate through the Checker, the selection) plus the CPU tests of the same pieces;
#   3. `gemmlab ladder --dtype bf16` at 4096^3 and 8192^3, the cuBLAS row being the best candidate;
#   4. a summary: each row, then every reference candidate's time.
# Seven files land in OUT: device.txt, cublaslt_debug.txt, cublaslt_debug.json, gpu_tests.log,
# ladder_bf16_4096.json, ladder_bf16_8192.json, summary.txt. Every step runs under `timeout`;
# expected about 4-5 minutes on an H100, at most ~8 if every step hits its limit.
# Usage, from the repository root on the device machine:  bash benchmarks/run_tcref_device.sh OUT
set -uo pipefail
OUT="${1:?usage: run_tcref_device.sh OUT}"
mkdir -p "$OUT"
export PYTHONPATH="$PWD/src" PYTHONUNBUFFERED=1
W=$(mktemp -d /tmp/gemmlab-tcref.XXXXXX)
export GEMMLAB_DB="$W/runs.sqlite" GEMMLAB_CACHE_DIR="$W/cache"
PY=${PYTHON:-python3}
T0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - T0 )) s] $*" >> "$OUT/gpu_tests.log"; }

{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,compute_cap --format=csv
  date -u; git rev-parse HEAD 2>/dev/null
  $PY -c 'import cupy, sys; print("python", sys.version.split()[0], "cupy", cupy.__version__)'
  $PY -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda)' 2>&1 | tail -1
} > "$OUT/device.txt" 2>&1

: > "$OUT/gpu_tests.log"
stamp "cuBLAS candidates listing"
timeout 75 $PY benchmarks/cublaslt_candidates.py --sizes 4096,8192 \
  --out "$OUT/cublaslt_debug.json" > "$OUT/cublaslt_debug.txt" 2>&1
echo "cublaslt_candidates exit $?" >> "$OUT/cublaslt_debug.txt"

stamp "pytest"
timeout 210 $PY -m pytest -q -rs -p no:cacheprovider tests/gpu/test_bf16_gpu.py \
  tests/gpu/test_cublas_best_gpu.py tests/test_bf16_numerics.py tests/test_bf16_ladder_cpu.py \
  tests/test_bf16_cp_async_cpu.py tests/test_cublas_bf16.py tests/test_cublas_best.py \
  >> "$OUT/gpu_tests.log" 2>&1
echo "pytest exit $?" >> "$OUT/gpu_tests.log"

for n in 4096 8192; do
  stamp "ladder $n"
  timeout $(( n == 4096 ? 100 : 130 )) $PY -m gemmlab ladder --dtype bf16 --size "$n" \
    --rep-ms 150 --out "$OUT/ladder_bf16_$n.json" --force > "$W/ladder_$n.txt" 2> "$W/ladder_$n.err"
  echo "ladder $n exit $?" >> "$OUT/gpu_tests.log"
  tail -5 "$W/ladder_$n.err" >> "$OUT/gpu_tests.log"
done
stamp "done"

$PY - "$OUT" > "$OUT/summary.txt" 2>&1 <<'PYEOF'
import json, pathlib, sys
out = pathlib.Path(sys.argv[1])
f = lambda v, fmt: "-" if v is None else format(v, fmt)
print(f"{'size':>5} {'kernel':<22} {'TFLOP/s':>8} {'% cuBLAS':>9} {'% peak':>7} {'rel err':>9}  check")
refs = []
for n in (4096, 8192):
    p = out / f"ladder_bf16_{n}.json"
    if not p.exists():
        print(f"{n:>5} (no result: see gpu_tests.log)")
        continue
    res = json.loads(p.read_text())
    for r in res["rows"]:
        print(f"{n:>5} {r['kernel']:<22} {r['gflops'] / 1e3:>8.1f} {f(r.get('pct_of_cublas'), '.1f'):>9} "
              f"{f(r.get('pct_of_peak'), '.1f'):>7} {f(r['check'].get('rel_err'), '.2e'):>9}  "
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
        print(f"  {c['name'][:88]:<88} {f(c.get('median_ms'), '8.4f')} ms {f(c.get('tflops'), '7.1f')} "
              f"TFLOP/s {c.get('excluded') or ''} {c.get('kernels') or ''}")
PYEOF
tail -4 "$OUT/gpu_tests.log"
cat "$OUT/summary.txt"
