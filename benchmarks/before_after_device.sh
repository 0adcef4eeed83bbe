#!/usr/bin/env bash
# The same ladder, lesson and shape-map runs with two versions of gemmlab on one GPU, interleaved
# (odd rounds: old then new; even rounds: new then old) so that clock and power drift falls on both alike.
#
#   OLD_SRC=.base_src OUT=out [ROUNDS=2] [BF16=1] bash benchmarks/before_after_device.sh
#
# BF16=1 adds the BF16 tensor-core ladder at 4096 (Hopper).
# OLD_SRC: a folder holding the old gemmlab package (e.g. `git archive <commit> src/gemmlab`,
# unpacked, src/ stripped); the new one is this checkout's src/. Each run writes its --out JSON to
# $OUT as <what>_<old|new>_<round>.json; compare them on any machine with
#   gemmlab compare $OUT/ladder_old_1.json $OUT/ladder_new_1.json
#   python benchmarks/before_after_compare.py $OUT
# Flags that were renamed between the versions are given in each version's spelling.
set -uo pipefail
OUT=${OUT:?set OUT to a folder for the results}
OLD=${OLD_SRC:?set OLD_SRC to the folder holding the old gemmlab package}
PY=${PY:-python3}
export PYTHONUNBUFFERED=1
mkdir -p "$OUT"

run() {  # run WHO ROUND NAME ARGS...: one command of one version, its JSON to $OUT
  local who=$1 round=$2 name=$3; shift 3
  local src=src; [ "$who" = old ] && src=$OLD
  echo "== round $round $who: gemmlab $*"
  local t0=$SECONDS
  PYTHONPATH=$src GEMMLAB_CACHE_DIR=/tmp/gemmlab-cache-$who timeout 240 \
    $PY -m gemmlab "$@" --no-store --out "$OUT/${name}_${who}_${round}.json" --force > "$OUT/${name}_${who}_${round}.txt" 2>&1
  echo "   exit $? in $((SECONDS - t0)) s"
}

for round in $(seq 1 "${ROUNDS:-2}"); do
  order="old new"; [ $((round % 2)) = 0 ] && order="new old"
  for who in $order; do run "$who" "$round" ladder ladder --size 2048; done
  if [ "${BF16:-0}" = 1 ]; then
    for who in $order; do run "$who" "$round" bf16 ladder --dtype bf16 --size 4096; done
  fi
  for who in $order; do run "$who" "$round" lesson lesson tiling; done
  for who in $order; do
    if [ "$who" = old ]; then run old "$round" shapes shapes --grid quick
    else run new "$round" shapes shapes --preset quick; fi
  done
done
