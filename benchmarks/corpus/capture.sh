#!/usr/bin/env bash
# Capture the diagnosis corpus on the device machine (repo root):
#
#   [WORKLOAD=benchmarks/corpus/workload_grown.py] [PART=a] \
#   bash benchmarks/corpus/capture.sh "$OUT" [full|targeted|both] [CASE_REGEX]
#
# Runs benchmarks/corpus/workload.py under ncu twice: with --set full, and with gemmlab profile's
# targeted collection (gemmlab.profile.collect.default_collection, the same metrics and section the
# `gemmlab profile` command asks for). Both at --clock-control none (the clocks a user gets). Exports
# the raw page, the raw page in base units and the details page of each report, maps every kernel to
# its case through its NVTX range (index.py), measures the copy and FP32 ceilings, and packs it all
# in $OUT/corpus_<collection>[_$PART].tar.xz (reports compressed, CSVs beside them). PART names a
# partial capture (a CASE_REGEX subset), so a long --set full capture can be split across commands.
set -uo pipefail
OUT=${1:?usage: capture.sh OUT [full|targeted|both] [CASE_REGEX]}
WHICH=${2:-both}
ONLY=${3:-}
W=/tmp/corpus
mkdir -p "$OUT" "$W"
export PYTHONPATH="$PWD/src${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
NCU=$(command -v ncu || echo /opt/nvidia/nsight-compute/2025.3.1/ncu)
# ncu_report ships in extras/python beside the real ncu (PATH may hold a symlink to it)
export PYTHONPATH="$PYTHONPATH:$(dirname "$(readlink -f "$NCU")")/extras/python:$(ls -d /opt/nvidia/nsight-compute/*/extras/python 2>/dev/null | tail -1)"
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv,noheader
  "$NCU" --version | tail -1
  python3 -c "import torch, cupy, triton; print('torch', torch.__version__, 'cupy', cupy.__version__, 'triton', triton.__version__, 'cudnn', torch.backends.cudnn.version())"
  date -u +%Y-%m-%dT%H:%M:%SZ; } > "$W/device.txt" 2>&1
cat "$W/device.txt"
[ -f "$W/ceilings.json" ] || python3 -m gemmlab ceilings --measure --json > "$W/ceilings.json" 2> "$W/ceilings.err"

ARGS=(python3 "${WORKLOAD:-benchmarks/corpus/workload.py}")
[ -n "$ONLY" ] && ARGS+=(--only "$ONLY")
capture() {  # $1 = full | targeted
  local c=$1 rep="$W/corpus_$1${PART:+_$PART}"
  local sel
  if [ "$c" = full ]; then sel=(--set full)
  else
    local m; m=$(python3 -c "from gemmlab.profile.collect import default_collection as d; print(','.join(d().metrics))")
    sel=(--metrics "$m" --section SourceCounters)
  fi
  local t0=$SECONDS
  # process-scoped NVTX ranges: a backward pass launches from autograd's thread, still inside its case
  "$NCU" --profile-from-start off --nvtx --nvtx-push-pop-scope process --clock-control none --target-processes all "${sel[@]}" \
      -o "$rep" -f "${ARGS[@]}" > "$W/capture_$c${PART:+_$PART}.log" 2>&1
  echo "ncu $c: exit $? in $((SECONDS - t0)) s; $(grep -c '==PROF== Profiling' "$W/capture_$c${PART:+_$PART}.log") kernels"
  grep -E '^case |SKIPPED|cases ran|==ERROR==' "$W/capture_$c${PART:+_$PART}.log" | tail -80
  "$NCU" -i "$rep.ncu-rep" --page raw --csv > "$W/corpus_${c}${PART:+_$PART}_raw.csv"
  "$NCU" -i "$rep.ncu-rep" --page raw --csv --print-units base > "$W/corpus_${c}${PART:+_$PART}_raw_base.csv"
  "$NCU" -i "$rep.ncu-rep" --page details --csv > "$W/corpus_${c}${PART:+_$PART}_details.csv"
  python3 benchmarks/corpus/index.py "$rep.ncu-rep" > "$W/corpus_${c}${PART:+_$PART}_index.json"
  ls -la "$rep.ncu-rep"
  (cd "$W" && tar cJf "$OUT/corpus_$c${PART:+_$PART}.tar.xz" device.txt ceilings.json "capture_$c${PART:+_$PART}.log" "corpus_${c}${PART:+_$PART}_"*.csv \
      "corpus_${c}${PART:+_$PART}_index.json" "$(basename "$rep").ncu-rep")
  ls -la "$OUT"
}
[ "$WHICH" = targeted ] || [ "$WHICH" = both ] && capture targeted
[ "$WHICH" = full ] || [ "$WHICH" = both ] && capture full
exit 0
