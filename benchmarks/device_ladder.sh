#!/usr/bin/env bash
# The recorded H100 results: GPU tests, then the ladder at the given sizes (default 1024 2048 4096),
# optionally the first article's sweep and the ceilings. Everything lands in $OUT/results.tgz
# (ladder JSON per size, the SQLite store, the autotune cache, logs).
# Usage on the device machine, from the repository root:
#   OUT=/some/dir bash benchmarks/device_ladder.sh [--tests] [--sweep] [--ceilings] [SIZE ...]
set -uo pipefail
export PYTHONPATH="$PWD/src" PYTHONUNBUFFERED=1
W=/tmp/gemmlab-results; mkdir -p "$W"
export GEMMLAB_DB="$W/runs.sqlite" GEMMLAB_CACHE_DIR="$W/cache"
tests=0; sweep=0; ceilings=0; sizes=()
for a in "$@"; do
  case "$a" in --tests) tests=1;; --sweep) sweep=1;; --ceilings) ceilings=1;; *) sizes+=("$a");; esac
done
[ ${#sizes[@]} -eq 0 ] && sizes=(1024 2048 4096)
{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv; date -u; } > "$W/device.txt" 2>&1
if [ $tests = 1 ]; then
  python3 -m pytest -q tests/gpu -p no:cacheprovider 2>&1 | tail -40 > "$W/gpu_tests.log"
fi
for n in "${sizes[@]}"; do
  python3 -m gemmlab ladder --size "$n" --out "$W/ladder_$n.json" --force 2>"$W/ladder_$n.err" | tee "$W/ladder_$n.txt"
done
[ $sweep = 1 ] && python3 -m gemmlab sweep --size 2048 --out "$W/sweep_2048.json" --force 2>"$W/sweep.err" | tee "$W/sweep_2048.txt"
[ $ceilings = 1 ] && python3 -m gemmlab ceilings --measure --json > "$W/ceilings.json" 2>"$W/ceilings.err"
cp -r ~/.local/share/gemmlab/ceilings.json "$W/ceilings_store.json" 2>/dev/null
tar czf "$OUT/results.tgz" -C "$W" .
tail -5 "$W/gpu_tests.log" 2>/dev/null
