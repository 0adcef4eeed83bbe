#!/usr/bin/env bash
# session scratch: why bf16 128x160 (64-byte swizzle B) is slow - ncu at 4096^3 beside 128x256c1
set -u
R=$OUT/r5; mkdir -p $R
export PYTHONPATH=$PWD/src:$PWD/tests PYTHONUNBUFFERED=1 GEMMLAB_CACHE_DIR=/tmp/glc
NCU=$(command -v ncu || echo /opt/nvidia/nsight-compute/2025.3.1/ncu)
for cfg in 128x160c1 128x256c1 128x128c1; do
  timeout 150 $NCU --set full -k regex:gemmlab_dispatch --launch-skip 2 --launch-count 1 -o $R/$cfg -f \
    python3 benchmarks/tc_plan_once.py --dtype bf16 --shape 4096,4096,4096 --policy "{\"config\": \"$cfg\"}" > $R/$cfg.log 2>&1
  echo "$cfg ncu exit $?"
  $NCU -i $R/$cfg.ncu-rep --csv --page details > $R/${cfg}_details.csv 2>/dev/null
  $NCU -i $R/$cfg.ncu-rep --csv --page raw > $R/${cfg}_raw.csv 2>/dev/null
  python3 benchmarks/ncu_brief.py $R/${cfg}_details.csv | cut -c1-150
  python3 benchmarks/ncu_brief.py --stalls $R/${cfg}_raw.csv | cut -c1-150
  python3 - $R/${cfg}_raw.csv <<'PYEOF'
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
head, units, vals = rows[0], rows[1], rows[2]
for h, u, v in zip(head, units, vals):
    if any(k in h for k in ("pipe_tensor_op_gmma", "bank_conflict", "shared_op_ld", "tma", "l1tex__data_pipe_lsu_wavefronts_mem_shared", "sm__throughput.avg.pct", "dram__throughput.avg.pct", "smsp__inst_executed.sum ")):
        print(f"  {h} = {v} {u}")
PYEOF
done
tar czf $OUT/r5.tgz -C $OUT r5 --exclude='*.csv'
