"""Where a torch_ops call's host time goes: each step of the call timed alone (best of 20 repeats of 200 calls,
the GPU drained between repeats so the launch queue never blocks the host)."""
import json
import sys
import time

import cupy
import torch

from gemmlab.runtime import torch_ops as T

dev = torch.device("cuda")
rows = {}
for dtype, (M, N, K) in (("bf16", (1, 4096, 4096)), ("fp8", (1, 4096, 4096)), ("bf16", (16, 4096, 14336))):
    fp8 = dtype == "fp8"
    dt = torch.float8_e4m3fn if fp8 else torch.bfloat16
    x = torch.randn(M, K, device=dev).to(dt)
    w = torch.randn(*((N, K) if fp8 else (K, N)), device=dev).to(dt)
    b = w.t() if fp8 else w
    out = torch.empty(M, N, device=dev, dtype=torch.bfloat16)
    one = torch.ones((), device=dev)
    call = (lambda: T.scaled_mm(x, b, 1.0, 1.0, out=out)) if fp8 else (lambda: T.mm(x, b, out=out))
    call(); call()
    run = T._prepared(dtype, M, N, K, 0)
    stream = T._raw_stream(torch, 0)
    shape = T._shape_fp8 if fp8 else T._shape_bf16
    steps = {
        "whole call (out given)": call,
        "whole call (out allocated)": (lambda: T.scaled_mm(x, b, 1.0, 1.0)) if fp8 else (lambda: T.mm(x, b)),
        "torch reference (out given)": (lambda: torch._scaled_mm(x, b, one, one, out_dtype=torch.bfloat16, out=out))
        if fp8 else (lambda: torch.mm(x, b, out=out)),
        "shape checks": lambda: shape(x, b),
        "out checks": lambda: T._out(out, M, N, x, b),
        "torch.empty": lambda: torch.empty((M, N), dtype=torch.bfloat16, device=x.device),
        "scales": lambda: (T._scale("a", 1.0), T._scale("b", 1.0)),
        "cupy getDevice": lambda: cupy.cuda.runtime.getDevice(),
        "prepared lookup": lambda: T._prepared(dtype, M, N, K, 0),
        "raw stream": lambda: T._raw_stream(torch, 0),
        "data_ptr x3": lambda: (x.data_ptr(), b.data_ptr(), out.data_ptr()),
        "repeat (the launch)": lambda: run.repeat(x.data_ptr(), b.data_ptr(), out.data_ptr(), 1.0, 0.0, stream),
    }
    res = {}
    for name, fn in steps.items():
        best = float("inf")
        for _ in range(20):
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            for _ in range(200):
                fn()
            best = min(best, (time.perf_counter() - t0) / 200 * 1e6)
        res[name] = round(best, 2)
    key = f"{dtype} {M}x{N}x{K} ({run.plan.name})"
    rows[key] = res
    print(key, json.dumps(res, indent=1), flush=True)
json.dump({"device": torch.cuda.get_device_name(), "us_per_call_best": rows}, open(sys.argv[1], "w"), indent=1)
