"""Thread-block clusters on the GPU: how many fit at once.

A cluster's CTAs run on one GPC, and each GPC leaves idle the SMs short of a whole cluster, so
fewer clusters fit at once than SMs x CTAs an SM / cluster size. A grid with more clusters than
fit runs its last ones after the others: a persistent kernel then deals them a whole share of
its tiles to run alone, and a split kernel pays every CTA's time again. The launchers (the
persistent rungs' grids, the dispatch rules) size their grids from these counts.
"""

from __future__ import annotations

# The counts the driver gives (cuOccupancyMaxActiveClusters) for 132 SMs, by cluster size, at 1-5
# CTAs an SM: the H200's, every split swapped kernel (docs/results/tc-swap64-2026-11-29, run 3);
# the H100's at one CTA an SM are the same (docs/results/tc-cluster2d-2026-11-27).
# Measured on dispatch_tc's split swapped decode kernel, whose KS CTAs of a cluster share a
# strip's K (tc-swap64, H200, % of cuBLAS at its best): 32 strips x 4 CTAs at one CTA an SM - 32
# clusters of 4 where 30 fit - against the same at 6 stages, two CTAs an SM (62 fit): fp8
# 64x2048x8192 77.6 vs 98.6, 40x2048x4096 68.2 vs 90.9, bf16 64x2048x14336 72.6 vs 96.0 - +20 to
# +24 at all 12 (run 2); 16 strips x 8 (16 clusters of 8 where 15 fit) +20 to +26 at all 12. The
# 16-token split once ruled out for its CTAs (16x1600x6400, 25 strips x 8: 91.2 vs 109.1 for 4)
# was 25 clusters of 8 where 15 fit.
CLUSTER_SLOTS_132 = {2: (66, 132, 198, 264, 330), 4: (30, 62, 92, 124, 154),
                     8: (15, 30, 45, 62, 77)}


def persistent_clusters(ctas: int, sms: int) -> int:
    """The clusters of ``ctas`` CTAs a persistent grid launches: as many as the GPU holds at once
    at one CTA an SM (``cluster_slots``), at least one. A cluster launched past them waits for a
    whole cluster's SMs to finish all their tiles, and every tile dealt to it runs after the
    others: 33 clusters of 4 where 30 fit took 1.6 times as long as the same kernel launched in
    pairs (H200, fp8 4096^3, docs/results/tc-placement-2026-11-29, run 1)."""
    return max(1, cluster_slots(ctas, 1, sms))


def cluster_slots(ctas: int, per_sm: int, sms: int) -> int:
    """Clusters of ``ctas`` CTAs a GPU of ``sms`` SMs holds at once with ``per_sm`` CTAs an SM
    (``CLUSTER_SLOTS_132``; past 5 CTAs an SM in proportion to 5's, on other SM counts in
    proportion to the SMs; one CTA a cluster: every slot)."""
    if per_sm < 1:
        return 0
    if ctas == 1:
        return sms * per_sm
    if ctas not in CLUSTER_SLOTS_132:
        raise ValueError(f"cluster_slots: clusters of {ctas} CTAs; the table holds "
                         f"{', '.join(map(str, CLUSTER_SLOTS_132))}")
    row = CLUSTER_SLOTS_132[ctas]
    at = row[per_sm - 1] if per_sm <= len(row) else row[-1] * per_sm // len(row)
    return at if sms == 132 else at * sms // 132
