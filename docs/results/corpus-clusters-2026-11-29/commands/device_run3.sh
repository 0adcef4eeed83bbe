#!/usr/bin/env bash
# run 3: gemmlab.torch_ops's GPU tests
set -u
R=$OUT/r3; mkdir -p $R
export PYTHONPATH=$PWD/src PYTHONUNBUFFERED=1
T0=$(date +%s)
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv,noheader; date -u; } > $R/device.txt 2>&1
timeout 520 python3 -m pytest -q -p no:cacheprovider -rs -v --durations=10 tests/gpu/test_torch_ops_gpu.py > $R/gpu_torch_ops.log 2>&1
echo "torch_ops tests rc $? $(( $(date +%s) - T0 )) s" | tee -a $R/gpu_torch_ops.log
tail -30 $R/gpu_torch_ops.log
python3 - > $R/torch_mm_reduced.txt 2>&1 <<'PY'
# torch.mm's bf16 at 7 x 127 x 1000 with PyTorch's default reduced-precision reductions, against the
# bound of an FP32-accumulated product rounded once to bf16
import torch
g = torch.Generator(device="cuda").manual_seed(7 * 7 + 127)
a = torch.randn(7, 1000, device="cuda", generator=g).to(torch.bfloat16)
b = torch.randn(1000, 127, device="cuda", generator=g).to(torch.bfloat16)
exact = a.double() @ b.double()
mag = a.double().abs() @ b.double().abs()
bound = 2.0 ** -8 * exact.abs() + 2 * 1000 * 2.0 ** -24 * mag
for flag in (True, False):
    torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction = flag
    c = torch.mm(a, b)
    r = ((c.double() - exact).abs() / bound)
    print(f"allow_bf16_reduced_precision_reduction={flag}: worst error / bound {r.max().item():.3f}, "
          f"elements over the bound {(r > 1).sum().item()} of {r.numel()}")
PY
cat $R/torch_mm_reduced.txt
