#!/bin/bash
# the committed bf16 rule past 16 tokens (SWAP_TILE_M) against the 64-row tiles, same run: the grid's 128x1600x6400 and 32 / 64 tokens between
export PYTHONPATH=$PWD/src:$PWD/tests PYTHONUNBUFFERED=1 GEMMLAB_CACHE_DIR=/tmp/glc
timeout 150 python benchmarks/tc_dispatch_compare.py --dtype bf16 --shapes "128,1600,6400;64,1600,6400;32,1600,6400" --only "64x64 S=1,64x128 S=1" --rounds 3 --rep-ms 10 --json $OUT/bf16_tile_m.json > $OUT/bf16_tile_m.txt 2>&1
grep -E "^[0-9]|  [a-z0-9]" $OUT/bf16_tile_m.txt | sed 's/\[cuBLAS.*\]//' | cut -c1-120
