"""The tensor-core dispatch rungs' rules (gemmlab.runtime.dispatch_tc), on the CPU: which tile, split
and operand copies a shape gets and why, the geometry that follows, the split-K kernels' argument
list, and every kernel a plan can name compiling with nvcc for sm_90a without spills."""

from __future__ import annotations

import pytest

from conftest import NVCC_JOBS, requires_nvcc
from gemmlab.errors import InputError
from gemmlab.kernels import paths, registry
from gemmlab.kernels.source import wrapper
from gemmlab.runtime import dispatch_tc as D

H100 = 132


def _plan(dtype, M, N, K, **kw):
    ops = kw.pop("ops", D.Operands())
    return D.plan(dtype, M, N, K, H100, ops, D.Policy(**kw))


@pytest.mark.parametrize("dtype", D.DTYPES)
def test_the_largest_tile_that_fills_the_sms(dtype):
    # 4096^3: 512 wide tiles, 3.9 waves - under 8, so no clusters
    assert _plan(dtype, 4096, 4096, 4096).config == "128x256c1"
    # 8192^3: 2048 wide tiles, 15.5 waves: clusters of 2 share B
    assert _plan(dtype, 8192, 8192, 8192).config == "128x256c2"
    # 2048^3: 128 wide tiles on 132 SMs fill a wave (>= 90%) - fp8 takes the ping-pong twin
    # there (one round, equal balance: test_fp8_one_round_products_take_the_narrower_tile)
    assert _plan(dtype, 2048, 2048, 2048).config == ("128x256c1" if dtype == "bf16"
                                                     else "128x128pp")
    # 2048 x 1600: 112 wide tiles (0.85 of the SMs) fill; 1000 x 3000: 96 (0.73) do not
    assert _plan(dtype, 2048, 1600, 6400).config == ("128x256c1" if dtype == "bf16"
                                                     else "128x200c1")
    # ping-pong: the unclustered narrow tile (fp8's 112 columns: 216 tiles, 1.6 rounds, against
    # 128 x 128's 192 in 1.5 - a fraction 0.79 over 0.69, past NARROW_WIDTH_MARGIN)
    assert _plan(dtype, 1000, 3000, 80).config == ("128x128pp" if dtype == "bf16"
                                                   else "128x112pp")
    # 1024^3: 32 wide / 64 narrow / 64 of 64x256 do not fill, 128 of 64x128 do
    assert _plan(dtype, 1024, 1024, 1024).config == "64x128"
    # nothing fills, not even 64 x 128 (32 tiles): the most CTAs
    assert _plan(dtype, 512, 512, 512).config == "64x64"


def test_64x64_streams_where_its_tiles_make_one_wave_and_64x128s_leave_sms_idle():
    # 128 x 4096: 128 tiles of 64 x 64 (one wave, 128 rows a k) against 64 of 64 x 128 (192)
    assert D.stream_bytes_per_sm(128, 4096, "64x64", H100) == 64 + 64
    assert D.stream_bytes_per_sm(128, 4096, "64x128", H100) == 64 + 128
    for dtype in D.DTYPES:
        assert _plan(dtype, 128, 4096, 4096).config == "64x64"
        assert _plan(dtype, 128, 4096, 14336).config == "64x64"
        # past a wave of them (150 tiles: a second round) the wider tile keeps its lead
        assert _plan(dtype, 128, 4800, 1600).config == "64x128"
        assert _plan(dtype, 128, 11008, 4096).config == "128x128c1"
    # a near-tie keeps the earlier tile: 1 x 28672, 4 rounds of 65 rows vs 2 of 129
    assert D.choose_config("bf16", 1, 28672, 4096, H100) == "64x128"
    # fp8 takes it from 17 rows on (past 16 tokens it won at every serving batch measured); at
    # 16, where the decode rules hand over to the tiles, 64 x 128 measured faster
    assert _plan("bf16", 32, 8192, 8192).config == "64x64"
    assert _plan("fp8", 32, 8192, 8192).config == "64x64"
    assert D.choose_config("fp8", 16, 8192, 8192, H100) == "64x128"
    assert D.choose_config("bf16", 16, 8192, 8192, H100) == "64x64"
    assert _plan("fp8", D.FP8_TILE64_MIN_M, 4096, 4096).config == "64x64"
    assert D.choose_config("fp8", D.FP8_TILE64_MIN_M - 1, 4096, 4096, H100) == "64x128"


@pytest.mark.parametrize("dtype", D.DTYPES)
def test_65_to_128_rows_stream_on_64_row_tiles_on_every_gpu(dtype):
    # 128 x 64 split 2 (B from L2 once) is forced only: with 64 x 64's last row-tile boxed to its
    # rows it lost at 10 of 12 pairs on the H200 (dispatch_tc's 128x64c1 comment)
    h100, h200 = 3350.0, 4800.0  # datasheet GB/s: 25.4 and 36.4 an SM on 132 SMs
    for M in (65, 72, 96, 128):
        for gbps in (h100, h200, None):
            p = D.plan(dtype, M, 4096, 14336, H100, D.Operands(), D.Policy(), gbps)
            assert (p.config, p.splits) == ("64x64", 1), (M, gbps)
    p = D.plan(dtype, 128, 4096, 14336, H100, D.Operands(), D.Policy(config="128x64c1", split=2))
    assert (p.config, p.splits, p.ctas) == ("128x64c1", 2, 128)


@pytest.mark.parametrize("dtype", D.DTYPES)
def test_small_m_always_streams_with_64_row_tiles(dtype):
    for M in (D.SWAP_M + 1, 64, 128):
        p = _plan(dtype, M, 8192, 28672)
        assert p.config in ("64x64", "64x128"), (M, p.config)
    # forcing off the decode kernel (a tile config) gives the 64-row tile to a few tokens too
    assert _plan(dtype, 1, 8192, 28672, config="64x128").config == "64x128"
    # streaming tiles by the bytes the busiest SM reads: one wave of 64 x 128 (128 x 8192: 128
    # tiles) beats 128 x 128; 1.2 waves of it (128 x 10240: 160 tiles, B read twice) do not
    assert _plan(dtype, 128, 8192, 8192).config == "64x128"
    assert _plan(dtype, 128, 10240, 8192).config == "128x128c1"
    assert D.stream_bytes_per_sm(128, 10240, "64x128", H100) == 2 * (64 + 128)
    assert D.stream_bytes_per_sm(128, 10240, "128x128c1", H100) == 128 + 128
    # near-ties keep the tile with the most CTAs (1 x 28672: 258 vs 257 rows per k)
    assert _plan(dtype, 17, 28672, 4096, config=None).config == "64x128"
    assert _plan(dtype, 129, 8192, 8192).config.startswith("128x")
    # 128 x 28672: 112 tiles of 128 x 256 stream B in one round, 224 of 128 x 128 in two
    assert _plan(dtype, 128, 28672, 4096).config == "128x256c1"
    assert D.stream_bytes_per_sm(128, 28672, "128x256c1", H100) == 128 + 256
    assert _plan(dtype, 64, 28672, 4096).config != "128x256c1"  # ties 64 x 256: more CTAs win


def test_narrow_tile_only_for_a_real_balance_gain():
    # 4096 x 4224: 32 x 16.5 -> 544 wide tiles (balance 544/660 = 0.82), 1056 narrow (1.0): narrow
    assert D.choose_config("bf16", 4096, 4224, 4096, H100) == "128x128pp"
    # 4096 x 4096: wide 512 (0.97), narrow 1024 (0.97): wide
    assert D.choose_config("bf16", 4096, 4096, 4096, H100) == "128x256c1"


def test_fp8_takes_160_column_tiles_where_they_use_the_issued_mmas_better():
    # GPT-2 XL: N = 1600 and 4800 are 10 and 30 tiles of 160; 128 leaves half a tile over
    assert _plan("fp8", 8192, 1600, 6400).config == "128x160c1"  # 640 tiles: 4.8 waves
    # 8192 x 4800: 1216 wide tiles (9.2 waves) take clusters of 2, which kept their lead
    assert _plan("fp8", 8192, 4800, 1600).config == "128x256c2"
    assert _plan("fp8", 2048, 4800, 1600).config == "128x160c1"  # 480 tiles: 3.6 waves
    # 160 tiles are 1.2 waves (the second 21% full): 128 x 256's 112 tiles make one (and 128 x
    # 200's 128 one too, narrower: test_fp8_one_round_products_take_the_narrower_tile)
    assert _plan("fp8", 2048, 1600, 6400).config == "128x200c1"
    assert D.tiles(2048, 1600, "128x160c1") == 160
    # 128 divides N (4096, 6400, 10240): the wide tile wastes nothing either (at most 1.04 times
    # 128 x 160's issued fraction, under TILE160_MARGIN)
    for N in (4096, 6400, 10240):
        assert not D.config_rung("fp8", _plan("fp8", 8192, N, 4096).config).params["BN"] == 160, N
    # ... unless 128 x 256's last round leaves SMs idle that 160's fills: 4096 x 3200 (640 tiles of
    # 160, 5 rounds, fraction 0.97; 416 of 256, 3.2 rounds, 0.76)
    assert _plan("fp8", 4096, 3200, 4096).config == "128x160c1"
    assert _plan("fp8", 8192, 3200, 2048).config == "128x160c1"  # 0.97 vs 0.87: 1.12
    # 4096 x 3840: 0.91 vs 0.85, 1.067 over TILE160_MARGIN (128 x 256 before, at 1.10)
    assert _plan("fp8", 4096, 3840, 4096).config == "128x160c1"
    # 160 divides N and 128 does not, but 128 x 256's last round is as full or fuller: 4096 x
    # 4800 (1.0), 2048 x 8000 (0.91), 6144 x 4800 (1.018) take the wide tile
    for M, N in ((4096, 4800), (2048, 8000), (6144, 4800)):
        assert not D.tile160_wins("fp8", M, N, H100), (M, N)
        assert _plan("fp8", M, N, 1600).config == "128x256c1", (M, N)
    assert _plan("fp8", 2048, 9280, 4096).config == "128x128pp"  # 1.0: the rules' narrow tile
    # the streaming sizes (M <= 128) keep their rule
    assert _plan("fp8", 128, 4800, 1600).config == "64x128"
    # below the waves the rule needs, on a smaller GPU too
    assert not D.tile160_wins("fp8", 2048, 4800, 300)
    assert D.tile160_wins("fp8", 2048, 4800, 132)


H200_GBPS = 4800.0  # the H200's datasheet DRAM bandwidth, as the rung reads it from the spec table


