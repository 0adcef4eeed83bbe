#!/usr/bin/env bash
# The BF16 tensor-core ladder on a GPU (issue #10): its GPU tests, then `gemmlab ladder --dtype
# bf16` at 4096^3 and 8192^3 with cuBLAS BF16 (cublasGemmEx, bf16 in/out, CUBLAS_COMPUTE_32F)
# timed in the same run, then a short table. Five files land in OUT: device.txt, gpu_tests.log,
# ladder_bf16_4096.json, ladder_bf16_8192.json, summary.txt. About 2-3 minutes on an H100.
# Usage, from the repository root on the device machine:  bash benchmarks/run_bf16_device.sh OUT
set -uo pipefail
OUT="${1:?usage: run_bf16_device.sh OUT}"
mkdir -p "$OUT"
export PYTHONPATH="$PWD/src" PYTHONUNBUFFERED=1
W=$(mktemp -d /tmp/gemmlab-bf16.XXXXXX)
export GEMMLAB_DB="$W/runs.sqlite" GEMMLAB_CACHE_DIR="$W/cache"
PY=${PYTHON:-python3}

{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,compute_cap --format=csv
  date -u; git rev-parse HEAD 2>/dev/null; } > "$OUT/device.txt" 2>&1

# GPU tests of the tensor-core ladder, plus the CPU tests of the same pieces (cheap, same env).
timeout 240 $PY -m pytest -q -rs -p no:cacheprovider tests/gpu/test_bf16_gpu.py \
  tests/test_bf16_numerics.py tests/test_bf16_ladder_cpu.py tests/test_cublas_bf16.py \
  > "$OUT/gpu_tests.log" 2>&1
echo "pytest exit $?" >> "$OUT/gpu_tests.log"

for n in 4096 8192; do
  timeout 180 $PY -m gemmlab ladder --dtype bf16 --size "$n" --rep-ms 150 \
    --out "$OUT/ladder_bf16_$n.json" --force > "$W/ladder_$n.txt" 2> "$W/ladder_$n.err"
  echo "ladder $n exit $?" >> "$OUT/gpu_tests.log"
  tail -5 "$W/ladder_$n.err" >> "$OUT/gpu_tests.log"
done

$PY - "$OUT" > "$OUT/summary.txt" 2>&1 <<'PYEOF'
import json, pathlib, sys
out = pathlib.Path(sys.argv[1])
print(f"{'size':>5} {'kernel':<22} {'TFLOP/s':>8} {'% cuBLAS':>9} {'% peak':>7} {'rel err':>9}  check")
for n in (4096, 8192):
    p = out / f"ladder_bf16_{n}.json"
    if not p.exists():
        print(f"{n:>5} (no result: see gpu_tests.log)")
        continue
    res = json.loads(p.read_text())
    for r in res["rows"]:
        f = lambda v, fmt: "-" if v is None else format(v, fmt)
        print(f"{n:>5} {r['kernel']:<22} {r['gflops'] / 1e3:>8.1f} {f(r.get('pct_of_cublas'), '.1f'):>9} "
              f"{f(r.get('pct_of_peak'), '.1f'):>7} {f(r['check'].get('rel_err'), '.2e'):>9}  "
              f"{'ok' if r['correct'] else 'FAIL: ' + r['check']['reason']}")
    for s in res.get("skipped") or []:
        print(f"{n:>5} skipped: {s['reason']}")
    print(f"      reference: {[r for r in res['rows'] if r['is_reference']][0]['info']['summary']}"
          if any(r["is_reference"] for r in res["rows"]) else "      (no cuBLAS row)")
PYEOF
tail -3 "$OUT/gpu_tests.log"
cat "$OUT/summary.txt"
