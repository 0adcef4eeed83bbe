#!/usr/bin/env bash
set -u
R=$OUT/r4; mkdir -p $R
export PYTHONPATH=$PWD/src PYTHONUNBUFFERED=1
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv,noheader; date -u; } > $R/device.txt 2>&1
timeout 400 python3 benchmarks/torch_ops_overhead.py --json $R/overhead.json > $R/overhead.txt 2>&1; echo "rc $?" >> $R/overhead.txt
cat $R/overhead.txt
