"""Two runs side by side: the fourth seed article's Pascal vs Ampere table, and the noise rule."""

from __future__ import annotations

import pytest
import report_samples as samples

from gemmlab.errors import InputError
from gemmlab.bench.stats import FASTER, SAME, SLOWER, effect
from gemmlab.report.compare import compare, table_rows
from gemmlab.report.model import RunView

# Published in the fourth seed article (Example 1, matrix multiplication; medians only, in ms).
SEED04 = {
    "NVIDIA GeForce MX330": {"naive": 37.240, "smem_tiled": 15.846, "cublas": 2.423},
    "NVIDIA RTX A4000": {"naive": 1.861, "smem_tiled": 2.077, "cublas": 0.206},
}


def seed04_run(gpu: str) -> RunView:
    t = SEED04[gpu]
    shape = (1024, 1024, 1024)  # the article does not say; the same on both, which is all compare needs
    return samples.view(
        gpu,
        (
            samples.kernel_row("naive", *shape, median_s=t["naive"] * 1e-3),
            samples.kernel_row("smem_tiled", *shape, median_s=t["smem_tiled"] * 1e-3),
            samples.kernel_row("cublas", *shape, median_s=t["cublas"] * 1e-3, reference=True),
        ),
        source=f"seed article 04, {gpu}",
    )


def test_the_seed_articles_tiling_result_helped_on_pascal_and_hurt_on_ampere():
    c = compare(seed04_run("NVIDIA GeForce MX330"), seed04_run("NVIDIA RTX A4000"))
    (sc,) = c.shapes
    (step,) = sc.steps
    assert (step.previous, step.kernel) == ("naive", "smem_tiled")
    assert step.speedup_a == pytest.approx(37.240 / 15.846)  # the article's "~2.35x"
    assert step.speedup_b == pytest.approx(1.861 / 2.077)  # slower on the A4000
    assert (step.effect_a, step.effect_b) == (FASTER, SLOWER)
    assert step.verdict == "helped on A only"
    assert not step.noise_checked  # medians only: the article published no spread
    assert c.lines() == [
        "smem_tiled (vs naive): 2.35x on NVIDIA GeForce MX330, 0.90x on NVIDIA RTX A4000: "
        "helped on A only [no samples: noise not checked]"
    ]
    rows = {r.name: r for r in sc.rows}
    assert rows["naive"].b_vs_a == pytest.approx(37.240 / 1.861)
    assert rows["smem_tiled"].pct_a == pytest.approx(100 * 2.423 / 15.846)
    assert rows["cublas"].reference and rows["cublas"].time_b_ms == pytest.approx(0.206)
    assert table_rows(sc)[1] == ["smem_tiled", "15.846", "2.35x", "15.3%", "2.077", "0.90x", "9.9%", "7.63x"]  # A4000 7.63x faster


def _k(name, samples_s):
    return samples.kernel_row(name, 64, 64, 64, samples_s=tuple(samples_s))


def test_effect_reads_the_interquartile_ranges():
    base = _k("a", [1.00e-3, 1.01e-3, 1.02e-3, 1.03e-3, 1.04e-3]).measurement
    faster = _k("b", [0.90e-3, 0.91e-3, 0.92e-3, 0.93e-3, 0.94e-3]).measurement
    overlap = _k("c", [0.99e-3, 1.00e-3, 1.015e-3, 1.03e-3, 1.05e-3]).measurement
    slower = _k("d", [1.10e-3, 1.11e-3, 1.12e-3, 1.13e-3, 1.14e-3]).measurement
    assert (effect(base, faster).verdict, effect(base, faster).basis) == (FASTER, "samples")
    assert (effect(base, slower).verdict, effect(base, slower).basis) == (SLOWER, "samples")
    # 1.015 ms median is faster than 1.02 ms, but the quartiles overlap: not established
    assert (effect(base, overlap).verdict, effect(base, overlap).basis) == (SAME, "samples")


def test_within_noise_on_one_gpu_and_a_real_win_on_the_other():
    a = samples.view("GPU A", (_k("x", [1e-3, 1.01e-3, 1.02e-3, 1.03e-3]), _k("y", [1.005e-3, 1.015e-3, 1.02e-3, 1.025e-3])))
    b = samples.view("GPU B", (_k("x", [2e-3, 2.01e-3, 2.02e-3, 2.03e-3]), _k("y", [1.0e-3, 1.01e-3, 1.02e-3, 1.03e-3])))
    (step,) = compare(a, b).shapes[0].steps
    assert (step.effect_a, step.effect_b, step.verdict, step.noise_checked) == (SAME, FASTER, "helped on B only", True)


def test_the_same_gpu_twice_gets_told_apart():
    a = samples.view_of(samples.ladder_result(seed=0), "a.json")
    b = samples.view_of(samples.ladder_result(seed=50), "b.json")
    c = compare(a, b)
    assert c.label_a.endswith("[A]") and c.label_b.endswith("[B]")
    assert len(c.shapes[0].steps) == 4  # five rungs, four changes; cuBLAS is a reference, not a step


def test_kernels_in_one_run_only_are_listed_not_compared():
    full = samples.view_of(samples.ladder_result(), "a.json")
    d = samples.ladder_result()
    d["rows"] = [r for r in d["rows"] if r["kernel"] != "gemm_tiled16"]
    short = samples.view_of(d, "b.json")
    c = compare(full, short)
    assert c.only_a == ("gemm_tiled16 at 2048,2048,2048",) and c.only_b == ()
    # the step skips the missing rung: tiled16_unroll is compared with coalesced on both GPUs
    assert [(s.previous, s.kernel) for s in c.shapes[0].steps][1] == ("gemm_coalesced", "gemm_tiled16_unroll")


def test_runs_at_different_sizes_cannot_be_compared():
    a = samples.view("A", (samples.kernel_row("k", 64, 64, 64, median_s=1e-3),), source="a.json")
    b = samples.view("B", (samples.kernel_row("k", 128, 128, 128, median_s=1e-3),), source="b.json")
    with pytest.raises(InputError, match="a.json and b.json share no kernel at the same M,N,K"):
        compare(a, b)


def test_to_dict_is_json_ready():
    import json

    d = compare(seed04_run("NVIDIA GeForce MX330"), seed04_run("NVIDIA RTX A4000")).to_dict()
    text = json.dumps(d, allow_nan=False)
    assert json.loads(text)["shapes"][0]["steps"][0]["verdict"] == "helped on A only"
