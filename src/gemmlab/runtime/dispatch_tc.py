"""The tensor-core dispatch rungs' decisions (``dispatch_bf16``, ``dispatch_fp8``; issue #20), pure:
which kernel runs (a decode kernel for a few tokens, or a persistent instantiation split into how
many K-slices), and which operands are first copied to rows of whole 128-byte lines, for one
(M, N, K), operand alignment and SM count. No CuPy here: the
CPU tests check every rule, and ``gemmlab.runtime.dispatch_tc_gemm`` only executes the plan.

Layouts are the ladders' (gemmlab.kernels.ladders): bf16 A (M x K) and B (K x N) row-major; fp8
(e4m3) A (M x K) and B given N x K ("TN"); C (M x N) bf16; FP32 accumulation. The rules:

0. **Decode**: up to ``SWAP_M`` (16) tokens with 16-byte rows and aligned A and B run the
   swapped-operand wgmma decode kernel (decode_wgmma.cu, ``swap_wins``): 64 columns of B as
   wgmma's M side and the tokens as its N side (m64n8 up to 8 tokens, ``SWAP_RULE_MIN_TOKENS``;
   m64n16), B streamed by TMA in 64-column strips,
   each strip's K shared by a cluster of ``choose_swap`` CTAs (about half the SMs busy) that add
   their partial sums through distributed shared memory, a ring deep enough for ~11 MB of B in
   flight over the GPU - one launch. Where the earlier decode kernels (decode_tc.cu) measured
   faster (``swap_keeps_gemv``) they keep running (``decode_wins``): bf16's single token on the
   CUDA-core kernel's 64-column strips once those cover every SM; fp8 up to ``DECODE_M`` (8)
   tokens on the mma.sync kernel (strips of 16 rows of B) while the swapped kernel's strips
   would not. The bf16 mma.sync decode kernel (``choose_mma``) and fp8's 16-token instantiation
   run where forced (``Policy(config="mma" / "gemv")``). Up to ``SWAP_TILE_M`` (128) tokens
   take the swapped kernel too (m64n32 to m64n128) where even the 64 x 64 streaming tiles
   would leave SMs idle (N = 1600) and it splits each strip's K (``SWAP_TILE_MIN_SPLIT``) -
   at 33-64 tokens over 4 CTAs or more unless a row of B holds ``SWAP_TILE_MIN_ROW_BYTES``.
   A split's clusters all fit on the GPU at once (``cluster_slots``), its ring cut to hold two
   CTAs an SM where one would leave clusters waiting.
1. **Tile** (``choose_config``): one of the persistent warp-specialised kernels (persistent_bf16 /
   persistent_fp8, TMA loads and wgmma) at a block tile of BM x BN:
   * the largest tile whose tiles fill a wave (``FILL`` of the SMs, one CTA each): 128 x 256,
     then 128 x 128, then 64 x 256 and 64 x 128 (one consumer warpgroup), else 64 x 64 - the
     most CTAs. Until every SM has a tile, more SMs working (and more loads in flight) is worth
     more than a big tile's efficiency per MMA. M <= ``STREAM_M`` (decode and small batches) is a stream of B
     (the weights): the tile among ``STREAM_CONFIGS`` whose busiest SM streams the fewest
     operand bytes (``stream_bytes_per_sm``) - 64 x 64 while its tiles fit one wave (fp8: from
     17 rows on), then 64 x 128 while its tiles do.
   * between 128 x 256 and 128 x 128 when both fill: the narrow one only when it balances the SMs
     better by more than the wide tile's per-MMA advantage (``WIDE_TILE_ADVANTAGE``) - unclustered,
     in its ping-pong form (``128x128pp``: one consumer warpgroup per tile, the two alternating,
     so an epilogue overlaps the other's MMAs; about a point over both on one tile): the busiest
     SM sets the time, so tiles per CTA (rounded up) is what a persistent kernel pays. (Weighing
     in the MMAs a tile wastes past N lost: N = 1600, 128 x 256 wastes 11% and still won, 2048 x
     1600 x 6400 100.7 vs 89.8% of cuBLAS, 8192 x 1600 x 6400 92.5 vs 83.5 - docs/results, m128.)
   * bf16: 128 x 192 in place of 128 x 256 where its tiles use the issued MMAs more than
     ``WIDE192_MARGIN`` better - fewer columns wasted past N or fewer SMs idle in the last round
     and C's rows take TMA stores (``wide_tile``; N = 1600 and 4800 at 8192 rows); and 128 x 160
     in clusters of 2 in place of either where 160 divides N and its pairs make no more rounds
     (``bf16_tile160_wins``; 8192 x 1600).
   * Clusters of 2 along M (B multicast to both CTAs) only for products of at least
     ``CLUSTER_MIN_WAVES`` waves of tiles.
   * fp8 with N a multiple of 160 (GPT-2 XL's 1600, 4800): the 128 x 160 tile when its tiles use
     the issued MMAs ``TILE160_MARGIN`` better than 128 x 256's and make ``TILE160_MIN_WAVES``
     waves or more (``tile160_wins``).
   * fp8 products whose 128 x 256 tiles make one round (at most one per SM): the 128 x 200 tile
     where its tiles make one round too (``tile200_wins``: each SM's tile 56 columns narrower),
     else the ping-pong 128 x 128 where its tiles balance the SMs as well
     (``pingpong_one_round``: one warpgroup's epilogue under the other's MMAs).
   * fp8 products whose 128 x 256 tiles make two or three rounds, before the rules above: the
     tile of 128 x 256, 128 x 200 (K >= ``TILE200_MIN_K``), 128 x 160 and ping-pong 128 x 128
     whose tiles use the issued MMA area best (``fraction_tile``).
   * fp8 where those chose the ping-pong 128 x 128: the ping-pong tile of 112, 128, 144, 160,
     168 or 176 columns whose tiles use the issued MMA area best, by more than its margin
     (``pingpong_width``, ``width_margin``: 4% under 128 columns, else 2%; 2048 x 11008 in 8
     whole rounds of 128 x 168).
   * After all of those, a short K (at most ``PINGPONG_MAX_KTILES`` k-tiles) on the H200 (where it
     was measured; ``PINGPONG_MIN_GBPS``): a ping-pong tile in place of the cooperative 128-row
     tile chosen - fp8's 128 x 160 where 160 divides N, else the best-fraction one of 160, 168
     and 176 columns (``SHORT_K_WIDTHS``), or 112 / 144 (``NARROW_WIDTHS``) where that beats
     both by its margin, and up to ``PP128_MAX_KTILES`` k-tiles 128 x 128 where none of those
     does; bf16's 128 x 128 - where its tiles make two rounds or more and use the issued MMAs
     at least as well (``pingpong_short_k``): each warpgroup's epilogue then runs under the
     other's MMAs. fp8 past that K alike where they use them more than ``LONG_K_MARGIN``
     better.
2. **Split-K** (``choose_split``): when the tiles leave most SMs idle - fewer than
   ``SPLIT_BELOW_FILL`` of the persistent grid - and K is long enough that each slice keeps
   ``MIN_SLICE_KTILES`` k-tiles, K is cut into S = ``AUTO_SPLIT`` slices (``Policy(split=S)``
   forces any S). Each slice parks its float32 partial tile in its slot of a workspace (S
   slots of BM x BN floats per tile, in the accumulators' register order: whole 512-byte lines
   per instruction) and counts its arrival; the slice that arrives last adds all of them in
   slice order (deterministic) and stores C through the usual epilogue, TMA stores included -
   one launch, no reduction kernel (tc_common.cuh, ``streamk_fixup``, as stream-K's pieces).
   **Stream-K** (``Policy(streamk=w)``, forced only): the tiles of the last, partial wave and
   ``w`` full waves before it are cut into (tile, K-step) iterations shared out in equal runs,
   one per cluster; a tile two runs share is added by the one that arrives last, in K order
   (tc_common.cuh, ``streamk_fixup``). No rule picks it: on the H100 it lost or tied at 35 of 36
   (shape, dtype) pairs tried, e.g. 8192 x 1600 x 6400 bf16 90.0 vs 91.4% of cuBLAS, although
   Nsight Compute at a locked clock saw it 9% faster there (302 vs 331 us, H200) - at their own
   clocks these sizes run at the power cap, where an idle last wave lets the busy SMs clock up
   and the partial sums' traffic costs energy (docs/results/tc-streamk-2026-11-26).
3. **Odd shapes** (``Policy.odd``): TMA reads rows whose pitch is a multiple of 16 bytes, from a
   16-byte aligned start. Where K (bf16: or N) breaks that, or a pointer is off a 16-byte
   boundary, ``"repitch"`` copies the operand into a buffer whose rows are whole 128-byte lines
   (``LINE_BYTES``) inside the call (tc_helpers.cu; the map keeps the logical extent, TMA fills
   the rest with zeros) and runs the
   same kernel; ``"wgmma"`` runs the wgmma_bf16 rung's scalar twin instead (cp.async, 2-byte
   loads, bf16 only). Measured (H100, v1 below, % of cuBLAS at its best): the copies won at
   every odd shape tried - 4095^3 289 vs 76, 4097^3 246 vs 76, 2047^3 177 vs 72, 2048x4095x4096
   296 vs 78, 2048x4096x4095 432 vs 84, and a tie at 3000x1000x77 (83 vs 82) - so "repitch" is
   the default. (cuBLAS itself is slow at these shapes: it cannot use its 16-byte-aligned
   kernels either.)
   bf16's B with rows a 16-byte pitch but not whole lines (N not a multiple of 64) is copied to
   whole lines as well where enough row tiles read it (``copy_b_to_lines``).

The measurements behind each constant are in docs/results/tc-dispatch-h100-2026-11-25 (v1, v2: every
alternative at 31 BF16 and 13 FP8 shapes, interleaved with cuBLAS at its best;
benchmarks/tc_dispatch_compare.py).
Geometry a plan cannot take is a one-line ``InputError``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple, Optional

from gemmlab.errors import InputError
from gemmlab.kernels import paths
from gemmlab.kernels.clusters import (  # noqa: F401  (the rules' and their tests' names)
    CLUSTER_SLOTS_132, cluster_slots, persistent_clusters)
from gemmlab.kernels.families import Rung, make_rung
from gemmlab.problem import check_shape
from gemmlab.runtime.dispatch import Operands  # noqa: F401  (the FP32 dispatcher's: same alignment facts)

DTYPES = ("bf16", "fp8")
ELEM_BYTES = {"bf16": 2, "fp8": 1}
BK = {"bf16": 64, "fp8": 128}  # one 128-byte swizzle row of K per stage
PITCH_BYTES = 16  # TMA: row pitches and base addresses in multiples of 16 bytes
# A copy's rows are padded to whole 128-byte lines (L2's line; a TMA box row of 128 bytes then
# reads 4 sectors, not 5): H100, same run, trees alternating, % of cuBLAS at its best
# (docs/results/tc-fraction-2026-11-27, runs 11-12), operands copied either way (K or N off a
# 16-byte pitch), 16-byte against 128-byte rows: fp8 4096x4096x4104 160 -> 237, 2048x4096x1000
# 162 -> 198, 8192x1600x3000 213 -> 245, 1000^3 86 -> 100; bf16 4097^3 212 -> 283, 2049^3 167 ->
# 234, 1025^3 95 -> 116 (cuBLAS is slow at these too: it cannot use its aligned kernels).
LINE_BYTES = 128
# bf16's B (K x N) whose rows are a 16-byte pitch but not whole lines (N not a multiple of 64) is
# copied to whole lines too, where at least LINE_COPY_MIN_ROW_TILES 128-row tiles read it and K
# is at least LINE_COPY_MIN_K (the copy is one more launch: under a tiny K it would cost more than
# the product; below 1024 unmeasured). Same runs: 4096x3000x4096 66.7 -> 84.4, 8192x1000x4096
# 64.1 -> 90.1, 2000x1560x4096 (16 row tiles) 63.1 -> 66.4, 1000^3 (8) 67.7 -> 64.1 lost; held out
# (run 12) 16384x1000x1024 65.7 -> 90.2, 2560x3000x4096 68.6 -> 75.6, 6144x1560x2048 56.9 ->
# 65.5, 3072x1000x2048 55.1 -> 60.8. Not A (bf16 2048x4096x1000: 100.9 as it is, 82.4 copied),
# and not fp8's B (N x K, K not a multiple of 128), where the copy measured a loss at three of
# four shapes (8192x4800x1600 90.4 -> 77.9, 2048x4800x1600 100.1 -> 66.9, 2048x8192x1040 71.5 ->
# 61.5; 4096x4096x2064 64.6 -> 76.1): the 1-byte repitch runs at ~1 TB/s.
LINE_COPY_MIN_ROW_TILES = 16
LINE_COPY_MIN_K = 1024

class Tile(NamedTuple):
    """A persistent instantiation's block tile (BM x BN), its cluster - ``cluster`` CTAs along M
    sharing B's tile times ``cluster_n`` along N sharing A's, by TMA multicast - and its
    pipeline depth."""

    bm: int
    bn: int
    cluster: int
    stages: int
    cluster_n: int = 1
    pingpong: bool = False
    bf16_stages: int = 0  # bf16's depth where its stages are larger than fp8's (0: ``stages``)

    @property
    def ctas(self) -> int:
        """CTAs per cluster."""
        return self.cluster * self.cluster_n

    def units(self, M: int, N: int) -> int:
        """Cluster units of work: cluster x cluster_n tiles each (whole clusters over C)."""
        return _cdiv(_cdiv(M, self.bm), self.cluster) * _cdiv(_cdiv(N, self.bn), self.cluster_n)


# name -> Tile(BM, BN, CLUSTER, STAGES[, CLUSTER_N]). Stages fill the 227 KB a block may use: a
# bf16 stage is (BM + BN) x 64 x 2 bytes, an fp8 stage (BM + BN) x 128 x 1 - the same bytes.
_TILES = {
    "128x256c2": Tile(128, 256, 2, 4),
    "128x256c1": Tile(128, 256, 1, 4),
    "128x128c2": Tile(128, 128, 2, 6),
    "128x128c1": Tile(128, 128, 1, 6),
    "64x256": Tile(64, 256, 1, 5),
    "64x128": Tile(64, 128, 1, 8),
    # 160 columns (wgmma N may be any multiple of 8 up to 256): no MMA wasted at N = 1600 / 4800.
    # fp8's B is K-major, 160 rows of 128 bytes - whole 8-row swizzle atoms. C leaves by TMA in
    # five boxes of 32 columns (64-byte swizzle), one 64 x 160 piece per consumer: 40 KB of
    # staging, so 5 fp8 stages of 36 KB fit the 227 KB. bf16's B tile is N-major: three 64-column
    # chunks of the 128-byte swizzle (the third half past the tile; in clusters of 2 shared by
    # rows of K), 40 KB stages, 4 of them: five 32-column chunks of the 64-byte swizzle ran at
    # 65-75% of cuBLAS (docs/results/tc-tile160-2026-11-27); three chunks run 70-81 alone and
    # 71-100 in clusters of 2, which the rules run where they make no more rounds than the wide
    # tile (``bf16_tile160_wins``).
    "128x160c2": Tile(128, 160, 2, 5, bf16_stages=4),
    "128x160c1": Tile(128, 160, 1, 5, bf16_stages=4),
    # 64 x 64 (one consumer warpgroup, 16 KB stages): the most CTAs on a memory-bound stream of B
    # (STREAM_CONFIGS). No cluster: pairs sharing B by multicast lost at every shape tried.
    "64x64": Tile(64, 64, 1, 12),
    # 128 x 64 (two consumer warpgroups, 24 KB stages), forced only: at M <= 128 every CTA holds
    # all the tokens, so B crosses L2 -> SM once (64 x 64 at 65-128 rows carries it twice), and
    # split-K 2 puts 128 CTAs on N = 4096. A rule ran it in place of 64 x 64 on the H200 at
    # 65-128 rows with a long K (128 x 4096 x 14336 bf16 94.1 vs 84.9 in
    # docs/results/tc-splitk-fixup-2026-11-27). Once 64 x 64's last row-tile stopped filling rows
    # past M (tma.last_rows_spec), the two side by side (docs/results/tc-lastrows-2026-11-29, run
    # 5, H200, two processes) had 64 x 64 ahead at 10 of 12 (shape, dtype) pairs at 72-128 rows, K
    # 8192-28672 - 128 x 4096 x 14336 bf16 101.9 / 104.6 vs 95.1 / 98.4, 128 x 4096 x 28672 94.7 /
    # 93.4 vs 87.9 / 87.5, fp8 101.8 / 102.3 vs 96.7 / 97.5 - behind at bf16 72 x 4096 x 14336
    # (92.1 / 92.3 vs 93.7 / 93.4) and level at 96 x 4096 x 28672; held out, ahead at 5 of 8,
    # level at 2, behind at bf16 120 x 3584 x 14336 (95.4 / 95.3 vs 100.8 / 101.0). At 128 rows
    # neither tile fills a row, so the old reading there is not explained by the fill (another
    # H200, or kernel changes since); the rule was removed.
    "128x64c1": Tile(128, 64, 1, 8),
    # 2-D clusters: CLUSTER CTAs along M share B's tile, CLUSTER_N along N share A's (TMA
    # multicast both ways) - the arrangement cuBLAS runs at 128 x 1600 x 6400 (nvjet ..._64x32_...
    # _2x4: 64 x 32 tiles, clusters of 2 x 4, 104 CTAs; its SMs receive three times what they ask
    # L2 for). Correct and forced only: no rule picks it. H100, same run, interleaved, % of
    # cuBLAS at its best (docs/results/tc-cluster2d-2026-11-27), vs the rules' 64 x 64 / 64 x 128:
    # 128x1600x6400 bf16 67.8 vs 69.9, fp8 76.7 vs 78.1 - every variant tried there (clusters of
    # 2 x 4, 2 x 2 and 1 x 2 of 64 x 32 or 64 x 64 tiles) lands within 3 points of the single
    # CTAs, so sharing the operands is not what that shape lacks; 128x4096x4096 bf16 34.9 vs 101.8, fp8
    # 39.7 vs 96.4. The H100 holds 15 clusters of 8 at once (cuOccupancyMaxActiveClusters) where
    # the persistent grid launched 16, so the last ran after the others; the grid now launches
    # 15 (``persistent_clusters``; H200, same run: 128x4096x4096 bf16 43.5 -> 33.4 us, fp8 26.0
    # -> 20.0, docs/results/tc-placement-2026-11-29, run 6), still about half cuBLAS's speed:
    # the 64 x 32 tile's k-steps cost as much as 64 x 64's. 12 KB stages.
    "64x32c2x4": Tile(64, 32, 2, 18, 4),
    # Ping-pong (PINGPONG = 1): the two consumer warpgroups take alternate tiles, all 128 rows
    # each, so one's epilogue (C converted, staged and stored) runs while the other's MMAs do -
    # CUTLASS's KernelTmaWarpSpecializedPingpong. The rules' narrow tile (``choose_config``) where
    # it runs unclustered past STREAM_M rows. H100, same run, interleaved, % of cuBLAS at its best
    # (docs/results/tc-pingpong-2026-11-27), against the cooperative 128 x 128 (both warpgroups on
    # one tile, 64 rows each): bf16 2048x4800x1600 92.4 vs 91.0, 2048x11008x4096 97.2 vs 96.2;
    # fp8 2048x11008x4096 91.1 vs 90.6, 4096^3 93.2 vs 92.3, 2048x4800x1600 86.7 vs 82.6 - 12 wins
    # of 18 pairs; it lost by 0.8-1.8 at 512^3 and 1024^3 (a CTA holds one tile or none for its
    # second warpgroup: one warpgroup issues every MMA), fp8 8192^3 and 2048x1600x6400. The
    # overlap is worth about a point: it does not close the gap to the 128 x 256 tile where that
    # one wins (fp8 4096^3 93.2 vs 97.2), nor to cuBLAS. In clusters of 2 (B shared) and at
    # 64 x 256 it lost to the cooperative tiles (docs/results), so those are not built. Since the
    # stage loop, pairs still trail it alone by 1-4 points on the H200 (fp8 4096^3 94.8 vs 98.1;
    # level at 16384x4096x4096 and 8192^3; 128 x 112 pairs, cuBLASLt's pick at 4096^3, 96.1 vs
    # 98.3). Not the multicast nor the CTAs waiting on each other: the pairs' order of tiles
    # (bands of 16 rows) and the cluster launch cost the points; the pair's code alone, in the
    # lone tile's order and launched without a cluster, tied it at 4096^3
    # (docs/results/tc-ppcluster-2026-11-29). This very kernel launched in pairs, using nothing
    # of them, lost 1-4%: a cluster launch fills the SMs group by group where a plain one deals
    # pairs of blocks over the groups in turn, and L2 then misses more (fp8 4096^3: 52.6 MB read
    # from DRAM against 40.8). Pairs banded to read as little DRAM as the lone tile (4 rows a
    # band) still trailed it by 2-3 points (docs/results/tc-placement-2026-11-29).
    "128x128pp": Tile(128, 128, 1, 6, pingpong=True),
    # fp8's 128 x 160 in ping-pong (160 accumulators a thread, no spill; 5 stages of 36 KB and two
    # 40 KB staging buffers): ``pingpong_short_k``'s tile where 160 divides N. bf16's led the best
    # other tile at none of 12 shapes - behind its 128 x 128 ping-pong at 9, behind the clustered
    # 128 x 160 at the rest (B's 160 columns take three 64-column chunks, 192 columns a stage;
    # docs/results/tc-pp160k-2026-11-29, run 2) - so it is not built.
    "128x160pp": Tile(128, 160, 1, 5, pingpong=True),
    # fp8's 128 x 168 in ping-pong (m64n168: 21 swizzle atoms of B; 168 accumulators a thread):
    # where its tiles fill whole rounds that 128 and 160 leave ragged (2048 x 11008 on 132 SMs:
    # 1056 tiles, 8 rounds, against 128 x 128's 1376 in 10.4). C leaves in one unswizzled box of
    # 168 columns (336-byte rows, as 128 x 200); 4 stages of 37 KB beside 42 KB of staging.
    "128x168pp": Tile(128, 168, 1, 4, pingpong=True),
    # ... and 128 x 176 alike (176 accumulators, 4 stages of 38 KB, 44 KB of staging): 2048 x 2816
    # in 16 x 16 = 256 tiles, two whole rounds, where 128 x 128's 352 make 2.7
    "128x176pp": Tile(128, 176, 1, 4, pingpong=True),
    # ... and the narrower 128 x 112 (6 stages of 30 KB, 28 KB of staging) and 128 x 144 (5 of
    # 34 KB, 36 KB): C in one unswizzled box of the tile's width (224- and 288-byte rows)
    "128x112pp": Tile(128, 112, 1, 6, pingpong=True),
    "128x144pp": Tile(128, 144, 1, 5, pingpong=True),
    # 128 x 192 (m64n192; bf16's B in three 64-column chunks of the 128-byte swizzle, shared by
    # rows of K in pairs): bf16's wide tile where its tiles use the issued MMA area better than
    # 256 columns do (``wide_tile``). 4 stages of 40 KB and a 192-column TMA-store piece.
    "128x192c1": Tile(128, 192, 1, 4),
    "128x192c2": Tile(128, 192, 2, 4),
    # 128 x 200 (m64n200, fp8 only: B K-major, 200 rows of 128 bytes - 25 whole 8-row swizzle
    # atoms; bf16's N-major B would need 8-column chunks): N = 1600 in 8 tiles with no MMA wasted
    # past N, where 128 x 256 takes 7 and wastes 11%. C leaves by TMA in one unswizzled box of 200
    # columns (tc_common.cuh's C_BOX: each row one 400-byte run to memory), one 64 x 200 piece per
    # consumer: 4 stages of 41 KB and 50 KB of staging fit the 227 KB. Five 40-column boxes wrote
    # C in partial sectors and cost the tile 2-7 points (docs/results/tc-fraction-2026-11-27,
    # run 6). No cluster (100 rows of B a CTA are not whole atoms).
    "128x200c1": Tile(128, 200, 1, 4),
}
CONFIGS = tuple(_TILES)
# why each fp8-only tile has no bf16 instantiation (the forcing error's words)
FP8_ONLY = {"128x200c1": "bf16's N-major B tile comes in 64-column swizzle atoms",
            "128x160pp": "bf16's led no shape it was measured at; not built",
            "128x168pp": "bf16's N-major B tile comes in 64-column swizzle atoms",
            "128x176pp": "bf16's N-major B tile comes in 64-column swizzle atoms",
            "128x112pp": "bf16's N-major B tile comes in 64-column swizzle atoms",
            "128x144pp": "bf16's N-major B tile comes in 64-column swizzle atoms"}


def configs(dtype: str) -> tuple[str, ...]:
    """The tile configurations ``dtype``'s persistent kernel instantiates."""
    return tuple(c for c in CONFIGS if dtype == "fp8" or c not in FP8_ONLY)


