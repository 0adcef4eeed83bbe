#!/usr/bin/env bash
# `gemmlab ladder --dtype bf16 --profile` at 4096^3 on an H100 (issue #10): every rung timed
# against the best cuBLAS BF16, then profiled with the analyzer's ncu collection, with the
# per-rung diagnosis and "what actually mattered". Files in OUT: device.txt, ladder_profile.txt
# (the tables), ladder_bf16_4096_profile.json, reports.tar.xz (the .ncu-rep files, written under the
# scratch directory's gemmlab-profiles/), stderr.txt.
# Usage, from the repository root on the device machine:  bash benchmarks/run_bf16_profile_device.sh OUT
set -uo pipefail
OUT="${1:?usage: run_bf16_profile_device.sh OUT}"
mkdir -p "$OUT"
export PYTHONPATH="$PWD/src" PYTHONUNBUFFERED=1 COLUMNS=200
W=$(mktemp -d /tmp/gemmlab-bf16prof.XXXXXX)
export GEMMLAB_DB="$W/runs.sqlite" GEMMLAB_CACHE_DIR="$W/cache"
PY=${PYTHON:-python3}
{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,compute_cap --format=csv
  date -u; ncu --version | tail -1; } > "$OUT/device.txt" 2>&1
cd "$W" && timeout 420 $PY -m gemmlab ladder --dtype bf16 --size 4096 --rep-ms 100 --profile \
  --out "$OUT/ladder_bf16_4096_profile.json" --force > "$OUT/ladder_profile.txt" 2> "$OUT/stderr.txt"
echo "ladder --profile exit $?" >> "$OUT/stderr.txt"
find "$W" -name "*.ncu-rep" -newer "$OUT/device.txt" 2>/dev/null | head -20 > "$W/reps.txt"
tar -cJf "$OUT/reports.tar.xz" -T "$W/reps.txt" 2>> "$OUT/stderr.txt"
