set -u
R=$OUT/r11; mkdir -p $R
export PYTHONPATH=$PWD/src PYTHONUNBUFFERED=1
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv,noheader; date -u; } > $R/device.txt 2>&1
T0=$(date +%s)
timeout 150 python3 -m pytest -q -p no:cacheprovider -rs -W error::DeprecationWarning tests/gpu/test_torch_ops_gpu.py > $R/gpu_torch_ops.log 2>&1; echo "rc $? $(( $(date +%s) - T0 )) s" >> $R/gpu_torch_ops.log
tail -3 $R/gpu_torch_ops.log
timeout 90 python3 benchmarks/torch_ops_overhead.py --shapes "1,4096,4096;16,4096,14336;128,4096,4096;4096,4096,4096" --weights 32 --json $R/w32.json > $R/w32.txt 2>&1; echo "rc $?" >> $R/w32.txt
cat $R/w32.txt
python3 docs/results/corpus-clusters-2026-11-29/commands/hostprof.py 128,4096,4096 > $R/hostprof_128.txt 2>&1; head -45 $R/hostprof_128.txt | tail -38
