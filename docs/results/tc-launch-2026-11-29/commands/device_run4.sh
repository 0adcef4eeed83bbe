#!/bin/bash
# Run 4 (H200): tensor maps by value against a map in global memory (benchmarks/probes/tma_map_param.py).
mkdir -p $OUT/r4 && export PYTHONPATH=$PWD/src PYTHONUNBUFFERED=1 && nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $OUT/r4/device.txt && date -u >> $OUT/r4/device.txt && timeout 200 python3 benchmarks/probes/tma_map_param.py --rounds 3 --json $OUT/r4/tma_map_param.json 2>&1 | grep -v -i warn | tee $OUT/r4/tma_map_param.txt
