#!/bin/bash
# Run 6 (same warm machine as run 5; tma.py with run 5's environment override, not committed):
# DRAM bytes and L2 sector reads of the rules' bf16 plans under each promotion, Nsight Compute
# at its default cache control (flushed before each pass).
export PYTHONPATH=$PWD/src:$PWD/tests GEMMLAB_CACHE_DIR=/tmp/glc; NCU=$(command -v ncu || echo /opt/nvidia/nsight-compute/2025.3.1/ncu); mkdir -p $OUT/p; for s in 16,4096,14336 128,28672,4096; do for pr in L2_256B L2_128B; do GEMMLAB_TMA_L2_PROMOTION=$pr timeout 60 $NCU --metrics gpu__time_duration.sum,dram__bytes_read.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_read_lookup_miss.sum,lts__t_sector_hit_rate.pct --profile-from-start off --launch-skip 2 --launch-count 1 -k regex:gemmlab_dispatch python3 benchmarks/tc_plan_once.py --dtype bf16 --shape $s --runs 3 > $OUT/p/${pr}_${s//,/x}.txt 2>&1; echo "$pr $s rc $?"; grep -E "duration|bytes_read|sectors|hit_rate" $OUT/p/${pr}_${s//,/x}.txt; done; done
