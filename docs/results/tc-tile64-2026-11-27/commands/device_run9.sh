#!/usr/bin/env bash
# session scratch: the shape maps bf16 + fp8 with the final rules (fp8 128 x 160 at 9+ waves too), H100
set -u
export PYTHONPATH=$PWD/src:$PWD/tests PYTHONUNBUFFERED=1 GEMMLAB_CACHE_DIR=/tmp/glc
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
R=$OUT/map
SHAPES_TIMEOUT=280 bash benchmarks/run_shapes_tc_device.sh $R bf16 fp8 > /dev/null 2>&1; el "maps"
python3 benchmarks/shape_map_bars.py $R/*.json 2>&1 | tail -n 12
for f in $R/*.json; do xz -9 $f; done; xz -9 $R/shapes.sqlite
tar czf $OUT/map.tgz -C $OUT map; rm -rf $R
