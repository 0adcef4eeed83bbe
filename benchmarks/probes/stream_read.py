"""How fast the GPU reads a weight matrix once, by access pattern: the floor under every decode
(and small-M) product, which streams B from DRAM and does little else.

Each pattern reads all of a rows x pitch matrix exactly once and keeps nothing (an XOR of the
words, stored only if it matches a constant), timed like the ladder (CUDA events, the L2 flushed
by a read before every run), in interleaved rounds with cuBLAS's product at 1 and 16 tokens on
the same weights:

* ``strip W S``: a block of 256 threads owns W bytes of every row of a 1/S slice of the rows -
  the decode kernels' column strips (bf16's N-major B) with K split S ways. 16 loads of 16 bytes
  in flight per thread.
* ``rows``: a block owns a contiguous run of bytes (the matrix read as 4 KB rows), 16 loads in
  flight per thread.
* ``bulk C x D``: one thread per block streams the block's contiguous share by
  cp.async.bulk into a ring of D chunks of C bytes (the TMA unit's 1-D copies: D x C bytes in
  flight per SM), 132 blocks.

    PYTHONPATH=src python benchmarks/probes/stream_read.py [--json F]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys

SOURCE = r"""
__device__ __forceinline__ uint4 ld_stream(const uint4* p) {
    uint4 v;
    asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0,%1,%2,%3}, [%4];"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
    return v;
}

// grid (pitch16 / strip16, S): block (x, y) reads uint4 columns [x * strip16, + strip16) of rows
// [y * rpb, + rpb)
extern "C" __global__ void __launch_bounds__(256) strip_read(const uint4* __restrict__ B,
        long long pitch16, int rows, int strip16, int rpb, unsigned* out) {
    const int c = blockIdx.x * strip16 + threadIdx.x % strip16;
    const int RG = 256 / strip16, rg = threadIdx.x / strip16;
    const int r0 = blockIdx.y * rpb, r1 = min(rows, r0 + rpb);
    unsigned acc = 0;
    for (int r = r0 + rg; r < r1; r += 16 * RG) {
        uint4 v[16];
#pragma unroll
        for (int j = 0; j < 16; ++j) {
            const int rr = r + j * RG;
            v[j] = rr < r1 ? ld_stream(B + rr * pitch16 + c) : make_uint4(0, 0, 0, 0);
        }
        // last load first: ptxas then keeps all 16 in flight (64 registers; in load order it
        // folded them as they came, 32 registers)
#pragma unroll
        for (int j = 15; j >= 0; --j) acc ^= v[j].x ^ v[j].y ^ v[j].z ^ v[j].w;
    }
    if (acc == 0x9e3779b9u) out[0] = acc;
}

__device__ __forceinline__ unsigned sa(const void* p) {
    return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

// one thread streams bytes [b * per, + per) into a ring of D chunks of C bytes (C % 16 == 0)
extern "C" __global__ void __launch_bounds__(32) bulk_read(const unsigned char* __restrict__ B,
        long long total, long long per, int C, int D, unsigned* out) {
    extern __shared__ __align__(128) unsigned char ring[];
    __shared__ __align__(8) unsigned long long bars[32];
    if (threadIdx.x != 0) return;
    for (int d = 0; d < D; ++d)
        asm volatile("mbarrier.init.shared.b64 [%0], 1;" :: "r"(sa(&bars[d])));
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    const long long lo = blockIdx.x * per, hi = min(total, lo + per);
    const long long n = (hi - lo + C - 1) / C;
    unsigned acc = 0;
    for (long long i = 0; i < n + D; ++i) {
        if (i >= D) {  // wait for chunk i - D
            const int d = (i - D) % D;
            const unsigned phase = ((i - D) / D) & 1;
            unsigned done = 0;
            while (!done)
                asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared.b64 p, [%1], %2;"
                             " selp.u32 %0, 1, 0, p; }"
                             : "=r"(done) : "r"(sa(&bars[d])), "r"(phase) : "memory");
            acc ^= reinterpret_cast<const unsigned*>(ring + static_cast<long long>(d) * C)[0];
        }
        if (i < n) {
            const int d = i % D;
            const long long off = lo + i * C;
            const unsigned bytes = static_cast<unsigned>(min(static_cast<long long>(C), hi - off));
            asm volatile("mbarrier.arrive.expect_tx.shared.b64 _, [%0], %1;"
                         :: "r"(sa(&bars[d])), "r"(bytes) : "memory");
            asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes"
                         " [%0], [%1], %2, [%3];"
                         :: "r"(sa(ring + static_cast<long long>(d) * C)), "l"(B + off),
                            "r"(bytes), "r"(sa(&bars[d])) : "memory");
        }
    }
    if (acc == 0x9e3779b9u) out[0] = acc;
}

