"""The tensor-core dispatch rungs (dispatch_bf16, dispatch_fp8) on a GPU: correct through the
harness's own checker (fresh random inputs, poisoned output and guard, float64 reference, the
dtype's bound) at every (M, N, K) with M, N, K in {1, 7, 127, 1000, 4095, 4097}, at model shapes,
for every forced tile configuration and split count, with copies to 16-byte pitches for odd K / N
and misaligned views, with beta != 0 (the reduction and the direct epilogue read C) - and what ran
is what the plan said. Skipped without a GPU (conftest) and, per test, without sm_90a."""

from __future__ import annotations

import itertools
import zlib

import pytest

from gemmlab.kernels.families import arch_refusal
from gemmlab.kernels.registry import get

pytestmark = pytest.mark.gpu

EDGES = (1, 7, 127, 1000, 4095, 4097)
ALPHA, BETA = 1.25, -0.5
MODEL = [(2048, 4096, 4096), (128, 14336, 4096), (16, 8192, 28672), (1, 4096, 14336),
         (3000, 1000, 77)]


@pytest.fixture(scope="module")
def cp():
    import cupy

    return cupy


@pytest.fixture(scope="module")
def dev():
    from gemmlab.runtime import device

    info = device.info()
    reason = arch_refusal(get("persistent_bf16"), info.cc_major, info.cc_minor, info.name)
    if reason:
        pytest.skip(reason)
    return info


def _check(cp, run, shape, dtype, seed, alpha=ALPHA, beta=BETA):
    from gemmlab.bench.check import Checker

    M, N, K = shape
    checker = Checker(xp=cp, seed=seed, synchronize=cp.cuda.get_current_stream().synchronize)
    return checker.check(run, M, N, K, alpha, beta, dtype, "bf16")


def _prepared(dtype, shape, **policy):
    from gemmlab.runtime.dispatch_tc import Policy
    from gemmlab.runtime.dispatch_tc_gemm import TcDispatchedGemm

    return TcDispatchedGemm(get(f"dispatch_{dtype}"), *shape, policy=Policy(**policy))


@pytest.mark.parametrize("dtype", ["bf16", "fp8"])
def test_every_edge_shape(cp, dev, dtype):
    bad = []
    for shape in itertools.product(EDGES, repeat=3):
        run = _prepared(dtype, shape)
        for beta in (0.0, BETA):  # beta = 0: TMA-store epilogue where C allows; else direct
            res = _check(cp, run, shape, dtype, zlib.crc32(f"{dtype}{shape}{beta}".encode()),
                         beta=beta)
            if not res.ok:
                bad.append((shape, beta, run.plan.name, res.reason))
    assert not bad, bad[:10]


@pytest.mark.parametrize("dtype", ["bf16", "fp8"])
def test_model_shapes(cp, dev, dtype):
    bad = []
    for shape in MODEL:
        run = _prepared(dtype, shape)
        res = _check(cp, run, shape, dtype, zlib.crc32(f"{dtype}{shape}".encode()))
        if not res.ok:
            bad.append((shape, run.plan.name, res.reason))
    assert not bad


@pytest.mark.parametrize("dtype", ["bf16", "fp8"])
def test_every_config_and_split(cp, dev, dtype):
    from gemmlab.runtime.dispatch_tc import _TILES, configs

    bad = []
    # K: last K-tiles of 1 K-step (4097), 3 (bf16 1000), 2 (bf16 2080) and 1 (fp8 2080). Split
    # plans run twice - beta != 0 (the direct epilogue), then beta = 0 (TMA stores where C
    # allows): the second call also needs the counters back at zero.
    for shape in [(127, 1000, 4097), (1000, 264, 1000), (1, 4095, 2080)]:
        for config in configs(dtype):
            for split in (1,) if _TILES[config].pingpong else (1, 3, 8):
                run = _prepared(dtype, shape, config=config, split=split)
                assert run.plan.config == config and run.plan.splits == split
                for beta in (BETA,) if split == 1 else (BETA, 0.0):
                    seed = zlib.crc32(f"{shape}{config}{split}{beta}".encode())
                    res = _check(cp, run, shape, dtype, seed, beta=beta)
                    if not res.ok:
                        bad.append((shape, config, split, beta, res.reason))
    assert not bad


