#!/usr/bin/env bash
# session scratch, not committed: shape maps bf16+fp8 and the full tc sanitizer
set -u
export PYTHONPATH=$PWD/src:$PWD/tests PYTHONUNBUFFERED=1 GEMMLAB_CACHE_DIR=/tmp/glc
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
SHAPES_TIMEOUT=${ST:-280} bash benchmarks/run_shapes_tc_device.sh $OUT/map bf16 fp8 > /dev/null 2>&1; el "maps"
python3 benchmarks/shape_map_bars.py $OUT/map/*.json 2>&1 | tail -n 30
for f in $OUT/map/*.json; do xz -9 $f; done; xz -9 $OUT/map/shapes.sqlite
tail -n 3 $OUT/map/*.txt
[ -n "${SAN:-}" ] && { timeout 150 bash benchmarks/run_sanitizer_device.sh $OUT/san tc > /dev/null 2>&1; el "san"; cat $OUT/san/summary.txt; }
tar czf $OUT/map.tgz -C $OUT map; [ -d $OUT/san ] && tar czf $OUT/san.tgz -C $OUT san; rm -rf $OUT/map $OUT/san
ls -la $OUT