# M at most this: the streaming tiles (64 rows, one consumer warpgroup). Such a product moves B
# (the weights) once and does at most 2 x 128 flops per byte of B: under the H100's ~295 flop/B
# BF16 ridge it is memory-bound, so the tile's job is to put many CTAs on the stream, not to feed
# two warpgroups. Measured (H100, v1, % of cuBLAS at its best, unsplit): 128x8192x8192 64x128 98.7
# vs 128x256 62.5; 128x4096x14336 101.1 vs 86.5 (128x256 split 8); 1x4096x4096 90.3 vs 39.5.
STREAM_M = 128
GROUP = 8  # tile-order bands (L2 reuse), persistent_bf16's default
EPI_PIECE = 128  # TMA-store epilogue piece, persistent_bf16's default
# The 128 x 256 tile's advantage per MMA over 128 x 128 at equal SM balance (each k-step's A tile
# feeds twice the columns; m64n256 is the widest wgmma). At equal balance the wide tile won
# (2048^3: 96.2 vs 93.3% of cuBLAS, 128 vs 256 tiles on 132 SMs; 1000x3000x80: 89.0 vs 89.3, equal
# balance 0.73 - a tie), and the narrow one won with twice the balance (1024^3: 80.4 vs 57.4;
# 512^3: 75.0 vs 58.5) - v1. The FP32 dispatch's measured 8% is kept as the margin.
WIDE_TILE_ADVANTAGE = 0.08
# The tiles a memory-bound product (M <= STREAM_M) chooses among, by ``stream_bytes_per_sm``
# (ties: the first, the most CTAs on the stream). H100 (docs/results, m128; % of cuBLAS at its
# best): 128 x 10240 x 8192 128x128 97.8 / 64x256 98.0 vs 64x128 77.2 (160 tiles: 1.2 waves);
# 128 x 11008 x 4096 95.7 / 95.5 vs 83.1; fp8 alike (96.7 / 93.9 vs 83.5; 99.6 / 98.6 vs 91.5);
# one wave of 64 x 128 tiles still wins (128 x 8192 x 8192: 99.9; 16 x 1600 x 6400: 59.8 vs 42).
# 128 x 256 joined last (the fewest CTAs): at 128 x 28672 its 112 tiles make one round where
# 128 x 128's 224 make two, and it won (H100, same run, % of cuBLAS at its best: 128x28672x4096
# bf16 96.6 vs 92.2, fp8 102.2 vs 100.4; 128x28672x8192 bf16 95.2 vs 92.7, fp8 105.3 vs 101.1;
# docs/results/tc-streamk-2026-11-26). Its cost ties 64 x 256's below 65 rows, so it is chosen
# only for 65-128 rows and N past 128 x (SMs) columns.
# 64 x 64 joined last too - it displaces the others only where it streams clearly less: where its
# tiles make one wave and 64 x 128's leave SMs idle (cuBLASLt picks 64 x 64 tiles there itself).
# H100, same run, interleaved, % of cuBLAS at its best, 64 x 64 vs the earlier rule's plan
# (docs/results/tc-tile64-2026-11-27): 128x4096x14336 bf16 103.6 vs 95.6, fp8 96.9 vs 91.5;
# 128x4096x4096 bf16 100.9 vs 96.7, fp8 96.1 vs 94.4; 128x1600x6400 bf16 70.1 vs 68.3 (split-K 2
# 64 x 128), fp8 78.0 vs 79.5. Past one wave of its tiles it lost, and the byte count keeps the
# earlier tile there: 128x4800x1600 (150 tiles) bf16 72.0 vs 96.9, fp8 77.1 vs 96.5;
# 128x11008x4096 bf16 78.8 vs 97.1 (128 x 128). Clusters of two 64 x 64 CTAs sharing B lost at
# all ten (shape, dtype) pairs (128x4096x4096 bf16 86.7, fp8 85.0). At 16 tokens (where the
# decode rules hand over to the tiles) it won for bf16 and lost for fp8 (same machine, 64 x 64 vs
# 64 x 128): bf16 16x6144x4096 90.9 vs 87.9, 16x8192x8192 96.9 vs 93.2, 16x8192x28672 96.1 vs
# 95.2, 16x4800x1600 92.6 vs 87.3; fp8 90.9 vs 94.0, 97.0 vs 95.7, 95.8 vs 99.3, 88.1 vs 90.5.
# So fp8 takes it from FP8_TILE64_MIN_M rows on: past those 16 tokens it won at every serving
# batch measured - H200, same run, interleaved, 64 x 64 vs 64 x 128, both unsplit
# (docs/results/tc-pp112-2026-11-29, runs 8-9): 64x6144x4096 97.9 vs 94.6, 32x5120x4096 101.9 vs
# 91.7, 64x5120x14336 98.3 vs 80.4, 64x4096x4096 96.0 vs 83.9, 32x2048x4096 88.4 vs 82.9 (11 of
# 11, +2 to +18); held out 48x4608x6144 99.4 vs 83.8, 56x5632x8192 99.6 vs 92.4. The H100 has not
# measured 17-64 rows.
STREAM_CONFIGS = ("64x128", "128x128c1", "64x256", "128x256c1", "64x64")
FP8_TILE64_MIN_M = 17
# A later tile must stream this much less to displace an earlier one: the byte count ignores the
# pipeline's fill and the epilogue, so near-ties keep the tile with the most CTAs (1 x 28672: 64 x
# 128 258 rows per k vs 64 x 256 257 - 95.9% of cuBLAS measured with 64 x 128, decode run).
STREAM_MARGIN = 0.08
# bf16: 128 x 192 replaces 128 x 256 as the wide tile when its tiles use the issued MMAs this much
# better (``issued_fraction``: columns wasted past N and SMs idle in the last round alike). H100,
# same run, interleaved, % of cuBLAS at its best (docs/results/tc-pingpong-2026-11-27/t192_h100),
# 128 x 192 vs 128 x 256 at the fraction ratio in brackets: 8192x1600x6400 93.9 vs 85.8 (c1; c2
# 89.7) [1.067], 8192x4800x1600 93.0 vs 91.1 (c2) [1.026]; ties at ratio 1.0 - 8192x6144x4096
# 100.1 vs 101.3, 2048x6144x4096 99.8 vs 100.8 - and 4096^3 89.2 vs 100.2 [0.89]. The margin
# stands for 192's dearer MMAs (a fifth more shared-memory bytes per MAC than 256). Only where C
# leaves by TMA stores (N a 16-byte pitch): with the direct epilogue it lost against the fraction
# (4097^3 200.0 vs 206.7 [1.11], 8193^3 260.8 vs 276.1 [1.03], both 256 the rules' plan, same
# run). fp8 is left out: there 128 x 192 tied 128 x 256 at 8192x1600x6400 (84.3 vs 84.7, c1)
# where 128 x 160 runs 103.5, and it trailed 128 x 160 at 8192x4800x1600 (90.0 vs 91.5).
WIDE192_MARGIN = 0.02
# Clusters of 2 (B multicast) only with this many waves of tiles or more: at 2048^3 (1 wave) c2
# lost 5 points to c1 (91.3 vs 96.2% of cuBLAS), at 2048x6144x4096 (2.9 waves) and
# 2048x14336x4096 (6.8) 0.5-0.6; at 8192^3 (15.5 waves) and the 8192 x 28672 projections it won or
# tied (v1). The pair must be co-scheduled on one GPC, which costs more than halving B's L2 reads
# saves until B's L2 traffic is what limits.
CLUSTER_MIN_WAVES = 8
# A tile "fills" the GPU when its tiles number at least this fraction of the SMs (one CTA each):
# until every SM has a tile, smaller tiles put more SMs to work (and more loads in flight), which
# measured worth more than a bigger tile's efficiency per MMA. H100, v2 (% of cuBLAS at its best,
# unsplit): 1024^3 64x128 (128 tiles) 104.9 vs 128x128 (64) 81 vs 128x256 (32) 59; 512^3 64x128
# 92.5 vs 76; 128x4096x4096 99.6 vs 69; 1000x3000x80 128x128 (192) 94 vs 128x256 (96 = 0.73 of the
# SMs) 80; 2048^3 128x256 (128 tiles: 0.97 of 132) 96.3 vs 64x256 95 vs 128x128 94; fp8 alike.
# And (m128 run) 2048x1600x6400: 128x256 with 112 tiles (0.85 of the SMs) 100.7 vs 128x128 89.8,
# fp8 90.6 vs 85.3 - so the line sits between 0.73 and 0.85. Where not even 64 x 128 fills, 64 x 64
# (H100, same run, % of cuBLAS at its best, vs 64 x 128): 512^3 (64 vs 32 tiles) bf16 94.4 vs
# 91.5, fp8 101.5 vs 98.0; 511^3 99.6 vs 89.9 and 513^3 111.4 vs 103.0 (operands copied to 16-byte
# pitches first); with 64 x 128 filling it lost (1024^3: 75.7 vs 101.5, fp8 84.3 vs 99.6).
FILL = 0.8
# fp8, N a multiple of 160 (GPT-2 XL's 1600 and 4800, where cuBLASLt itself picks 128 x 160
# tiles): the 128 x 160 tile, once its C leaves through TMA stores, with at least this
# many waves of tiles and too few for the wide tile's clusters (CLUSTER_MIN_WAVES). Measured
# (docs/results/tc-tile160-2026-11-27, % of cuBLASLt at its best, interleaved; 128x160c1 vs the
# earlier rule's tile): H100 8192x1600x6400 (640 tiles, 4.8 waves) 107.3 vs 87.9, H200 102.8 vs
# 84.4; 2048x4800x1600 (480, 3.6 waves) H100 97.7 vs 83.9, H200 95.9 vs 90.4. With 1.2 waves it
# lost (2048x1600x6400, 160 tiles, the second wave 21% full: H200 73.7 vs 91.1) where 128 x 256's
# 112 tiles make one wave. At 9 waves the clustered 128 x 256 kept its lead on the H100
# (8192x4800x1600 80.4 vs 87.2), not on the H200 (90.0 vs 84.4): the bars are the H100's. A later
# H100 had 128 x 160 win there twice (92.6 vs 86.5; 89.3 vs 86.1, and 94.6 vs 90.0 at
# 8192x4800x4096), but a third read it at 80.3 in a map with our side's batches never behind the
# host (docs/results/tc-tile64-2026-11-27/wide_h100, maps/h100_tile160_9waves): two H100s of three
# put it near 80, where the clustered tile reads 84-87 on every machine, so it stays clustered.
# Clusters of 2 lost to 1 at every shape. Where 128 divides N the wide tile wastes nothing and
# kept its lead or tied (4096^3 H200 89.4 vs 97.6; 8192x6400x1600 H100 82.5 (c2) vs 87.2).
TILE160_MIN_WAVES = 2  # (on the H200 at a short K its tile goes ping-pong: pingpong_short_k)
# 128 x 160 runs when its tiles use the issued MMA area (``issued_fraction``) this much better
# than 128 x 256's, whether or not 128 divides N. Set on both kinds of N (H100, same run, % of
# cuBLAS at its best, docs/results/tc-pp160-2026-11-27 runs 1 and 3): where 128 does not divide
# N, 128 x 160 ran at fraction ratios 0.91-1.0 (it had run at any ratio there) and lost every
# time - 4096x4800x1600 (1.0) 87.9 / 84.4 vs 128x256c1 92.6 / 92.7, 2048x8000x4096 (0.91) 87.3 /
# 87.4 vs 94.3 / 95.4, 3072x8000x4096 (0.96) 93.2 vs 96.6; at 1.018 it lost (6144x4800x1600 86.4
# vs 99.6), tied (6144x4800x4096) or won (2048x14400x2048 92.9 vs 90.5); at 1.067 it won
# (3072x4800x2048 92.5 vs 86.6, 2048x11200x4096 94.0 vs 89.4). Where 128 divides N too (the
# earlier 10%, tc-tile200-2026-11-27 runs 3-4):
# H100, same run, two processes, % of cuBLAS at its best (docs/results/tc-tile200-2026-11-27, run
# 3): 4096x3200x4096 (fractions 0.97 vs 0.76) 128x160c1 98.4 / 98.2 vs the rules' 128x128pp 91.4 /
# 89.6 and 128x256c1 79.3 / 78.5; held out (run 4), 8192x3200x2048 (0.97 vs 0.87) 99.7 / 98.6 vs
# 128x256c1 87.9 / 87.2. It won at every fraction ratio from 1.12 (8192x1600x6400 1.28,
# 2048x4800x1600 1.2) and lost at 1.04 (8192x6400x1600, above), so the margin sits between. At
# 1.07 (held out, 2048x3200x8192) it read 99.4 / 101.8 against the kept 128x256c1's 95.3 / 97.9.
# So the line sits between 1.04 and 1.067 for both.
TILE160_MARGIN = 0.05
# bf16's 128 x 160 in clusters of 2 (``bf16_tile160_wins``) replaces the wide 128 x 192 / 128 x 256
# where 160 divides N and its pairs make no more rounds than the wide tile's tiles: each SM then
# runs as many tiles, each a narrower one - tile200_wins' argument for one round. H100, same run,
# % of cuBLAS at its best (docs/results/tc-pp160-2026-11-27, runs 2, 3 and 8), against the
# rules' 128 x 192: 8192x1600 at K = 2048-8192 93.4-100.6 vs 89.4-94.1 (five rounds each); held
# out 7936x1600x4096 85.6 / 94.5 vs 82.5 / 90.7, 8448x1600x3072 97.0 / 97.2 vs 93.6 / 94.5,
# 6912x1920x4096 90.5 / 89.4 vs 89.7 / 89.0. Where 160 does not divide N it lost 1.5-5 points in
# the same rounds (6784x1856x4096, 11776x1088x4096, 11520x1088x6144), and with more rounds than
# the wide tile it lost or tied (16384x1600x4096 88.2 vs 90.8, 8192x3200x4096, 3072x3520x4096,
# 11264x960x4096; 13312x1600x4096 84.5 vs 83.0). Alone (no cluster) it ran 70-81 everywhere.