@pytest.mark.parametrize("dtype", ["bf16", "fp8"])
def test_every_config_with_stream_k(cp, dev, dtype):
    """Stream-K at every tile configuration: fewer tiles than SMs (every tile shared by up to ten
    runs), a partial last wave with and without full waves before it, K short and long, M and N
    off the tiles, last K-tiles short of K; beta 0 (TMA stores where C allows) and beta != 0;
    each prepared plan called
    twice (the counters must be back at zero for the second call)."""
    from gemmlab.runtime.dispatch_tc import _TILES, configs

    bad, shared = [], 0
    # K = 608: a last K-tile of 2 K-steps (bf16) or 3 (fp8) in the runs stream-K shares
    for shape in [(127, 1000, 4097), (1000, 3000, 1000), (4097, 4095, 608), (1, 4095, 2048)]:
        for config in [c for c in configs(dtype) if not _TILES[c].pingpong]:
            for waves in (0, 1, 2):
                run = _prepared(dtype, shape, config=config, streamk=waves)
                assert run.plan.config == config and run.plan.splits == 1
                shared += run.plan.streamk > 0
                for beta in (0.0, BETA):
                    seed = zlib.crc32(f"{shape}{config}{waves}{beta}".encode())
                    for call in range(2):
                        res = _check(cp, run, shape, dtype, seed + call, beta=beta)
                        if not res.ok:
                            bad.append((shape, config, waves, beta, call, res.reason))
    assert not bad, bad[:10]
    assert shared > 60  # most of these plans share tiles (a whole last wave shares none)


@pytest.mark.parametrize("dtype", ["bf16", "fp8"])
def test_stream_k_is_deterministic(cp, dev, dtype):
    """The last run to arrive adds a shared tile's pieces in K order, whichever it is: two calls
    give the same bits."""
    from gemmlab.numerics import bf16, fp8

    conv = bf16 if dtype == "bf16" else fp8
    M, N, K = 1000, 3000, 4096
    rng = cp.random.default_rng(11)
    a = conv.to_bits(rng.random((M, K), dtype=cp.float32) - 0.5)
    b = conv.to_bits(rng.random((N, K) if dtype == "fp8" else (K, N), dtype=cp.float32) - 0.5)
    run = _prepared(dtype, (M, N, K), config="64x128", streamk=1)
    assert run.plan.streamk > 0
    outs = []
    for _ in range(3):
        c = cp.full((M, N), 0x7FC0, dtype=cp.uint16)
        run(a, b, c)
        outs.append(c)
    assert bool((outs[0] == outs[1]).all()) and bool((outs[0] == outs[2]).all())


def test_bf16_wgmma_fallback_and_repitch_agree(cp, dev):
    for odd in ("repitch", "wgmma"):
        run = _prepared("bf16", (1000, 3001, 77), odd=odd)
        res = _check(cp, run, (1000, 3001, 77), "bf16", 7)
        assert res.ok, (odd, res.reason)
    assert _prepared("bf16", (1000, 3001, 77), odd="wgmma").rung.name == "wgmma_bf16_scalar"


@pytest.mark.parametrize("dtype", ["bf16", "fp8"])
def test_misaligned_views_are_copied(cp, dev, dtype):
    """A view one element into its buffer cannot be a TMA base address: the plan for that
    alignment copies it, and the product is still right."""
    from gemmlab.numerics import bf16, fp8

    conv = bf16 if dtype == "bf16" else fp8
    M, N, K = 256, 512, 512
    rng = cp.random.default_rng(3)
    a_buf = conv.to_bits(rng.random(M * K + 1, dtype=cp.float32) - 0.5)
    a = a_buf[1:].reshape(M, K)
    b_shape = (N, K) if dtype == "fp8" else (K, N)
    b = conv.to_bits(rng.random(b_shape, dtype=cp.float32) - 0.5)
    c = cp.zeros((M, N), dtype=cp.uint16)
    run = _prepared(dtype, (M, N, K))
    assert "repitch A" in run.rung_for(a, b, c).name
    run(a, b, c)
    bf = bf16.from_bits(c)
    af, bfl = conv.from_bits(a).astype(cp.float64), conv.from_bits(b).astype(cp.float64)
    want = af @ (bfl.T if dtype == "fp8" else bfl)
    err = float(cp.linalg.norm(bf - want) / cp.linalg.norm(want))
    assert err < 2e-2