def test_short_k_takes_the_ping_pong_tiles_on_the_h200():
    def h200(dtype, M, N, K):
        return D.plan(dtype, M, N, K, H100, D.Operands(), D.Policy(), H200_GBPS).config

    def short_k(dtype, M, N, K, chosen, sms=H100, gbps=H200_GBPS):
        return D.pingpong_short_k(dtype, M, N, K, chosen, sms, gbps)

    # a cooperative 128-row tile at least 160 wide gives way to the ping-pong tile - fp8's 128 x
    # 160 where 160 divides N, bf16's 128 x 128 - at K up to PINGPONG_MAX_KTILES k-tiles
    assert h200("fp8", 8192, 4800, 1600) == "128x160pp"  # H100: 128x256c2
    assert h200("fp8", 2048, 4800, 1600) == "128x160pp"  # H100: 128x160c1
    assert h200("fp8", 8192, 1600, 6400) == "128x160pp"  # 50 k-tiles
    assert h200("bf16", 8192, 4800, 1600) == "128x128pp"  # H100: 128x192c2
    assert h200("bf16", 8192, 6400, 1600) == "128x128pp"  # H100: 128x256c2
    # only where it was measured: the H100's bandwidth, or a GPU the spec table lacks, keeps the
    # cooperative tiles (the earlier tests above are the H100's plans)
    for dtype, M, N, K in (("fp8", 8192, 4800, 1600), ("bf16", 8192, 4800, 1600)):
        coop = D.cooperative_config(dtype, M, N, K, H100)
        assert _plan(dtype, M, N, K).config == coop == D.choose_config(dtype, M, N, K, H100, 3350.0)
        assert short_k(dtype, M, N, K, coop, gbps=None) is None
    # the line, in k-tiles of each dtype (fp8 128 of K, bf16 64), at 8192 x 10240 where the
    # fractions tie (0.97)
    for dtype in D.DTYPES:
        last = D.PINGPONG_MAX_KTILES * D.BK[dtype]
        assert h200(dtype, 8192, 10240, last).endswith("pp"), dtype
        assert short_k(dtype, 8192, 10240, last + 1, "128x256c2") is None
        assert h200(dtype, 8192, 10240, last + 1) == D.cooperative_config(
            dtype, 8192, 10240, last + 1, H100)
    # past it bf16 keeps its cooperative tile; fp8 takes the ping-pong tile only more than
    # LONG_K_MARGIN ahead (8192 x 4800: 128 x 160's 15 whole rounds, 0.969, over 128 x 256's 0.909)
    assert short_k("bf16", 8192, 4800, 3585, "128x192c2") is None
    assert D.issued_fraction(8192, 4800, "128x160pp", H100) / D.issued_fraction(
        8192, 4800, "128x256c2", H100) == pytest.approx(1.066, abs=1e-3)
    assert short_k("fp8", 8192, 4800, 7169, "128x256c2") == "128x160pp"
    # bf16 at 100 k-tiles keeps its clustered 128 x 160 (8192 x 1600 x 6400)
    assert h200("bf16", 8192, 1600, 6400) == "128x160c2"
    # where 160 does not divide N, fp8 takes the best-fraction width of 160, 168 and 176 columns
    # if it is no worse than the cooperative tile's: 8192 x 6144 in 2240 tiles of 176, 17 rounds
    # (0.996) against 128 x 256's 1536 in 11.6 (0.97); 4096 x 11008 in 2112 of 168, 16 rounds
    # (0.993 against 0.948)
    assert h200("fp8", 8192, 6144, 4096) == "128x176pp"  # H100: 128x256c2
    assert h200("fp8", 4096, 11008, 4096) == "128x168pp"
    # 8192 x 4096: 160 (0.955), 168 (0.909), 176 (0.94) all under 128 x 256's 0.97; 128 x 128,
    # whose fraction ties it, only up to PP128_MAX_KTILES (24: K <= 3072 in fp8's k-tiles of 128)
    assert h200("fp8", 8192, 4096, 3072) == "128x128pp"
    assert h200("fp8", 8192, 4096, 3200) == "128x256c1"
    assert h200("bf16", 8192, 4096, 2048) == "128x128pp"
    # ... and only where no other width replaces the cooperative tile: 8192 x 6144 x 2048 takes
    # 176 columns (0.996) though 128 x 128 also ties 128 x 256 there
    assert h200("fp8", 8192, 6144, 2048) == "128x176pp"
    assert D.issued_fraction(8192, 6144, "128x128pp", H100) >= D.issued_fraction(
        8192, 6144, "128x256c2", H100)
    # the ping-pong tiles use the issued MMA area less well: 2560 x 4800, 128 x 160's 480 tiles
    # make 4 rounds (0.909), 128 x 256's 380 make 3 (0.947)
    assert D.issued_fraction(2560, 4800, "128x160pp", H100) < D.issued_fraction(
        2560, 4800, "128x256c1", H100)
    assert h200("fp8", 2560, 4800, 4096) == "128x256c1"
    # ... but at 13 k-tiles 128 x 128's 760 tiles (5.8 rounds) fill as well as 128 x 256's 380
    assert h200("fp8", 2560, 4800, 1600) == "128x128pp"
    # under two rounds of ping-pong tiles: 2048 x 1600's 160 tiles of 160 (128 x 200 keeps its
    # one round), bf16 2048^3's 256 of 128 - and the rounds follow the SMs
    assert h200("fp8", 2048, 1600, 1600) == "128x200c1"
    assert h200("bf16", 2048, 2048, 2048) == "128x256c1"
    assert short_k("fp8", 2048, 4800, 1600, "128x160c1") == "128x160pp"
    assert short_k("fp8", 2048, 4800, 1600, "128x160c1", sms=2 * H100) is None
    # only cooperative tiles at least 160 wide give way, never under STREAM_M rows, and only
    # where C's rows take TMA stores
    for chosen in ("128x128pp", "128x128c1", "128x128c2", "64x256", "64x128"):
        assert short_k("bf16", 8192, 4800, 1600, chosen) is None, chosen
    assert short_k("bf16", 128, 4800, 1600, "128x256c1") is None
    assert short_k("bf16", 8192, 4804, 1600, "128x256c2") is None
    # fp8 only: bf16 has no 128 x 160 ping-pong instantiation, and forcing it says why
    assert "128x160pp" in D.configs("fp8") and "128x160pp" not in D.configs("bf16")
    with pytest.raises(InputError, match="fp8 only .bf16's led no shape"):
        _plan("bf16", 8192, 4800, 1600, config="128x160pp")


def test_fp8_one_round_products_take_the_narrower_tile():
    # 2048 x 1600: 112 tiles of 256 columns (the last with 64 of them in N) or 128 of 200 (none
    # wasted): one round either way, so each SM's tile is 56 columns narrower
    assert D.tiles(2048, 1600, "128x256c1") == 112 and D.tiles(2048, 1600, "128x200c1") == 128
    assert D.tile200_wins("fp8", 2048, 1600, H100)
    assert _plan("fp8", 2048, 1560, 6400).config == "128x200c1"
    assert _plan("fp8", 2048, 1600, 4096).config == "128x200c1"
    # 2304 x 1600: 200's 144 tiles would take a second round; 256's 126 do not
    assert not D.tile200_wins("fp8", 2304, 1600, H100)
    assert _plan("fp8", 2304, 1600, 4096).config == "128x256c1"
    # ... the rules never give 128 x 200 more than one round, nor to bf16 (no such instantiation)
    assert _plan("fp8", 8192, 4800, 1600).config == "128x256c2"
    assert _plan("fp8", 8192, 1600, 6400).config == "128x160c1"
    assert "128x200c1" not in D.configs("bf16") and "128x200c1" in D.configs("fp8")
    with pytest.raises(InputError, match="fp8 only"):
        _plan("bf16", 2048, 1600, 6400, config="128x200c1")
    # one round of 128 x 256 and the ping-pong tiles (two per SM) balance as well: ping-pong
    for M, N in ((2048, 2048), (1024, 4096), (2048, 1792), (1536, 2560)):
        assert D.tiles(M, N, "128x256c1") <= H100, (M, N)
        assert D.pingpong_one_round("fp8", M, N, "128x256c1", "128x128pp", H100), (M, N)
        assert _plan("bf16", M, N, 4096).config == "128x256c1", (M, N)  # bf16 keeps the wide
    # ... and pingpong_width then keeps 128 x 128, or at 2048 x 1792 (224 tiles of 128: 1.7
    # rounds) takes 112 columns (256 tiles, 1.9 rounds: 0.97 against 0.85)
    for M, N in ((2048, 2048), (1024, 4096), (1536, 2560)):
        assert _plan("fp8", M, N, 4096).config == "128x128pp", (M, N)
    assert _plan("fp8", 2048, 1792, 4096).config == "128x112pp"
    # more than one round of wide tiles: the wide tile, as before (4096^3: 512 tiles)
    assert _plan("fp8", 4096, 4096, 4096).config == "128x256c1"
    assert not D.pingpong_one_round("fp8", 4096, 4096, "128x256c1", "128x128pp", H100)


def test_fp8_two_or_three_rounds_take_the_best_fraction():
    def fractions(M, N):
        return {c: round(D.issued_fraction(M, N, c, H100), 3) for c in D.FRACTION_TILES}

    # 4096 x 1600: 128 x 256 makes 224 tiles (2 rounds), 128 x 200 256 tiles (2 rounds, none
    # wasted past N), 128 x 160 320 (3 rounds), ping-pong 416 (4 rounds)
    assert fractions(4096, 1600) == {"128x256c1": 0.758, "128x200c1": 0.97, "128x160c1": 0.808,
                                     "128x128pp": 0.758}
    assert _plan("fp8", 4096, 1600, 8192).config == "128x200c1"  # was 128 x 160 (tile160_wins)
    # ... but 128 x 200 only from TILE200_MIN_K: at K = 1600 the next best, 128 x 160
    assert _plan("fp8", 4096, 1600, D.TILE200_MIN_K - 1).config == "128x160c1"
    assert _plan("fp8", 2048, 3200, 1600).config == "128x160c1"
    assert _plan("fp8", 2048, 3200, 4096).config == "128x200c1"
    # 3072 x 1600: ping-pong by balance before; 128 x 160's 240 tiles make 2 rounds at 0.91
    assert _plan("fp8", 3072, 1600, 4096).config == "128x160c1"
    # 2560 x 2400: ping-pong's 380 tiles fill 3 rounds (0.95) - the others waste columns past N
    assert _plan("fp8", 2560, 2400, 4096).config == "128x128pp"
    # equal fractions go to the wider tile: 4096 x 2048, 256 tiles of 256 or 512 of 128 (2 or 4
    # rounds, none idle)
    f = fractions(4096, 2048)
    assert f["128x256c1"] == f["128x128pp"] and _plan("fp8", 4096, 2048, 4096).config == "128x256c1"
    # 2048 x 4000: 128 x 256's 256 tiles fill two rounds (0.95), 128 x 160's 400 leave a fourth
    # nearly empty (0.76) - the wide tile, by both rules
    assert not D.tile160_wins("fp8", 2048, 4000, H100)
    assert _plan("fp8", 2048, 4000, 4096).config == "128x256c1"
    # outside two or three rounds of 128 x 256 the other rules stand
    assert D.fraction_tile("fp8", 2048, 1600, 6400, H100) is None  # one round: 128 x 200's rule
    assert D.fraction_tile("fp8", 4096, 3200, 4096, H100) is None  # 4 rounds: 128 x 160's
    assert _plan("fp8", 4096, 3200, 4096).config == "128x160c1"
    # neither bf16, nor rows under STREAM_M, nor N whose bf16 rows of C take no TMA stores
    assert D.fraction_tile("bf16", 4096, 1600, 8192, H100) is None
    assert D.fraction_tile("fp8", 4096, 1604, 8192, H100) is None
    assert D.fraction_tile("fp8", 128, 28672, 8192, H100) is None
    # the rounds follow the GPU's SMs: on 264 SMs 4096 x 1600 makes one round of 128 x 256
    assert D.fraction_tile("fp8", 4096, 1600, 8192, 2 * H100) is None


