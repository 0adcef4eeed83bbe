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

    from gemmlab.bench.timer import CupyBackend, TimingOptions
    from gemmlab.runtime import device
    from gemmlab.shapes import grids
    from probe_rounds import fp8_pair, interleaved

    device.require_gpu()
    out = cupy.zeros(4, dtype=cupy.uint32)
    empty = cupy.RawKernel('extern "C" __global__ void probe_empty(unsigned* o) '
                           "{ if (threadIdx.x == 1u << 30) o[0] = 1; }", "probe_empty")
    # (label, call, the name its kernel starts with)
    sides = [("empty kernel", lambda: empty((1,), (32,), (out,)), "probe_empty")]
    for shape in grids.parse_shapes(args.shapes):
        (l_ours, ours), (l_ref, ref) = fp8_pair(*shape.dims)
        sides += [(l_ours, ours, "gemmlab_dispatch"), (l_ref, ref, "nvjet")]
    backend = CupyBackend(flush_l2=True)
    opts = TimingOptions(warmup_ms=2.0, rep_ms=6.0)

    def measure(i):
        label, fn, prefix = sides[i]
        samples, events = _kernels(fn, backend, opts)
        mine = [e.duration_ns * 1e-9 for e in events if e.name.startswith(prefix)]
        mine = mine[-len(samples):]  # the timed runs are the last ones
        if len(mine) != len(samples):
            print(f"{label}: {len(mine)} kernels for {len(samples)} runs; kernel times skipped",
                  file=sys.stderr)
            return statistics.median(samples), None
        return statistics.median(samples), statistics.median(mine)

    rounds = interleaved([s[0] for s in sides], args.rounds, measure)
    got = {label: {"event_s": [e for e, _ in r], "kernel_s": [k for _, k in r if k is not None]}
           for label, r in rounds.items()}
    print(f"{device.info().name}: medians over {args.rounds} rounds (us)")
    print(f"  {'side':42s} {'events':>8s} {'kernel':>8s} {'events - kernel':>16s}")
    rec = []
    for label, *_ in sides:
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