# fp8 products whose 128 x 256 tiles make two or three rounds (FRACTION_ROUNDS): the tile of
# FRACTION_TILES whose tiles use the issued MMA area best (``issued_fraction``; ties to the wider
# tile), ahead of the rules above. With so few rounds a round more or less, or a tile's columns
# wasted past N, is most of the difference. Set on 21 shapes (H100, same run, two processes, %
# of cuBLAS at its best; docs/results/tc-tile200-2026-11-27, runs 3-5): where 128 x 256 makes at
# most three rounds the best-fraction tile measured best at 15 of 17; at 2-3 rounds 3072x1600x4096
# 128x160c1 98.8 against the rules' ping-pong 75.5, 4096x1600x8192 128x200c1 112.4 against
# 128x160c1's 96.6, 2560x2400x4096 ping-pong 101.2 against 128x160c1's 85.9. Past three rounds
# the fraction stops ranking them (8192x4800x1600: 128 x 256 best on the worst fraction).
FRACTION_ROUNDS = (2, 3)
FRACTION_TILES = ("128x256c1", "128x200c1", "128x160c1", "128x128pp")
# ... and 128 x 200 among them only from this K: a tile's fixed cost (epilogue, setup) weighs
# most where K is short, and 128 x 200's is the largest of the four - with every tile making two
# whole rounds its MMAs ran at 128 x 256's rate per MAC while its time per tile held ~1.2 us more
# (docs/results/tc-fraction-2026-11-27, run 2). Both misses of the 17 were 128 x 200's better
# fraction losing to 128 x 160 at K = 1600 (2048x4800x1600 86.9 vs 96.2, 2048x3200x1600 109.8 vs
# 114.8), while from K = 4096 it won wherever its fraction was best (2048x3200x4096 108.5 vs
# 102.4, 2048x3200x8192 116.1 vs 100.6, 4096x1600x8192). With its C in one box (run 6) it still
# lost at 2048x4800x1600 (94.3 vs ~101) and tied at 2048x3200x1600 and 3072^3. The one-round rule
# (``tile200_wins``) does not take this bound.
TILE200_MIN_K = 4096
# Short K: a ping-pong tile in place of a cooperative 128-row one (128 x 256, 128 x 192, 128 x 160,
# 128 x 200; ``pingpong_short_k``) - fp8's 128 x 160 where 160 divides N, bf16's 128 x 128 - where
# a tile's K is at most PINGPONG_MAX_KTILES k-tiles, the ping-pong tiles make at least
# PINGPONG_MIN_ROUNDS rounds and use the issued MMA area at least as well (``issued_fraction``).
# A cooperative tile's two warpgroups stage C together, so the tensor pipe idles through every
# epilogue (with it removed fp8 8192x4800x1600 read 103 against 89,
# docs/results/tc-epilogue-2026-11-27); a ping-pong warpgroup stages C under the other's MMAs.
# That is worth most where a tile has least K; the price, paid on every k-tile, is a narrower
# tile's operand bytes per MMA - rows of A and B per output element (128 + 160) / (128 x 160) =
# 0.0141 against 128 x 256's 0.0117 - a cost that grows with K while the epilogue's does not.
# Since the turn passes once a mainloop is issued (tile_finish.cuh) and the stage loop steps its
# descriptors, fp8's 128 x 160 ping-pong ran (H200, same run, interleaved, % of cuBLAS at
# its best, docs/results/tc-pp160k-2026-11-29 run 2; forced vs the earlier rules' plan):
# 8192x4800x1600 97.9 vs 87.6 (128x256c2), 8192x6400x1600 96.2 vs 88.5, 6144x4800x1600 102.6 vs
# 97.0, 4096x4800x1600 96.9 vs 92.0 (equal fractions), 8192x4800x4096 97.9 vs 93.8, 2048x4800x1600
# 101.0 vs 98.7 (128x160c1), 8192x1600x6400 (50 k-tiles) 105.5 vs 102.9, 16384x1600x4096 102.9 vs
# 101.3, 4096x3200x4096 99.2 vs 98.3; at 64 k-tiles it lost or tied (8192x10240x8192 103.9 vs
# 107.7, 2048x10240x8192 100.4 vs 100.7), and with 1.2 rounds it lost (2048x1600x6400 75.7 vs
# 103.4 for 128x200c1). bf16's 128 x 128 ping-pong alike (a bf16 k-tile of 64 takes a tensor core
# as long as fp8's 128): 25 k-tiles 8192x4800x1600 95.4 vs 92.7 (128x192c2), 8192x6400x1600 98.2
# vs 93.6, 6144x4800x1600 97.5 vs 95.2, 4096x4800x1600 97.3 vs 94.5; 64 k-tiles tied or lost
# (8192x4800x4096 99.5 vs 100.2, 16384x1600x4096 85.7 vs 93.3), 100 lost (8192x1600x6400 86.6
# vs 100.8). So the line sits between 50 and 64 k-tiles for both. fp8's 128 x 128 ping-pong did
# not win there (8192x4800x1600 85.2): it brings a third more operand bytes per MMA than 128 x 256.
# Held out (run 3: 18 shapes per dtype chosen before they ran, never used to set the rule), the
# rules' plan against the earlier rules': fp8 ahead at 10 of the 10 it changed, mean +3.8
# (8192x7680x2048 96.7 vs 91.6, 4096x4800x7168 at 56 k-tiles 94.2 vs 93.7); bf16 at 10 of 13,
# mean +1.6 (16384x2048x1024 97.7 vs 92.0; behind at 4096x5120x3584 95.5 vs 98.2, 4096x8192x3072
# 97.3 vs 97.8, 5120x4800x3200 97.7 vs 97.8).
PINGPONG_MAX_KTILES = 56  # between 50 k-tiles (won) and 64 (tied or lost), for both dtypes
# ... and only on the GPUs where it was measured to win: the H200, told from the H100 by its
# datasheet DRAM bandwidth (4800 GB/s against 3350; a GPU the spec table lacks is not measured).
# The bandwidth is no cause - these shapes' operands fit the 50 MB L2 - it only tells the two
# apart. On the H100 the same ping-pong tiles, on the same stage loop (before the turn moved), read
# 15 points under the cooperative ones at these very shapes (docs/results/tc-stage-loop-2026-11-27
# run 7, same run: bf16 8192x4800x1600 128x128pp 79.5 / 80.2 vs the rules' 95.4; fp8
# 2048x4800x1600 86.1 / 81.5 vs 101.5 / 89.6; fp8 8192x4800x1600 69.0 / 67.5 vs 89.9), where the
# H200 reads them 2-3 points over (bf16 95.4 vs 92.7 above). Why the two GPUs part is not known;
# until the H100 measures this loop and turn, it keeps the cooperative tiles.
PINGPONG_MIN_GBPS = 4800.0
# fp8's short-K ping-pong where 160 does not divide N: the widest ping-pong tiles, 160, 168 and 176
# columns, by issued fraction (ties: the narrower) - not 128 x 128, with a third more operand bytes
# per MMA than 128 x 256 (above). H200, same run, interleaved, % of cuBLAS at its best, the tile
# this picks (forced) against the earlier rules' cooperative plan (docs/results/
# tc-pp168-2026-11-29, runs 3-4): 8192x6144x4096 128x176pp 95.5 vs 93.8 (128x256c2),
# 6144x7168x4096 97.1 vs 90.7, 4096x11008x4096 128x168pp 98.9 vs 94.0, 8192x8192x2048 98.4 vs
# 93.9, 4096x14336x4096 128x160pp 99.2 vs 93.0, 4096x7168x6144 96.4 vs 94.1 (128x256c1),
# 6144x11008x2048 91.9 vs 91.3, 8192x5632x4096 99.4 vs 99.2. Held out (run 5: a random 14 of
# the 654 shapes on a 1024 x 512 grid, K 2048-6144, where the plan changes, drawn before they
# ran): ahead at 14 of 14, mean +4.1 points, least +0.3 (4096x11264x6144 101.9 vs 101.6;
# 16384x15872x6144 102.8 vs 95.3, 11264x9728x4096 100.6 vs 93.6).
# Where 160 divides N, 160 columns unless 168 or 176 use the issued MMA area more than
# PINGPONG_WIDTH_MARGIN better (1536x23040: 176 columns in 11.9 rounds, 0.99, against 160's 13.1,
# 0.94); and a narrow width (NARROW_WIDTHS) also where the wide pick falls short of the cooperative
# tile. No constant was set from these runs (docs/results/tc-pp112-2026-11-29, H200, random changed
# shapes drawn before they ran): run 6, the wider pick alone, 14 of 16 ahead (mean +2.8; behind at
# 8960x3360x8192 and 3584x10080x16384 where a narrow tile fell back to the cooperative one: 88.4 vs
# 92.0, 105.9 vs 107.8); run 7, with the narrow fallback, a fresh 16: 13 ahead, mean +1.2, least
# -1.2 (1280x21440x16384 128x168pp 94.1 vs 128x112pp 95.3). The 160 -> 168/176 changes led at all 12
# of both runs (+0.3 to +5.3).
SHORT_K_WIDTHS = ("128x160pp", "128x168pp", "128x176pp")
# fp8's 128 x 128 ping-pong in place of the cooperative tile where no width above (nor a narrow
# one) replaces it, its fraction at least the cooperative tile's, and a tile has at most
# PP128_MAX_KTILES k-tiles: the epilogue it hides is the larger share of a short tile, where its
# third more operand bytes per MMA cost least. H200, same run, interleaved, % of cuBLASLt at its
# best (docs/results/tc-swap64-2026-11-29), against 128 x 256 (c1 / c2): at N = 4096 (run 1)
# 4096x4096x2048 98.4 vs 94.9, 16384x4096x4096 98.9 vs 94.8, 4096^3 99.1 vs 97.2, but
# 8192x4096x4096 97.3 vs 99.0 and level at 3072x4096x4096 and 4096x4096x6144. Held out (random
# changed shapes drawn before they ran): as one more width by fraction (runs 2-3) it led 7 of 10
# twice, +0.7 and +1.1 points - level against the wider ping-pong widths it displaced (mean -0.1
# over 11), ahead of the cooperative tiles (+2.1 over 9, all 5 at K <= 3072). As the fallback
# alone at K <= 3072 (run 4, a fresh 10): ahead at 9 of 10, mean +3.2, least -0.4
# (4096x19712x1024 89.7 vs 84.4, 7680x3328x2048 99.3 vs 95.4). Up to 32 k-tiles it led at N =
# 4096 in every run of docs/results/tc-ppcluster-2026-11-29 (4096^3 98.1-99.1 vs 97.2-98.1), but
# held out at K 3200-4096 (12 random changed shapes) it led 7, mean +0.8, least -3.1: not kept.
PP128_MAX_KTILES = 24
# fp8's ping-pong width: where the rules above chose the ping-pong 128 x 128, the ping-pong tile of
# PINGPONG_WIDTHS whose tiles use the issued MMA area best (``issued_fraction``: SMs idle in the
# last round, columns wasted past N), when that beats 128 x 128's by more than
# PINGPONG_WIDTH_MARGIN (``pingpong_width``). cuBLASLt runs 168- and 176-wide tiles at these shapes
# itself (2048x11008x4096: "tile 168x128"). H200, same run, interleaved, % of cuBLASLt at its
# best (docs/results/tc-pp168-2026-11-29, run 1; fractions 128 / 160 / 168 in brackets):
# 2048x11008x4096 128x168pp 97.2 vs 128x128pp 93.4 [0.95 / 0.93 / 0.99: 1056 tiles, 8 rounds],
# 1536x9216x4096 97.3 vs 92.9 [0.94 / 0.87 / 1.00], 768x3584x4096 100.1 vs 79.0 (128x160pp 67.6)
# [0.64 / 0.55 / 0.97: one round], 512x5120x4096 128x160pp 101.9 vs 74.6 (128x168pp 97.2)
# [0.61 / 0.97 / 0.92]. 176 columns joined after (run 3, fractions 128 / 176): 1024x5632x4096
# 98.0 vs 92.8 [0.89 / 0.97], 2048x2816x4096 98.6 vs 93.2 [0.89 / 0.97], 512x5632x4096 98.6 vs
# 78.2 [0.67 / 0.97]. Held out (chosen before they ran, never used to set the rule): runs 2 (128,
# 160, 168) and 4 (176: a random 12 of the 29 shapes on a 256-step grid where it is picked) - the
# rules' plan ahead of 128 x 128 ping-pong at 22 of 22 (mean +7.1 points, least +1.9) and 12 of 12
# (mean +10.2, least +2.5). The margin stands for a tile's own rate: 128 x 168 and 128 x 176 hold
# 4 stages where 128 x 128 holds 6, and at 2048x11008x4096 168's time per unit of fraction was
# 0.6% dearer.
PINGPONG_WIDTHS = ("128x128pp", "128x160pp", "128x168pp", "128x176pp", "128x112pp",
                   "128x144pp")