def test_128x200_tile_stores_c_in_one_unswizzled_box_a_piece():
    r = D.config_rung("fp8", "128x200c1")
    assert r.params["BN"] == 200 and r.params["EPI_PIECE"] == 200 and r.c_box_cols == 200
    grid, block, smem = r.launch_config(2048, 1600, 6400, sms=H100)
    assert grid == (128, 1, 1) and block == (384, 1, 1) and smem <= 227 * 1024
    from gemmlab.runtime import tma
    c = tma.c_spec(2048, 1600, 200)
    assert c.box == (200, 64) and c.swizzle == 0
    c.check()  # 400-byte box rows: a multiple of 16, no swizzle span to fit
    assert tma.c_spec(2048, 1600, 32).swizzle == 64 and tma.c_spec(2048, 1600).swizzle == 128
    for bad in (44, 4, 264):  # 88 bytes; under 8 columns; past the 256-element box side
        with pytest.raises(ValueError, match="multiple of 8"):
            tma.c_spec(2048, 1600, bad)
    # 160 and 192 keep their boxes (a 32- or 64-column box divides them)
    assert D.config_rung("fp8", "128x160c1").c_box_cols == 32
    assert D.config_rung("fp8", "128x192c1").c_box_cols == 64


def test_split_k_is_off_by_default_and_can_be_forced():
    # automatic: few tiles (under a quarter of the SMs) and at least 48 k-tiles a slice
    # 25 tiles of 64 x 64, 224 k-tiles (bf16 17 tokens would take the swapped kernel: forced off)
    assert _plan("bf16", 17, 1600, 14336, config="64x64").splits == 2
    assert _plan("bf16", 17, 1600, 14336).config == "swap"
    assert _plan("bf16", 16, 4096, 14336).config == "swap"  # 16 tokens: the swapped decode kernel
    # 32 tiles of 64 x 128, 112 k-tiles of 128 (the rules now give fp8's 17 tokens 64 x 64)
    assert _plan("fp8", 17, 4096, 14336, config="64x128").splits == 2
    assert _plan("bf16", 17, 4096, 4096).splits == 1  # 64 k-tiles: 32 a slice, too short
    assert _plan("fp8", 128, 1600, 6400, config="64x64").splits == 1  # 50 k-tiles
    assert _plan("bf16", 17, 8192, 8192).splits == 1  # 128 tiles of 64 x 64: enough of the SMs
    assert all(_plan("bf16", M, 4096, 14336).splits == 1 for M in (1, 128, 1024))
    p = _plan("bf16", 1, 4096, 14336, config="64x128", split=4)
    assert (p.config, p.splits, p.name) == ("64x128", 4, "split-K 4 64x128")
    assert p.rung.splitk and p.rung.name == "dispatch_bf16_64x128_splitk"
    assert p.counters == 1 * 32 * 1  # one tile-row of 32 tiles, one 64-row piece each
    # a slot of 64 x 128 floats per slice of each tile (the rows past M are neither written
    # nor read: the kernel's threads that hold none of C's rows skip them)
    assert p.partial_floats == 4 * 32 * 64 * 128
    assert p.workspace_bytes == (p.partial_floats + p.counters) * 4
    assert _plan("fp8", 128, 4800, 1600, config="128x256c2", split=2).partial_floats == (
        2 * 19 * 2 * 128 * 256)  # clusters of 2 along M: 19 units of 2 CTAs, the second's rows
    # all past M (its threads neither park nor add)
    assert p.ctas == 128
    with pytest.raises(InputError, match="only 2 k-tiles"):
        _plan("bf16", 64, 64, 128, split=3)


@pytest.mark.parametrize("bad", [dict(config="256x256"), dict(split=0), dict(split=True),
                                 dict(split=33), dict(odd="pad"), dict(streamk=-1),
                                 dict(streamk=True), dict(streamk=9), dict(streamk=1, split=2),
                                 dict(streamk=0, config="gemv")])
def test_bad_policies_are_one_line_input_errors(bad):
    with pytest.raises(InputError, match="dispatch policy"):
        D.Policy(**bad)


def test_bad_dtype_and_shape():
    with pytest.raises(InputError, match="dtype"):
        D.plan("fp32", 8, 8, 8, H100)
    with pytest.raises(InputError):
        D.plan("bf16", 0, 8, 8, H100)


def test_bf16_odd_k_or_n_copies_that_operand_to_whole_128_byte_lines():
    # K = 77 breaks the 16-byte pitch: A's copy takes rows of 128 elements (256 bytes, 2 lines);
    # B (N = 1000: a 16-byte pitch, not whole lines) stays - K is under LINE_COPY_MIN_K
    p = _plan("bf16", 3000, 1000, 77)
    assert (p.copy_a, p.copy_b, p.lda, p.ldb) == (True, False, 128, 1000)
    p = _plan("bf16", 2048, 4095, 4096)
    assert (p.copy_a, p.copy_b, p.lda, p.ldb) == (False, True, 4096, 4096)
    assert p.name == "repitch B + 128x256c1"
    assert p.workspace_bytes == 4096 * 4096 * 2
    p = _plan("bf16", 4097, 4097, 4097)  # 4104 would be a 16-byte pitch; 4160 is 65 lines
    assert (p.lda, p.ldb) == (4160, 4160) and "whole 128-byte lines" in p.why
    aligned = _plan("bf16", 4096, 4096, 4096)
    assert not (aligned.copy_a or aligned.copy_b) and aligned.workspace_bytes == 0


def test_bf16_b_off_whole_lines_is_copied_where_enough_row_tiles_read_it():
    # N = 3000: 6000-byte rows, a 16-byte pitch but 46.9 lines; 32 row tiles, K = 4096
    assert D.copy_b_to_lines("bf16", 4096, 3000, 4096)
    p = _plan("bf16", 4096, 3000, 4096)
    assert (p.copy_a, p.copy_b, p.ldb) == (False, True, 3008)
    # too few row tiles (8 < LINE_COPY_MIN_ROW_TILES), too short a K, or whole lines already
    assert not _plan("bf16", 1000, 3000, 4096).copy_b
    assert not _plan("bf16", 4096, 3000, D.LINE_COPY_MIN_K - 64).copy_b
    assert not D.copy_b_to_lines("bf16", 4096, 3008, 4096)
    # fp8's B (N x K, rows of K bytes) is not: there the copy measured a loss
    assert not D.copy_b_to_lines("fp8", 8192, 4800, 1600)
    assert not _plan("fp8", 8192, 4800, 1600).copy_b
    # the scalar fallback policy keeps such shapes on TMA, uncopied
    p = _plan("bf16", 4096, 3000, 4096, odd="wgmma")
    assert p.config != "wgmma" and not p.copy_b


def test_fp8_odd_k_copies_both_k_major_operands():
    p = _plan("fp8", 2048, 4095, 4088)  # N is free for e4m3 (B is N x K); K % 16 != 0
    assert (p.copy_a, p.copy_b, p.lda, p.ldb) == (True, True, 4096, 4096)
    assert not _plan("fp8", 2048, 4095, 4096).copy_b
    p = _plan("fp8", 4096, 4096, 4104)  # 4112 would be a 16-byte pitch; 4224 is 33 lines
    assert (p.lda, p.ldb) == (4224, 4224)


def test_misaligned_pointers_are_copied():
    p = _plan("bf16", 256, 512, 512, ops=D.Operands(a16=False))
    assert p.copy_a and not p.copy_b and p.lda == 512


def test_wgmma_fallback_is_bf16_only():
    p = _plan("bf16", 3000, 1000, 77, odd="wgmma")
    assert p.config == "wgmma" and p.rung.name == "wgmma_bf16_scalar" and p.name == "wgmma_bf16_scalar"
    assert not _plan("bf16", 4096, 4096, 4096, odd="wgmma").config == "wgmma"  # aligned: TMA
    with pytest.raises(InputError, match="bf16 only"):
        _plan("fp8", 3000, 1000, 77, odd="wgmma")


