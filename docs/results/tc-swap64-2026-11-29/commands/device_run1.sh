#!/usr/bin/env bash
# Run 1 (H200): (a) 33-64 tokens, tuning: the swapped kernel at 1 / 2 / 4 CTAs a strip against
# 64 x 64 and the plan without it (keep_tune.json), 40 / 64 tokens x N 1536-4096 x K 4096-14336;
# (b) the same at 10 held-out shapes drawn before the run (draw_swap64.py; scored only after the
# rule is set from (a)); (c) 128 x 112's long-K margin, held out: 12 changed shapes drawn before
# the run (draw_long_k.py), the rules' plan against 093c1e7's; (d) fp8 short K where 128 x 256
# wastes nothing (N = 4096): the ping-pong 128 x 128 / 112 / 144 against the cooperative tiles.
# _dev/ holds copies of keep_tune.json, keep_held.json and old_plans_long_k.json.
set -u
R=$OUT/r1; mkdir -p $R
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv; date -u; git log -1 --format=%H; } > $R/device.txt 2>&1
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/src
t0=$(date +%s)
C=docs/results/tc-swap64-2026-11-29/commands
pack() { cd $OUT && tar cJf r1.tar.xz r1 && cd - > /dev/null; }
TUNE="$(python3 -c "print(';'.join(f'{m},{n},{k}' for m in (40,64) for n in (1536,2048,2560,3072,4096) for k in (4096,8192,14336)))")"
HELD="53,1280,2048;38,1792,4096;59,2816,4096;58,3584,13312;50,1024,11264;55,2816,14336;61,4096,3072;33,3328,5120;41,3072,4096;44,2048,12288"
LONGK="6912,5120,12288;4096,8704,28672;6656,7936,12288;5376,9728,12288;2304,6400,8192;5120,1792,28672;3328,15616,16384;6656,1024,28672;1280,27904,16384;512,17664,12288;3328,8448,12288;6656,1024,8192"
PP="4096,4096,4096;2048,4096,4096;8192,4096,4096;16384,4096,4096;4096,4096,2048;3072,4096,4096;4096,4096,6144"
for d in fp8 bf16; do
  timeout 110 python3 benchmarks/tc_dispatch_compare.py --dtype $d --shapes "$TUNE" --keep-plans _dev/keep_tune.json --rounds 2 --rep-ms 8 --json $R/tune_$d.json > $R/tune_$d.log 2>&1
  echo "tune $d rc $? $(( $(date +%s) - t0 )) s"; pack
done
for d in fp8 bf16; do
  timeout 50 python3 benchmarks/tc_dispatch_compare.py --dtype $d --shapes "$HELD" --keep-plans _dev/keep_held.json --rounds 2 --rep-ms 8 --json $R/held_$d.json > $R/held_$d.log 2>&1
  echo "held $d rc $? $(( $(date +%s) - t0 )) s"; pack
done
timeout 120 python3 benchmarks/tc_dispatch_compare.py --dtype fp8 --shapes "$LONGK" --keep-plans _dev/old_plans_long_k.json --rounds 2 --rep-ms 8 --json $R/long_k.json > $R/long_k.log 2>&1
echo "long K rc $? $(( $(date +%s) - t0 )) s"; pack
timeout 100 python3 benchmarks/tc_dispatch_compare.py --dtype fp8 --shapes "$PP" --only "128x128pp S=1,128x112pp S=1,128x144pp S=1,128x256c1 S=1,128x256c2 S=1" --rounds 3 --rep-ms 8 --json $R/pp128.json > $R/pp128.log 2>&1
echo "pp128 rc $? $(( $(date +%s) - t0 )) s"; pack
rm -rf $R