PINGPONG_WIDTH_MARGIN = 0.02
# ... and the narrower widths, 112 and 144 columns (cuBLASLt's "tile 112x128" and "144x128"),
# which also join the short-K choice (NARROW_WIDTHS, after SHORT_K_WIDTHS' pick). 144 takes the
# margin above. 128 x 112 takes a larger one: it reads A's 128 rows again for every 112 columns,
# 7% more operand bytes per MMA than 128 x 128 and 24% more than 128 x 176, and at fractions of
# 0.97-1.00 it ran 2-4% slower per unit of fraction than 128 x 128 / 128 x 176 (4096^3 99.8 vs
# 101.8, 8192x4096x4096 99.1 vs 102.6, 1024x18432x4096 98.4 vs 100.4, 6144x7936x4096 97.6 vs
# 102.7 for 176). H200, same run, interleaved, % of cuBLASLt at its best
# (docs/results/tc-pp112-2026-11-29, run 1; fractions in brackets), the width picked against the
# earlier rules' plan: 2048x1792x4096 128x112pp 98.5 vs 128x128pp 91.1 [0.97 / 0.85],
# 256x14592x4096 97.2 vs 90.9 [0.99 / 0.86], 1536x6144x4096 98.9 vs 128x200c1 93.2 [1.00 / 0.93];
# 1536x9472x4096 128x144pp 97.8 vs 128x128pp 95.3 [1.00 / 0.96], 512x27904x4096 100.4 vs 96.6,
# 256x9472x4096 97.7 vs 128x160pp 94.0, 1536x1536x8192 104.8 vs 100.1, 512x9472x4096 97.6 vs
# 128x160c1 92.7, 2048x5888x4096 99.1 vs 128x256c1 93.2. Kept out by the margin: 8192x4096x4096
# 128x112pp 97.6 vs 128x256c1 99.0 [0.985 / 0.970], 6144x7936x4096 96.8 vs 128x176pp 99.1
# [0.99 / 0.965].
NARROW_WIDTHS = ("128x112pp", "128x144pp")
NARROW_WIDTH_MARGIN = 0.04
# fp8 past PINGPONG_MAX_KTILES: the same ping-pong tile where its issued fraction beats the
# cooperative tile's by more than LONG_K_MARGIN. At a long K the epilogue the ping-pong hides is a
# smaller share of a tile, and its extra operand bytes per MMA cost on every k-tile: per unit of
# fraction it ran 2-9% slower than the cooperative tile. H200, same run, interleaved, % of
# cuBLASLt at its best (docs/results/tc-pp112-2026-11-29, run 4; fractions in brackets), the tile
# this picks against the rules' cooperative plan: 6144x1792x16384 128x168pp 101.6 vs 128x256c1
# 90.4 [0.97 / 0.85], 1792x3840x8192 128x144pp 99.6 vs 128x160c1 90.2 [0.94 / 0.85],
# 5376x4864x8192 128x176pp 94.4 vs 87.6 [0.98 / 0.86], 1536x25856x8192 128x168pp 99.5 vs
# 128x256c2 94.2 [1.00 / 0.92], 6656x4096x8192 98.9 vs 94.9 [0.96 / 0.90], 3584x2560x8192
# 128x112pp 99.5 vs 128x200c1 94.0 [0.97 / 0.91], 1536x23040x16384 100.9 vs 100.5 [0.98 / 0.91];
# under the margin it lost: 3840x18432x16384 128x168pp 102.6 vs 108.0 [0.997 / 0.963],
# 5120x16128x16384 128x144pp 99.9 vs 103.5 [0.998 / 0.955]. Held out (run 5: a random 18 of the
# 1652 shapes on a 256-step grid, K 8192-28672, where the plan changes, drawn before they ran):
# ahead at 17 of 18, mean +6.9 points (3072x8704x8192 128x160pp 102.9 vs 91.3); behind at
# 6400x1024x16384, 128x112pp 78.3 vs 128x160c1 84.0 [0.87 / 0.81].
LONG_K_MARGIN = 0.06
# under two rounds a CTA's second warpgroup has at most one tile: fp8 2048x1600x6400 (1.2 rounds)
# 75.7 vs 103.4 above; bf16 2048^3 (1.9 rounds) ping-pong 93.7 vs 128 x 256's 97.2 on the H100
# (docs/results/tc-pingpong-2026-11-27)
PINGPONG_MIN_ROUNDS = 2
# Split K automatically only when the tiles fill less than this fraction of the persistent grid
# and each of the (at most AUTO_SPLIT) slices keeps MIN_SLICE_KTILES k-tiles. History: the first
# two designs lost everywhere but long-K decode (v1: float32 slices + a reduction launch,
# 1x4096x14336 S=4 94 vs 86; v2: the last slice reduces with one dependent L2 load per pair,
# 1024^3 S=2 19 vs 105). With the last slice's loads batched (16 in flight per slice, float2)
# it wins where few tiles meet a long K (H100, docs/results, split; % of cuBLAS at its best):
# 16x4096x14336 bf16 S=2 87.5 vs 73.8 unsplit (112 k-tiles a slice), fp8 85.3 vs 81.3 (56);
# 128x1600x6400 bf16 S=2 68.2 vs 64.8 (50) - and still loses with short slices (16x4096x4096
# bf16, 32 k-tiles a slice: 66.7 vs 76.7; fp8 128x1600x6400, 25: 59.1 vs 80.0) or enough tiles
# (16x8192x8192, 64 tiles: 88.6 vs 93.5). S = 2 measured ahead of 4 (87.5 vs 85.0). v4 (now):
# the slices park their partials in register order and the last adds them as stream-K's pieces
# (tc::streamk_fixup), then C leaves by TMA stores. v3's reduction was long unrolled code with
# bounds checks - in Nsight Compute its lines stalled on instruction fetch (fp8 128 x 4800 x
# 1600, 128 x 256 split 2: 45.3 us vs 17.7 unsplit; H100) - and its partials went out in 8-byte
# pieces. H100, same run, trees alternating twice, % of cuBLAS at its best, at the shapes where
# these rules split K (docs/results/tc-splitk-fixup-2026-11-27/ab_h100): fp8 17 / 32 / 64 x
# 4096 x 14336 90.0-90.8 / 91.1-91.7 / 89.8-90.7 vs 77.0-77.7 / 77.7-78.1 / 76.6-76.7; fp8 256 x
# 512 x 16384 60.5-61.4 vs 55.1-55.3; bf16 256 x 512 x 16384 47.0-47.2 vs 43.9, 512 x 256 x 8192
# 56.7-58.1 vs 50.7-52.8, 256 x 256 x 8192 50.3-50.8 vs 44.8-44.9. The constants were set on v3.
SPLIT_BELOW_FILL = 0.25
MIN_SLICE_KTILES = 48
AUTO_SPLIT = 2
MAX_SPLIT = 32
# Stream-K (``streamk_tiles``): at most this many full waves of tiles join the last, partial one.
MAX_STREAMK_WAVES = 4
# A forced split only needs slices deep enough for the ring to reach steady state.
MIN_FORCED_SLICE_KTILES = 4
# Rule 0 before the swapped-operand kernel (now: where swap_keeps_gemv): the decode kernels ran for
# at most DECODE_M tokens, and only while the 64 x 128 tile's
# tiles number fewer than DECODE_FILL of the SMs (past that the TMA kernel has enough CTAs on the
# stream). Measured on the H100 (docs/results/tc-dispatch-h100-2026-11-25/decode, % of cuBLAS at
# its best, decode kernel vs unsplit 64 x 128):
# * bf16, 1 token: 1x4096x4096 17.1 vs 22.4 us (cuBLAS ~17), 1x4096x14336 99.6 vs 67.6,
#   1x6144x4096 96.9 vs 84.0, 1x14336x4096 (112 tiles) 99.3 vs 93.0; 1x28672x4096 (224 tiles,
#   fills) 94.9 vs 95.9. At 8 and 16 tokens the CUDA-core kernel lost everywhere (8x4096x4096
#   67 vs 76, 16x8192x28672 52 vs 96): 8 x MR FMAs per 16-byte load and ~210 registers (one
#   block per SM) make it issue-bound, so this CUDA-core kernel decodes one token only (2-16
#   tokens: the swapped-operand kernel, SWAP_M).
# * fp8 (mma.sync), up to 8 tokens: 1x4096x4096 94.1 vs 81.1, 8x4096x4096 91.1 vs 81.4,
#   1x4096x14336 92.2 vs 76.4, 1x6144x4096 (48 tiles) 100.9 vs 89.0; but 1x14336x4096 (112 tiles)
#   85.5 vs 99.0 and 1x28672x4096 95.4 vs 99.2; 16 tokens lost everywhere (16x4096x4096 77.5 vs
#   83.9). Hence fp8's lower cut: between 48 and 112 tiles on 132 SMs, half the SMs.
DECODE_M = {"bf16": 1, "fp8": 8}
DECODE_FILL = {"bf16": 0.9, "fp8": 0.5}
# The decode configurations: "gemv" (the CUDA-core bf16 / mma.sync fp8 kernels above) and "mma"
# (bf16 on the tensor cores, gemv_bf16_tc: B's rows turned into mma operands by movmatrix, up to
# 32 tokens, strips of 32 or 64 columns, K shared by a cluster of 1-8 blocks per strip).
# "swap" (decode_wgmma.cu, both dtypes): wgmma with the operands swapped - 64 columns of B as the
# M side, up to 128 tokens as the N side - on 64-column strips whose K a cluster of 1-8 CTAs shares.
DECODE_CONFIGS = ("gemv", "mma", "swap")
MMA_COLS = (32, 64)
MMA_MAX_M = 32
SWAP_MAX_M = max(paths.SWAP_TOKENS)
SWAP_COLS = 64  # columns of C per CTA: wgmma's M side
# Rule 0 (``swap_wins``): up to SWAP_M tokens, aligned, with 16-byte rows, run the swapped-operand
# wgmma decode kernel (``choose_swap``: CTAs per strip and ring depth) - except one token (bf16)
# or up to DECODE_M (fp8) where the earlier decode kernels measured faster. H100, % of cuBLAS at
# its best, interleaved, docs/results/tc-swap-decode-2026-11-27/ (10 KB a stage):
#  * CTAs per strip (sweep_h100, sweep_h200): enough CTAs to pull SWAP_BW_SHARE of the GPU's
#    datasheet DRAM bandwidth at SWAP_CTA_GBPS each (``swap_fill_ctas``: 62 on the H100, 89 on
#    the H200), not more. A CTA streamed B at 43 GB/s at most (H100, 16x4096x14336, 64 CTAs:
#    2764 GB/s, 92% of copy; the H200 at 64 CTAs: 67% of its copy), so the H200 wants twice the
#    CTAs at 64 strips - 16x4096x14336 x 2 CTAs (8 stages) 98.1 (bf16) / 101.8 (fp8) vs x 1
#    80.2 / 86.9; 16x4096x4096 105.3 / 91.5 vs 96.5 / 91.3 - where the H100 wants one - x 1
#    98.1 / 95.4, x 2 94.6 / 91.0 (16x4096x4096). H100 elsewhere: 16x1600x6400 (25 strips) x 4
#    CTAs 109.1 / 109.9, x 2 (50 CTAs) 102.0 / 106.1, x 8 (200) 91.2 / 91.5; 16x4800x1600 (75)
#    x 1 98.3 / 94.7, x 2 88.0 / 84.0; 16x6144x4096 (96) x 1 102.6 / 98.9, x 2 92.3 / 88.7.
#  * ring depth (sweep_h100, wide_h100): about SWAP_INFLIGHT_STAGES stages (~11 MB of B) in flight
#    over the whole GPU - 16 at 64 CTAs (16x4096x14336 bf16 105.4, 8 stages 97.1, 4 63.4), 8 at
#    96-128, 6 at 160-172 (16x11008x4096 bf16 104.3, 4 98.5, 8 101.2; fp8 16x10240x8192 99.7,
#    4 96.1, 8 97.0). Deeper rings lost - more loads queued than DRAM's bandwidth x latency
#    (3.35 TB/s x ~3 us under load) only lengthen the queue: 16x6144x4096 x 1, 16 stages, 94.9 -
#    and so did rings too deep for every CTA to be resident at once (448 CTAs, 16x28672x4096:
#    4 stages 95.2 / 100.8, 6 stages - 3 CTAs an SM, 396 resident - 90.1 / 93.6).
#  * against the earlier plans at the grid's 22 decode shapes (rule_h100): 16 tokens won or tied
#    everywhere but fp8 16x11008x4096 (99.5 vs 100.6 for 64 x 128) - e.g. bf16 16x6144x4096
#    102.0 vs 88.9 (64 x 64), 16x4096x14336 104.7 vs 91.0 (mma.sync), 16x1600x6400 109.9 vs 96.8;
#    fp8 16x4096x14336 105.7 vs 99.0, 16x1600x6400 109.8 vs 98.9. One token it won where the
#    earlier kernels leave SMs idle (bf16 1x6144x4096 103.8 vs 95.8, fp8 1x10240x8192 101.0 vs
#    90.5) and lost to them where their strips already fill a wave (SWAP_KEEPS_GEMV): bf16's
#    CUDA-core kernel on 64-column strips (1x10240x8192 105.7 vs 97.2, 1x11008x4096 106.9 vs
#    101.5; at 128 strips it lost: GEMV_KEEPS_FILL), fp8's mma.sync kernel while the swapped
#    kernel's own strips, unsplit, leave a wave unfilled (1x4096x4096 102.0 vs 94.9, 1x4800x1600
#    104.4 vs 97.4, 1x6144x4096 104.0 vs 102.8; from 128 strips on it lost: 1x8192x8192 98.3 vs
#    100.0). Past 16 tokens: SWAP_TILE_M.
SWAP_M = 16
# Rule 0 past 16 tokens: up to SWAP_TILE_M tokens (m64n32 to m64n128) where even the 64 x 64
# streaming tiles leave SMs idle (fewer than swap_fill_ctas: N = 1600, 25 x M / 64 tiles). H100
# (docs/results/tc-swap-decode-2026-11-27/m128_h100, same run, the rule's plan vs 64 x 64):
# bf16 128x1600x6400 82.5 vs 69.7, 64x1600x6400 99.2 vs 68.0, 32x1600x6400 104.2 vs 67.0. Where
# the tiles fill it lost (128x4096x4096, 128 tiles: 78.1 vs 102.0). fp8 joined once the partial
# sums left the kernel four columns at a time (docs/results/tc-swap-epilogue-2026-11-27/, the
# epilogue had cost ~3 us of DSMEM latency at 128 tokens): 128x1600x6400 93.6 vs 77.8 (bf16 97.4);
# where the tiles fill it still loses (128x4096x4096 fp8 84.9 vs 96.0, bf16 90.9 vs 100.6): each
# CTA re-reads its K-range of all 128 tokens from L2, twice the bytes of its B.
SWAP_TILE_M = 128
# ... and only where the swapped kernel splits each strip's K over 2 CTAs or more: unsplit, it
# runs one CTA a 64-column strip, as many as the 64 x 64 tiles it was to outnumber, and re-reads
# the tokens as well. H200, same run, interleaved, % of cuBLAS at its best, the unsplit swapped
# kernel (80 strips, 12 stages) against 64 x 64 (docs/results/tc-pp112-2026-11-29, run 9):
# fp8 32x5120x4096 95.7 vs 101.9, 32x5120x14336 88.2 vs 98.8, 64x5120x4096 88.6 vs 98.5,
# 64x5120x14336 83.7 vs 98.3; bf16 92.2 vs 101.9, 93.6 vs 108.3, 85.4 vs 94.5, 87.9 vs 106.8.
# Split over 2-4 CTAs it led or tied (within 0.5) the plan without it at 9 of the 14 measured
# (bf16 32x2048x4096 111.7 vs 84.3, fp8 32x4096x14336 97.8 vs 92.0), so those stay; the 5 it
# lost are at 64 tokens but one (fp8 64x2048x4096 71.0 vs 88.7; 32x4096x4096 93.8 vs 94.8) - a
# lead, no rule yet. Held out (run 9, six shapes of 24-56 tokens chosen before the run, two of
# them changed): fp8 48x4608x6144 64x64 99.4 vs 83.6, 56x5632x8192 99.6 vs 91.2; bf16 112.3 vs
# 87.3, 105.2 vs 97.1.
SWAP_TILE_MIN_SPLIT = 2
# ... and for the 64-token tile (33-64 tokens), only where a row of B - the K elements one
# column of C reads: K x 1 byte (fp8), K x 2 (bf16) - holds at least
# SWAP_TILE_MIN_ROW_BYTES or the split gives at least SWAP_TILE_SPLIT_GAIN times the CTAs of
# the 64 x 64 tiles (4 CTAs a strip or more). Each split CTA pays a cluster
# launch, its ring's fill and the sum of 64 x 64 float partials through distributed shared
# memory; a 64 x 64 CTA pays none of them, and at 64 tokens both re-read as many token bytes as
# weight bytes. Where the weights' rows are short that fixed cost is not paid back by twice the
# CTAs. H200, same run, % of cuBLAS at its best, the split (2 CTAs a strip) against 64 x 64
# (docs/results/tc-swap64-2026-11-29, run 1, tuning and run-1 rows the final rules leave as
# they were): at 2-6 KB a row and under 3 times the CTAs 15 of 18 behind, by up to 10 (fp8
# 40x4096x4096 86.4 vs 95.0, 61x4096x3072 87.8 vs 96.6, 40x3072x4096 86.2 vs 91.3; bf16
# 61x4096x3072 -3.7); from 8 KB a row ahead at 60 of 62 (fp8 64x3072x8192 +5.8, bf16
# 40x4096x8192 +3.2; behind at fp8 40x4096x8192 -1.3, bf16 40x4096x4096 -0.9); 4 CTAs a strip
# with every cluster resident ahead at 4 KB a row too (fp8 64x1536x4096 106.1 vs 88.2,
# 64x2048x4096 91.1 vs 89.5, run 2). Held out (run 5: a random 8 a dtype of the 5845 shapes of
# 33-64 tokens, N 512-8192, K 1024-16384 whose plan changes, drawn before they ran): 64 x 64
# ahead at 13 of 16, mean +8.7 (fp8 40x1536x1024 98.0 vs 77.6, 48x4096x4096 95.4 vs 88.1);
# behind at 6-7 KB a row, N 2176-2688: fp8 36x2432x7168 -3.2, bf16 56x2176x3072 -2.8,
# 48x2688x3072 -2.3.
SWAP_TILE_MIN_ROW_BYTES = 8192
SWAP_TILE_SPLIT_GAIN = 3.0
SWAP_CTA_GBPS = 43.0
SWAP_BW_SHARE = 0.8
# a GPU the spec table lacks: the H100 SXM's datasheet bandwidth per SM (3350 GB/s / 132), for
# the rule that weighs DRAM bandwidth (``swap_fill_ctas``)
DEFAULT_GBPS_PER_SM = 3350.0 / 132
SWAP_INFLIGHT_STAGES = 1100
SWAP_MIN_RUN = 4  # k-tiles a CTA gets at least (the shallowest ring's depth)
SWAP_KEEPS_GEMV = True
# bf16's one token keeps the CUDA-core kernel only where its 64-column strips cover every SM (one
# block an SM, each streaming at a capped rate), not FILL's 0.8 of them: at 128 strips (N = 8192,
# 4 SMs idle) the swapped kernel won (docs/results/tc-decode-reduce-2026-11-27/gemv_keep, same
# run, % of cuBLAS: H100 1x8192x8192 101.6 vs 97.8, 1x8192x28672 100.3 vs 98.7; H200 102.3 vs
# 93.9, 98.0 vs 90.7); from 160 strips on the CUDA-core kernel won or tied (H100 1x10240x8192
# 103.4 vs 103.1, 1x11008x4096 106.0 vs 105.0; H200 102.2 vs 99.9, 102.3 vs 99.9)
GEMV_KEEPS_FILL = 1.0
# sm_90's shared memory per SM (228 KB; a block may opt in to 227 KB) and what the system reserves
# per resident block (1 KB): how many swapped-kernel CTAs an SM holds at once
SM90_SMEM_PER_SM = 228 * 1024
SMEM_RESERVED_PER_BLOCK = 1024
SWAP_STAGES = 8  # a forced plan's ring (Policy(config="swap") without stages)
# The token tile the rules give M tokens: the smallest of paths.SWAP_TOKENS from this size on
# that holds them. Up to 8 tokens take the 8-token tile (m64n8): each stage carries half the
# tokens' bytes (1 KB, not 2, beside B's 8 KB) and wgmma computes no empty columns. H200, fp8,
# same run, interleaved, % of cuBLASLt at its best, one token on the rules' split and ring, m64n8
# vs m64n16 (docs/results/tc-tokens-2026-11-29, run 1): 1x28672x4096 96.3 vs 93.9, 1x28672x8192
# 97.0 vs 95.5, 1x11008x4096 99.9 vs 98.3, 1x4096x4096 99.0 vs 97.8, 1x10240x8192 98.0 vs 97.0,
# 1x8192x8192 100.5 vs 99.9, 1x4096x14336 106.6 vs 105.9, 1x1600x6400 119.4 vs 119.0,
# 1x8192x28672 99.9 vs 99.9; bf16 alike (run 2: 9 of 9 ahead or level, 1x28672x8192 99.6 vs
# 94.8). Held out (run 2, 2-8 tokens off the grid, read after the rule was set): fp8 ahead at 6
# of 6 (1x18944x3584 103.0 vs 100.3), bf16 at 6 of 7 (1x5120x5120 107.2 vs 103.6; 2x13824x5120
# 100.7 vs 101.0). Token tiles - M past the tile, a CTA per tile of a strip, each reading the
# strip's B (L2 serving the later reads) - are no rule: at 16 tokens as 2 x 8 the best of 20
# splits and rings lost to the 16-token plan at six of the grid's 11 shapes, by up to 14 points
# (16x4096x14336 92.8 vs 107.0), and led by 0.2-2.9 at the rest - a best of 20 reads high; with
# the pair a cluster sharing B by multicast (cuBLASLt's 16x4096x4096 arrangement; run 6, not
# kept) it lost at 9 of 11 (fp8 16x4096x4096 91.9 vs 98.1). Policy(tokens=...) forces them.
SWAP_RULE_MIN_TOKENS = 8
# fp8, one token: the pipelined decode kernel at every N, past DECODE_FILL too. Measured (same
# machine, % of cuBLASLt at its best, decode kernel vs 64 x 128; .../tc-decode-mma-2026-11-26/fp8):
# H200 1x28672x4096 97.2 vs 92.8, 1x10240x8192 79.7 vs 72.9, 1x28672x8192 86.4 vs 81.4,
# 1x11008x4096 86.3 vs 80.6, 1x14336x4096 95.8 vs 91.0; H100 1x28672x4096 100.7 vs 97.0,
# 1x28672x8192 98.0 vs 98.4, 1x11008x4096 102.4 vs 103.5, 1x14336x4096 25.3 vs 25.1 us, and
# 1x10240x8192 90.2 vs 95.9 (the one loss). The one-stage kernel lost past half the SMs
# (1x14336x4096 85.5 vs 99.0, 2026-11-25), hence DECODE_FILL's 0.5 for 2-8 tokens.
FP8_ONE_TOKEN_ANY_N = True


