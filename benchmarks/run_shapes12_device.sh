#!/usr/bin/env bash
# Issue #12 on the device machine: the dispatch rung's GPU tests, the shape map with it, the
# double_buffered baseline in the same session, and the alternatives the dispatch rules choose
# between (padded copies vs 4-byte loads, split-K or not, tile shape, skinny kernels or tiles).
#
#   PYTHONPATH=src bash benchmarks/run_shapes12_device.sh OUT
#   SKIP_BASELINE=1 ... (step 3 left out: the double_buffered baseline is already recorded)
#
# Run from the repository root with python3 that has cupy. In order (each step under `timeout`; a
# failure is logged and the next step still runs):
#   1. GPU tests: tests/gpu/test_dispatch_gpu.py, the dispatch rung in test_kernels_correct.py,
#      tests/gpu/test_shapes_gpu.py                                      -> OUT/gpu_tests.log
#   2. gemmlab shapes --preset default --rung dispatch                      -> OUT/shapes.sqlite (run 1),
#                                                                           OUT/shapes_dispatch.json
#   3. gemmlab shapes --preset default --rung double_buffered (baseline)    -> OUT/shapes.sqlite (run 2),
#                                                                           OUT/shapes_baseline.json
#   4. benchmarks/dispatch_compare.py (alternatives per shape, padded vs 4-byte verdicts)
#                                                                         -> OUT/dispatch_compare.json
#   5. a side-by-side table: dispatch vs baseline vs cuBLAS per shape     -> OUT/summary.txt
# Plus OUT/device.txt (nvidia-smi) and OUT/run.log (everything printed). 7 files, no sub-folders.
# Budget: about 8 minutes on an H100 (the first compile of the ~30 dispatch kernels happens in
# step 1; kernels are cached under /tmp for the later steps).
# Afterwards, on any machine: gemmlab report OUT/shapes.sqlite --out shapes.html (newest run: the
# baseline; gemmlab runs 1 --db OUT/shapes.sqlite shows the dispatch map).
set -uo pipefail
OUT=${1:?usage: benchmarks/run_shapes12_device.sh OUT}
mkdir -p "$OUT"
export PYTHONPATH=${PYTHONPATH:-src} PYTHONUNBUFFERED=1 COLUMNS=200
export GEMMLAB_CACHE_DIR=${GEMMLAB_CACHE_DIR:-/tmp/gemmlab-shapes12-cache}
PY=${PYTHON:-python3}
DB="$OUT/shapes.sqlite"
LOG="$OUT/run.log"
START=$(date +%s)
exec > >(tee -a "$LOG") 2>&1
elapsed() { echo $(( $(date +%s) - START )); }

GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
nvidia-smi > "$OUT/device.txt" 2>&1 || echo "nvidia-smi failed" > "$OUT/device.txt"
# The commit, and how many paths differ from it: a copied working tree may carry a stale .git.
echo "== $(date -u +%FT%TZ) issue #12 dispatch rung on ${GPU:-unknown GPU}, git $(git rev-parse --short HEAD 2>/dev/null) ($(git status --porcelain 2>/dev/null | wc -l) paths differ from it)"

echo "== 0/5 compile every dispatch kernel with nvcc, in parallel, into the kernel cache"
$PY - <<'PYEOF'
import concurrent.futures as cf, os, time
from gemmlab.kernels import paths
from gemmlab.runtime import device
from gemmlab.runtime.compile import compile_cubin, get_compiler
from gemmlab.runtime.dispatch_gemm import default_backend
t0, arch, backend = time.time(), device.info().arch, default_backend()
with cf.ThreadPoolExecutor(os.cpu_count() or 4) as ex:
    list(ex.map(lambda k: compile_cubin(paths.translation_unit([k]), arch=arch,
                                        compiler=get_compiler(backend), name=k.kernel),
                paths.all_path_kernels()))
print(f"{len(paths.all_path_kernels())} kernels for {arch} with {backend} in {time.time() - t0:.0f} s")
PYEOF
echo "precompile: exit $? at $(elapsed) s"