@pytest.mark.parametrize("dtype", ["bf16", "fp8"])
def test_every_decode_instantiation(cp, dev, dtype):
    """The decode kernels (decode_tc.cu) forced at every token count up to their largest
    instantiation, every bf16 column strip, every cluster of blocks sharing a strip's K (bf16:
    one token), N not a multiple of the strip and K not a multiple of the warps' k-chunks (and
    shorter than one chunk per block of the cluster), beta = 0 and beta != 0."""
    from gemmlab.kernels import paths
    from gemmlab.runtime.dispatch_tc import decode_rows, max_decode_rows

    cols = paths.GEMV_BF16_COLS if dtype == "bf16" else (None,)
    bad = []
    for M in range(1, max_decode_rows(dtype) + 1):
        splits = paths.GEMV_SPLITS if dtype == "fp8" or decode_rows(dtype, M) == 1 else (1,)
        for N, K in ((4104, 4112), (8, 16), (1000, 14336), (200, 1040)):
            for c in cols:
                for ks in splits:
                    run = _prepared(dtype, (M, N, K), config="gemv", cols=c, split=ks)
                    strips = -(-N // (c or 16))
                    assert run.plan.config == "gemv" and run.grid == (strips, ks, 1)
                    for beta in (0.0, BETA):
                        res = _check(cp, run, (M, N, K), dtype,
                                     zlib.crc32(f"{dtype}{M}{N}{K}{c}{ks}{beta}".encode()),
                                     beta=beta)
                        if not res.ok:
                            bad.append((M, N, K, c, ks, beta, run.plan.name, res.reason))
    assert not bad, bad[:10]


def test_every_mma_decode_instantiation(cp, dev):
    """The bf16 tensor-core decode kernel (gemv_bf16_tc) at every strip width and cluster size,
    every token count to 32 (both 16-token tiles, partly empty), N not a multiple of the strip,
    K a multiple of 8 but not of the 32-row chunks (and shorter than one chunk per warp of the
    cluster), beta = 0 and beta != 0."""
    from gemmlab.kernels import paths
    from gemmlab.runtime.dispatch_tc import MMA_COLS, MMA_MAX_M

    bad = []
    for M in (1, 7, 9, 16, 17, MMA_MAX_M):
        for N, K in ((4104, 4104), (8, 16), (1000, 14336), (200, 1032)):
            for cols in MMA_COLS:
                for ks in paths.MMA_BF16_SPLITS:
                    if cols > 32 and M > 16:  # no such instantiation (an InputError: CPU-tested)
                        continue
                    run = _prepared("bf16", (M, N, K), config="mma", cols=cols, split=ks)
                    p = run.plan
                    assert p.config == "mma" and run.grid == (-(-N // p.gemv_cols), ks, 1)
                    assert p.name == p.gemv.name.removeprefix("dispatch_bf16_")
                    for beta in (0.0, BETA):
                        res = _check(cp, run, (M, N, K), "bf16",
                                     zlib.crc32(f"mma{M}{N}{K}{cols}{ks}{beta}".encode()),
                                     beta=beta)
                        if not res.ok:
                            bad.append((M, N, K, cols, ks, beta, p.name, res.reason))
    assert not bad, bad[:10]


def _both_betas(cp, run, shape, dtype, seed):
    """What fails of one prepared run, checked with beta = 0 and beta != 0 (inputs seeded from
    ``seed`` and beta): (shape, beta, plan, reason) each."""
    bad = []
    for beta in (0.0, BETA):
        res = _check(cp, run, shape, dtype, zlib.crc32(f"{seed}{beta}".encode()), beta=beta)
        if not res.ok:
            bad.append((shape, beta, run.plan.name, res.reason))
    return bad


@pytest.mark.parametrize("dtype", ["bf16", "fp8"])
def test_every_swap_decode_instantiation(cp, dev, dtype):
    """The swapped-operand wgmma decode kernel (decode_wgmma.cu) at every token tile the rules
    give (8 to 128, partly empty: 1, 9, 17, 33, 100 tokens), every cluster size and ring depth
    (K long enough to wrap every ring several times), N not a multiple of the 64-column strip
    (fp8: not of 8 either), K not a multiple of the 128-byte stage and shorter than one stage per
    CTA of the cluster (empty runs), beta = 0 and beta != 0."""
    from gemmlab.kernels import paths
    from gemmlab.runtime.dispatch_tc import swap_tokens

    odd_n = 203 if dtype == "fp8" else 200
    bad = []
    for M in (1, 9, 16, 17, 32, 33, 64, 100, 128):
        tn = swap_tokens(M)
        for N, K in ((4104, 4112), (8, 16), (1000, 14336), (odd_n, 1040)):
            for ks, st in itertools.product(paths.SWAP_SPLITS, paths.swap_stages(tn)):
                run = _prepared(dtype, (M, N, K), config="swap", split=ks, stages=st)
                p = run.plan
                assert p.config == "swap" and run.grid == (-(-N // 64), ks, 1)
                assert p.name == p.gemv.name.removeprefix(f"dispatch_{dtype}_")
                assert p.gemv.params["STAGES"] == st
                bad += _both_betas(cp, run, (M, N, K), dtype, f"swap{dtype}{M}{N}{K}{ks}{st}")
    assert not bad, bad[:10]


def test_swap_clusters_fit_where_the_plans_count_on_them(cp, dev):
    """choose_swap keeps every cluster of a split swapped kernel resident (cluster_slots, by the
    CTAs an SM holds by shared memory): the driver (cuOccupancyMaxActiveClusters,
    cuOccupancyMaxActiveBlocksPerMultiprocessor) holds at least that many clusters and CTAs an SM
    for every split instantiation - the plans never count on clusters that would wait. On 132
    SMs only: the table is the H100's and H200's; other SM counts get an estimate in proportion,
    which the chip's own grouping of SMs into GPCs may not meet."""
    pytest.importorskip("cuda.bindings", reason="cuOccupancyMaxActiveClusters needs cuda.bindings")
    if dev.sm_count != 132:
        pytest.skip(f"cluster_slots' table is for 132 SMs; {dev.name} has {dev.sm_count}")
    from gemmlab.kernels import paths
    from gemmlab.runtime import device
    from gemmlab.runtime import dispatch_tc as D
    from gemmlab.runtime.compile import compile_module

    module = compile_module(paths.translation_unit(paths.swap_kernels()), "decode_wgmma",
                            arch="sm_90a")
    over = []
    for k in paths.swap_kernels():
        ks = k.params["KS"]
        if ks == 1:
            continue
        fn = module.get_function(k.kernel)
        fn.max_dynamic_shared_size_bytes = k.dynamic_smem
        per_sm = D.ctas_per_sm(k)
        blocks = device.blocks_per_sm(fn, k.threads, k.dynamic_smem)
        fit = device.clusters_at_once(fn, (dev.sm_count, ks, 1), k.block, k.dynamic_smem)
        if blocks < per_sm or fit < D.cluster_slots(ks, per_sm, dev.sm_count):
            over.append((k.kernel, blocks, per_sm, fit, D.cluster_slots(ks, per_sm, dev.sm_count)))
    assert not over, over


@pytest.mark.parametrize("dtype", ["bf16", "fp8"])
def test_swap_decode_token_tiles(cp, dev, dtype):
    """Token tiles (Policy(tokens=...)): the 8-token tile (m64n8) and M past the tile, a CTA per
    token tile of each strip - the last tile partly empty (9, 17, 31, 33, 100 tokens) or whole
    (16, 40 over 8) - every cluster size, the shallowest and deepest ring, the ragged N and K of
    the test above, beta = 0 and beta != 0; the grid is strips x token tiles by the cluster."""
    from gemmlab.kernels import paths

    odd_n = 203 if dtype == "fp8" else 200
    bad = []
    for tn, M in ((8, 1), (8, 7), (8, 9), (8, 16), (8, 40), (16, 17), (16, 31), (32, 33),
                  (32, 100)):
        for N, K in ((4104, 4112), (8, 16), (1000, 14336), (odd_n, 1040)):
            depths = paths.swap_stages(tn)
            for ks, st in itertools.product(paths.SWAP_SPLITS, (min(depths), max(depths))):
                run = _prepared(dtype, (M, N, K), config="swap", split=ks, stages=st, tokens=tn)
                p = run.plan
                assert run.grid == (-(-N // 64) * -(-M // tn), ks, 1)
                assert p.gemv.params["TN"] == tn
                bad += _both_betas(cp, run, (M, N, K), dtype, f"tt{dtype}{tn}{M}{N}{K}{ks}{st}")
    assert not bad, bad[:10]


@pytest.mark.parametrize("dtype", ["bf16", "fp8"])
def test_decode_rule_picks_the_decode_kernel_for_aligned_tokens(cp, dev, dtype):
    # the rules' plans (CPU-tested rule by rule), run: bf16's token and fp8's 16 take the swapped
    # kernel, fp8's single token keeps the mma.sync kernel at N = 4096 where one CTA a strip (64)
    # pulls enough of DRAM - the H100's 3.35 TB/s, not the H200's 4.8, whose rule splits each
    # strip in two and so runs the swapped kernel (swap_keeps_gemv); 128 tokens over 1600 columns
    # take it too (SWAP_TILE_M), over 4096 the 64 x 64 tiles
    from gemmlab.hardware import find_gpu
    from gemmlab.runtime.dispatch_tc import swap_fill_ctas

    spec = find_gpu(dev.name)
    gbps = spec.dram_bytes_per_s / 1e9 if spec is not None else None
    fp8_token = "gemv" if swap_fill_ctas(dev.sm_count, gbps) <= 64 else "swap"
    for shape, want in (((1, 4096, 4096), "swap" if dtype == "bf16" else fp8_token),
                        ((16, 4096, 4096), "swap"), ((16, 1600, 6400), "swap"),
                        ((128, 1600, 6400), "swap"), ((128, 4096, 4096), "64x64")):
        run = _prepared(dtype, shape)
        assert run.plan.config == want, (shape, run.plan.name)
        res = _check(cp, run, shape, dtype, zlib.crc32(f"rule{dtype}{shape}".encode()))
        assert res.ok, (shape, res.reason)
