#!/usr/bin/env bash
# Not run yet: what the next H100 (132 SMs, 3350 GB/s) session should measure for issue #20, as
# one command after the maps (`SHAPES_TIMEOUT=270 bash benchmarks/run_shapes_tc_device.sh
# $OUT/maps bf16 fp8`, its own ~9-minute command). Move docs/results and tests/fixtures/corpus
# aside first, and copy ../tc-pp160k-2026-11-29/commands/device_run7.sh to _dev/ (docs/results
# stays behind). On the H100 only pingpong_width's plans changed since the last H100 maps (the
# short-K, long-K and 160-divides-N rules are H200-only), so:
# 1. the widths where pingpong_width picks them, against the ping-pong 128 x 128 it replaced:
#    tc-pp168 run 2's 22 held-out shapes (128/160/168) and the 9 shapes of tc-pp112 runs 1-2
#    whose H100 plan moved to 112 / 144 columns;
# 2. fp8 serving batches (FP8_TILE64_MIN_M = 17 moved fp8's 24-64 tokens from 64 x 128 to 64 x 64
#    on both GPUs; runs 8-9 measured the H200 only): the tensor-batches rows it moved;
# 3. the short-K question (tc-pp160k run 7's clock and power log, on the H100).
set -u
R=$OUT/h100; mkdir -p $R
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv; date -u; git log -1 --format=%H; } > $R/device.txt 2>&1
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/src
t0=$(date +%s)
W168="512,11008,4096;512,27648,4096;768,7168,4096;768,28672,4096;1024,2560,4096;1024,22016,4096;1536,1536,4096;1536,3584,4096;1536,14336,4096;3072,7168,4096;6144,3584,4096;512,4608,4096;1024,22016,2048;3072,7168,8192;2048,11008,8192;1536,3584,2048;2048,8704,4096;4096,4352,4096;3584,4864,4096;4096,5376,4096;2560,8704,4096;7936,2816,4096"
W112="2048,1792,4096;256,14592,4096;1536,9472,4096;512,27904,4096;256,9472,4096;1536,1536,8192;512,4352,8192;256,14080,2048;768,4864,2048"
timeout 200 python3 benchmarks/tc_dispatch_compare.py --dtype fp8 --shapes "$W168" \
  --only "128x128pp S=1,128x160pp S=1,128x168pp S=1" --rounds 2 --rep-ms 8 --json $R/widths168.json > $R/widths168.log 2>&1
echo "widths168 rc $? $(( $(date +%s) - t0 )) s"
timeout 120 python3 benchmarks/tc_dispatch_compare.py --dtype fp8 --shapes "$W112" \
  --only "128x128pp S=1,128x160pp S=1,128x112pp S=1,128x144pp S=1" --rounds 2 --rep-ms 8 --json $R/widths112.json > $R/widths112.log 2>&1
echo "widths112 rc $? $(( $(date +%s) - t0 )) s"
B="24,4096,4096;40,4096,4096;64,4096,4096;24,4096,14336;40,4096,14336;64,4096,14336;24,6144,4096;40,6144,4096;64,6144,4096;24,8192,28672;40,8192,28672;64,8192,28672"
timeout 150 python3 benchmarks/tc_dispatch_compare.py --dtype fp8 --shapes "$B" \
  --only "64x128 S=1,64x128 S=2,64x64 S=1" --rounds 2 --rep-ms 8 --json $R/batches.json > $R/batches.log 2>&1
echo "batches rc $? $(( $(date +%s) - t0 )) s"
cd $OUT && tar cJf h100a.tar.xz h100 && cd - > /dev/null
OUT=$R timeout 200 bash _dev/device_run7.sh > $R/run7.log 2>&1
echo "short-K clocks rc $? $(( $(date +%s) - t0 )) s"
cd $OUT && rm -f h100a.tar.xz && tar cJf h100.tar.xz h100 && rm -rf h100
