"""What calling the tensor-core dispatch from PyTorch costs (gemmlab.runtime.torch_ops): per shape, the GPU
time of back-to-back calls of torch.mm (cuBLAS), gemmlab.runtime.torch_ops.mm and the same dispatch called on
CuPy arrays, and the host time a call takes; with ``--dtype fp8`` torch._scaled_mm (cuBLASLt) and
torch_ops.scaled_mm on e4m3 operands (per-tensor scales of 1; torch_ops given floats, as a model keeps them).

    PYTHONPATH=src python benchmarks/torch_ops_overhead.py [--dtype bf16|fp8] [--shapes "M,N,K;..."]
        [--calls 200] [--rounds 3] [--json OUT]

Each side runs ``--calls`` calls queued back to back between two CUDA events, in rounds interleaved
as A, B, C, C, B, A (clocks drift alike for all). The event time over calls is what a model sees
when the GPU is kept busy; where it exceeds the kernel's own time, the host cannot queue calls fast
enough. ``--weights 32`` cycles the calls through 32 weight tensors, as 32 layers of one shape do.
The host time per call is measured around the same loop (wall clock, before the events
are waited on). Then the same calls of torch.mm and torch_ops.mm are captured in one CUDA graph
each and replayed: the GPU time a call costs without the host (as in a serving engine's decode
graph). Inputs are fresh random bf16; L2 is not flushed (back-to-back calls, as in a model).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--shapes", default="1,4096,4096;16,4096,14336;128,4096,4096;4096,4096,4096")
    p.add_argument("--calls", type=int, default=200)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--dtype", choices=("bf16", "fp8"), default="bf16")
    p.add_argument("--weights", type=int, default=1,
                   help="distinct weight tensors the calls cycle through (a model's layers of one shape)")
    p.add_argument("--map-sets", type=int, default=None,
                   help="tensor-map sets a prepared shape keeps (default: dispatch_tc_gemm.MAP_SETS); 8 was the "
                        "old size, which 32 weights cycle out of on every call")
    p.add_argument("--json", default=None)
    a = p.parse_args(argv)
    import cupy
    import torch

    from gemmlab.runtime import dispatch_tc_gemm
    from gemmlab.runtime.torch_ops import _prepared, mm, scaled_mm

    if a.map_sets is not None:
        dispatch_tc_gemm.MAP_SETS = a.map_sets

    dev = torch.device("cuda")
    rows = []
    for spec in a.shapes.split(";"):
        M, N, K = (int(x) for x in spec.split(","))
        fp8 = a.dtype == "fp8"
        dt = torch.float8_e4m3fn if fp8 else torch.bfloat16
        x = torch.randn(M, K, device=dev).to(dt)
        # fp8: nn.Linear's (N, K) weights, given as w.t(); bf16: (K, N) row-major
        ws = [torch.randn(*((N, K) if fp8 else (K, N)), device=dev).to(dt) for _ in range(a.weights)]
        out = torch.empty(M, N, device=dev, dtype=torch.bfloat16)
        run = _prepared(a.dtype, M, N, K, torch.cuda.current_device())
        bits = (torch.uint8, cupy.uint8) if fp8 else (torch.int16, cupy.uint16)
        cx = cupy.from_dlpack(x.view(bits[0])).view(bits[1])
        co = cupy.from_dlpack(out.view(torch.int16)).view(cupy.uint16)
        cws = [cupy.from_dlpack(w.view(bits[0])).view(bits[1]) for w in ws]
        one = torch.ones((), device=dev)
        stream = cupy.cuda.Stream.from_external(torch.cuda.current_stream())
        turn = [0]

        def nxt() -> int:  # the next layer's weights
            turn[0] = (turn[0] + 1) % a.weights
            return turn[0]

        if fp8:
            sides = {
                "torch._scaled_mm": lambda: torch._scaled_mm(x, ws[nxt()].t(), one, one, out_dtype=torch.bfloat16,
                                                             out=out),
                "torch_ops.scaled_mm": lambda: scaled_mm(x, ws[nxt()].t(), 1.0, 1.0, out=out),
                "dispatch on CuPy": lambda: run(cx, cws[nxt()], co, 1.0, 0.0),
            }
        else:
            sides = {
                "torch.mm": lambda: torch.mm(x, ws[nxt()], out=out),
                "torch_ops.mm": lambda: mm(x, ws[nxt()], out=out),
                "dispatch on CuPy": lambda: run(cx, cws[nxt()], co, 1.0, 0.0),
            }
        samples = {k: ([], []) for k in sides}
        for fn in sides.values():  # warm: compiles, heuristics, every weight's maps
            for _ in range(a.weights + 2):
                with stream:
                    fn()
        torch.cuda.synchronize()
        order = list(sides)
        for r in range(a.rounds):
            for name in (order if r % 2 == 0 else order[::-1]) + (order[::-1] if r % 2 == 0 else order):
                fn = sides[name]
                start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                torch.cuda.synchronize()
                start.record()
                t0 = time.perf_counter()
                with stream:
                    for _ in range(a.calls):
                        fn()
                host = time.perf_counter() - t0
                end.record()
                end.synchronize()
                samples[name][0].append(start.elapsed_time(end) * 1e3 / a.calls)
                samples[name][1].append(host * 1e6 / a.calls)
        for name in list(sides)[:2]:  # the same calls captured in one CUDA graph: no host cost
            fn = sides[name]
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph):
                for _ in range(a.calls):
                    fn()
            gpu = []
            for _ in range(a.rounds):
                start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                torch.cuda.synchronize()
                start.record()
                graph.replay()
                end.record()
                end.synchronize()
                gpu.append(start.elapsed_time(end) * 1e3 / a.calls)
            samples[name + " (CUDA graph)"] = (gpu, [0.0] * len(gpu))
            del graph
        row = {"shape": [M, N, K], "plan": run.plan.name}
        for name, (gpu, host) in samples.items():  # the graph rows have no host time of their own
            row[name] = {"gpu_us_per_call": statistics.median(gpu), "host_us_per_call": statistics.median(host),
                         "gpu_samples": gpu, "host_samples": host}
        rows.append(row)
        print(f"{M}x{N}x{K} ({run.plan.name}): " + "; ".join(
            f"{n} {row[n]['gpu_us_per_call']:.1f} us GPU / {row[n]['host_us_per_call']:.1f} us host"
            for n in samples), flush=True)
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"device": torch.cuda.get_device_name(), "dtype": a.dtype, "calls": a.calls, "rounds": a.rounds,
                       "weights": a.weights, "map_sets": dispatch_tc_gemm.MAP_SETS,
                       "rows": rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
