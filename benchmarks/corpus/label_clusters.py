"""Write the truth of the cluster corpus: tests/fixtures/corpus/h200_clusters/truth.json.

    PYTHONPATH=src python benchmarks/corpus/label_clusters.py [--check]

As ``label_grown.py`` (whose facts and evidence fields this reuses): the labels are set by hand from
first principles, one row per profiled launch in capture order, from the raw metrics only
(benchmarks/corpus/evidence.py), plus the launch's clusters: ``launch__cluster_size`` and
``launch__cluster_max_active`` (the clusters the GPU holds at once), and the share of the run the SMs
were active (sm__cycles_active.avg / sm__cycles_elapsed.avg). Nothing of gemmlab's analyzer is
imported or consulted; ``gemmlab.corpus.files.held_out`` (a hash of the case name) only marks the
held-out cases. The labels were written before the analyzer was run on any of these launches.

Conventions (the first two corpora's), and one for clusters:
- a launch whose clusters outnumber those the GPU holds at once runs its last clusters as a round of
  their own: when that leaves the SMs idle for a large share of the run (SMs active well under the
  busy units' share), the primary is tail_effect, whatever ncu's waves per SM (blocks / (blocks an SM
  x SMs)) read;
- a pipe at >= ~80% of peak on SMs active nearly the whole run: that pipe's bound;
- DRAM at >= ~75-80% of the copy bandwidth measured on the same GPU: dram_bound;
- a launch of a few microseconds with no unit near a limit: latency_bound, grid_too_small beside it
  when a quarter of the SMs or more get no block.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "tests/fixtures/corpus/h200_clusters"
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(ROOT / "src"))

import evidence as ev  # noqa: E402
import label_grown as lg  # noqa: E402  (facts and template fields, shared)


ABOUT = (
    "Truth for the cluster corpus (issue 20's thread-block clusters): 14 launches of the 14 cases of "
    "benchmarks/corpus/workload_clusters.py on one NVIDIA H200 (132 SMs), ncu 2025.3.1 at "
    "--clock-control none, captured 2026-11-29 with `WORKLOAD=benchmarks/corpus/workload_clusters.py "
    "bash benchmarks/corpus/capture.sh` as --set full (corpus_full) and gemmlab's targeted collection of "
    "the same launches in the same order (corpus_targeted), the targeted one asking for "
    "launch__cluster_size and launch__cluster_max_active. Set by hand from first principles with "
    "benchmarks/corpus/evidence.py (raw metrics only, never the analyzer's rules) and the launch's "
    "clusters; the per-launch decisions are the table in benchmarks/corpus/label_clusters.py, which "
    "writes this file. 'truth' lists every defensible category, the likeliest first; 'held_out' "
    "(gemmlab.corpus.files.held_out: a hash of the case name) marks the cases kept out of all tuning. "
    "No rule had seen any of these launches when the labels were set."
)

ROUND = ("{grid} blocks in clusters of {csize}: {clusters} clusters where the GPU holds {at_once} at once, "
         "so {last} of them run as a round of their own; the SMs are active {act}% of the {dur1} us run "
         "(FMA pipe {fma}% on the busy SMs; ncu reads {waves} waves per SM)")
FITS = ("FMA pipe {fma}% of peak with the SMs active {act}% of the run: {clusters} clusters of {csize}, "
        "{at_once} fit at once")
TENSOR = "tensor pipe {tensor}% of peak, the SMs active {act}% of the run ({clusters} clusters of {csize})"
SHORT = ("a {dur1} us launch with nothing near a limit (SM {sm}%, L2 {l2}%, DRAM {dram}% of copy, tensor "
         "pipe {tensor}%), long_scoreboard {st_long_scoreboard}% of stalls: the SMs are active {act}% of "
         "the run; {grid} blocks in clusters of {csize}")

C, T_, D_, L, G, TE = ("compute_bound", "tensor_bound", "dram_bound", "latency_bound", "grid_too_small",
                       "tail_effect")
TABLE: list[tuple[int, str, list[str] | None, str]] = [
    (0, "planted_cluster2_per_sm", [C], FITS),
    (1, "planted_cluster4_per_sm", [TE], ROUND),
    (2, "planted_cluster4_fitting", [C, G],
     FITS + "; 12 of the 132 SMs get no block"),
    (3, "planted_cluster8_sixteen", [TE], ROUND),
    (4, "planted_cluster2_six_rounds", [C], FITS + " (6 whole rounds)"),
    (5, "planted_cluster4_forty", [TE], ROUND),
    (6, "cublaslt_fp8_best_4096", [T_], TENSOR),
    (7, "cublaslt_fp8_best_decode_16x8192x8192", [D_],
     "DRAM moves {dram}% of the measured copy bandwidth in {dur1} us: the weights streamed at the memory limit"),
    (8, "torch_mm_bf16_8192x1024x8192", [T_], TENSOR),
    (9, "gemmlab_fp8_128x256c2_8192", [T_], TENSOR),
    (10, "gemmlab_bf16_128x256c2_4096x4096x8192", [T_], TENSOR),
    (11, "gemmlab_fp8_swap_decode_16x4096x4096", [L], SHORT),
    (12, "gemmlab_bf16_gemv_split_1x1600x6400", [L, G], SHORT + ": 32 of 132 SMs get none"),
    (13, "gemmlab_bf16_64x32c2x4_512x4096x4096", [L, G],
     ("tensor pipe {tensor}%, issue {iss}%, L2 {l2}%, DRAM {dram}% of copy: nothing near a limit, wait "
      "{st_wait}% and long_scoreboard {st_long_scoreboard}% of stalls (each 64 x 32 k-step waits on its "
      "MMA and its stage); {grid} blocks in {clusters} clusters of {csize} leave 12 SMs without one, "
      "the SMs active {act}% of the run")),
]


def cluster_facts(row: dict) -> dict:
    size = ev.num(row, "launch__cluster_size") or 0
    at_once = ev.num(row, "launch__cluster_max_active")
    grid = ev.num(row, "launch__grid_size") or 0
    clusters = grid / size if size else None
    return {"cluster_size": size, "clusters_at_once": at_once,
            "clusters": clusters,
            "cluster_rounds": round(clusters / at_once, 3) if clusters and at_once else None}


def build() -> dict:
    copy_bps = json.loads((CORPUS / "ceilings.json").read_text())["measurement"]["copy_bytes_per_s"]
    idx = json.loads((CORPUS / "corpus_full_index.json").read_text())
    raw = ev.rows(str(CORPUS / "corpus_full_raw_base.csv"))
    assert len(idx) == len(raw)
    targeted = [x["case"] for x in json.loads((CORPUS / "corpus_targeted_index.json").read_text())]
    assert [x["case"] for x in idx] == targeted, "full and targeted differ in case order"
    assert [t[0] for t in TABLE] == list(range(len(raw))), "TABLE must hold every launch once, in order"
    kernels, seen = [], {}
    for (i, case, truth, text), x, row in zip(TABLE, idx, raw):
        assert case == x["case"], f"launch {i}: table says {case!r}, capture says {x['case']!r}"
        ordinal = seen.get(case, 0)
        seen[case] = ordinal + 1
        e = ev.evidence(row, copy_bps)
        f = lg.facts_of(e, row) | cluster_facts(row)
        fl = lg.fields(e, row, f, copy_bps, case)
        cl = f["clusters"] or 0
        at = f["clusters_at_once"] or 0
        fl.update(csize=f"{f['cluster_size']:.0f}", clusters=f"{cl:.0f}", at_once=f"{at:.0f}",
                  last=f"{cl % at:.0f}" if at else "-")
        kernels.append(lg.truth_entry(case, ordinal, e, truth, text.format(**fl), f))
    return {"about": ABOUT, "ceiling_copy_bytes_per_s": copy_bps, "kernels": kernels}


def main(argv=None) -> int:
    return lg.main(argv, build=build, corpus=CORPUS, doc=__doc__)


if __name__ == "__main__":
    sys.exit(main())
