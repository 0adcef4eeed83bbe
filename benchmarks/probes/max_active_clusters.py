"""How many clusters of a tensor-core instantiation the GPU holds at once
(cuOccupancyMaxActiveClusters): a grid with more clusters than fit runs its last clusters after
the others. Persistent configs against the grid the dispatch plans launch (SMs // cluster
clusters); with ``--swap``, every split swapped-operand decode kernel (clusters of KS CTAs
sharing a strip's K) against ``dispatch_tc.cluster_slots``, the count the plans assume, at the
CTAs an SM holds by shared memory.

    PYTHONPATH=src python benchmarks/probes/max_active_clusters.py [config ...]
    PYTHONPATH=src python benchmarks/probes/max_active_clusters.py --swap [--json OUT]
"""

from __future__ import annotations

import json
import sys


def persistent(names: list[str], sms: int) -> int:
    from gemmlab.runtime import compile as C
    from gemmlab.runtime import device
    from gemmlab.runtime import dispatch_tc as D

    for dtype in D.DTYPES:
        for config in names or list(D.CONFIGS):
            if config not in D.configs(dtype):
                continue
            rung = D.config_rung(dtype, config)
            kernel = C.compile_rung(rung, backend="nvcc")
            ctas = rung.cluster_ctas
            try:
                n = device.clusters_at_once(kernel, ((sms // ctas) * ctas, 1, 1),
                                            rung.launch_config(8192, 8192, 8192, sms)[1],
                                            rung.dynamic_smem)
            except RuntimeError as e:  # the driver's refusal, printed as the count
                n = str(e)
            print(f"{dtype} {config}: cluster of {ctas}, {rung.dynamic_smem} B smem: {n} clusters "
                  f"fit at once, the grid launches {sms // ctas}", flush=True)
    return 0


def swap(sms: int, json_path: str | None) -> int:
    from gemmlab.kernels import paths
    from gemmlab.runtime import device
    from gemmlab.runtime import dispatch_tc as D
    from gemmlab.runtime.compile import compile_module

    module = compile_module(paths.translation_unit(paths.swap_kernels()), "decode_wgmma",
                            arch="sm_90a", backend="nvcc")
    rows, bad = [], 0
    for k in paths.swap_kernels():
        ks = k.params["KS"]
        if ks == 1 or k.params["DT"] != paths.SWAP_DTYPES["fp8"]:  # bf16's smem is the same
            continue
        fn = module.get_function(k.kernel)
        fn.max_dynamic_shared_size_bytes = k.dynamic_smem
        per_sm = D.ctas_per_sm(k)
        got = device.clusters_at_once(fn, (sms, ks, 1), k.block, k.dynamic_smem)
        want = D.cluster_slots(ks, per_sm, sms)
        bad += got != want
        rows.append({"kernel": k.kernel, "ks": ks, "tokens": k.params["TN"],
                     "stages": k.params["STAGES"], "smem": k.dynamic_smem, "per_sm": per_sm,
                     "fit": got, "cluster_slots": want})
        print(f"{k.kernel}: {k.dynamic_smem} B, {per_sm} an SM: {got} clusters of {ks} fit; "
              f"cluster_slots says {want}{'' if got == want else '  <- differs'}", flush=True)
    print(f"{len(rows) - bad} of {len(rows)} as cluster_slots says")
    if json_path:
        with open(json_path, "w") as f:
            json.dump(rows, f, indent=1)
    return int(bad > 0)


def main(argv: list[str]) -> int:
    from gemmlab.runtime import device

    device.require_gpu()
    sms = device.info().sm_count
    print(f"{device.info().name}: {sms} SMs")
    if "--swap" in argv:
        at = argv.index("--json") + 1 if "--json" in argv else None
        if at is not None and at >= len(argv):
            print("max_active_clusters: --json needs a path", file=sys.stderr)
            return 2
        return swap(sms, argv[at] if at else None)
    return persistent(argv, sms)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
