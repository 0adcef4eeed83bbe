#!/usr/bin/env bash
# Run 4: compute-sanitizer initcheck, racecheck and synccheck over the swapped decode kernel's
# cases (--match swap: every token tile, m64n8 included, and forced token tiles).
set -u
export PYTHONPATH=src PYTHONUNBUFFERED=1
R=$OUT/r4; mkdir -p $R
CS=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
for spec in initcheck:initcheck racecheck:racecheck synccheck:racecheck; do
  IFS=: read -r tool set_ <<< "$spec"; t0=$(date +%s)
  timeout 150 "$CS" --tool $tool --error-exitcode 3 --print-limit 20 --report-api-errors no \
    python benchmarks/sanitize_dispatch_tc.py --set $set_ --match swap > $R/$tool.log 2>&1
  echo "exit $? after $(( $(date +%s) - t0 )) s" >> $R/$tool.log; echo "== $tool"; tail -3 $R/$tool.log
done
