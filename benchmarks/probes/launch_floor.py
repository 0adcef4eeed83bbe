"""What a timed launch costs beside the kernel's own work: empty kernels shaped like the decode
kernels (grid, block, dynamic shared memory, a cluster, 128-byte parameters by value), timed by
the ladder's harness (CUDA events, L2 flushed before every run), in interleaved rounds (issue #20).

At fp8 16 x 4096 x 4096 the swapped decode kernel ran 0.4 us under cuBLASLt's in Nsight Compute
(one launch each, clocks locked) but 0.4 us over it in the harness: this probe asks whether the
launch itself - shared memory carve-out, cluster, parameter size - costs the two differently.

    python benchmarks/probes/launch_floor.py [--rounds 3] [--json OUT.json]

Prints each variant's median over the rounds (each round: the harness's median).
"""

from __future__ import annotations

import argparse
import sys

SOURCE = r"""
struct alignas(64) Map { unsigned long long w[16]; };  // a CUtensorMap's size and alignment

extern "C" __global__ void empty_plain(unsigned* out) {
    if (threadIdx.x == 1u << 30) out[0] = 1;
}

extern "C" __global__ void empty_smem(unsigned* out) {
    extern __shared__ unsigned char s[];
    if (threadIdx.x == 1u << 30) { s[0] = 1; out[0] = s[1]; }
}

extern "C" __global__ void __cluster_dims__(2, 1, 1) empty_cluster2(unsigned* out) {
    extern __shared__ unsigned char s[];
    if (threadIdx.x == 1u << 30) { s[0] = 1; out[0] = s[1]; }
}

extern "C" __global__ void empty_maps(const __grid_constant__ Map a, const __grid_constant__ Map b,
                                      int m, int n, int k, float alpha, float beta, unsigned* out) {
    extern __shared__ unsigned char s[];
    if (threadIdx.x == 1u << 30) { s[0] = 1; out[0] = s[1] + a.w[0] + b.w[0] + m + n + k; }
}
"""


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--json", dest="json_path")
    p.add_argument("--shapes", default="16,4096,4096;16,8192,8192",
                   help="fp8 decode shapes whose dispatch plan and cuBLASLt run are timed beside")
    args = p.parse_args(argv)

    import cupy
    import numpy as np

    from gemmlab.runtime import device
    from gemmlab.runtime.tma import as_param
    from probe_rounds import fp8_pair, harness_medians, report

    device.require_gpu()
    mod = cupy.RawModule(code=SOURCE, options=("--std=c++17", "-arch=sm_90a"))
    out = cupy.zeros(4, dtype=cupy.uint32)
    plain, smem, cl2, maps = (mod.get_function(n) for n in
                              ("empty_plain", "empty_smem", "empty_cluster2", "empty_maps"))
    for f in (smem, cl2, maps):
        f.max_dynamic_shared_size_bytes = 200 * 1024
    m = as_param([0] * 16)  # a zeroed CUtensorMap, passed by value as the decode kernels' maps are
    sides = [
        ("empty 1 x 32", lambda: plain((1,), (32,), (out,))),
        ("empty 128 x 160", lambda: plain((128,), (160,), (out,))),
        ("empty 128 x 160, 83 KB", lambda: smem((128,), (160,), (out,), shared_mem=83072)),
        ("empty 128 x 384, 164 KB", lambda: smem((128,), (384,), (out,), shared_mem=164352)),
        ("empty 128 x 384, 181 KB", lambda: smem((128,), (384,), (out,), shared_mem=180736)),
        ("empty 128 x 160, 83 KB, cluster 2", lambda: cl2((128,), (160,), (out,), shared_mem=83072)),
        ("empty 128 x 384, 181 KB, cluster 2", lambda: cl2((128,), (384,), (out,), shared_mem=180736)),
        ("empty 128 x 160, 83 KB, two 128-byte maps",
         lambda: maps((128,), (160,), (m, m, np.int32(16), np.int32(8192), np.int32(8192),
                                       np.float32(1), np.float32(0), out), shared_mem=83072)),
    ]
    if args.shapes:
        from gemmlab.shapes import grids

        for shape in grids.parse_shapes(args.shapes):
            sides += fp8_pair(*shape.dims)
    report(device.info().name, harness_medians(sides, args.rounds), args.json_path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
