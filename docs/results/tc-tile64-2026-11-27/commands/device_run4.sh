#!/usr/bin/env bash
# session scratch: compute-sanitizer on the 64 x 64 instantiations, then the shape maps bf16 + fp8
set -u
export PYTHONPATH=$PWD/src:$PWD/tests PYTHONUNBUFFERED=1 GEMMLAB_CACHE_DIR=/tmp/glc
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
MATCH=64x64 timeout 100 bash benchmarks/run_sanitizer_device.sh $OUT/san tc > /dev/null 2>&1; el "san $?"; cat $OUT/san/summary.txt
SHAPES_TIMEOUT=${ST:-300} bash benchmarks/run_shapes_tc_device.sh $OUT/map bf16 fp8 > /dev/null 2>&1; el "maps"
python3 benchmarks/shape_map_bars.py $OUT/map/*.json 2>&1 | tail -n 30
for f in $OUT/map/*.json; do xz -9 $f; done; xz -9 $OUT/map/shapes.sqlite
tar czf $OUT/map.tgz -C $OUT map; tar czf $OUT/san.tgz -C $OUT san; rm -rf $OUT/map $OUT/san
ls -la $OUT
