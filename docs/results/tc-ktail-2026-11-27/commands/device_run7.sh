#!/usr/bin/env bash
# session scratch (H100): where our fp8 ping-pong kernel's warps wait - gemmlab analyze (hot source
# lines from the -lineinfo samples) on the 2048x11008x4096 capture of run 3, and a fresh capture of
# 128x128pp at 4096^3
set -u
R=$OUT/r7; mkdir -p $R
export PYTHONPATH=$PWD/src:$PWD/tests:/opt/nvidia/nsight-compute/2025.3.1/extras/python PYTHONUNBUFFERED=1 GEMMLAB_CACHE_DIR=/tmp/glc
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv > $R/device.txt; date -u >> $R/device.txt
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
NCU=$(command -v ncu || echo /opt/nvidia/nsight-compute/2025.3.1/ncu)
timeout 60 $NCU --set full --import-source yes --profile-from-start off --launch-count 1 -o $R/f4096_pp -f \
  python3 benchmarks/tc_plan_once.py --dtype fp8 --shape 4096,4096,4096 --runs 2 --policy '{"config": "128x128pp"}' > $R/f4096_pp.log 2>&1; el "ncu $?"
for f in scratch_reps/f2048x11008_rule.ncu-rep scratch_reps/f4096_rule.ncu-rep $R/f4096_pp.ncu-rep scratch_reps/f2048x11008_cublas.ncu-rep; do
  b=$(basename $f .ncu-rep)
  COLUMNS=200 timeout 60 python3 -m gemmlab analyze $f --no-gemm > $R/analyze_$b.txt 2>&1; el "analyze $b $?"
  COLUMNS=200 timeout 60 python3 -m gemmlab analyze $f --json > $R/analyze_$b.json 2>/dev/null
done
python3 - > $R/stalls.txt 2>&1 <<'PY'
import ncu_report, glob
for f in sorted(glob.glob("scratch_reps/*.ncu-rep")) + sorted(glob.glob("$R/*.ncu-rep".replace("$R", __import__("os").environ["OUT"] + "/r7"))):
    ctx = ncu_report.load_report(f); a = ctx.range_by_idx(0).action_by_idx(0)
    print("==", f, a.name()[:60])
    for n in sorted(a.metric_names()):
        if ("issue_stalled" in n and n.endswith("warp_cycles_per_issue_active.ratio")) or "pipe_tensor" in n and n.endswith("pct_of_peak_sustained_active"):
            v = a.metric_by_name(n).as_double()
            if v > 0.05: print(f"   {n:95s} {v:8.3f}")
PY
el "stalls $?"; head -50 $R/stalls.txt
tar czf $OUT/r7.tgz -C $OUT r7
