#!/bin/bash
# Runs 5 and 6 (H200): the kernel's own duration (CUPTI through torch.profiler) in the harness's
# runs, beside their event times (benchmarks/probes/kernel_vs_event.py). Run 5: 16x4096x4096, two
# rounds; run 6 (RUN=r6): both shapes, three rounds.
RUN=${RUN:-r5}; mkdir -p $OUT/$RUN && export PYTHONPATH=$PWD/src PYTHONUNBUFFERED=1 GEMMLAB_CACHE_DIR=/tmp/glc
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $OUT/$RUN/device.txt && date -u >> $OUT/$RUN/device.txt
if [ $RUN = r5 ]; then S="16,4096,4096"; N=2; else S="16,4096,4096;16,8192,8192"; N=3; fi
timeout 150 python3 benchmarks/probes/kernel_vs_event.py --shapes "$S" --rounds $N --json $OUT/$RUN/kernel_vs_event.json 2>&1 | grep -v -i "warn" | tee $OUT/$RUN/kernel_vs_event.txt
