#!/bin/bash
# H200 (needs_h200): the grid's 22 decode shapes and 128x1600x6400, both dtypes, committed tree
export PYTHONPATH=$PWD/src:$PWD/tests PYTHONUNBUFFERED=1 GEMMLAB_CACHE_DIR=/tmp/glc
S="1,6144,4096;16,6144,4096;1,4096,4096;16,4096,4096;1,28672,4096;16,28672,4096;1,4096,14336;16,4096,14336;1,10240,8192;16,10240,8192;1,8192,8192;16,8192,8192;1,28672,8192;16,28672,8192;1,8192,28672;16,8192,28672;1,11008,4096;16,11008,4096;1,4800,1600;16,4800,1600;1,1600,6400;16,1600,6400;128,1600,6400"
R=$OUT/h200; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv > $R/device.txt; date -u >> $R/device.txt
for dt in bf16 fp8; do
  COLUMNS=220 timeout 115 python -m gemmlab shapes --dtype $dt --shapes "$S" --db $R/shapes.sqlite --out $R/decode_${dt}_h200.json --force > $R/decode_${dt}_h200.txt 2>&1
  echo "$dt exit $?"; grep -E "geometric|meet" $R/decode_${dt}_h200.txt
done
tar cJf $OUT/h200.tar.xz -C $OUT h200
