#!/usr/bin/env bash
# The fourth seed article's lessons on the device machine (issue #11).
#
#   PYTHONPATH=src benchmarks/run_lessons_device.sh OUT
#
# Run from the repository root, with python3 that has cupy (and torch for NVTX if CuPy lacks it)
# and ncu on PATH. In order:
#   1. the lesson GPU tests                        -> OUT/gpu_tests.log
#   2. every lesson with its default sweep, stored -> OUT/lessons.sqlite  (append-only store)
#   3. all runs of this GPU in one JSON file       -> OUT/lessons_<gpu>.json
#   4. with LESSONS_PROFILE=1 (and time left): every lesson again with --profile at its default point,
#      stored as further runs; the .ncu-rep files go to gemmlab-profiles/ (not OUT)
#   5. a short summary table, printed last         -> OUT/summary.txt
# Everything printed also goes to OUT/run.log. At most 5 files in OUT, no sub-folders.
# Budget: ~6 minutes on an H100 (timing budgets are cut to --warmup-ms 10 --rep-ms 60).
set -uo pipefail
OUT=${1:?usage: benchmarks/run_lessons_device.sh OUT}
mkdir -p "$OUT"
export PYTHONPATH=${PYTHONPATH:-src}
PY=${PYTHON:-python3}
DB="$OUT/lessons.sqlite"
LOG="$OUT/run.log"
START=$(date +%s)
exec > >(tee -a "$LOG") 2>&1

echo "== $(date -u +%FT%TZ) lessons on $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)"
echo "== 1/5 GPU tests"
timeout 150 $PY -m pytest -q -p no:cacheprovider tests/gpu/test_lessons_gpu.py > "$OUT/gpu_tests.log" 2>&1
echo "pytest exit $? ($(tail -1 "$OUT/gpu_tests.log"))"

echo "== 2/5 lessons (default sweeps)"
for L in tiling atomics coalescing bank_conflicts occupancy fusion; do
  t0=$(date +%s)
  COLUMNS=160 timeout 120 $PY -m gemmlab lesson "$L" --db "$DB" --warmup-ms 10 --rep-ms 60
  echo "$L: exit $? in $(( $(date +%s) - t0 )) s"
done

if [ "${LESSONS_PROFILE:-0}" = "1" ]; then
  echo "== 4/5 profiles (default point of each lesson)"
  for L in tiling atomics coalescing bank_conflicts occupancy fusion; do
    if [ $(( $(date +%s) - START )) -gt 270 ]; then echo "$L: skipped (time budget)"; continue; fi
    P=$($PY -c "from gemmlab.lessons import registry as r; p=r.get('$L').default_point(); print(('--size %d' % p.size) if p.name=='size' else ('--size %d --sweep %s' % (p.size, p.value)))")
    timeout 150 $PY -m gemmlab lesson "$L" $P --profile --db "$DB" --warmup-ms 10 --rep-ms 60 | tail -25
    echo "$L --profile: exit ${PIPESTATUS[0]}"
  done
fi

echo "== 3/5 JSON and 5/5 summary"
$PY - "$DB" "$OUT" <<'PYEOF'
import json, re, sys
from pathlib import Path
from gemmlab.store import Store
from gemmlab.report.lessons import latest_by_lesson, point_label
db, out = Path(sys.argv[1]), Path(sys.argv[2])
with Store(db, create=False) as s:
    runs = [s.load_run(r.id) for r in reversed(s.list_runs()) if r.command == "lesson"]
if not runs:
    sys.exit("no lesson runs were stored")
gpu = runs[-1]["gpu"] or "gpu"
key = re.sub(r"[^a-z0-9]+", "_", gpu.lower()).strip("_")
(out / f"lessons_{key}.json").write_text(json.dumps({"format": "gemmlab-lessons", "gpu": gpu, "runs": runs}, indent=1, allow_nan=False))
lines = [f"Lessons on {gpu} (newest run of each; {len(runs)} runs in {db.name})", ""]
lines.append(f"{'lesson':<15} {'point':<24} {'comparison':<34} verdict")
for name, run in latest_by_lesson(runs).items():
    bad = [r["kernel"] for r in run["rows"] if not r["correct"]]
    for v in run.get("verdicts") or []:
        lines.append(f"{name:<15} {v['point']:<24} {v['baseline'] + ' -> ' + v['optimised']:<34} {v['text']}")
    if bad:
        lines.append(f"{name:<15} WRONG: {', '.join(bad)}")
lines.append("")
for name, run in latest_by_lesson(runs).items():
    lines.append(f"- {(run.get('headline') or {}).get('sentence', name + ': no verdict')}")
text = "\n".join(lines) + "\n"
(out / "summary.txt").write_text(text)
print(text)
PYEOF
echo "== done in $(( $(date +%s) - START )) s; files: $(ls "$OUT" | tr '\n' ' ')"
