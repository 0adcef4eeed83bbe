"""Where a TMA kernel's tensor maps should live: kernel parameters (by value, as gemmlab's TMA
kernels take them) or global memory (one pointer), timed by the ladder's harness (CUDA events, L2
flushed before every run: the global map is then read from DRAM), in interleaved rounds
(issue #20).

`launch_floor.py` measured two 128-byte maps by value adding ~0.17 us to an empty kernel's timed
launch. A map in global memory keeps the parameters small but is fetched before the first copy.
Each kernel here: 128 CTAs, one thread issues `nb` 8 KB boxes of an fp8 16 x 8192 x 8192 product's
weights (the swapped decode kernel's box) on one barrier and waits for them.

    python benchmarks/probes/tma_map_param.py [--rounds 3] [--json OUT.json]
"""

from __future__ import annotations

import argparse
import sys

SOURCE = r"""
struct alignas(64) Map { unsigned long long w[16]; };

__device__ __forceinline__ void boxes(const void* map, int nb, unsigned* out) {
    extern __shared__ __align__(1024) unsigned char s[];
    __shared__ __align__(8) unsigned long long bar;
    if (threadIdx.x != 0) return;
    const unsigned b = static_cast<unsigned>(__cvta_generic_to_shared(&bar));
    const unsigned base = (static_cast<unsigned>(__cvta_generic_to_shared(s)) + 1023u) & ~1023u;
    asm volatile("prefetch.tensormap [%0];" ::"l"(map) : "memory");
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(b) : "memory");
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(b), "r"(nb * 8192)
                 : "memory");
    for (int i = 0; i < nb; ++i)
        asm volatile(
            "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
            " [%0], [%1, {%3, %4}], [%2];" ::"r"(base + 8192u * i), "l"(map), "r"(b),
            "r"(128 * i), "r"(64 * static_cast<int>(blockIdx.x))
            : "memory");
    asm volatile(
        "{ .reg .pred p;\nW: mbarrier.try_wait.parity.shared::cta.b64 p, [%0], 0;\n@!p bra W; }"
        ::"r"(b) : "memory");
    const unsigned char* t = s + (base - static_cast<unsigned>(__cvta_generic_to_shared(s)));
    if (t[threadIdx.x + 7] == 0xABu && blockIdx.x == 1u << 20) out[0] = 1;
}

extern "C" __global__ void by_value(const __grid_constant__ Map m, int nb, unsigned* out) {
    boxes(&m, nb, out);
}

extern "C" __global__ void by_value4(const __grid_constant__ Map m, const __grid_constant__ Map m2,
                                     const __grid_constant__ Map m3, const __grid_constant__ Map m4,
                                     int nb, unsigned* out) {
    boxes(&m, nb, out);
    if (m2.w[0] + m3.w[0] + m4.w[0] == 1ull && blockIdx.x == 1u << 20) out[1] = 1;
}

extern "C" __global__ void in_global(const Map* __restrict__ m, int nb, unsigned* out) {
    boxes(m, nb, out);
}
"""


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--json", dest="json_path")
    args = p.parse_args(argv)

    import cupy
    import numpy as np

    from gemmlab.runtime import device, tma
    from probe_rounds import harness_medians, report

    device.require_gpu()
    N = K = 8192
    w = cupy.random.default_rng(1).integers(0, 0x38, (N, K), dtype=cupy.int32).astype(cupy.uint8)
    _, spec = tma.fp8_specs(16, N, K, 16, 128, 64)
    m = tma.encode(spec, w.data.ptr)
    gm = cupy.asarray(np.frombuffer(m.tobytes(), dtype=np.uint8))  # 256-byte aligned allocation
    out = cupy.zeros(4, dtype=cupy.uint32)
    mod = cupy.RawModule(code=SOURCE, options=("--std=c++17", "-arch=sm_90a"))
    f_val, f_val4, f_glob = (mod.get_function(n) for n in ("by_value", "by_value4", "in_global"))
    for f in (f_val, f_val4, f_glob):
        f.max_dynamic_shared_size_bytes = 16 * 8192 + 1024
    sides = []
    for nb in (1, 4, 16):
        smem = nb * 8192 + 1024
        sides += [
            (f"{nb:2d} boxes, map by value", lambda nb=nb, smem=smem: f_val(
                (128,), (128,), (m, np.int32(nb), out), shared_mem=smem)),
            (f"{nb:2d} boxes, 4 maps by value", lambda nb=nb, smem=smem: f_val4(
                (128,), (128,), (m, m, m, m, np.int32(nb), out), shared_mem=smem)),
            (f"{nb:2d} boxes, map in global memory", lambda nb=nb, smem=smem: f_glob(
                (128,), (128,), (gm, np.int32(nb), out), shared_mem=smem)),
        ]
    report(device.info().name, harness_medians(sides, args.rounds), args.json_path, width=40)
    return 0


if __name__ == "__main__":
    sys.exit(main())
