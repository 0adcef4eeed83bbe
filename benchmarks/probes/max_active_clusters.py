"""How many clusters of a persistent tensor-core instantiation the GPU holds at once
(cuOccupancyMaxActiveClusters), against the grid the dispatch plans launch (SMs // cluster
clusters): a persistent grid with more clusters than fit runs its last clusters after the others.

    PYTHONPATH=src python benchmarks/probes/max_active_clusters.py [config ...]
"""

from __future__ import annotations

import sys


def main(argv: list[str]) -> int:
    from cuda.bindings import driver as drv

    from gemmlab.runtime import compile as C
    from gemmlab.runtime import device
    from gemmlab.runtime import dispatch_tc as D

    device.require_gpu()
    sms = device.info().sm_count
    names = argv or [c for c in D.CONFIGS]
    print(f"{device.info().name}: {sms} SMs")
    for dtype in D.DTYPES:
        for config in names:
            if config not in D.configs(dtype):
                continue
            rung = D.config_rung(dtype, config)
            kernel = C.compile_rung(rung, backend="nvcc")
            ctas = rung.cluster_ctas
            cfg = drv.CUlaunchConfig()
            cfg.gridDimX, cfg.gridDimY, cfg.gridDimZ = (sms // ctas) * ctas, 1, 1
            cfg.blockDimX, cfg.blockDimY, cfg.blockDimZ = rung.launch_config(8192, 8192, 8192, sms)[1]
            cfg.sharedMemBytes = rung.dynamic_smem
            err, n = drv.cuOccupancyMaxActiveClusters(drv.CUfunction(kernel.kernel.ptr), cfg)
            print(f"{dtype} {config}: cluster of {ctas}, {rung.dynamic_smem} B smem: "
                  f"{n if err == drv.CUresult.CUDA_SUCCESS else err} clusters fit at once, the grid "
                  f"launches {sms // ctas}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