echo "== 1/5 GPU tests"
timeout 180 $PY -m pytest -q -p no:cacheprovider tests/gpu/test_dispatch_gpu.py > "$OUT/gpu_tests.log" 2>&1
echo "test_dispatch_gpu.py: exit $? ($(tail -1 "$OUT/gpu_tests.log")) at $(elapsed) s"
timeout 60 $PY -m pytest -q -p no:cacheprovider tests/gpu/test_kernels_correct.py -k "dispatch" >> "$OUT/gpu_tests.log" 2>&1
echo "test_kernels_correct.py -k dispatch: exit $? ($(tail -1 "$OUT/gpu_tests.log")) at $(elapsed) s"
timeout 60 $PY -m pytest -q -p no:cacheprovider tests/gpu/test_shapes_gpu.py >> "$OUT/gpu_tests.log" 2>&1
echo "test_shapes_gpu.py: exit $? ($(tail -1 "$OUT/gpu_tests.log")) at $(elapsed) s"

echo "== 2/5 gemmlab shapes --preset default --rung dispatch"
timeout 100 $PY -m gemmlab shapes --preset default --rung dispatch --db "$DB" --out "$OUT/shapes_dispatch.json" --force
echo "gemmlab shapes (dispatch): exit $? at $(elapsed) s"

if [ -z "${SKIP_BASELINE:-}" ]; then
  echo "== 3/5 gemmlab shapes --preset default --rung double_buffered (baseline)"
  timeout 40 $PY -m gemmlab shapes --preset default --rung double_buffered --db "$DB" --out "$OUT/shapes_baseline.json" --force
  echo "gemmlab shapes (baseline): exit $? at $(elapsed) s"
else
  echo "== 3/5 baseline skipped (SKIP_BASELINE set)"
fi

echo "== 4/5 dispatch alternatives (benchmarks/dispatch_compare.py)"
LEFT=$(( 400 - $(elapsed) ))
timeout $(( LEFT > 60 ? LEFT : 60 )) $PY benchmarks/dispatch_compare.py --rep-ms 30 --json "$OUT/dispatch_compare.json"
echo "dispatch_compare: exit $? at $(elapsed) s"

echo "== 5/5 summary"
$PY - "$OUT" <<'PYEOF' | tee "$OUT/summary.txt"
import json, sys
from pathlib import Path
from gemmlab.shapes import shapemap as S
out = Path(sys.argv[1])
maps = {}
for key in ("dispatch", "baseline"):
    p = out / f"shapes_{key}.json"
    if p.exists():
        maps[key] = S.from_result(json.loads(p.read_text()))
    else:
        print(f"{p.name} was not written (see run.log)")
if "dispatch" not in maps:
    sys.exit(0)
d = maps["dispatch"]
base = {p.shape.dims: p for p in maps["baseline"].points} if "baseline" in maps else {}
print(f"Shape map on {d.gpu}: dispatch vs cuBLAS FP32 (TF32 off); baseline = double_buffered, same session")
print(f"{'shape':<17} {'class':<17} {'dispatch %':>10} {'base %':>7} {'% copy':>7}  {'verdict':<12} ran")
for q in d.points:
    b = base.get(q.shape.dims)
    copy = f"{q.pct_of_copy:.0f}" if S.is_skinny(q.cls) and q.pct_of_copy is not None else ""
    print(f"{q.shape.name:<17} {q.cls:<17} {S.pct_text(q.pct):>10} {S.pct_text(b.pct) if b else '':>7} {copy:>7}  "
          f"{q.verdict:<12} {S.ran_text(q)}")
for line in S.summary_lines(d):
    print(line)
cmp = out / "dispatch_compare.json"
if cmp.exists():
    for line in json.loads(cmp.read_text()).get("padded_vs_scalar", []):
        print(line)
PYEOF
echo "== done in $(elapsed) s; files: $(ls "$OUT" | tr '\n' ' ')"
