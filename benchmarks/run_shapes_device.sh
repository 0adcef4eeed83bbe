#!/usr/bin/env bash
# The shape map on the device machine (issue #12).
#
#   PYTHONPATH=src benchmarks/run_shapes_device.sh OUT
#
# Run from the repository root with python3 that has cupy. In order:
#   1. the shape-map GPU tests                                  -> OUT/gpu_tests.log
#   2. `gemmlab shapes` on the default grid (autotuned rung),
#      stored in an append-only store                            -> OUT/shapes.sqlite
#      and the run as JSON                                       -> OUT/shapes_<gpu>.json
#   3. a short table (shape, class, what ran, % of cuBLAS, verdict), printed last
# Everything printed also goes to OUT/run.log. At most 4 files in OUT, no sub-folders.
# Budget: < 4 minutes on an H100. Kernels and autotuning records are cached under /tmp for the
# duration of the run (the tests compile what the map then reuses); the first tuning of each size
# bucket happens inside step 2 and is most of its time. SHAPES_RUNG=double_buffered skips tuning.
# Afterwards, on any machine: gemmlab report OUT/shapes.sqlite --out shapes.html
set -uo pipefail
OUT=${1:?usage: benchmarks/run_shapes_device.sh OUT}
mkdir -p "$OUT"
export PYTHONPATH=${PYTHONPATH:-src} PYTHONUNBUFFERED=1
export GEMMLAB_CACHE_DIR=${GEMMLAB_CACHE_DIR:-/tmp/gemmlab-shapes-cache}
PY=${PYTHON:-python3}
RUNG=${SHAPES_RUNG:-autotuned}
DB="$OUT/shapes.sqlite"
LOG="$OUT/run.log"
START=$(date +%s)
exec > >(tee -a "$LOG") 2>&1

GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
echo "== $(date -u +%FT%TZ) shape map on ${GPU:-unknown GPU}, rung $RUNG"
echo "== 1/3 GPU tests"
timeout 100 $PY -m pytest -q -p no:cacheprovider tests/gpu/test_shapes_gpu.py > "$OUT/gpu_tests.log" 2>&1
echo "pytest exit $? ($(tail -1 "$OUT/gpu_tests.log")) after $(( $(date +%s) - START )) s"

echo "== 2/3 gemmlab shapes --preset default"
KEY=$(echo "${GPU:-gpu}" | tr 'A-Z' 'a-z' | sed -E 's/[^a-z0-9]+/_/g; s/^_+|_+$//g')
JSON="$OUT/shapes_${KEY:-gpu}.json"
t0=$(date +%s)
COLUMNS=200 timeout $(( 230 - (t0 - START) > 60 ? 230 - (t0 - START) : 60 )) \
  $PY -m gemmlab shapes --preset default --rung "$RUNG" --db "$DB" --out "$JSON" --force
echo "gemmlab shapes: exit $? in $(( $(date +%s) - t0 )) s"

echo "== 3/3 summary"
$PY - "$JSON" <<'PYEOF'
import json, sys
from pathlib import Path
from gemmlab.shapes import shapemap as S
p = Path(sys.argv[1])
if not p.exists():
    sys.exit(f"{p} was not written (see run.log above)")
res = json.loads(p.read_text())
m = S.from_result(res)
print(f"Shape map on {res['gpu']}: {res['rung']} vs cuBLAS FP32 (TF32 off), grid {res['grid']}, run {res.get('run_id')}")
print(f"{'shape':<17} {'class':<17} {'ran':<52} {'% cuBLAS':>9} {'% copy':>7}  verdict")
for q in m.points:
    copy = f"{q.pct_of_copy:.0f}" if S.is_skinny(q.cls) and q.pct_of_copy is not None else ""
    print(f"{q.shape.name:<17} {q.cls:<17} {S.ran_text(q)[:52]:<52} {S.pct_text(q.pct):>9} {copy:>7}  {q.verdict}")
for line in S.summary_lines(m):
    print(line)
PYEOF
echo "== done in $(( $(date +%s) - START )) s; files: $(ls "$OUT" | tr '\n' ' ')"