@pytest.mark.parametrize("config", D.CONFIGS)
def test_grid_is_whole_clusters_within_the_sms(config):
    for M, N, S in [(1, 1, 1), (8192, 8192, 1), (300, 520, 3), (4097, 264, 8)]:
        ctas = D.grid_ctas(M, N, config, S, H100)
        t = D._TILES[config]
        assert 1 <= ctas <= H100 and ctas % t.ctas == 0
        # every cluster resident at once (one CTA an SM): a cluster past them would run its
        # tiles after the others' (64x32c2x4 on 132 SMs: 15 clusters of 8, not 16)
        assert ctas // t.ctas <= D.cluster_slots(t.ctas, 1, H100)
        # no CTA without a unit: a cluster's rows and columns are whole tile-rows and
        # tile-columns, the last cluster's maybe partly empty
        units = -(-(-(-M // t.bm)) // t.cluster) * -(-(-(-N // t.bn)) // t.cluster_n)
        assert ctas <= units * t.ctas * S


def test_a_persistent_grid_launches_only_the_clusters_that_fit():
    assert D.grid_ctas(8192, 8192, "64x32c2x4", 1, H100) == 15 * 8
    assert D.cta_slots("64x32c2x4", H100) == 120
    assert D.streamk_tiles(8192, 8192, "64x32c2x4", H100, 0) == (128 * 256) // 8 % 15
    # pairs and single CTAs: every SM
    assert D.grid_ctas(8192, 8192, "128x256c2", 1, H100) == H100
    assert D.grid_ctas(8192, 8192, "128x128pp", 1, 114) == 114


def test_split_rungs_take_splits_and_the_workspace():
    r = D.config_rung("bf16", "64x128", split=True)
    text = wrapper(r)
    assert "int K, int splits, float* __restrict__ W, float alpha" in text
    # C leaves by TMA stores, as from the whole tiles (the last slice's fixup feeds the epilogue)
    assert "C, splits, W);" in text and "&tmC, M, N, K" in text
    assert r.out_dtype == "bf16" and r.params["EPI_PIECE"] == 128 and r.tma_store
    plain = D.config_rung("fp8", "128x256c2")
    assert "splits" not in wrapper(plain) and plain.tma_store


def _stream_k_pieces(units, G, nk, sk):
    """block_order.cuh's for_each_work<2>, line for line: (cluster, tile, kt0, kt1, parts, own,
    slot) for every piece, where slot is (cluster, sk_slot) for pieces of shared tiles."""
    sk = min(sk, units)
    dp, I = units - sk, sk * nk
    R = min(G, I)  # sk_runs: clusters with a run
    owner = lambda i: ((i + 1) * R - 1) // I  # noqa: E731
    start = lambda g: I * g // R  # noqa: E731
    for g in range(G):
        for u in range(g, dp, G):
            yield g, u, 0, nk, 1, 0, None
        s, end = (start(g), start(g + 1)) if g < R else (0, 0)
        while s < end:
            j = s // nk
            t0 = j * nk
            lo, hi = owner(t0), owner(t0 + nk - 1)
            kt0, kt1 = s - t0, min(nk, end - t0)
            # the reader's view of contributor g's slot (tc::streamk_fixup's slot(z))
            which = 0 if start(g) >= t0 else 1
            yield g, dp + j, kt0, kt1, hi - lo + 1, g - lo, (g, which) if hi > lo else None
            s = t0 + kt1


@pytest.mark.parametrize("units,G,nk,sk", [(448, 132, 100, 184), (16, 132, 65, 16),
                                           (224, 132, 64, 224), (1216, 66, 25, 28 + 66),
                                           (5, 7, 3, 5), (300, 132, 1, 168), (64, 132, 224, 64),
                                           (272, 66, 5, 8), (1, 132, 2, 1)])
def test_stream_k_covers_every_k_step_once_in_equal_runs_and_slots_never_collide(units, G, nk, sk):
    pieces = list(_stream_k_pieces(units, G, nk, sk))
    steps = [(t, k) for _, t, k0, k1, *_ in pieces for k in range(k0, k1)]
    assert sorted(steps) == [(t, k) for t in range(units) for k in range(nk)]  # once each
    by_tile = {}
    for g, t, k0, k1, parts, own, slot in pieces:
        by_tile.setdefault(t, []).append((own, k0, k1, parts, g, slot))
    for t, ps in by_tile.items():
        ps.sort()
        assert [p[0] for p in ps] == list(range(len(ps)))  # own numbers the pieces 0..parts-1
        assert all(p[3] == len(ps) for p in ps)  # every piece knows how many share the tile
        assert [p[1] for p in ps] == sorted(p[1] for p in ps)  # in K order
        assert [p[4] for p in ps] == list(range(ps[0][4], ps[0][4] + len(ps)))  # neighbours
    slots = [p[6] for p in pieces if p[6] is not None]
    assert len(slots) == len(set(slots))  # two slots per cluster are enough
    work = [sum(k1 - k0 for g2, _, k0, k1, *_ in pieces if g2 == g) for g in range(G)]
    busy = [w for w in work if w]
    assert max(busy) - min(busy) <= (1 if (units - min(sk, units)) % G == 0 else nk + 1)
    assert len(busy) == min(G, units - min(sk, units) + min(sk, units) * nk)  # no empty run


def test_stream_k_plans_share_the_last_waves_and_size_the_workspace():
    # 8192 x 1600 x 6400: 448 tiles of 128 x 256 = 3.4 waves on 132 SMs
    p = _plan("bf16", 8192, 1600, 6400, config="128x256c1", streamk=1)
    assert (p.streamk, p.splits, p.ctas, p.name) == (448 % 132 + 132, 1, 132, "stream-K 128x256c1")
    assert p.rung.name == "dispatch_bf16_128x256c1_streamk" and p.rung.splitk and p.rung.tma_store
    assert p.counters == p.streamk * 2  # two 64-row pieces per tile
    assert p.workspace_bytes == (132 * 2 * 128 * 256 + p.counters) * 4
    assert "the last 184 tiles" in p.why and p.params["STREAMK"] == 184
    assert _plan("bf16", 8192, 1600, 6400, config="128x256c1", streamk=0).streamk == 52
    # clusters of two: units are pairs of tiles, the grid whole clusters
    q = _plan("fp8", 8192, 4800, 1600, config="128x256c2", streamk=1)
    assert (q.streamk, q.ctas) == (608 % 66 + 66, 132) and q.counters == q.streamk * 2 * 2
    # fewer tiles than SMs: all of them, every CTA busy
    r = _plan("bf16", 128, 4096, 14336, config="64x128", streamk=0)
    assert (r.streamk, r.ctas) == (64, 132) and "every tile" in r.why
    # whole waves and no full wave asked for: nothing to share, a plain plan
    s = _plan("bf16", 128 * 132, 256, 4096, config="128x256c1", streamk=0)
    assert (s.streamk, s.name, s.workspace_bytes) == (0, "128x256c1", 0)
    assert D.streamk_tiles(128 * 132, 256, "128x256c1", H100, 1) == 132


def test_stream_k_rungs_keep_the_tma_store_epilogue():
    r = D.config_rung("bf16", "128x256c2", streamk=True)
    assert r.name == "dispatch_bf16_128x256c2_streamk" and r.params["EPI_PIECE"] > 0
    assert "C, splits, W);" in wrapper(r) and "&tmC" in wrapper(r)
    with pytest.raises(ValueError):
        D.config_rung("bf16", "64x128", split=True, streamk=True)


def test_dispatchers_are_abstract_rungs():
    for name in ("dispatch", "dispatch_bf16", "dispatch_fp8"):
        assert registry.abstract(name)
    assert registry.get("dispatch_bf16").dtype == "bf16" and registry.get("dispatch_fp8").dtype == "fp8"
    assert not registry.abstract("persistent_bf16")


@requires_nvcc
def test_every_plan_kernel_compiles_without_spills():
    from concurrent.futures import ThreadPoolExecutor

    from gemmlab.runtime import nvcc

    # every configuration as the rules launch it; its split-K twin for single CTAs only - a twin
    # differs from its plain kernel in the consumers' finish, which no cluster path touches, and
    # the clustered twins are compiled and run by the GPU tests (each one compiled here cost ~0.6 s)
    single = lambda c: D._TILES[c].ctas == 1 and not D._TILES[c].pingpong  # noqa: E731
    rungs = [D.config_rung(dt, c) for dt in D.DTYPES for c in D.configs(dt)]
    rungs += [D.config_rung(dt, c, split=True) for dt in D.DTYPES for c in D.configs(dt) if single(c)]
    # stream-K's fixup holds its batches beside the accumulator: compiled where that is widest
    # under the 168-register cap of two consumer warpgroups (BN >= 160; the 64-row tiles get 232)
    rungs += [D.config_rung(dt, c, streamk=True) for dt in D.DTYPES for c in D.configs(dt)
              if D._TILES[c].bm == 128 and D._TILES[c].bn >= 160 and single(c)]
    # the swapped decode kernels: every token tile x cluster at its deepest ring, and every ring
    # of the 16-token tile (a ring's depth is a constant of the loop, not of the registers; the
    # GPU tests compile and run all 176: compiling them here cost ~10 s)
    swap_sample = [paths.swap_kernel(d, tn, ks, max(paths.swap_stages(tn)))
                   for d in paths.SWAP_DTYPES for tn in paths.SWAP_TOKENS for ks in paths.SWAP_SPLITS]
    swap_sample += [paths.swap_kernel(d, 16, 1, st) for d in paths.SWAP_DTYPES
                    for st in paths.swap_stages(16)[:-1]]
    # four translation-unit kinds, compiled side by side (each is one or two nvcc runs)
    with ThreadPoolExecutor(max_workers=4) as pool:
        main = pool.submit(nvcc.resources, rungs, archs=("sm_90a",), jobs=NVCC_JOBS)
        helper_job = pool.submit(nvcc.resources, paths.tc_helper_kernels(), archs=("sm_80", "sm_90"),
                                 jobs=NVCC_JOBS, unit=paths.translation_unit)
        decode_job = pool.submit(nvcc.resources, paths.gemv_kernels(), archs=("sm_90a",),
                                 jobs=NVCC_JOBS, unit=paths.translation_unit)
        swap_job = pool.submit(nvcc.resources, swap_sample, archs=("sm_90a",),
                               jobs=NVCC_JOBS, unit=paths.translation_unit)
        report, helpers, decode = main.result(), helper_job.result(), decode_job.result()
        swap = swap_job.result()
    assert {r.kernel for r in report} == {r.kernel for r in rungs}
    for r in report:
        assert not r.spills and not r.stack_frame, r.kernel
        assert r.registers <= (232 if "_64x" in r.kernel else 168), (r.kernel, r.registers)
    assert len(helpers) == 4 and not any(h.spills for h in helpers)
    # the decode kernels: mma.sync e4m3 needs sm_89+; no spills even at 16 tokens x 8 columns
    assert {d.kernel for d in decode} == {k.kernel for k in paths.gemv_kernels()}
    assert not any(d.spills or d.stack_frame for d in decode), decode
    # the swapped-operand wgmma decode kernels: m64n8 to m64n128 accumulators (4-64 a thread)
    assert {d.kernel for d in swap} == {k.kernel for k in swap_sample} and len(swap) == 48
    assert not any(d.spills or d.stack_frame or d.registers > 128 for d in swap), swap


@pytest.mark.parametrize("dtype", D.DTYPES)
def test_a_few_aligned_tokens_run_the_swapped_decode_kernel(dtype):
    for M in (1, 3, 8, 9, 16):
        p = _plan(dtype, M, 4096, 14336) if dtype == "fp8" and M <= 8 else _plan(dtype, M, 4096, 4096)
        if dtype == "fp8" and M <= D.DECODE_M[dtype]:  # fp8's mma.sync kernel keeps these
            assert (p.config, p.gemv_rows) == ("gemv", 8), (M, p)
            continue
        tile = 8 if M <= 8 else 16  # up to 8 tokens the 8-token tile (SWAP_RULE_MIN_TOKENS)
        assert (p.config, p.gemv_rows, p.gemv_cols) == ("swap", tile, 64), (M, p)
        assert not (p.copy_a or p.copy_b) and p.workspace_bytes == 0
        # the profiler's dispatch filter (^gemmlab_dispatch_(bf16|fp8)_) finds the kernel
        assert p.kernel.startswith(f"gemmlab_dispatch_{dtype}_swap_m{tile}_")
        assert p.name == p.gemv.name.removeprefix(f"dispatch_{dtype}_")
        assert p.gemv.arch == "sm_90a" and p.gemv.threads == 160
        with pytest.raises(ValueError, match="decode kernel"):
            p.rung
    # past SWAP_M, or without 16-byte rows / aligned operands, the TMA tiles
    assert _plan(dtype, D.SWAP_M + 1, 4096, 4096).config not in D.DECODE_CONFIGS
    assert _plan(dtype, 16, 4096, 4092 if dtype == "bf16" else 4088).config not in D.DECODE_CONFIGS
    assert _plan(dtype, 16, 4096, 4096, ops=D.Operands(a16=False)).config not in D.DECODE_CONFIGS
    assert _plan(dtype, 16, 4096, 4096, ops=D.Operands(b16=False)).config not in D.DECODE_CONFIGS
    # C needs no alignment: it is stored element by element
    assert _plan(dtype, 16, 4096, 4096, ops=D.Operands(c16=False)).config == "swap"


def test_swap_plan_has_ctas_for_the_dram_bandwidth_and_keeps_11_mb_of_b_in_flight():
    # (CTAs per strip, ring stages) where the H100 sweep measured them (132 SMs)
    assert D.choose_swap("bf16", 1600, 6400, H100) == (4, 8)  # 25 strips x 4 = 100 CTAs
    assert D.choose_swap("bf16", 4096, 4096, H100) == (1, 16)  # 64 CTAs pull 2.75 TB/s
    assert D.choose_swap("bf16", 6144, 4096, H100) == (1, 8)  # 96 x 12 = 1152 > 1100
    assert D.choose_swap("bf16", 4800, 1600, H100) == (1, 12)
    assert D.choose_swap("fp8", 11008, 4096, H100) == (1, 6)  # 172 CTAs
    # 448 CTAs: no ring keeps ~11 MB in flight; the shallowest keeps them all resident
    assert D.choose_swap("bf16", 28672, 4096, H100) == (1, 4)
    # no CTA with a run under SWAP_MIN_RUN k-tiles: K = 512 (8 k-tiles) shares by 2 at most
    assert D.choose_swap("bf16", 1600, 512, H100)[0] == 2
    assert D.choose_swap("bf16", 8, 16, H100)[0] == 1
    # residency: 160 CTAs of a 12-stage ring (one an SM) would run in two waves
    ks, st = D.choose_swap("fp8", 10240, 8192, H100)
    k = D.paths.swap_kernel("fp8", 16, ks, st)
    per_sm = D.SM90_SMEM_PER_SM // (k.dynamic_smem + D.SMEM_RESERVED_PER_BLOCK)
    assert (ks, st) == (1, 6) and 160 <= H100 * per_sm
    # the H200 (4.8 TB/s): a CTA streams no faster, so 64 strips want 2 CTAs each - but a split
    # never puts more CTAs than SMs on the stream (75 strips x 2 = 150 lost on both GPUs)
    assert round(D.swap_fill_ctas(H100), 1) == round(D.swap_fill_ctas(H100, 3350.0), 1) == 62.3
    assert round(D.swap_fill_ctas(H100, 4800.0), 1) == 89.3
    assert D.choose_swap("bf16", 4096, 14336, H100, 4800.0) == (2, 8)
    assert D.choose_swap("fp8", 4800, 1600, H100, 4800.0) == (1, 12)
    assert D.choose_swap("bf16", 6144, 4096, H100, 4800.0) == (1, 8)  # 96 strips make 89
    assert D.choose_swap("bf16", 1600, 6400, H100, 4800.0) == (4, 8)
    assert _plan("bf16", 16, 4096, 4096).name == "swap_m16_k1_s16"
    assert D.plan("bf16", 16, 4096, 4096, H100, dram_gbps=4800.0).name == "swap_m16_k2_s8"
    p = _plan("bf16", 16, 1600, 6400)
    assert (p.name, p.grid, p.ctas, p.splits, p.stages) == ("swap_m16_k4_s8", (25, 4, 1), 100, 4, 8)
    assert p.gemv.cluster == (1, 4, 1) and "4 CTA(s) of a cluster" in p.why


@pytest.mark.parametrize("dtype", ["bf16", "fp8"])
def test_swap_runs_to_128_tokens_where_even_64x64_tiles_leave_sms_idle(dtype):
    p = _plan(dtype, 128, 1600, 6400)  # 50 tiles of 64 x 64 under 62 CTAs
    assert (p.name, p.grid, p.gemv_rows) == ("swap_m128_k4_s8", (25, 4, 1), 128)
    assert _plan(dtype, 100, 1600, 6400).name == "swap_m128_k4_s8"
    assert _plan(dtype, 128, 4096, 4096).config == "64x64"  # 128 tiles fill
    assert _plan(dtype, 129, 1600, 6400).config not in D.DECODE_CONFIGS
    assert _plan(dtype, 128, 1600, 6400, ops=D.Operands(a16=False)).config not in D.DECODE_CONFIGS


@pytest.mark.parametrize("dtype", ["bf16", "fp8"])
def test_swap_past_16_tokens_only_where_it_splits_k(dtype):
    def h200(M, N, K):
        return D.plan(dtype, M, N, K, H100, D.Operands(), D.Policy(), H200_GBPS)

    # 32 x 5120 on the H200: 80 tiles of 64 x 64 under its 89 CTAs, but the swapped kernel's 80
    # strips make 89 unsplit - one CTA a strip, as many as the tiles: 64 x 64 runs
    assert D.tiles(32, 5120, "64x64") == 80 < D.swap_fill_ctas(H100, H200_GBPS)
    assert D.choose_swap(dtype, 5120, 4096, H100, H200_GBPS, 32)[0] == 1
    assert h200(32, 5120, 4096).config == "64x64"
    # split over 2 CTAs a strip (4096: 64 strips x 2) it stays
    assert D.choose_swap(dtype, 4096, 4096, H100, H200_GBPS, 32)[0] == 2
    assert h200(32, 4096, 4096).name == "swap_m32_k2_s8"
    # 16 tokens keep rule 0's own test (swap_keeps_gemv), split or not
    assert h200(16, 5120, 4096).config == "swap"
    # the plan says why the swapped kernel did not run
    assert "not the swapped decode kernel: it would run one CTA a 64-column strip" in h200(
        32, 5120, 4096).why
    assert "not the swapped" not in h200(128, 4096, 4096).why  # 128 tiles: rule 0 never weighed


def test_cluster_slots_are_what_the_driver_holds_at_once():
    # cuOccupancyMaxActiveClusters on 132 SMs (the H100 and the H200 at one CTA an SM)
    assert [D.cluster_slots(c, 1, H100) for c in (2, 4, 8)] == [66, 30, 15]
    assert [D.cluster_slots(c, 2, H100) for c in (2, 4, 8)] == [132, 62, 30]
    assert D.cluster_slots(1, 3, H100) == 3 * H100
    # past the table's 5 CTAs an SM, and another SM count: in proportion, never more clusters
    # than the SMs' slots hold
    assert D.cluster_slots(4, 10, H100) == 308
    assert D.cluster_slots(4, 1, 114) == 25 <= 114 // 4
    assert D.cluster_slots(4, 0, H100) == 0
    with pytest.raises(ValueError, match="clusters of 16 CTAs"):
        D.cluster_slots(16, 1, H100)


@pytest.mark.parametrize("dtype", ["bf16", "fp8"])
def test_swap_split_keeps_every_cluster_resident(dtype):
    # 64 tokens x 2048 on the H200: 32 strips x 4 CTAs (128 <= 132 SMs) at 8 stages hold one CTA
    # an SM, and 32 clusters of 4 where 30 fit: the ring drops to 6 stages (two CTAs an SM)
    assert D.cluster_slots(4, 1, H100) == 30 < 32
    assert D.choose_swap(dtype, 2048, 8192, H100, H200_GBPS, 64) == (4, 6)
    assert D.plan(dtype, 64, 2048, 8192, H100, dram_gbps=H200_GBPS).name == "swap_m64_k4_s6"
    # the plan says so; a forced 8-stage ring says what waits
    assert "a ring of 6 stages (2 CTA(s) an SM; 32 clusters of 4, 62 fit at once)" in D.plan(
        dtype, 64, 2048, 8192, H100, dram_gbps=H200_GBPS).why
    assert "32 clusters of 4, 30 fit at once" in D.plan(
        dtype, 64, 2048, 8192, H100, policy=D.Policy(config="swap", split=4, stages=8),
        dram_gbps=H200_GBPS).why
    # 16 strips x 8 (16 clusters of 8 where 15 fit at one CTA an SM) alike
    assert D.choose_swap(dtype, 1024, 8192, H100, H200_GBPS, 64) == (8, 6)
    # 128 tokens: 4 stages, two CTAs an SM
    assert D.choose_swap(dtype, 2048, 6144, H100, H200_GBPS, 128) == (4, 4)
    # 24 clusters of 4 fit at one CTA an SM: the deeper ring stays
    assert D.choose_swap(dtype, 1536, 8192, H100, H200_GBPS, 64) == (4, 8)
    # every plan the rule gives keeps its clusters within the slots
    for N in range(512, 8193, 64):
        for rows in D.paths.SWAP_TOKENS:
            ks, st = D.choose_swap(dtype, N, 8192, H100, H200_GBPS, rows)
            per_sm = D.ctas_per_sm(D.paths.swap_kernel(dtype, rows, ks, st))
            strips = -(-N // D.SWAP_COLS)
            assert ks == 1 or strips <= D.cluster_slots(ks, per_sm, H100), (N, rows, ks, st)


@pytest.mark.parametrize("dtype", ["bf16", "fp8"])
def test_swap_at_64_tokens_splits_only_long_rows_or_past_three_times_the_tiles(dtype):
    def h200(M, N, K):
        return D.plan(dtype, M, N, K, H100, D.Operands(), D.Policy(), H200_GBPS)

    row_k = D.SWAP_TILE_MIN_ROW_BYTES // D.ELEM_BYTES[dtype]  # K where a row of B holds 8 KB
    # 40 x 4096: 64 strips x 2 CTAs against 64 tiles of 64 x 64 - twice, not three times
    assert D.choose_swap(dtype, 4096, row_k, H100, H200_GBPS, 64)[0] == 2
    assert h200(40, 4096, row_k - 1024).config == "64x64"
    assert "too short to pay for the cluster's sums" in h200(40, 4096, row_k - 1024).why
    assert h200(40, 4096, row_k).name == "swap_m64_k2_s8"
    # 24 strips x 4 CTAs: four times the tiles, short rows or not (fp8 4 KB, bf16 4 KB)
    assert h200(40, 1536, 4096 if dtype == "fp8" else 2048).name == "swap_m64_k4_s8"
    # the 32-token tile keeps its split at any row
    assert h200(32, 4096, 1024).config == "swap"
    assert not D.swap_short_split(dtype, 32, 4096, 1024, H100, H200_GBPS)


def test_swap_at_128_tokens_keeps_a_ring_of_b_and_two_ctas_an_sm_at_4_stages():
    # the ring: 100 CTAs x 8 stages of B in flight; 128-token rings stop at 8 (shared memory)
    assert D.choose_swap("bf16", 1600, 6400, H100, rows=128) == (4, 8)
    # the partial sums reuse the ring: a 4-stage 128-token CTA (97 KB) leaves room for a second
    k = D.paths.swap_kernel("fp8", 128, 8, 4)
    assert D.SM90_SMEM_PER_SM // (k.dynamic_smem + D.SMEM_RESERVED_PER_BLOCK) == 2


def test_swap_keeps_the_earlier_decode_kernels_where_they_measured_faster():
    # bf16, one token: the CUDA-core kernel once its 64-column strips cover every SM (>= 132)
    assert _plan("bf16", 1, 10240, 8192).name == "gemv_m1_c64"
    assert _plan("bf16", 1, 11008, 4096).name == "gemv_m1_c64"
    assert _plan("bf16", 1, 8448, 8192).name == "gemv_m1_c64"  # 132 strips: every SM
    assert _plan("bf16", 1, 8192, 8192).config == "swap"  # 128 strips: 4 SMs idle
    assert _plan("bf16", 1, 8192, 28672).config == "swap"
    assert _plan("bf16", 1, 6144, 4096).config == "swap"  # 96 strips of 64: not a wave
    assert _plan("bf16", 2, 10240, 8192).config == "swap"  # the CUDA-core kernel: one token only
    assert _plan("bf16", 1, 28672, 4096).config == "swap"  # 224 64 x 128 tiles: no rule-0 decode
    # fp8, up to 8 tokens: mma.sync while the swapped kernel's strips, unsplit, leave SMs idle
    assert _plan("fp8", 1, 4096, 4096).name == "gemv_m8"
    assert _plan("fp8", 8, 6144, 4096).name == "gemv_m8"  # 96 strips
    assert _plan("fp8", 1, 8192, 8192).config == "swap"  # 128 strips fill a wave
    assert _plan("fp8", 1, 1600, 6400).config == "swap"  # split 4 ways: 100 CTAs
    assert _plan("fp8", 9, 4096, 4096).config == "swap"  # past DECODE_M
    assert _plan("fp8", 2, 14336, 4096).config == "swap"  # rule 0 needs half the SMs idle
    assert not D.swap_keeps_gemv("bf16", 1, 10240, 8192, H100, D.Operands(b16=False))


def test_swap_policy_forces_any_cluster_and_ring_and_checks_them():
    p = _plan("fp8", 32, 4096, 4096, config="swap", split=2, stages=4)
    assert (p.name, p.grid, p.gemv_rows) == ("swap_m32_k2_s4", (64, 2, 1), 32)
    assert p.gemv.dynamic_smem == 4 * (64 + 32) * 128 + 16 * 4 + 1024  # the partial sums reuse it
    assert _plan("bf16", 1, 4096, 4096, config="swap", split=1).stages == D.SWAP_STAGES
    assert _plan("bf16", 1, 4096, 4096, config="swap", split=None).name == "swap_m8_k1_s16"
    with pytest.raises(InputError, match="not a decode shape"):
        _plan("bf16", 129, 4096, 4096, config="swap")
    # 64 and 128 tokens (m64n64 / m64n128: forced only), rings that fit a block's shared memory
    assert _plan("fp8", 128, 1600, 6400, config="swap", split=4).name == "swap_m128_k4_s8"
    assert _plan("bf16", 33, 4096, 4096, config="swap", split=1).gemv.params["TN"] == 64
    assert D.paths.swap_stages(128) == (4, 6, 8) and D.paths.swap_stages(64) == (4, 6, 8, 12)
    with pytest.raises(InputError, match="rings of 4, 6, 8 stages"):
        _plan("bf16", 100, 4096, 4096, config="swap", stages=12)
    with pytest.raises(InputError, match="not a decode shape"):
        _plan("bf16", 16, 4096, 4090, config="swap")
    with pytest.raises(InputError, match="CTAs per strip"):
        D.Policy(config="swap", split=3)
    with pytest.raises(InputError, match="stages=5"):
        D.Policy(config="swap", stages=5)
    with pytest.raises(InputError, match="config='swap' only"):
        D.Policy(config="gemv", stages=8)
    with pytest.raises(InputError, match="64 columns"):
        D.Policy(config="swap", cols=64)
    with pytest.raises(ValueError, match="no bf16 swapped-operand"):
        D.paths.swap_kernel("bf16", 129, 1, 8)
    # every instantiation: both dtypes, both token tiles, every cluster and ring, one kernel each
    ks = D.paths.swap_kernels()
    assert len({k.kernel for k in ks}) == len(ks) == 2 * 4 * sum(
        len(D.paths.swap_stages(t)) for t in D.paths.SWAP_TOKENS)
    assert max(k.dynamic_smem for k in ks) <= 227 * 1024
    assert "__cluster_dims__(1, 8, 1)" in D.paths.wrapper(D.paths.swap_kernel("fp8", 16, 8, 4))


def test_swap_token_tiles_are_forced_only_and_count_as_strips():
    # the rules' token tile: the smallest that holds M, from 8 (SWAP_RULE_MIN_TOKENS) on; token
    # tiles (M past the tile) only where forced
    assert [D.swap_tokens(m) for m in (1, 8, 9, 16, 17, 33, 100)] == [8, 8, 16, 16, 32, 64, 128]
    assert D.swap_tokens(16, 8) == 8 and D.swap_tokens(1, 16) == 16
    # one token on the 8-token tile: the strips, split and ring of the 16-token tile, m64n8
    p = _plan("fp8", 1, 8192, 8192)
    assert (p.name, p.grid, p.ctas, p.gemv_rows) == ("swap_m8_k1_s8", (128, 1, 1), 128, 8)
    assert p.gemv.dynamic_smem == 8 * (64 + 8) * 128 + 16 * 8 + 1024
    assert _plan("fp8", 1, 8192, 8192, config="swap", tokens=16).name == "swap_m16_k1_s8"
    # 16 tokens over two 8-token tiles: each strip's two CTAs count as strips for the split and
    # the ring (the H200's 89 CTAs: 64 strips x 2 tiles need no split; 128 CTAs x 8 stages)
    p = D.plan("fp8", 16, 4096, 4096, H100, policy=D.Policy(config="swap", tokens=8),
               dram_gbps=4800.0)
    assert (p.name, p.grid, p.ctas) == ("swap_m8_k1_s8", (128, 1, 1), 128)
    assert "2 token tiles a strip" in p.why
    assert D.choose_swap("fp8", 4096, 4096, H100, 4800.0, rows=8, token_tiles=2) == (1, 8)
    assert D.choose_swap("fp8", 4096, 4096, H100, 4800.0, rows=16) == (2, 8)
    p = _plan("bf16", 100, 1600, 6400, config="swap", tokens=32, split=2, stages=4)
    assert (p.grid, p.ctas) == ((100, 2, 1), 200)  # 25 strips x 4 token tiles, 2 CTAs each
    # the 64- and 128-token tiles copy M rows (TRIM): one token tile only
    with pytest.raises(InputError, match="token tiles are 8-32 tokens"):
        _plan("fp8", 100, 1600, 6400, config="swap", tokens=64)
    assert _plan("fp8", 64, 1600, 6400, config="swap", tokens=64).grid[0] == 25
    for bad in (12, 256, True):
        with pytest.raises(InputError, match="tokens="):
            D.Policy(config="swap", tokens=bad)
    with pytest.raises(InputError, match="config='swap' only"):
        D.Policy(config="gemv", tokens=8)


def test_forced_decode_kernels_keep_their_own_plans():
    # the mma.sync bf16 kernel and fp8's 16-token kernel run where forced (the comparisons)
    p = _plan("bf16", 16, 1600, 6400, config="mma")  # 50 strips: 4 blocks a strip fill 0.8 x 132
    assert (p.config, p.gemv_cols, p.splits, p.grid, p.ctas) == ("mma", 32, 4, (50, 4, 1), 200)
    assert p.kernel == "gemmlab_dispatch_bf16_mma_m16_c32_k4" and p.name == "mma_m16_c32_k4"
    assert p.workspace_bytes == 0 and p.counters == 0 and p.params["KS"] == 4
    assert _plan("bf16", 9, 4096, 4096, config="mma").grid == (128, 1, 1)  # 128 strips fill alone
    assert _plan("fp8", 16, 14336, 4096, config="gemv").gemv_rows == 16
    p = _plan("fp8", 16, 1600, 6400, config="gemv")
    assert (p.name, p.grid) == ("gemv_m16_k2", (100, 2, 1))


def test_mma_decode_policy_checks():
    # forced: 64-column strips hold 16 tokens only; 32 tokens take two 16-token tiles
    with pytest.raises(InputError, match="strips of 32 columns"):
        _plan("bf16", 32, 4096, 4096, config="mma", cols=64)
    assert _plan("bf16", 32, 4096, 4096, config="mma").gemv.params["MT"] == 2
    with pytest.raises(InputError, match="not a bf16 decode shape"):
        _plan("bf16", 33, 4096, 4096, config="mma")
    with pytest.raises(InputError, match="not a bf16 decode shape"):
        _plan("fp8", 16, 4096, 4096, config="mma")
    with pytest.raises(InputError, match="blocks per strip"):
        D.Policy(config="mma", split=3)
    with pytest.raises(InputError, match="cols=16"):
        D.Policy(config="mma", cols=16)


def test_mma_decode_wrapper_carries_its_cluster_shape():
    k = paths.mma_decode_kernel(16, 32, 4)
    assert k.cluster == (1, 4, 1) and "__cluster_dims__(1, 4, 1)" in paths.wrapper(k)
    assert "__launch_bounds__(256, 2)" in paths.wrapper(k)
    assert paths.mma_decode_kernel(16, 32, 1).cluster is None
    assert "__cluster_dims__" not in paths.wrapper(paths.mma_decode_kernel(32, 32, 1))
    with pytest.raises(ValueError, match="no mma decode"):
        paths.mma_decode_kernel(32, 64, 1)


def test_bf16_decode_strips_are_the_widest_that_fill_a_wave():
    # N = 4096 on 132 SMs: 64 columns -> 64 blocks (no), 32 -> 128 (>= 0.8 x 132): 32, unsplit
    assert D.choose_cols(4096, 4096, H100) == 32
    assert D.choose_cols(14336, 4096, H100) == 64  # 224 blocks
    # nothing fills: the most blocks once K is shared, the widest of equals - 64 columns x 8
    # blocks (200) against 32 x 4 and 16 x 2, all 200 - but a short K shares nothing (512 rows
    # are one round of the 64-column kernel's loads): 16 columns, 100 blocks
    assert D.choose_cols(1600, 6400, H100) == 64
    assert D.choose_cols(1600, 512, H100) == 16
    p = _plan("bf16", 1, 4096, 4096, config="gemv")
    assert (p.gemv_cols, p.ctas, p.splits, p.grid) == (32, 128, 1, (128, 1, 1))
    # forced 64 columns: 64 strips, K shared by 2 blocks unless the split is forced too
    assert _plan("bf16", 1, 4096, 4096, config="gemv", cols=64).grid == (64, 2, 1)
    assert _plan("bf16", 1, 4096, 4096, config="gemv", cols=64, split=1).ctas == 64
    p = _plan("bf16", 1, 1600, 6400, config="gemv")
    assert (p.name, p.grid, p.ctas) == ("gemv_m1_c64_k8", (25, 8, 1), 200)
    assert p.gemv.cluster == (1, 8, 1) and "K split among 8 warps x 8 blocks" in p.why


def test_decode_splits_k_only_where_the_strips_leave_sms_idle():
    # strips that fill the SMs never split; fewer take the fewest of 2, 4, 8 that fill them,
    # no block getting less K than one round of its loads (fp8: 1024, bf16 64 columns: 512)
    assert D.choose_gemv_split("fp8", 8, 0, 300, 1600, H100) == 1
    assert D.choose_gemv_split("fp8", 8, 0, 100, 6400, H100) == 2
    assert D.choose_gemv_split("fp8", 16, 0, 40, 6400, H100) == 4
    assert D.choose_gemv_split("fp8", 8, 0, 10, 6400, H100) == 4  # 6400 // 1024 = 6: not 8
    assert D.choose_gemv_split("fp8", 8, 0, 10, 1000, H100) == 1
    assert D.choose_gemv_split("bf16", 1, 64, 25, 6400, H100) == 8
    assert D.choose_gemv_split("bf16", 16, 64, 25, 6400, H100) == 1  # bf16: one token only
    assert D.gemv_round("bf16", 64) == 512 and D.gemv_round("bf16", 16) == 2048
    p = _plan("fp8", 16, 1600, 6400, config="gemv")
    assert (p.name, p.grid) == ("gemv_m16_k2", (100, 2, 1))
    p = _plan("fp8", 1, 8, 16)
    assert (p.name, p.grid) == ("gemv_m8", (1, 1, 1))


def test_forced_decode_splits():
    p = _plan("fp8", 1, 4096, 4096, config="gemv", split=8)
    assert (p.name, p.grid, p.ctas) == ("gemv_m8_k8", (256, 8, 1), 2048)
    assert "__cluster_dims__(1, 8, 1)" in paths.wrapper(p.gemv)
    with pytest.raises(InputError, match="blocks per strip"):
        D.Policy(config="gemv", split=3)
    with pytest.raises(InputError, match="one token only"):
        _plan("bf16", 2, 4096, 4096, config="gemv", cols=32, split=2)
    with pytest.raises(ValueError, match="no bf16 decode instantiation"):
        paths.gemv_kernel("bf16", 2, 32, 2)


def test_fp8_decode_blocks_own_16_rows_of_b():
    p = _plan("fp8", 1, 4096, 4096)
    assert p.ctas == 256 and p.gemv_cols == 0 and p.ldb == 4096


def test_decode_needs_16_byte_rows_and_aligned_operands():
    # bf16: K and N rows of whole 16-byte units; fp8: K (B is N x K, so N is free)
    assert _plan("bf16", 1, 4096, 4095).config not in D.DECODE_CONFIGS
    assert _plan("bf16", 1, 4095, 4096).config not in D.DECODE_CONFIGS
    assert _plan("fp8", 1, 4095, 4096).config == "gemv"
    assert _plan("fp8", 16, 4095, 4096).config == "swap"
    assert _plan("fp8", 1, 4096, 4088).config not in D.DECODE_CONFIGS
    assert _plan("bf16", 1, 4096, 4096, ops=D.Operands(a16=False)).config not in D.DECODE_CONFIGS
    assert _plan("fp8", 1, 4096, 4096, ops=D.Operands(b16=False)).config not in D.DECODE_CONFIGS


@pytest.mark.parametrize("dtype", D.DTYPES)
def test_forcing_the_decode_kernel_where_it_cannot_run_is_one_input_error(dtype):
    with pytest.raises(InputError, match="not a decode shape"):
        _plan(dtype, D.max_decode_rows(dtype) + 1, 4096, 4096, config="gemv")
    with pytest.raises(InputError, match="not a decode shape"):
        _plan(dtype, 1, 4096, 4090, config="gemv")
    with pytest.raises(InputError, match="cols"):
        D.Policy(config="gemv", cols=48)


@pytest.mark.parametrize("dtype", ["bf16", "fp8"])
def test_ping_pong_tile_is_whole_tiles_on_two_alternating_warpgroups(dtype):
    r = D.config_rung(dtype, "128x128pp")
    assert r.params["PINGPONG"] == 1 and r.template_call.endswith(", 1>")
    # a producer and two consumer warpgroups, each holding a whole 128 x 128 accumulator
    grid, block, smem = r.launch_config(4096, 4096, 4096, sms=H100)
    assert block == (384, 1, 1) and grid == (H100, 1, 1) and smem <= 227 * 1024
    assert smem == D.config_rung(dtype, "128x128c1").launch_config(4096, 4096, 4096, sms=H100)[2]
    # its tile is one warpgroup's: no split-K or stream-K pieces to add
    with pytest.raises(InputError, match="ping-pong"):
        _plan(dtype, 2048, 4800, 1600, config="128x128pp", split=2)
    with pytest.raises(InputError, match="ping-pong"):
        _plan(dtype, 2048, 4800, 1600, config="128x128pp", streamk=0)
    with pytest.raises(ValueError, match="ping-pong"):
        D.config_rung(dtype, "128x128pp", split=True)
    # the rules never split it: it is chosen only where its tiles fill the SMs (fp8 at 11008
    # columns takes its 168-column twin: test_fp8_ping_pong_width_follows_the_issued_fraction)
    assert _plan(dtype, 2048, 11008, 4096).name == ("128x128pp" if dtype == "bf16" else "128x168pp")


def test_fp8_ping_pong_width_follows_the_issued_fraction():
    # 2048 x 11008 on 132 SMs: 128 x 128 makes 1376 tiles in 10.4 rounds (fraction 0.948), 128 x
    # 168 1056 in exactly 8 (0.993, 80 columns past N) - more than 2% better: 168
    assert D.issued_fraction(2048, 11008, "128x128pp", H100) == pytest.approx(0.948, abs=1e-3)
    assert D.issued_fraction(2048, 11008, "128x168pp", H100) == pytest.approx(0.993, abs=1e-3)
    p = _plan("fp8", 2048, 11008, 4096)
    assert p.config == "128x168pp"
    # the plan says why: whole rounds, nearly all of their MMA area useful
    assert ("1056 tiles of 128x168pp on 132 SMs in 8.0 rounds, 99.3% of those rounds' MMA area "
            "useful") in p.why
    # 512 x 5120: 160 columns make 128 tiles, one round (0.97); 168 leave 4 SMs more idle
    assert D.pingpong_width("fp8", 512, 5120, "128x128pp", H100) == "128x160pp"
    # 2048 x 2816: 176 columns make 256 tiles, two whole rounds (0.97 against 128's 0.89)
    assert D.pingpong_width("fp8", 2048, 2816, "128x128pp", H100) == "128x176pp"
    # where 128 x 128 is as good (2048^3: 128 tiles, one round) it stays
    assert D.pingpong_width("fp8", 2048, 2048, "128x128pp", H100) == "128x128pp"
    assert _plan("fp8", 2048, 2048, 2048).config == "128x128pp"
    # past the margin it moves (2048 x 8704: 2.9% better with 160), within it it stays (384 x
    # 21504: 1.6% better with 168)
    gain = lambda M, N, c: (D.issued_fraction(M, N, c, H100)  # noqa: E731
                            / D.issued_fraction(M, N, "128x128pp", H100))
    assert gain(2048, 8704, "128x160pp") == pytest.approx(1.029, abs=1e-3)
    assert D.pingpong_width("fp8", 2048, 8704, "128x128pp", H100) == "128x160pp"
    assert gain(384, 21504, "128x168pp") == pytest.approx(1.016, abs=1e-3)
    assert D.pingpong_width("fp8", 384, 21504, "128x128pp", H100) == "128x128pp"
    # only fp8 (bf16 has no 160- or 168-column ping-pong tile), only in place of 128 x 128
    # ping-pong, only where C's rows take TMA stores
    assert D.pingpong_width("bf16", 2048, 11008, "128x128pp", H100) == "128x128pp"
    assert D.pingpong_width("fp8", 2048, 11008, "128x256c1", H100) == "128x256c1"
    assert D.pingpong_width("fp8", 2048, 11007, "128x128pp", H100) == "128x128pp"


def test_fp8_narrow_ping_pong_widths_need_their_margin():
    frac = lambda M, N, c: D.issued_fraction(M, N, c, H100)  # noqa: E731
    # 144 columns take the ordinary margin: 1536 x 9472 in 792 tiles, 6 whole rounds (0.997)
    # against 128 x 128's 888 in 6.7 (0.961)
    assert frac(1536, 9472, "128x144pp") == pytest.approx(0.997, abs=1e-3)
    assert D.pingpong_width("fp8", 1536, 9472, "128x128pp", H100) == "128x144pp"
    # 112 columns need NARROW_WIDTH_MARGIN: 2048 x 1792 0.970 against 0.848 - taken; 1024 x
    # 18432 0.997 against 0.970 (2.8%) - not, and no other width beats 128 x 128 by its margin
    assert D.pingpong_width("fp8", 2048, 1792, "128x128pp", H100) == "128x112pp"
    assert frac(1024, 18432, "128x112pp") / frac(1024, 18432, "128x128pp") == pytest.approx(
        1.028, abs=1e-3)
    assert D.pingpong_width("fp8", 1024, 18432, "128x128pp", H100) == "128x128pp"
    # a width past its margin is taken even where 112's better fraction is not past its own:
    # 2560 x 23616, 144 columns 3.1% over 128 x 128, 112 columns 3.6%
    gain = lambda c: frac(2560, 23616, c) / frac(2560, 23616, "128x128pp")  # noqa: E731
    assert 1.02 < gain("128x144pp") < gain("128x112pp") < 1.04
    assert D.pingpong_width("fp8", 2560, 23616, "128x128pp", H100) == "128x144pp"


def test_fp8_short_k_takes_a_narrow_width_past_both_margins():
    def short_k(M, N, K, chosen):
        return D.pingpong_short_k("fp8", M, N, K, chosen, H100, H200_GBPS)

    frac = lambda M, N, c: D.issued_fraction(M, N, c, H100)  # noqa: E731
    # 2048 x 5888: 128 x 144 in 736 tiles, 5.6 rounds (0.991), over 128 x 256's 0.929 and the
    # best wide width's (160: 0.892)
    assert short_k(2048, 5888, 4096, "128x256c1") == "128x144pp"
    assert D.plan("fp8", 2048, 5888, 4096, H100, D.Operands(), D.Policy(),
                  H200_GBPS).config == "128x144pp"
    # 1536 x 6144: 112 columns (0.997) over 128 x 200's 0.931 by more than 4%
    assert short_k(1536, 6144, 4096, "128x200c1") == "128x112pp"
    # 4096^3: 112 columns 0.985 against 128 x 256's 0.970 - within the margin, so the cooperative
    # tile stays (the wide widths are all under it)
    assert frac(4096, 4096, "128x112pp") == pytest.approx(0.985, abs=1e-3)
    assert short_k(4096, 4096, 4096, "128x256c1") is None
    # 6144 x 7936: 112 columns 0.991 against 176's 0.965 (2.7%) - 176 stays
    assert short_k(6144, 7936, 4096, "128x256c2") == "128x176pp"
    # the H100 keeps its cooperative plans here (PINGPONG_MIN_GBPS)
    assert D.pingpong_short_k("fp8", 2048, 5888, 4096, "128x256c1", H100, 3350.0) is None
    # bf16 has no narrow ping-pong tile; forcing one says why
    assert "128x112pp" not in D.configs("bf16") and "128x144pp" in D.configs("fp8")
    with pytest.raises(InputError, match="fp8 only"):
        _plan("bf16", 2048, 1792, 4096, config="128x112pp")


def test_fp8_short_k_goes_past_160_columns_only_by_the_margin():
    def short_k(M, N, K, chosen):
        return D.pingpong_short_k("fp8", M, N, K, chosen, H100, H200_GBPS)

    frac = lambda M, N, c: D.issued_fraction(M, N, c, H100)  # noqa: E731
    # 160 divides 11520, but 176 columns fill their rounds better (0.992 against 0.955)
    assert frac(1792, 11520, "128x176pp") / frac(1792, 11520, "128x160pp") > 1.02
    assert short_k(1792, 11520, 4096, "128x256c1") == "128x176pp"
    # where no wider width is 2% ahead, 160 stays (8192 x 4800: 15 whole rounds)
    assert short_k(8192, 4800, 1600, "128x256c2") == "128x160pp"
    # a narrow width that does not beat the wide pick still runs where the wide pick falls short
    # of the cooperative tile: 8960 x 3360 x 8192 (long K), 168 columns (the wide pick) 3.9%
    # ahead of 128 x 160's fraction, under LONG_K_MARGIN; 112 columns 7.1%
    assert frac(8960, 3360, "128x168pp") / frac(8960, 3360, "128x160c1") == pytest.approx(
        1.039, abs=1e-3)
    assert frac(8960, 3360, "128x112pp") / frac(8960, 3360, "128x160c1") == pytest.approx(
        1.071, abs=1e-3)
    assert short_k(8960, 3360, 8192, "128x160c1") == "128x112pp"


def test_a_plan_says_which_rule_replaced_the_first_tile():
    def why(dtype, M, N, K, gbps=H200_GBPS, **policy):
        return D.plan(dtype, M, N, K, H100, D.Operands(), D.Policy(**policy), gbps).why

    assert "in place of 128x128pp (84.8%): the ping-pong width" in why("fp8", 2048, 1792, 4096)
    assert ("in place of 128x200c1 (93.1%): ping-pong at a short K" in
            why("fp8", 1536, 6144, 4096))
    assert ("in place of 128x256c1 (84.8%): ping-pong at a long K, more than 6% more" in
            why("fp8", 6144, 1792, 16384))
    # the first pick standing, a forced tile and the H100 (no short-K rule) say nothing of it
    assert "in place of" not in why("fp8", 4096, 4096, 4096)
    assert "in place of" not in why("fp8", 2048, 1792, 4096, config="128x112pp")
    assert "in place of" not in why("fp8", 1536, 6144, 4096, gbps=3350.0)


def test_fp8_long_k_takes_a_ping_pong_width_only_well_ahead():
    def h200(M, N, K):
        return D.plan("fp8", M, N, K, H100, D.Operands(), D.Policy(), H200_GBPS).config

    frac = lambda M, N, c: D.issued_fraction(M, N, c, H100)  # noqa: E731
    # 6144 x 1792 x 16384 (128 k-tiles): 128 x 168 in 528 tiles, 4 whole rounds (0.97), against
    # 128 x 256's 336 in 2.5 (0.85) - 14% ahead, past LONG_K_MARGIN
    assert h200(6144, 1792, 16384) == "128x168pp"
    # 3840 x 18432 x 16384: 168 columns 3.6% ahead (0.997 / 0.963) - the cooperative tile stays
    assert frac(3840, 18432, "128x168pp") / frac(3840, 18432, "128x256c1") == pytest.approx(
        1.036, abs=1e-3)
    assert h200(3840, 18432, 16384) == D.cooperative_config("fp8", 3840, 18432, 16384, H100)
    # the same shape at a short K takes it: the margin is the long K's
    assert h200(3840, 18432, 4096).endswith("pp")
    # the H100 keeps its cooperative plans at any K (PINGPONG_MIN_GBPS)
    assert _plan("fp8", 6144, 1792, 16384).config == "128x256c1"


def test_bf16_takes_128x192_where_it_wastes_less_of_the_issued_mmas():
    # 8192 x 1600: 256 columns waste 192 of 1792 in 4 rounds of 448 tiles; 192 waste 128 of 1728
    # in 5 rounds of 576 - the issued fraction 0.808 against 0.758
    assert D.issued_fraction(8192, 1600, "128x192c1", H100) == pytest.approx(0.808, abs=1e-3)
    assert D.issued_fraction(8192, 1600, "128x256c1", H100) == pytest.approx(0.758, abs=1e-3)
    assert D.wide_tile("bf16", 8192, 1600, 1, H100) == "128x192c1"  # then 128x160c2 (below)
    assert _plan("bf16", 8192, 4800, 1600).config == "128x192c2"  # >= 8 waves: in pairs
    # equal fractions (4096 columns, 6144 at 8192 rows) keep 256; fp8 keeps its own tiles
    assert _plan("bf16", 4096, 4096, 4096).config == "128x256c1"
    assert _plan("bf16", 8192, 6144, 4096).config == "128x256c2"
    assert _plan("fp8", 8192, 1600, 6400).config == "128x160c1"
    assert _plan("fp8", 8192, 4800, 1600).config == "128x256c2"
    # C without a 16-byte pitch leaves through the direct epilogue, where 128 x 192 lost
    fraction = lambda c: D.issued_fraction(4097, 4097, c, H100)  # noqa: E731
    assert fraction("128x192c1") > 1.1 * fraction("128x256c1")
    assert _plan("bf16", 4097, 4097, 4097).config == "128x256c1"


def test_bf16_takes_clustered_160_column_tiles_in_no_more_rounds():
    # 8192 x 1600: 320 pairs of 128 x 160 make 5 rounds of 66 pairs, as 576 tiles of 128 x 192 do
    # of 132 - the same rounds, each tile 32 columns narrower
    assert D._TILES["128x160c2"].units(8192, 1600) == 320 and D.tiles(8192, 1600, "128x192c1") == 576
    for K in (2048, 6400):
        assert _plan("bf16", 8192, 1600, K).config == "128x160c2", K
    assert _plan("bf16", 6912, 1920, 4096).config == "128x160c2"
    # more rounds than the wide tile (16384 x 1600: 10 against 9), or 160 not dividing N in the
    # same rounds (6784 x 1856): the wide tile
    assert not D.bf16_tile160_wins("bf16", 16384, 1600, "128x192c1", H100)
    assert _plan("bf16", 16384, 1600, 4096).config == "128x192c1"
    assert _plan("bf16", 6784, 1856, 4096).config == "128x192c1"
    # fp8 has its own 128 x 160 rule; the short-K GPT-2 shapes keep theirs
    assert not D.bf16_tile160_wins("fp8", 8192, 1600, "128x256c1", H100)
    assert _plan("bf16", 8192, 4800, 1600).config == "128x192c2"
    # the ping-pong and 64-row tiles are not "wide": never replaced
    assert not D.bf16_tile160_wins("bf16", 8192, 1600, "128x128pp", H100)


def test_the_tensor_map_cache_keeps_the_most_recently_used_sets(monkeypatch):
    """A model calls one shape with every layer's weights: the prepared shape keeps the last
    MAP_SETS pointer sets' maps, dropping the least recently used (it used to drop all at 8)."""
    from collections import OrderedDict

    from gemmlab.runtime import dispatch_tc_gemm as m

    g = m.TcDispatchedGemm.__new__(m.TcDispatchedGemm)  # the cache alone: no GPU needed
    g._maps = OrderedDict()
    monkeypatch.setattr(m, "MAP_SETS", 3)
    made = []
    for k in (1, 2, 3, 1, 4, 1):
        g._cached_maps((k, 0, 0), lambda k=k: made.append(k) or (k,))
    assert made == [1, 2, 3, 4] and list(g._maps) == [(3, 0, 0), (4, 0, 0), (1, 0, 0)]


def test_a_repeat_launches_only_a_call_made_before_on_the_stream_given():
    """``repeat`` (torch_ops' fast path) runs the packed launch kept for the same pointers and
    scalars on the raw stream it is given, and answers False for anything else."""
    from collections import OrderedDict

    from gemmlab.runtime import dispatch_tc_gemm as m

    g = m.TcDispatchedGemm.__new__(m.TcDispatchedGemm)
    g._launches = OrderedDict()
    ran = []
    g._launches[(10, 20, 30, 0.5, 0.0)] = lambda stream: ran.append(("x", stream))
    g._launches[(11, 20, 30, 1.0, 0.0)] = lambda stream: ran.append(("y", stream))
    assert g.repeat(10, 20, 30, 0.5, 0, stream=7)
    assert not g.repeat(10, 20, 30, 0.25, 0.0, 7)  # another scale: a call of its own
    assert not g.repeat(10, 20, 31, 0.5, 0.0, 7)   # another output
    assert ran == [("x", 7)] and list(g._launches)[-1] == (10, 20, 30, 0.5, 0.0)
