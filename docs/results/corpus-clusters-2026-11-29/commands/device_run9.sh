set -u
R=$OUT/r9; mkdir -p $R
export PYTHONPATH=$PWD/src PYTHONUNBUFFERED=1
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv,noheader; date -u; } > $R/device.txt 2>&1
T0=$(date +%s)
timeout 200 python3 -m pytest -q -p no:cacheprovider -rs -W error::DeprecationWarning tests/gpu/test_torch_ops_gpu.py > $R/gpu_torch_ops.log 2>&1; echo "rc $? $(( $(date +%s) - T0 )) s" >> $R/gpu_torch_ops.log
tail -3 $R/gpu_torch_ops.log
S="1,4096,4096;16,4096,14336;128,4096,4096"
for i in 1 2; do
  for m in 512 8; do
    timeout 150 python3 benchmarks/torch_ops_overhead.py --shapes "$S" --weights 32 --map-sets $m --json $R/w32_m${m}_$i.json > $R/w32_m${m}_$i.txt 2>&1; echo "rc $?" >> $R/w32_m${m}_$i.txt
    echo "== map_sets $m pass $i $(( $(date +%s) - T0 )) s"; cat $R/w32_m${m}_$i.txt
  done
done