def _cdiv(a: int, b: int) -> int:
    return -(-a // b)


def _round_up(a: int, b: int) -> int:
    return _cdiv(a, b) * b


@dataclass(frozen=True)
class Policy:
    """Choices the rules make, forced for comparing alternatives on the device: ``config`` (a
    name of ``CONFIGS``), ``split`` (S; 1 never splits) and ``odd`` ("repitch" or "wgmma")."""

    config: Optional[str] = None
    split: Optional[int] = None
    odd: str = "repitch"
    cols: Optional[int] = None  # with config="gemv" or "mma" (bf16): the column strip
    # stream-K (persistent tiles): the full waves of tiles it takes besides the last, partial one
    # (``streamk_tiles``); None: the rules decide
    streamk: Optional[int] = None
    stages: Optional[int] = None  # with config="swap": the ring's stages (paths.SWAP_STAGES)
    # with config="swap": the token tile (paths.SWAP_TOKENS); fewer than M takes cdiv(M, tokens)
    # token tiles, a CTA each (8- to 32-token tiles only)
    tokens: Optional[int] = None

    def __post_init__(self) -> None:
        if self.config is not None and self.config not in _TILES and self.config not in DECODE_CONFIGS:
            raise InputError(f"dispatch policy config={self.config!r}: expected 'gemv', 'mma' or "
                             f"one of {', '.join(CONFIGS)}")
        allowed = MMA_COLS if self.config == "mma" else paths.GEMV_BF16_COLS
        if self.cols is not None and self.cols not in allowed:
            raise InputError(f"dispatch policy cols={self.cols!r}: expected one of "
                             f"{', '.join(map(str, allowed))}")
        if self.config == "mma" and self.split is not None and self.split not in paths.MMA_BF16_SPLITS:
            raise InputError(f"dispatch policy config='mma', split={self.split!r}: expected one of "
                             f"{', '.join(map(str, paths.MMA_BF16_SPLITS))} blocks per strip")
        if self.config == "swap" and self.split is not None and self.split not in paths.SWAP_SPLITS:
            raise InputError(f"dispatch policy config='swap', split={self.split!r}: expected one of "
                             f"{', '.join(map(str, paths.SWAP_SPLITS))} CTAs per strip")
        if self.stages is not None and (self.config != "swap" or self.stages not in paths.SWAP_STAGES):
            raise InputError(f"dispatch policy stages={self.stages!r}: config='swap' only, one of "
                             f"{', '.join(map(str, paths.SWAP_STAGES))}")
        if self.tokens is not None and (self.config != "swap" or isinstance(self.tokens, bool)
                                        or self.tokens not in paths.SWAP_TOKENS):
            raise InputError(f"dispatch policy tokens={self.tokens!r}: config='swap' only, one of "
                             f"{', '.join(map(str, paths.SWAP_TOKENS))}")
        if self.config == "swap" and self.cols is not None:
            raise InputError(f"dispatch policy config='swap', cols={self.cols!r}: its strips are "
                             f"{SWAP_COLS} columns (wgmma's M side)")
        if self.config == "gemv" and self.split is not None and self.split not in paths.GEMV_SPLITS:
            raise InputError(f"dispatch policy config='gemv', split={self.split!r}: expected one of "
                             f"{', '.join(map(str, paths.GEMV_SPLITS))} blocks per strip")
        if self.split is not None and (isinstance(self.split, bool) or not isinstance(self.split, int)
                                       or not 1 <= self.split <= MAX_SPLIT):
            raise InputError(f"dispatch policy split={self.split!r}: expected an integer in "
                             f"1..{MAX_SPLIT}")
        if self.streamk is not None and (isinstance(self.streamk, bool)
                                         or not isinstance(self.streamk, int)
                                         or not 0 <= self.streamk <= MAX_STREAMK_WAVES):
            raise InputError(f"dispatch policy streamk={self.streamk!r}: expected the full waves "
                             f"of tiles stream-K takes besides the last, 0..{MAX_STREAMK_WAVES}")
        if self.streamk is not None and (self.split or 1) > 1:
            raise InputError("dispatch policy: split-K (split > 1) and stream-K (streamk) exclude "
                             "each other")
        if self.streamk is not None and self.config in DECODE_CONFIGS:
            raise InputError(f"dispatch policy streamk: config={self.config!r} is a decode kernel "
                             f"(stream-K shares persistent tiles)")
        if self.odd not in ("repitch", "wgmma"):
            raise InputError(f"dispatch policy odd={self.odd!r}: expected 'repitch' or 'wgmma'")


def config_rung(dtype: str, config: str, split: bool = False, streamk: bool = False) -> Rung:
    """The persistent instantiation behind ``config`` (its split-K twin with ``split``, its
    stream-K twin with ``streamk``; C through TMA stores in all three)."""
    if split and streamk:
        raise ValueError("a rung is split-K or stream-K, not both")
    tile = _TILES[config]
    if tile.pingpong and (split or streamk):
        raise ValueError(f"tile {config} is ping-pong: whole tiles only (no split-K or stream-K)")
    bm, bn, cluster = tile.bm, tile.bn, tile.cluster
    stages = tile.bf16_stages if dtype == "bf16" and tile.bf16_stages else tile.stages
    suffix = "_splitk" if split else "_streamk" if streamk else ""
    name = f"dispatch_{dtype}_{config}{suffix}"
    family = f"persistent_{dtype}{suffix}"
    shape = f"{cluster} x {tile.cluster_n}" if tile.cluster_n > 1 else f"{cluster}"
    what = (f"{bm}x{bn} persistent tiles, clusters of {shape}, {stages} stages"
            + (", split-K (the last slice to arrive adds the float32 partials)" if split else "")
            + (", stream-K (equal runs of tile K-steps per CTA; the last to arrive adds a shared "
               "tile's partials)" if streamk else ""))
    if dtype not in DTYPES or config not in configs(dtype):
        raise ValueError(f"no {dtype} instantiation of tile {config}")
    params = dict(BM=bm, BN=bn, BK=BK[dtype], STAGES=stages, PRODUCER=1, MINB=1, CLUSTER=cluster,
                  GROUP=GROUP, EPI_PIECE=EPI_PIECE if bn % EPI_PIECE == 0 else bn)
    if tile.cluster_n > 1:
        params["CLUSTER_N"] = tile.cluster_n
    if tile.pingpong:
        params["PINGPONG"] = 1
    if dtype == "bf16":
        params["OUT_F32"] = 0
    return make_rung(name, 9, family, f"dispatch_{dtype} path: {what}.", **params)


def pitch_ok(dtype: str, elems: int) -> bool:
    """Whether rows of ``elems`` elements are a whole number of 16-byte units."""
    return (elems * ELEM_BYTES[dtype]) % PITCH_BYTES == 0


def padded(dtype: str, elems: int) -> int:
    """Elements per row of a copy: whole 128-byte lines (``LINE_BYTES``)."""
    return _round_up(elems, LINE_BYTES // ELEM_BYTES[dtype])


def copy_b_to_lines(dtype: str, M: int, N: int, K: int) -> bool:
    """Whether bf16's B, rows of N elements not whole 128-byte lines, is worth copying to whole
    lines (``LINE_COPY_MIN_ROW_TILES``, ``LINE_COPY_MIN_K``); fp8's never (measured a loss)."""
    return (dtype == "bf16" and N * ELEM_BYTES[dtype] % LINE_BYTES != 0
            and _cdiv(M, 128) >= LINE_COPY_MIN_ROW_TILES and K >= LINE_COPY_MIN_K)


@dataclass(frozen=True)
class Plan:
    """What one call launches: [a copy of A and/or B to 16-byte pitches], then the main kernel.
    ``lda`` / ``ldb`` are the pitches (elements) the main kernel's maps read: the operand's own,
    or its copy's when ``copy_a`` / ``copy_b``."""

    dtype: str
    M: int
    N: int
    K: int
    config: str  # a name of CONFIGS, or "wgmma" (the scalar fallback)
    splits: int
    copy_a: bool
    copy_b: bool
    lda: int
    ldb: int
    ctas: int  # the main kernel's grid (persistent: at most one CTA per SM, whole clusters)
    why: str
    gemv_rows: int = 0  # decode configs: the kernel's instantiation (tokens, bf16 columns)
    gemv_cols: int = 0
    streamk: int = 0  # persistent tiles shared out by stream-K (the last of the order); 0: none
    stages: int = 0  # config "swap": the ring's stages

    @property
    def decode(self) -> bool:
        """Whether the main kernel is a decode kernel (config "gemv" or "mma")."""
        return self.config in DECODE_CONFIGS

    @property
    def gemv(self) -> paths.PathKernel:
        """The decode kernel (configs "gemv" and "mma" only; for "mma", ``splits`` is the
        number of blocks of a cluster that share a strip's K)."""
        if self.config == "mma":
            return paths.mma_decode_kernel(self.gemv_rows, self.gemv_cols, self.splits)
        if self.config == "swap":
            return paths.swap_kernel(self.dtype, self.gemv_rows, self.splits, self.stages)
        if self.config != "gemv":
            raise ValueError(f"plan {self.name} runs no decode kernel")
        return paths.gemv_kernel(self.dtype, self.gemv_rows, self.gemv_cols, self.splits)

    @property
    def grid(self) -> tuple[int, int, int]:
        """The decode kernel's grid (strips, blocks per strip, 1); persistent plans: (ctas, 1, 1)."""
        if self.decode:
            return (self.ctas // self.splits, self.splits, 1)
        return (self.ctas, 1, 1)

    @property
    def kernel(self) -> str:
        """The main kernel's symbol."""
        return self.gemv.kernel if self.decode else self.rung.kernel

    @property
    def rung(self) -> Rung:
        """The main kernel (a ladder-like rung; the decode kernels are path kernels: ``gemv``)."""
        if self.decode:
            raise ValueError(f"plan {self.name} runs a decode kernel, not a rung: see Plan.gemv")
        if self.config == "wgmma":
            from gemmlab.kernels import registry
            from gemmlab.kernels.ladders import scalar_twin

            return scalar_twin(registry.get("wgmma_bf16"))
        return config_rung(self.dtype, self.config, self.splits > 1, self.streamk > 0)

    @property
    def name(self) -> str:
        """What ran, for result rows: e.g. ``split-K 4 64x128``, ``repitch A + 128x256c2``."""
        parts = []
        if self.copy_a or self.copy_b:
            parts.append("repitch " + "+".join(x for x, on in (("A", self.copy_a),
                                                                  ("B", self.copy_b)) if on))
        if self.config == "wgmma":
            parts.append("wgmma_bf16_scalar")
        elif self.decode:
            parts.append(self.gemv.name.removeprefix(f"dispatch_{self.dtype}_"))
        elif self.splits > 1:
            parts.append(f"split-K {self.splits} {self.config}")
        elif self.streamk:
            parts.append(f"stream-K {self.config}")
        else:
            parts.append(self.config)
        return " + ".join(parts)

    @property
    def counters(self) -> int:
        """Arrival counters: one per 64-row piece of every tile (split-K) or of every stream-K
        tile; 0 without either."""
        if self.config == "wgmma" or self.decode or (self.splits == 1 and not self.streamk):
            return 0
        tile = _TILES[self.config]
        if self.streamk:
            return self.streamk * tile.ctas * (tile.bm // 64)
        return tile.units(self.M, self.N) * tile.ctas * (tile.bm // 64)

    @property
    def partial_floats(self) -> int:
        """float32 partial sums in the workspace: split-K S slots of BM x BN per tile (whole
        clusters); stream-K two per CTA (a CTA's run of iterations shares at most its first and
        its last tile)."""
        if self.config == "wgmma" or self.decode:
            return 0
        tile = _TILES[self.config]
        if self.streamk:
            return self.ctas * 2 * tile.bm * tile.bn
        if self.splits == 1:
            return 0
        return self.splits * tile.units(self.M, self.N) * tile.ctas * tile.bm * tile.bn

    @property
    def workspace_floats(self) -> int:
        """The kernel's W: partial sums, then the counters (4 bytes each); 0: no W."""
        return self.partial_floats + self.counters

    @property
    def workspace_bytes(self) -> int:
        """Device memory the plan allocates: partial sums, counters and operand copies."""
        ws = self.workspace_floats * 4
        eb = ELEM_BYTES[self.dtype]
        a = self.M * self.lda * eb if self.copy_a else 0
        b_rows = self.N if self.dtype == "fp8" else self.K
        b = b_rows * self.ldb * eb if self.copy_b else 0
        return ws + a + b

    @property
    def params(self) -> dict[str, int]:
        """The main kernel's parameters plus the plan's choices, for result rows."""
        main = self.gemv.params if self.decode else self.rung.params
        return {**main, "SPLITS": self.splits, "STREAMK": self.streamk, "COPY_A": int(self.copy_a),
                "COPY_B": int(self.copy_b)}


def tiles(M: int, N: int, config: str) -> int:
    tile = _TILES[config]
    return _cdiv(M, tile.bm) * _cdiv(N, tile.bn)


def cta_slots(config: str, sms: int) -> int:
    """The CTAs a persistent grid of ``config`` runs at once: whole clusters, as many as fit."""
    ctas = _TILES[config].ctas
    return persistent_clusters(ctas, sms) * ctas


def grid_ctas(M: int, N: int, config: str, splits: int, sms: int) -> int:
    """Persistent grid: one CTA per work unit up to one per SM, in whole clusters that all fit
    at once (``persistent_clusters``)."""
    tile = _TILES[config]
    units = tile.units(M, N) * splits
    return min(units, persistent_clusters(tile.ctas, sms)) * tile.ctas


def stream_bytes_per_sm(M: int, N: int, config: str, sms: int) -> int:
    """Memory-bound products (M <= STREAM_M): operand rows the busiest SM streams per k - the
    rounds of tiles it runs times each tile's A rows (at most M) plus its B columns. A 64-row
    tile at M = 128 reads B twice; a tile count just past a wave costs a second round."""
    tile = _TILES[config]
    return _cdiv(tiles(M, N, config), sms) * (min(tile.bm, M) + tile.bn)


def balance(work_units: int, ctas: int) -> float:
    """Fraction of the grid's CTA-time doing work when ``work_units`` equal units are dealt round
    robin to ``ctas`` CTAs: the busiest CTA takes ceil(units / ctas)."""
    return work_units / (_cdiv(work_units, ctas) * ctas)


def tile160_wins(dtype: str, M: int, N: int, sms: int) -> bool:
    """fp8's 128 x 160 tile: N a multiple of 160 (160 wastes no MMA past N), its tiles using the
    issued MMA area ``TILE160_MARGIN`` better than 128 x 256's (``issued_fraction``: columns
    wasted past N, SMs idle in the last round), at least ``TILE160_MIN_WAVES`` waves of them, and
    too few for the wide tile's clusters (``CLUSTER_MIN_WAVES``), which kept their lead. Weighed
    against 128 x 256 even where the rules would run the ping-pong 128 x 128: weighed against
    that tile's fraction instead, 6 of 12 held-out shapes went to the ping-pong, which lost 2.6-18
    points at every one (docs/results/tc-pp160-2026-11-27, run 5)."""
    return (dtype == "fp8" and M > STREAM_M and N % 160 == 0
            and tiles(M, N, "128x160c1") >= TILE160_MIN_WAVES * sms
            and tiles(M, N, "128x256c2") < CLUSTER_MIN_WAVES * sms
            and issued_fraction(M, N, "128x160c1", sms)
            > issued_fraction(M, N, "128x256c1", sms) * (1 + TILE160_MARGIN))


def bf16_tile160_wins(dtype: str, M: int, N: int, wide: str, sms: int) -> bool:
    """bf16's 128 x 160 in clusters of 2 in place of ``wide`` (the rules' 128 x 192 or 128 x 256):
    160 divides N and its pairs make no more rounds than ``wide``'s tiles (module comment above)."""
    pair, tile = _TILES["128x160c2"], _TILES[wide]
    rounds = lambda t: _cdiv(t.units(M, N), persistent_clusters(t.ctas, sms))  # noqa: E731
    return (dtype == "bf16" and M > STREAM_M and N % 160 == 0 and tile.bn > 160
            and rounds(pair) <= rounds(tile))


def tile200_wins(dtype: str, M: int, N: int, sms: int) -> bool:
    """fp8's 128 x 200 tile where its tiles make one round (at most one per SM; then 128 x 256's
    do too): every SM's time is its one tile, so the narrower tile that keeps one round does
    least per SM - 56 columns fewer. H100, same run, two processes, % of cuBLAS at its best
    (docs/results/tc-tile200-2026-11-27, run 3): 2048x1600x6400 (128 tiles of 200 columns
    against 112 of 256) 99.9 / 100.1 vs 90.1 / 89.9. Its time per tile is more than its width
    says (8192x4800x1600, 12 rounds against 15 of 128 x 160: 75.7 / 75.9 vs 85.0 / 84.9;
    8192x1600x6400, 4 rounds against 5: 105.6 / 105.0 vs 109.6 / 110.3; with its C in one box,
    docs/results/tc-fraction-2026-11-27 run 6, 80.5 / 79.7 against the clustered 128 x 256's ~90
    and 108.8 / 109.4 against 128 x 160's ~111), so past one round only ``fraction_tile`` gives it
    two or three. Held out (run 4): 2048x1560x6400 96.0 / 95.7 vs 128x256c1 84.9 / 83.8,
    2048x1600x4096 96.4 / 96.1 vs 88.7 / 88.6; where 200's tiles would take a second round
    (2304x1600x4096, 144) it read 66-68 against 128x256c1's 97-98, and the rule keeps 256."""
    return dtype == "fp8" and M > STREAM_M and tiles(M, N, "128x200c1") <= sms


def pingpong_one_round(dtype: str, M: int, N: int, wide: str, narrow: str, slots: int) -> bool:
    """fp8's ping-pong 128 x 128 in place of a one-round 128 x 256 (at most one tile per SM) when
    its tiles - twice as many, two per SM - balance the SMs as well: one warpgroup's epilogue
    then overlaps the other's MMAs, which no SM with a single tile can. H100, same run, two
    processes, % of cuBLAS at its best (docs/results/tc-tile200-2026-11-27, run 3): 2048^3 96.7 /
    96.7 vs 93.2 / 92.9; 2048x2048x8192 99.0 / 98.7 vs 99.3 / 98.5 (long K: the epilogue's share
    is small); held out (run 4) 1024x4096x4096 97.7 / 98.5 vs 95.4 / 95.8, 2048x1792x4096 93.3 /
    93.8 vs 91.2 / 92.3. bf16 keeps 128 x 256: its K-steps take twice fp8's, so the exposed
    epilogue is half the share, and there 128 x 256 won (2048^3 97.2 vs 93.7,
    docs/results/tc-pingpong-2026-11-27)."""
    return (dtype == "fp8" and narrow == "128x128pp" and tiles(M, N, wide) <= slots
            and balance(tiles(M, N, narrow), slots) >= balance(tiles(M, N, wide), slots))


def pingpong_width(dtype: str, M: int, N: int, chosen: str, sms: int) -> str:
    """fp8's ping-pong tile of ``PINGPONG_WIDTHS`` in place of ``chosen`` = 128 x 128 ping-pong
    whose tiles use the issued MMA area best, where that beats 128 x 128's by more than
    ``PINGPONG_WIDTH_MARGIN`` and C's rows take TMA stores; ``chosen`` elsewhere (ties: the
    earlier of PINGPONG_WIDTHS). See PINGPONG_WIDTHS."""
    if dtype != "fp8" or chosen != "128x128pp" or not pitch_ok("bf16", N):
        return chosen
    return better_fraction(M, N, chosen, PINGPONG_WIDTHS, sms)


def width_margin(config: str) -> float:
    """How much better than a plan's issued fraction a ping-pong width's must be to replace it:
    ``NARROW_WIDTH_MARGIN`` under 128 columns, else ``PINGPONG_WIDTH_MARGIN``."""
    return NARROW_WIDTH_MARGIN if _TILES[config].bn < 128 else PINGPONG_WIDTH_MARGIN


def better_fraction(M: int, N: int, base: str, configs: tuple[str, ...], sms: int,
                   slots: Optional[int] = None) -> str:
    """The tile of ``configs`` with the best issued fraction among those beating ``base``'s (on
    ``slots`` CTAs a round; default ``sms``) by more than their ``width_margin``; ``base`` where
    none does (ties: the earliest)."""
    floor = issued_fraction(M, N, base, slots or sms)
    ok = tuple(c for c in configs
               if issued_fraction(M, N, c, sms) > floor * (1 + width_margin(c)))
    return best_fraction(M, N, ok, sms) if ok else base


def best_fraction(M: int, N: int, configs: tuple[str, ...], sms: int) -> str:
    """The one-CTA-an-SM tile of ``configs`` whose tiles use the issued MMA area best
    (``issued_fraction``; ties: the earliest)."""
    # rounded: equal fractions of different tiles (the same rounds x tile area) compare equal
    return max(configs, key=lambda c: round(issued_fraction(M, N, c, sms), 9))


def pingpong_short_k(dtype: str, M: int, N: int, K: int, chosen: str, sms: int,
                     dram_gbps: Optional[float] = None) -> Optional[str]:
    """The ping-pong tile in place of ``chosen``, a cooperative 128-row tile at least 160 wide,
    where a tile's K is short (at most ``PINGPONG_MAX_KTILES`` k-tiles): fp8's 128 x 160 where 160
    divides N (168 / 176 past ``PINGPONG_WIDTH_MARGIN``), else its ping-pong tile of
    ``SHORT_K_WIDTHS`` with the best issued fraction, or a narrower one (``NARROW_WIDTHS``) past
    its margin, or up to ``PP128_MAX_KTILES`` k-tiles its 128 x 128 where none of those does;
    bf16's 128 x 128 - when its tiles make
    ``PINGPONG_MIN_ROUNDS`` rounds or more and use the issued MMA area at least as well as
    ``chosen``'s (fp8 past that K: more than ``LONG_K_MARGIN`` better), and C's rows take TMA
    stores - on a GPU of at least ``PINGPONG_MIN_GBPS`` datasheet bandwidth (``dram_gbps``; None,
    a GPU the spec table lacks: no), the one it was measured on; None elsewhere. See
    PINGPONG_MAX_KTILES and LONG_K_MARGIN."""
    tile = _TILES[chosen]
    long_k = _cdiv(K, BK[dtype]) > PINGPONG_MAX_KTILES
    if (not dram_gbps or dram_gbps < PINGPONG_MIN_GBPS
            or M <= STREAM_M or tile.bm != 128 or tile.pingpong or tile.bn < 160
            or (long_k and dtype != "fp8") or not pitch_ok("bf16", N)):
        return None
    if dtype == "bf16":
        pp = "128x128pp"
    elif N % 160 == 0:  # 160 where it divides N (as measured first), unless a wider one's
        # fraction is better by PINGPONG_WIDTH_MARGIN (see SHORT_K_WIDTHS)
        pp = better_fraction(M, N, "128x160pp", SHORT_K_WIDTHS, sms)
    else:  # the best-fraction wide one
        pp = best_fraction(M, N, SHORT_K_WIDTHS, sms)
    on = cta_slots(chosen, sms)
    picks = (pp,)
    if dtype == "fp8":  # a narrower width past its margin over chosen (NARROW_WIDTHS): first
        # where it also beats the wide pick by its margin, else where the wide pick falls short
        narrow = better_fraction(M, N, chosen, NARROW_WIDTHS, sms, on)
        if narrow != chosen:
            ahead = better_fraction(M, N, pp, (narrow,), sms) == narrow
            picks = (narrow, pp) if ahead else (pp, narrow)
        if _cdiv(K, BK[dtype]) <= PP128_MAX_KTILES:  # where none of those replaces chosen
            picks += ("128x128pp",)
    floor = issued_fraction(M, N, chosen, on)
    for pick in picks:
        have = issued_fraction(M, N, pick, sms)
        enough = have > floor * (1 + LONG_K_MARGIN) if long_k else have >= floor
        if enough and tiles(M, N, pick) >= PINGPONG_MIN_ROUNDS * sms:
            return pick
    return None


def issued_fraction(M: int, N: int, config: str, slots: int) -> float:
    """The useful share of the MMA area a persistent grid issues: M x N over the rounds of tiles
    (each of ``slots`` CTAs one tile a round) times a tile's area - what columns wasted past N
    and SMs idle in the last round leave."""
    tile = _TILES[config]
    return M * N / (_cdiv(tiles(M, N, config), slots) * slots * tile.bm * tile.bn)


def fraction_tile(dtype: str, M: int, N: int, K: int, sms: int) -> Optional[str]:
    """fp8 past ``STREAM_M`` rows whose 128 x 256 tiles make ``FRACTION_ROUNDS`` rounds: the tile of
    ``FRACTION_TILES`` with the best ``issued_fraction`` (128 x 200 only from ``TILE200_MIN_K``),
    ties to the wider; None elsewhere, and where C's bf16 rows cannot leave by TMA stores (N not a
    16-byte pitch: 128 x 160 with the direct epilogue lost everywhere, ``TILE160_MIN_WAVES``)."""
    if dtype != "fp8" or M <= STREAM_M or not pitch_ok("bf16", N):
        return None
    rounds = _cdiv(tiles(M, N, "128x256c1"), sms)
    if not FRACTION_ROUNDS[0] <= rounds <= FRACTION_ROUNDS[-1]:
        return None
    candidates = [c for c in FRACTION_TILES if c != "128x200c1" or K >= TILE200_MIN_K]
    # rounded: equal fractions of different tiles (the same rounds x tile area) compare equal
    return max(candidates,
               key=lambda c: (round(issued_fraction(M, N, c, sms), 9), _TILES[c].bn))


def wide_tile(dtype: str, M: int, N: int, cluster: int, sms: int) -> str:
    """The wide 128-row tile: 128 x 256, or for bf16 with C's rows a 16-byte pitch (TMA stores)
    128 x 192 where its tiles use the issued MMAs ``WIDE192_MARGIN`` better
    (``issued_fraction``), in the same clusters."""
    wide, alt = f"128x256c{cluster}", f"128x192c{cluster}"
    slots = persistent_clusters(cluster, sms) * cluster
    if dtype == "bf16" and pitch_ok(dtype, N) and (
            issued_fraction(M, N, alt, slots)
            > issued_fraction(M, N, wide, slots) * (1 + WIDE192_MARGIN)):
        return alt
    return wide


def choose_config(dtype: str, M: int, N: int, K: int, sms: int,
                  dram_gbps: Optional[float] = None) -> str:
    """The tile (rule 1 of the module docstring): the largest tile whose tiles fill a wave of the
    SMs (``FILL``), else the 64 x 64 tile (the most CTAs); between the two 128-row tiles, the
    narrow one only when it balances the SMs better by more than ``WIDE_TILE_ADVANTAGE``; fp8's
    128 x 160 where it divides N and makes enough waves (``tile160_wins``); first, fp8's
    best-fraction tile at two or three rounds of 128 x 256 (``fraction_tile``); fp8's ping-pong
    width by the same fraction where 128 x 128 ping-pong was chosen (``pingpong_width``); then,
    at a short K on the GPUs where it was measured (``dram_gbps``), a ping-pong tile in place of
    a cooperative one (``pingpong_short_k``)."""
    chosen = pingpong_width(dtype, M, N, cooperative_config(dtype, M, N, K, sms), sms)
    return pingpong_short_k(dtype, M, N, K, chosen, sms, dram_gbps) or chosen


def replaced_why(dtype: str, M: int, N: int, K: int, sms: int, config: str,
                 dram_gbps: Optional[float] = None) -> str:
    """What ``config`` (``choose_config``'s) replaced and by which rule: the ping-pong width in
    place of 128 x 128 ping-pong, or a ping-pong tile in place of the cooperative one at a short
    or (fp8) long K; "" where the tile rules' first pick stands."""
    def frac(c: str) -> str:
        return f"{issued_fraction(M, N, c, cta_slots(c, sms)):.1%}"

    first = cooperative_config(dtype, M, N, K, sms)
    width = pingpong_width(dtype, M, N, first, sms)
    if config == first:
        return ""
    if config == width:
        return (f"; in place of {first} ({frac(first)}): the ping-pong width that fills its "
                f"rounds best, past its margin (pingpong_width)")
    if _cdiv(K, BK[dtype]) > PINGPONG_MAX_KTILES:
        return (f"; in place of {width} ({frac(width)}): ping-pong at a long K, more than "
                f"{LONG_K_MARGIN:.0%} more of the MMA area useful (pingpong_short_k)")
    return (f"; in place of {width} ({frac(width)}): ping-pong at a short K, each warpgroup's "
            f"epilogue under the other's MMAs (pingpong_short_k)")


def cooperative_config(dtype: str, M: int, N: int, K: int, sms: int) -> str:
    """The tile ``choose_config`` weighs ``pingpong_short_k`` against: every rule of rule 1 but that
    one."""
    best = fraction_tile(dtype, M, N, K, sms)
    if best is not None:
        return best
    if tile160_wins(dtype, M, N, sms):
        return "128x160c1"
    cluster = 2 if tiles(M, N, "128x256c2") >= CLUSTER_MIN_WAVES * sms else 1
    # the narrow tile unclustered: ping-pong (its epilogue overlaps the other warpgroup's MMAs)
    wide, narrow = f"128x256c{cluster}", "128x128c2" if cluster == 2 else "128x128pp"
    fills = lambda c: tiles(M, N, c) >= FILL * sms  # noqa: E731
    if M > STREAM_M and fills(wide):
        slots = persistent_clusters(cluster, sms) * cluster
        b_wide, b_narrow = balance(tiles(M, N, wide), slots), balance(tiles(M, N, narrow), slots)
        if b_narrow > b_wide * (1 + WIDE_TILE_ADVANTAGE):
            return narrow
        if tile200_wins(dtype, M, N, sms):
            return "128x200c1"
        if pingpong_one_round(dtype, M, N, wide, narrow, slots):
            return narrow
        wide = wide_tile(dtype, M, N, cluster, sms)  # 128 x 256, or bf16's 128 x 192
        return "128x160c2" if bf16_tile160_wins(dtype, M, N, wide, sms) else wide
    if M > STREAM_M and fills(narrow):
        return narrow
    if M <= STREAM_M:
        cost = {c: stream_bytes_per_sm(M, N, c, sms) for c in STREAM_CONFIGS
                if c != "64x64" or dtype == "bf16" or M >= FP8_TILE64_MIN_M}
        least = min(cost.values())
        # the first in STREAM_CONFIGS' order within the model's margin of the least
        return next(c for c in cost if cost[c] <= least * (1 + STREAM_MARGIN))
    return next((c for c in ("64x256", "64x128") if fills(c)), "64x64")


def streamk_tiles(M: int, N: int, config: str, sms: int, waves: int) -> int:
    """Stream-K's share of the work: the tiles (cluster units) of the order's last, partial wave
    plus ``waves`` full waves before it (all of them when there are fewer); 0 when the tiles
    make whole waves and ``waves`` is 0. The tiles before them run whole, one per CTA at a time;
    the stream-K tiles are cut into (tile, K-tile) iterations dealt out in equal runs, one per
    cluster (block_order.cuh, ``for_each_work``)."""
    tile = _TILES[config]
    units = tile.units(M, N)
    slots = persistent_clusters(tile.ctas, sms)
    return min(units, units % slots + waves * slots)


def choose_split(dtype: str, M: int, N: int, K: int, sms: int, config: str) -> int:
    """S (rule 2 of the module docstring); 1 when the tiles fill enough of the grid or K is too
    short to give each slice ``MIN_SLICE_KTILES``."""
    slots = cta_slots(config, sms)
    t = tiles(M, N, config)
    if t >= SPLIT_BELOW_FILL * slots:
        return 1
    nk = _cdiv(K, BK[dtype])
    return max(1, min(slots // t, nk // MIN_SLICE_KTILES, AUTO_SPLIT))


def decode_rows(dtype: str, M: int) -> int:
    """The decode instantiation for M tokens: the fewest rows that hold them."""
    rows = paths.GEMV_BF16_ROWS if dtype == "bf16" else tuple(8 * t for t in paths.GEMV_FP8_TILES)
    return min(r for r in rows if r >= M)


def max_decode_rows(dtype: str) -> int:
    """The most tokens a decode kernel instantiation holds."""
    return max(paths.GEMV_BF16_ROWS) if dtype == "bf16" else 8 * max(paths.GEMV_FP8_TILES)


def decode_fits(dtype: str, M: int, N: int, K: int, ops: Operands,
                max_m: Optional[int] = None) -> bool:
    """Whether a decode kernel can run: at most ``max_m`` tokens (default ``DECODE_M``), 16-byte
    rows (bf16: K and N; fp8: K) and 16-byte aligned A and B (its 16-byte loads)."""
    rows_ok = pitch_ok(dtype, K) and (dtype == "fp8" or pitch_ok(dtype, N))
    limit = DECODE_M[dtype] if max_m is None else max_m
    return M <= limit and rows_ok and ops.a16 and ops.b16


def decode_wins(dtype: str, M: int, N: int, K: int, sms: int, ops: Operands) -> bool:
    """Rule 0: the decode kernel runs when it can and the 64 x 128 tile leaves SMs idle (fewer
    tiles than ``DECODE_FILL`` of them); fp8's single token (``FP8_ONE_TOKEN_ANY_N``) at any N."""
    if not decode_fits(dtype, M, N, K, ops):
        return False
    if dtype == "fp8" and M == 1 and FP8_ONE_TOKEN_ANY_N:
        return True
    return tiles(M, N, "64x128") < DECODE_FILL[dtype] * sms


def choose_cols(N: int, K: int, sms: int) -> int:
    """bf16 decode (one token): the widest column strip whose blocks fill a wave of the SMs
    (wider strips read longer runs of each row of B); where none does, the one with the most
    blocks once K is shared by a cluster of blocks (``choose_gemv_split``), the widest of
    equals."""
    widths = sorted(paths.GEMV_BF16_COLS, reverse=True)
    filling = [c for c in widths if _cdiv(N, c) >= FILL * sms]
    if filling:
        return filling[0]

    def blocks(cols: int) -> int:
        strips = _cdiv(N, cols)
        return strips * choose_gemv_split("bf16", 1, cols, strips, K, sms)

    return max(widths, key=blocks)  # max keeps the first (widest) of equals


def choose_gemv_split(dtype: str, rows: int, cols: int, strips: int, K: int, sms: int) -> int:
    """Blocks per strip sharing its K (a cluster adding partial sums through distributed shared
    memory) for the CUDA-core bf16 (one token) and fp8 decode kernels: 1 while the strips fill a
    wave of the SMs (bf16: ``FILL``, as ``choose_cols``; fp8: all of them), else the fewest of 2,
    4, 8 whose blocks do. Each split block pays a cluster launch and two cluster barriers, and
    the split lost wherever the strips alone filled the SMs. Measured (H100, % of cuBLAS at its
    best, interleaved, docs/results/tc-gemv-split-2026-11-27/): bf16 1x1600x6400 64 columns x 8
    blocks (200) 106.6 vs 96.0 for the unsplit 16-column strips (100 blocks), x 4 97.4; fp8
    1x1600x6400 (100 strips) x 2 104.8, x 4 106.1 vs 100.0; 16x1600x6400 x 2 98.3 vs 92.5;
    where the strips filled the SMs it lost (fp8 1x4800x1600, 300 strips: x 2 79.2 vs 105.6;
    bf16 1x4800x1600 64 columns x 2 92.6 vs 32 columns 98.0). No block gets less K than one
    round of its loads (``gemv_round``): a shorter share only adds a block with nothing in
    flight."""
    if dtype == "bf16" and rows > 1:
        return 1
    fill = FILL * sms if dtype == "bf16" else sms
    if strips >= fill:
        return 1
    most = max(1, K // gemv_round(dtype, cols))
    allowed = [k for k in paths.GEMV_SPLITS if k <= most]
    return next((k for k in allowed if strips * k >= fill), allowed[-1])


def gemv_round(dtype: str, cols: int) -> int:
    """Elements of K one block of the CUDA-core bf16 / fp8 decode kernel loads per round of its
    pipeline (decode_tc.cu): bf16 256 threads in row groups of cols / 8, two 8-row steps each;
    fp8 8 warps x 2 chunks of 64 bytes."""
    return 2 * 8 * (256 // (cols // 8)) if dtype == "bf16" else 8 * 2 * 64


def choose_mma(N: int, sms: int) -> tuple[int, int]:
    """bf16 tensor-core decode: (columns per strip, blocks per strip): 32-column strips (the most
    blocks), and the fewest blocks per strip, sharing its K, that fill a wave of the SMs
    (``FILL``). Measured (H100, % of cuBLAS at its best, docs/results/tc-decode-mma-2026-11-26):
    32 columns won or tied at every shape measured - 16x4096x4096 1 block a strip (128
    blocks) 90.7 vs 64 columns x 2 83.1; 16x6144x4096 91.6 vs 89.1; 16x4096x14336 92.4 vs 92.8;
    16x1600x6400 4 blocks a strip (200) 93.2, 2 (100) 93.8, 8 (400) fewer; 64 x 4 86.9."""
    cols = min(MMA_COLS)
    strips = _cdiv(N, cols)
    ks = next((k for k in paths.MMA_BF16_SPLITS if strips * k >= FILL * sms),
              max(paths.MMA_BF16_SPLITS))
    return cols, ks


def _mma_plan(M: int, N: int, K: int, sms: int, cols: Optional[int], ks: Optional[int]) -> Plan:
    auto_cols, auto_ks = choose_mma(N, sms)
    cols = cols or auto_cols
    ks = ks or auto_ks
    rows = 16 * _cdiv(M, 16)
    if (rows // 16, cols // 32) not in paths.MMA_BF16_SHAPES:  # shared memory: 16 x 64 or 32 x 32
        raise InputError(f"dispatch policy config='mma', cols={cols}: {M} tokens take strips of "
                         f"32 columns (the warps' partial sums must fit shared memory)")
    strips = _cdiv(N, cols)
    why = (f"{M} token(s): tensor-core decode kernel, B streamed in {strips} strips of {cols} "
           f"columns, {ks} block(s) per strip sharing K (mma.sync m16n8k16, movmatrix)")
    return Plan("bf16", M, N, K, "mma", ks, False, False, K, N, strips * ks, why, rows, cols)


def datasheet_gbps(sms: int, dram_gbps: Optional[float] = None) -> float:
    """The GPU's datasheet DRAM bandwidth (GB/s): ``dram_gbps``, or for a GPU the spec table
    lacks the H100 SXM's per SM (``DEFAULT_GBPS_PER_SM``) times ``sms``."""
    return dram_gbps if dram_gbps else DEFAULT_GBPS_PER_SM * sms


def swap_fill_ctas(sms: int, dram_gbps: Optional[float] = None) -> float:
    """CTAs the swapped-operand decode kernel wants at least: enough to pull ``SWAP_BW_SHARE`` of
    the DRAM bandwidth (``dram_gbps``, datasheet GB/s; None: the H100 SXM's per SM) at
    ``SWAP_CTA_GBPS`` each."""
    return SWAP_BW_SHARE * datasheet_gbps(sms, dram_gbps) / SWAP_CTA_GBPS


def swap_tokens(M: int, tokens: Optional[int] = None) -> int:
    """The swapped kernel's token tile for M tokens: ``tokens`` where forced, else the smallest
    of ``paths.SWAP_TOKENS`` from ``SWAP_RULE_MIN_TOKENS`` on that holds all of them."""
    return tokens or next(t for t in paths.SWAP_TOKENS if t >= max(M, SWAP_RULE_MIN_TOKENS))


def choose_swap(dtype: str, N: int, K: int, sms: int, dram_gbps: Optional[float] = None,
                rows: int = SWAP_M, token_tiles: int = 1) -> tuple[int, int]:
    """The swapped-operand decode kernel's (CTAs per 64-column strip sharing its K, ring stages):
    the fewest of 1, 2, 4, 8 CTAs per strip that make ``swap_fill_ctas`` (none with a run under
    ``SWAP_MIN_RUN`` k-tiles, no split with more CTAs than SMs, none whose clusters cannot all
    be resident at some ring depth - ``cluster_slots``; the most such CTAs where none does),
    then the deepest ring of the ``rows``-token instantiation that keeps the whole grid's
    stages (8 KB of B each, whatever the token tile) within ``SWAP_INFLIGHT_STAGES`` with every
    CTA and every cluster resident at once (the shallowest where none does). ``token_tiles``
    CTAs stream each strip (M past the token tile): they count as strips. See SWAP_M."""
    strips = _cdiv(N, SWAP_COLS) * token_tiles
    most = max(1, _cdiv(K, BK[dtype]) // SWAP_MIN_RUN)
    tile = next(t for t in paths.SWAP_TOKENS if t >= rows)
    depths = paths.swap_stages(tile)

    def per_sm(ks: int, st: int) -> int:
        return ctas_per_sm(paths.swap_kernel(dtype, rows, ks, st))

    def fits(ks: int) -> list[int]:
        # ring depths within the in-flight budget with every CTA - every cluster - resident
        ctas = strips * ks
        return [st for st in depths if ctas * st <= SWAP_INFLIGHT_STAGES
                and ctas <= sms * per_sm(ks, st)
                and (ks == 1 or strips <= cluster_slots(ks, per_sm(ks, st), sms))]

    # a split never puts more CTAs than SMs on the stream: an SM holding two streams each at
    # most SWAP_CTA_GBPS, the split lost wherever it did (75 strips x 2, H100 88.0 vs 98.3, H200
    # 89.1 vs 98.7; 96 x 2 92.3 vs 102.6; 64 tokens, 80 strips x 2 against 64 x 64's 80 CTAs:
    # lost at all 18 tried, 2-17 points, docs/results/tc-swap64-2026-11-29 run 2); and its
    # clusters must fit at once at some ring depth (CLUSTER_SLOTS_132)
    allowed = [k for k in paths.SWAP_SPLITS
               if k <= most and (k == 1 or (strips * k <= sms and fits(k)))]
    fill = swap_fill_ctas(sms, dram_gbps)
    ks = next((k for k in allowed if strips * k >= fill), allowed[-1])
    ring = fits(ks)
    return ks, max(ring) if ring else min(depths)


def ctas_per_sm(kernel: paths.PathKernel) -> int:
    """CTAs of a decode kernel an SM holds at once by shared memory (its dynamic shared memory
    and the system's reserve per block, ``SM90_SMEM_PER_SM``)."""
    return SM90_SMEM_PER_SM // (kernel.dynamic_smem + SMEM_RESERVED_PER_BLOCK)


def swap_keeps_gemv(dtype: str, M: int, N: int, K: int, sms: int, ops: Operands,
                    dram_gbps: Optional[float] = None) -> bool:
    """Where the earlier decode kernels stay ahead of the swapped one (see SWAP_M): bf16's single
    token while the CUDA-core kernel's 64-column strips cover every SM (``GEMV_KEEPS_FILL``) and
    rule 0's condition holds; fp8 up to ``DECODE_M`` tokens while the swapped kernel's strips,
    unsplit, do not fill a wave."""
    if not SWAP_KEEPS_GEMV or not decode_wins(dtype, M, N, K, sms, ops):
        return False
    if dtype == "bf16":
        return _cdiv(N, max(paths.GEMV_BF16_COLS)) >= GEMV_KEEPS_FILL * sms
    ks, _ = choose_swap(dtype, N, K, sms, dram_gbps)
    return ks == 1 and _cdiv(N, SWAP_COLS) < FILL * sms


def swap_wins(dtype: str, M: int, N: int, K: int, sms: int, ops: Operands,
              dram_gbps: Optional[float] = None) -> bool:
    """Rule 0: at most ``SWAP_M`` tokens the swapped-operand kernel can take (16-byte rows,
    aligned A and B), but where ``swap_keeps_gemv``; up to ``SWAP_TILE_M`` tokens where even the
    64 x 64 streaming tiles number under ``swap_fill_ctas`` and it splits K (see SWAP_TILE_M)."""
    if decode_fits(dtype, M, N, K, ops, SWAP_M):
        return not swap_keeps_gemv(dtype, M, N, K, sms, ops, dram_gbps)
    return (swap_could(dtype, M, N, K, sms, ops, dram_gbps)
            and not swap_unsplit(dtype, M, N, K, sms, dram_gbps)
            and not swap_short_split(dtype, M, N, K, sms, dram_gbps))


def swap_could(dtype: str, M: int, N: int, K: int, sms: int, ops: Operands,
               dram_gbps: Optional[float] = None) -> bool:
    """Past ``SWAP_M`` up to ``SWAP_TILE_M`` tokens the swapped kernel can take, where even the
    64 x 64 streaming tiles number under ``swap_fill_ctas``: rule 0's first test there."""
    return (M > SWAP_M and decode_fits(dtype, M, N, K, ops, SWAP_TILE_M)
            and tiles(M, N, "64x64") < swap_fill_ctas(sms, dram_gbps))


def swap_unsplit(dtype: str, M: int, N: int, K: int, sms: int,
                 dram_gbps: Optional[float] = None) -> bool:
    """True where the swapped kernel would give each strip fewer than ``SWAP_TILE_MIN_SPLIT``
    CTAs (``choose_swap``): as many CTAs as 64 x 64's tiles, so rule 0 leaves it past SWAP_M."""
    rows = swap_tokens(M)
    return choose_swap(dtype, N, K, sms, dram_gbps, rows, _cdiv(M, rows))[0] < SWAP_TILE_MIN_SPLIT


def swap_short_split(dtype: str, M: int, N: int, K: int, sms: int,
                     dram_gbps: Optional[float] = None) -> bool:
    """True for the 64-token tile (33-64 tokens) where each column of C's run of B (its K
    elements) holds under ``SWAP_TILE_MIN_ROW_BYTES`` and the split gives under
    ``SWAP_TILE_SPLIT_GAIN`` times the CTAs of the 64 x 64 tiles: rule 0 leaves the swapped
    kernel there. See SWAP_TILE_MIN_ROW_BYTES."""
    rows = swap_tokens(M)
    if rows != 64 or K * ELEM_BYTES[dtype] >= SWAP_TILE_MIN_ROW_BYTES:
        return False
    ks, _ = choose_swap(dtype, N, K, sms, dram_gbps, rows, _cdiv(M, rows))
    ctas = _cdiv(N, SWAP_COLS) * _cdiv(M, rows) * ks
    return ctas < SWAP_TILE_SPLIT_GAIN * tiles(M, N, "64x64")


def _swap_plan(dtype: str, M: int, N: int, K: int, sms: int, ks: Optional[int],
               stages: Optional[int], dram_gbps: Optional[float] = None,
               tokens: Optional[int] = None) -> Plan:
    rows = swap_tokens(M, tokens)
    token_tiles = _cdiv(M, rows)
    if token_tiles > 1 and rows >= paths.SWAP_TRIM_TN:
        raise InputError(f"dispatch policy config='swap', tokens={rows}: M = {M} would take "
                         f"{token_tiles} tiles of {rows} tokens; token tiles are 8-"
                         f"{max(t for t in paths.SWAP_TOKENS if t < paths.SWAP_TRIM_TN)} tokens")
    auto_ks, auto_stages = choose_swap(dtype, N, K, sms, dram_gbps, rows, token_tiles)
    if ks is None and stages is None:
        ks, stages = auto_ks, auto_stages
    ks = ks or auto_ks
    stages = stages or SWAP_STAGES
    if stages not in paths.swap_stages(rows):
        raise InputError(f"dispatch policy config='swap', stages={stages}: {rows}-token tiles take "
                         f"rings of {', '.join(map(str, paths.swap_stages(rows)))} stages (shared "
                         f"memory)")
    strips = _cdiv(N, SWAP_COLS)
    tiled = f", {token_tiles} token tiles a strip (a CTA each)" if token_tiles > 1 else ""
    why = (f"{M} token(s): swapped-operand wgmma decode kernel (m64n{rows}: {SWAP_COLS} columns "
           f"of B as the M side), B streamed by TMA in {strips} strips{tiled}, {ks} CTA(s) of a "
           f"cluster per strip sharing K")
    per_sm = ctas_per_sm(paths.swap_kernel(dtype, rows, ks, stages))
    why += f", a ring of {stages} stages ({per_sm} CTA(s) an SM"
    if ks > 1:  # the clusters resident at once (choose_swap keeps them all, cluster_slots)
        clusters = strips * token_tiles
        why += (f"; {clusters} clusters of {ks}, {cluster_slots(ks, per_sm, sms)} fit at "
                f"once")
    why += ")"
    return Plan(dtype, M, N, K, "swap", ks, False, False, K, N if dtype == "bf16" else K,
                strips * token_tiles * ks, why, rows, SWAP_COLS, stages=stages)


def _decode_plan(dtype: str, M: int, N: int, K: int, sms: int, cols: Optional[int],
                 ks: Optional[int] = None) -> Plan:
    rows = decode_rows(dtype, M)
    if dtype == "bf16":
        cols = cols or choose_cols(N, K, sms)
        strips = _cdiv(N, cols)
        what = f"{strips} strips of {cols} columns (CUDA-core FMAs"
    else:
        cols = 0
        strips = _cdiv(N, 16)
        what = f"{strips} strips of 16 rows (mma.sync m16n8k32"
    ks = ks or choose_gemv_split(dtype, rows, cols, strips, K, sms)
    if dtype == "bf16" and ks > 1 and rows > 1:
        raise InputError(f"dispatch policy config='gemv', split={ks}: the bf16 CUDA-core decode "
                         f"kernel shares a strip's K among blocks for one token only (M = {M})")
    shared = (f"K split among 8 warps x {ks} blocks of a cluster" if ks > 1
              else "K split among 8 warps")
    why = f"{M} token(s): decode kernel, B streamed in {what}, {shared})"
    return Plan(dtype, M, N, K, "gemv", ks, False, False, K, N if dtype == "bf16" else K,
                strips * ks, why, rows, cols)


def plan(dtype: str, M: int, N: int, K: int, sms: int, ops: Operands = Operands(),
         policy: Policy = Policy(), dram_gbps: Optional[float] = None) -> Plan:
    """The launches for C = alpha * A @ B + beta * C at this shape (see the module docstring) on a
    GPU of ``sms`` SMs and ``dram_gbps`` GB/s of datasheet DRAM bandwidth (None: the H100 SXM's
    per SM; the swapped decode kernel's CTA count reads it)."""
    if dtype not in DTYPES:
        raise InputError(f"dispatch dtype={dtype!r}: expected one of {', '.join(DTYPES)}")
    check_shape(M, N, K)
    if sms < 1:
        raise ValueError(f"dispatch plan needs the GPU's SM count, got {sms}")
    if policy.config == "mma":
        if dtype != "bf16" or not decode_fits(dtype, M, N, K, ops, MMA_MAX_M):
            raise InputError(f"dispatch policy config='mma': {dtype} M = {M}, N = {N}, K = {K} "
                             f"(or a pointer) is not a bf16 decode shape (M <= {MMA_MAX_M}, "
                             f"16-byte rows, aligned A and B)")
        return _mma_plan(M, N, K, sms, policy.cols, policy.split)
    if policy.config == "swap":
        if not decode_fits(dtype, M, N, K, ops, SWAP_MAX_M):
            raise InputError(f"dispatch policy config='swap': M = {M}, N = {N}, K = {K} (or a "
                             f"pointer) is not a decode shape (M <= {SWAP_MAX_M}, 16-byte rows, "
                             f"aligned A and B)")
        return _swap_plan(dtype, M, N, K, sms, policy.split, policy.stages, dram_gbps,
                          policy.tokens)
    if policy.config == "gemv":
        if not decode_fits(dtype, M, N, K, ops, max_decode_rows(dtype)):
            raise InputError(f"dispatch policy config='gemv': M = {M}, N = {N}, K = {K} (or a "
                             f"pointer) is not a decode shape (M <= {max_decode_rows(dtype)}, "
                             f"16-byte rows, aligned A and B)")
        return _decode_plan(dtype, M, N, K, sms, policy.cols, policy.split)
    if (policy.config is None and policy.split is None
            and swap_wins(dtype, M, N, K, sms, ops, dram_gbps)):
        return _swap_plan(dtype, M, N, K, sms, None, None, dram_gbps)
    if policy.config is None and policy.split is None and decode_wins(dtype, M, N, K, sms, ops):
        return _decode_plan(dtype, M, N, K, sms, policy.cols)
    # which operands TMA cannot read as they are
    copy_a = not (pitch_ok(dtype, K) and ops.a16)
    lda = padded(dtype, K) if copy_a else K
    b_elems = K if dtype == "fp8" else N  # fp8's B is N x K, K-major like A
    copy_b = (not (pitch_ok(dtype, b_elems) and ops.b16)
              or (policy.odd != "wgmma" and copy_b_to_lines(dtype, M, N, K)))
    ldb = padded(dtype, b_elems) if copy_b else b_elems
    odd = copy_a or copy_b
    if odd and policy.odd == "wgmma":
        if dtype != "bf16":
            raise InputError("dispatch policy odd='wgmma' is bf16 only (no fp8 cp.async rung)")
        why = (f"K = {K} or N = {N} (or a pointer) breaks TMA's 16-byte pitch: the wgmma_bf16 "
               f"rung's scalar twin (cp.async, 2-byte loads)")
        return Plan(dtype, M, N, K, "wgmma", 1, False, False, K, N, 0, why)
    if policy.config in FP8_ONLY and dtype != "fp8":
        raise InputError(f"dispatch policy config={policy.config!r} is fp8 only "
                         f"({FP8_ONLY[policy.config]})")
    config = policy.config or choose_config(dtype, M, N, K, sms, dram_gbps)
    sk = 0
    if policy.streamk is not None:
        sk = streamk_tiles(M, N, config, sms, policy.streamk)
    splits = policy.split or (1 if policy.streamk is not None
                              else choose_split(dtype, M, N, K, sms, config))
    if _TILES[config].pingpong:
        if (policy.split or 1) > 1 or policy.streamk is not None:
            raise InputError(f"dispatch policy config={config!r}: a ping-pong tile is computed "
                             f"whole by one warpgroup (no split-K or stream-K)")
        splits = 1
    nk = _cdiv(K, BK[dtype])
    if splits > nk:
        raise InputError(f"dispatch split={splits}: K = {K} has only {nk} k-tiles of "
                         f"{BK[dtype]}")
    ctas = grid_ctas(M, N, config, splits, sms)
    t = tiles(M, N, config)
    why = f"{t} tiles of {config} on {sms} SMs"
    if splits == 1 and not sk:  # whole tiles, one a CTA at a time: the rules' fraction
        on = cta_slots(config, sms)
        why += (f" in {t / on:.1f} rounds, {issued_fraction(M, N, config, on):.1%} of those "
                f"rounds' MMA area useful")
        if not policy.config:
            why += replaced_why(dtype, M, N, K, sms, config, dram_gbps)
            if (policy.split is None and swap_could(dtype, M, N, K, sms, ops, dram_gbps)
                    and swap_unsplit(dtype, M, N, K, sms, dram_gbps)):
                why += ("; not the swapped decode kernel: it would run one CTA a 64-column "
                        "strip, no more CTAs than these tiles (SWAP_TILE_MIN_SPLIT)")
            elif (policy.split is None and swap_could(dtype, M, N, K, sms, ops, dram_gbps)
                    and swap_short_split(dtype, M, N, K, sms, dram_gbps)):
                why += ("; not the swapped decode kernel: its split would not triple these "
                        "tiles' CTAs, and each column's K of B is too short to pay for the "
                        "cluster's sums (SWAP_TILE_MIN_ROW_BYTES)")
    if splits > 1:
        why += (f": under {SPLIT_BELOW_FILL:.0%} of the SMs busy, K cut into {splits} slices of "
                f"about {_cdiv(nk, splits)} k-tiles (the last slice of a tile adds them)")
    if sk:
        cluster = _TILES[config].ctas
        ctas = persistent_clusters(cluster, sms) * cluster  # each CTA: a run of stream-K work
        what = "every tile" if sk * cluster >= t else f"the last {sk * cluster} tiles"
        why += (f": {what} shared out as equal runs of K-steps, one per CTA "
                f"(stream-K; {_cdiv(sk * nk, ctas // cluster)} K-steps a run)")
    if odd:
        which = " and ".join(x for x, on in (("A", copy_a), ("B", copy_b)) if on)
        why += f"; {which} copied to rows of whole 128-byte lines first (TMA)"
    return Plan(dtype, M, N, K, config, splits, copy_a, copy_b, lda, ldb, ctas, why,
                streamk=sk)
