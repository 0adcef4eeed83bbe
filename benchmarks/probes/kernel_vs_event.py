"""A kernel's own duration (CUPTI, through torch.profiler) beside the harness's event time for the
same runs: how much of a timed call is the kernel and how much the launch around it (issue #20).

Nsight Compute serialises and replays each kernel, so its duration and the harness's time come
from different runs. Here both come from the same ``bench.timer.time_fn`` runs (CUDA events, L2
flushed before every run, the GPU held while they are queued): the median event time, the
median kernel duration of those runs, and the difference. Sides alternate over the rounds.

    python benchmarks/probes/kernel_vs_event.py [--shapes "16,4096,4096;16,8192,8192"] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile


def _kernels(fn, backend, opts):
    """(event samples in s, CUPTI durations in s of this side's kernel in the timed runs)."""
    from torch.profiler import ProfilerActivity, profile

    from gemmlab.bench.timer import time_fn
    from gemmlab.profile.cupti_timeline import kernels_from_trace

    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        res = time_fn(fn, backend, opts)
        backend.synchronize()
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "trace.json")
        prof.export_chrome_trace(path)
        with open(path) as f:
            events = kernels_from_trace(json.load(f))
    return res.samples_s, events


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--shapes", default="16,4096,4096;16,8192,8192")
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--json", dest="json_path")
    args = p.parse_args(argv)

    import cupy
    import torch  # noqa: F401 - before torch.profiler

    from gemmlab.bench.cublas_best import best_fp8
    from gemmlab.bench.timer import CupyBackend, TimingOptions
    from gemmlab.kernels import registry
    from gemmlab.numerics import fp8 as conv
    from gemmlab.runtime import device
    from gemmlab.runtime.dispatch_tc_gemm import TcDispatchedGemm
    from gemmlab.shapes import grids

    device.require_gpu()
    out = cupy.zeros(4, dtype=cupy.uint32)
    empty = cupy.RawKernel('extern "C" __global__ void probe_empty(unsigned* o) '
                           "{ if (threadIdx.x == 1u << 30) o[0] = 1; }", "probe_empty")
    sides = [("empty kernel", "probe_empty", lambda: empty((1,), (32,), (out,)))]
    for s in grids.parse_shapes(args.shapes):
        M, N, K = s.dims
        rng = cupy.random.default_rng(M + N + K)
        a = conv.to_bits(rng.random((M, K), dtype=cupy.float32) - 0.5)
        b = conv.to_bits(rng.random((N, K), dtype=cupy.float32) - 0.5)
        c = cupy.zeros((M, N), dtype=cupy.uint16)
        ours = TcDispatchedGemm(registry.get("dispatch_fp8"), M, N, K)
        ref = best_fp8(M, N, K)
        sides.append((f"fp8 {M}x{N}x{K} {ours.plan.name}", "gemmlab_dispatch",
                       lambda ours=ours, a=a, b=b, c=c: ours(a, b, c, 1.0, 0.0)))
        sides.append((f"fp8 {M}x{N}x{K} cuBLASLt", "nvjet",
                      lambda ref=ref, a=a, b=b, c=c: ref(a, b, c, 1.0, 0.0)))
    backend = CupyBackend(flush_l2=True)
    opts = TimingOptions(warmup_ms=2.0, rep_ms=6.0)
    got = {label: {"event_s": [], "kernel_s": []} for label, _, _ in sides}
    for r in range(args.rounds):
        for label, prefix, fn in (sides if r % 2 == 0 else sides[::-1]):
            samples, events = _kernels(fn, backend, opts)
            mine = [e.duration_ns * 1e-9 for e in events if e.name.startswith(prefix)]
            mine = mine[-len(samples):]  # the timed runs are the last ones
            if len(mine) != len(samples):
                print(f"{label}: {len(mine)} kernels for {len(samples)} runs; kernel times skipped",
                      file=sys.stderr)
                mine = []
            got[label]["event_s"].append(statistics.median(samples))
            if mine:
                got[label]["kernel_s"].append(statistics.median(mine))
    print(f"{device.info().name}: medians over {args.rounds} rounds (us)")
    print(f"  {'side':42s} {'events':>8s} {'kernel':>8s} {'events - kernel':>16s}")
    rec = []
    for label, _, _ in sides:
        ev = statistics.median(got[label]["event_s"])
        ks = got[label]["kernel_s"]
        k = statistics.median(ks) if ks else float("nan")
        print(f"  {label:42s} {ev * 1e6:8.2f} {k * 1e6:8.2f} {(ev - k) * 1e6:16.2f}")
        rec.append({"label": label, **got[label]})
    if args.json_path:
        with open(args.json_path, "w") as f:
            json.dump({"device": device.info().name, "sides": rec}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
