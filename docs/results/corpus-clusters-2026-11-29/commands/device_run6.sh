set -u
R=$OUT/r6; mkdir -p $R
export PYTHONPATH=$PWD/src PYTHONUNBUFFERED=1
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv,noheader; date -u; } > $R/device.txt 2>&1
timeout 200 python3 -m pytest -q -p no:cacheprovider -rs -W error::DeprecationWarning tests/gpu/test_torch_ops_gpu.py > $R/gpu_torch_ops.log 2>&1; echo "rc $?" >> $R/gpu_torch_ops.log
tail -5 $R/gpu_torch_ops.log
timeout 300 python3 benchmarks/torch_ops_overhead.py --json $R/overhead.json > $R/overhead.txt 2>&1; echo "rc $?" >> $R/overhead.txt
cat $R/overhead.txt
python3 docs/results/corpus-clusters-2026-11-29/commands/hostprof.py 128,4096,4096 > $R/prof_128.txt 2>&1; head -40 $R/prof_128.txt