extern "C" __global__ void empty_kernel(unsigned* out) {
    if (threadIdx.x == 1u << 30) out[0] = 1;
}
"""

# (name, rows, pitch bytes): the weights of the decode shapes under the bar (bf16 B is K x N,
# fp8's N x K)
MATRICES = (
    ("bf16 6400x1600 (x1600x6400)", 6400, 3200),
    ("bf16 1600x4800 (x4800x1600)", 1600, 9600),
    ("bf16 4096x4096", 4096, 8192),
    ("bf16 4096x6144", 4096, 12288),
    ("fp8 1600x6400 (x1600x6400)", 1600, 6400),
    ("fp8 8192x10240 (x10240x8192)", 10240, 8192),
)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--json", dest="json_path")
    p.add_argument("--rounds", type=int, default=2)
    args = p.parse_args(argv)

    import cupy

    from gemmlab.bench.timer import CupyBackend, TimingOptions, time_fn
    from gemmlab.runtime import device

    device.require_gpu()
    sms = device.info().sm_count
    mod = cupy.RawModule(code=SOURCE, options=("--std=c++17",))
    strip = mod.get_function("strip_read")
    bulk = mod.get_function("bulk_read")
    empty = mod.get_function("empty_kernel")
    out = cupy.zeros(4, dtype=cupy.uint32)
    backend = CupyBackend(flush_l2=True)
    opts = TimingOptions(warmup_ms=2.0, rep_ms=10.0)
    records = []

    def time_it(fn):
        return statistics.median(time_fn(fn, backend, opts).samples_s)

    for name, rows, pitch in MATRICES:
        nbytes = rows * pitch
        buf = cupy.random.default_rng(rows).integers(0, 2**31, size=nbytes // 4,
                                                     dtype=cupy.int32).view(cupy.uint8)
        p16 = pitch // 16
        sides = [("empty kernel", lambda: empty((1,), (32,), (out,)))]
        for w in (32, 64, 128, 256, 512):
            s16 = w // 16
            for s in (1, 2, 4, 8, 16):
                gx = p16 // s16
                if p16 % s16 or gx * s > 8 * sms or gx * s < sms // 2:
                    continue
                rpb = -(-rows // s)
                sides.append((f"strip {w} B x K/{s} ({gx * s} blocks)",
                              lambda gx=gx, s=s, s16=s16, rpb=rpb: strip(
                                  (gx, s), (256,), (buf, cupy.int64(p16), cupy.int32(rows),
                                                    cupy.int32(s16), cupy.int32(rpb), out))))
        # whole rows: the matrix as rows of 4 KB (256 threads x 16 bytes), nb blocks of them
        rows4k = nbytes // 4096
        for nb in (sms, 2 * sms, 4 * sms):
            rpb = -(-rows4k // nb)
            sides.append((f"rows: {nb} blocks of {rpb * 4} KB",
                          lambda nb=nb, rpb=rpb: strip((1, nb), (256,), (
                              buf, cupy.int64(256), cupy.int32(rows4k), cupy.int32(256),
                              cupy.int32(rpb), out))))
        for c, d in ((8192, 16), (16384, 8), (16384, 12), (32768, 6)):
            per = -(-nbytes // sms)
            per = -(-per // 16) * 16
            sides.append((f"bulk {c // 1024} KB x {d} (132 blocks)",
                          lambda c=c, d=d, per=per: bulk((sms,), (32,), (
                              buf, cupy.int64(nbytes), cupy.int64(per), cupy.int32(c),
                              cupy.int32(d), out), shared_mem=c * d)))
        # cuBLAS on the same weights: 1 and 16 tokens (bf16 via torch; fp8 skipped)
        if name.startswith("bf16"):
            import torch

            K, N = rows, pitch // 2
            wt = torch.randn(K, N, device="cuda", dtype=torch.bfloat16)
            for m in (1, 16, 128):
                a = torch.randn(m, K, device="cuda", dtype=torch.bfloat16)
                sides.append((f"torch.mm {m} tokens", lambda a=a, wt=wt: torch.mm(a, wt)))
        bulk.max_dynamic_shared_size_bytes = 200 * 1024
        times = {label: [] for label, _ in sides}
        for r in range(args.rounds):
            order = sides if r % 2 == 0 else sides[::-1]
            for label, fn in order:
                times[label].append(time_it(fn))
        print(f"\n{name}: {nbytes / 1e6:.1f} MB", flush=True)
        rec = {"matrix": name, "rows": rows, "pitch": pitch, "bytes": nbytes, "sides": []}
        for label, _ in sides:
            t = statistics.median(times[label])
            print(f"  {label:40s} {t * 1e6:8.2f} us  {nbytes / t / 1e12:6.2f} TB/s", flush=True)
            rec["sides"].append({"label": label, "median_s": t, "rounds_s": times[label]})
        records.append(rec)
    if args.json_path:
        with open(args.json_path, "w") as f:
            json.dump({"device": device.info().name, "records": records}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
