#!/usr/bin/env bash
# The first seed article's loop with a learner's own files (examples/your-kernel): each version is
# benched against cuBLAS, placed on the ladder and profiled down to the source line, then
# `gemmlab history` writes the worklog. Run on a GPU machine with ncu; results go to $OUT.
#
#   OUT=docs/results/your-kernel-h100-DATE bash benchmarks/your_kernel_loop.sh article|python
set -u
OUT=${OUT:?set OUT to a folder}
mkdir -p "$OUT"
export GEMMLAB_DB="$OUT/runs.sqlite"
G="python -m gemmlab"
SIZE=${SIZE:-2048}  # the article's M = N = K
EX=examples/your-kernel
step() { echo "\$ $*" | tee -a "$OUT/commands.txt"; "$@"; echo "exit $?" | tee -a "$OUT/commands.txt"; }

if [ "${1:-article}" = article ]; then
  for f in 01_bad 02_coalesced 03_tiled16 04_tiled16_unroll 05_blocktile_2d; do
    step $G bench "$EX/$f.cu" --size "$SIZE" --profile --out "$OUT/$f.json" > "$OUT/$f.txt" 2> "$OUT/$f.err"
  done
  step $G history article_gemm > "$OUT/history.txt" 2>&1
  step $G history article_gemm --json > "$OUT/history.json"
  step $G history article_gemm --html "$OUT/worklog.html"
else
  step $G bench "$EX/triton_matmul.py:matmul" --size 4096 --profile --out "$OUT/triton_matmul.json" > "$OUT/triton_matmul.txt" 2> "$OUT/triton_matmul.err"
  step $G bench "$EX/triton_softmax.py" --profile --out "$OUT/triton_softmax.json" > "$OUT/triton_softmax.txt" 2> "$OUT/triton_softmax.err"
  step $G bench "$EX/row_softmax_spec.py" --profile --out "$OUT/row_softmax.json" > "$OUT/row_softmax.txt" 2> "$OUT/row_softmax.err"
  step $G profile "$EX/02_coalesced.cu" --size "$SIZE" > "$OUT/profile_02_coalesced.txt" 2>&1
fi
mkdir -p "$OUT/profiles"
for d in gemmlab-profiles/*/; do  # one folder per profiled version: keep its name on the copies
  for f in "$d"*.ncu-rep "$d"*.lines.html; do [ -f "$f" ] && cp "$f" "$OUT/profiles/$(basename "$d")_$(basename "$f")"; done
done
rep=$(ls "$OUT"/profiles/*.ncu-rep 2>/dev/null | head -1)
[ -n "$rep" ] && step $G analyze "$rep" > "$OUT/analyze_first_report.txt" 2>&1
tar czf "$OUT.tgz" -C "$(dirname "$OUT")" "$(basename "$OUT")" && rm -rf "$OUT"  # one file comes back
true
