"""The lessons on a CPU: registry and sweep validation, the checkers on NumPy data (right, wrong,
NaN, unwritten, out of bounds), the verdict rule and the transfer sentence, the kernels compile."""

from __future__ import annotations

import numpy as np
import pytest

from gemmlab.errors import InputError
from gemmlab.lessons import article, registry, verdict
from gemmlab.lessons.base import Point
from gemmlab.lessons.check import GUARD

EXPECTED = {
    "tiling": ("naive", "tiled", "cublas"),
    "atomics": ("atomic_per_match", "block_reduce"),
    "coalescing": ("strided", "coalesced"),
    "bank_conflicts": ("columns_32x32", "columns_32x33", "rows"),
    "occupancy": ("one_block_per_sm", "full"),
    "fusion": ("two_kernels", "fused"),
}


def test_six_lessons_in_the_articles_order_with_their_variants():
    assert registry.NAMES == tuple(EXPECTED)
    for name, variants in EXPECTED.items():
        les = registry.get(name)
        assert tuple(v.name for v in les.variants) == variants
        c = les.comparisons[0]
        assert c.baseline in variants and c.optimised in variants
        assert les.default_point() in les.points() or les.param.default not in les.param.sweep
        assert all(k in les.code() for v in les.variants for k in v.kernels)
        d = les.describe()
        assert d["sweep"]["values"] and d["size"]["default"] == les.default_size


def test_article_kernels_are_the_articles():
    assert "matrix_multiplication_naive" in registry.get("tiling").code()
    assert "count_equal_optimized" in registry.get("atomics").code()
    assert "A[TILE][WIDTH]" in registry.get("bank_conflicts").code() and "TILE + 1" in registry.get("bank_conflicts").code()
    assert "kernel_fused" in registry.get("fusion").code()


def test_article_figures_as_printed():
    t = article.ARTICLE["tiling"]
    assert [(r.label, r.ms) for r in t.rows] == [("Naive", (37.240, 1.861)), ("Tiling & SMEM", (15.846, 2.077)),
                                                ("cuBLAS", (2.423, 0.206))]
    a = article.ARTICLE["atomics"]
    assert [(r.label, r.ms) for r in a.rows] == [("Naive atomicAdd()", (12.271, 1.000)), ("Opt (SMEM + Reduction)", (9.123, 0.990))]
    assert [s for _, s, _ in verdict.article_effects("tiling", "naive", "tiled")] == pytest.approx([37.240 / 15.846, 1.861 / 2.077])
    assert not article.ARTICLE["fusion"].measured


def test_unknown_lesson_suggests_the_name():
    with pytest.raises(InputError, match="did you mean tiling"):
        registry.get("tilling")


@pytest.mark.parametrize("name,size,sweep,match", [
    ("tiling", 0, None, "from 1 to 8192"),
    ("tiling", 5, "4", "not both"),
    ("tiling", None, "16,abc", "not a valid matrix size"),
    ("tiling", None, "9000", "from 1 to 8192"),
    ("atomics", None, "1.5", "from 0.0 to 1.0"),
    ("atomics", None, "nan", "from 0.0 to 1.0"),
    ("atomics", -3, None, "array length N"),
    ("occupancy", None, "33", "multiple of 32"),
    ("occupancy", None, "2048", "from 32 to 1024"),
    ("coalescing", 1 << 28, "100", "at most 8 GiB"),
    ("coalescing", None, ",", "comma-separated"),
    ("fusion", None, "1.5", "not a valid vector length"),
])
def test_bad_sizes_and_sweeps_are_one_clear_error(name, size, sweep, match):
    with pytest.raises(InputError, match=match):
        registry.get(name).points(size, sweep)


def test_points_follow_size_and_sweep():
    assert [p.value for p in registry.get("atomics").points(1000, "0,0.5")] == [0.0, 0.5]
    assert all(p.size == 1000 for p in registry.get("atomics").points(1000, "0,0.5"))
    assert [p.size for p in registry.get("tiling").points(1000)] == [1000]
    assert [p.size for p in registry.get("tiling").points(None, "17,33")] == [17, 33]
    assert [p.value for p in registry.get("coalescing").points()] == [2, 4, 8, 32, 100]


# --- checks on NumPy data ------------------------------------------------------------------------

def _simulate(les, variant, ins, outs, pt):
    """What a correct kernel writes, computed on the CPU."""
    if les.name == "tiling":
        outs["c"][...] = (ins["a"].astype(np.float64) @ ins["b"].astype(np.float64)).astype(np.float32)
    elif les.name == "atomics":
        outs["count"][0] = int((ins["x"] == 7).sum())
    elif les.name == "coalescing":
        s = 1 if variant == "coalesced" else int(pt.value)
        outs["b"][...] = ins["a"][::s][: pt.size]
    elif les.name == "bank_conflicts":
        outs["b"][...] = ins["a"] if variant == "rows" else ins["a"].T
    elif les.name == "occupancy":
        outs["y"][...] = np.float32(1.5) * ins["x"] + np.float32(-0.25)
    elif les.name == "fusion":
        outs["y"][...] = np.float32(1.5) * ins["x"] + ins["b"]
    return next(k for k in outs if k not in ("guard", "temp"))


CASES = [(les.name, v.name, odd) for les in registry.LESSONS for v in les.variants for odd in les.odd_sizes[1:2]]


@pytest.mark.parametrize("name,variant,size", CASES)
def test_checker_accepts_right_and_rejects_wrong_nan_unwritten_and_out_of_bounds(name, variant, size):
    les = registry.get(name)
    value = size if les.param.is_size else les.param.default
    pt = Point(size, les.param.name, value)
    rng = np.random.default_rng(1)
    ins = les.inputs(np, rng, pt)

    def fresh():
        outs = les.outputs(np, pt)
        key = _simulate(les, variant, ins, outs, pt)
        return outs, outs[key].reshape(-1)

    outs, flat = fresh()
    assert les.check(variant, ins, outs, pt, np).ok
    outs, flat = fresh()
    flat[flat.size // 2] += 1 if flat.dtype.kind == "i" else flat.dtype.type(0.5)
    r = les.check(variant, ins, outs, pt, np)
    assert not r.ok and ("differ" in r.reason or "exceed" in r.reason)
    if flat.dtype.kind == "f":
        outs, flat = fresh()
        flat[0] = np.nan
        r = les.check(variant, ins, outs, pt, np)
        assert not r.ok and "NaN" in r.reason
        fresh_outs = les.outputs(np, pt)  # nothing written: the poison stays
        r = les.check(variant, ins, fresh_outs, pt, np)
        assert not r.ok and ("never written" in r.reason or "poison" in r.reason)
    outs, flat = fresh()
    outs["guard"][GUARD - 1] = 0
    r = les.check(variant, ins, outs, pt, np)
    assert not r.ok and "past the end" in r.reason


def test_atomics_inputs_match_the_fraction():
    les = registry.get("atomics")
    x = les.inputs(np, np.random.default_rng(0), Point(100000, "fraction", 0.25))["x"]
    assert x.dtype == np.int32 and abs((x == 7).mean() - 0.25) < 0.01
    assert not (les.inputs(np, np.random.default_rng(0), Point(1000, "fraction", 0.0))["x"] == 7).any()


# --- the verdict -------------------------------------------------------------------------------

def T(ms, spread=0.005):
    """A measurement with median ``ms`` and quartiles ``ms`` x (1 -/+ spread)."""
    from gemmlab.bench.spec import BenchSpec
    from gemmlab.bench.stats import Measurement

    m = ms * 1e-3
    q1, q3 = m * (1 - spread), m * (1 + spread)
    return Measurement(BenchSpec("v", 64, 64, 64), (q1, q1, m, q3, q3))


def test_helped_hurt_and_within_noise():
    from gemmlab.bench.stats import FASTER, SAME, SLOWER, effect

    helped = verdict.judge("tiling", "naive", "tiled", "tiling", "size=1024", T(2.0), T(1.0))
    assert helped.effect == FASTER and helped.speedup == pytest.approx(2.0)
    assert helped.change.low < 2.0 < helped.change.high
    hurt = verdict.judge("tiling", "naive", "tiled", "tiling", "size=1024", T(1.861), T(2.077))
    assert hurt.effect == SLOWER
    overlap = verdict.judge("atomics", "atomic_per_match", "block_reduce", "x", "p", T(1.0, 0.05), T(0.95, 0.05))
    assert overlap.effect == SAME  # 5% faster but the IQRs overlap
    tiny = verdict.judge("atomics", "atomic_per_match", "block_reduce", "x", "p", T(1.0, 0.001), T(0.99, 0.001))
    assert tiny.effect == SAME  # under MIN_EFFECT even with tight IQRs: the article's A4000 case
    # medians alone (a published figure): the size of the change decides
    assert effect(1.01, 1.0).verdict == SAME and effect(1.345, 1.0).verdict == FASTER


def test_the_articles_own_figures_are_classified_like_the_article_reads_them():
    from gemmlab.bench.stats import FASTER, SAME, SLOWER

    assert verdict.article_effects("tiling", "naive", "tiled") == (
        (article.MX330, pytest.approx(2.35, abs=0.01), FASTER), (article.A4000, pytest.approx(0.896, abs=0.001), SLOWER))
    assert [e for _, _, e in verdict.article_effects("atomics", "atomic_per_match", "block_reduce")] == [FASTER, SAME]
    assert verdict.article_effects("fusion", "two_kernels", "fused") is None


def test_transfer_sentences():
    v = verdict.judge("tiling", "naive", "tiled", "16x16 shared-memory tiling", "size=1024", T(1.0), T(1.2))
    s = verdict.transfer_sentence(v, "NVIDIA H100 80GB HBM3")
    assert s.startswith("On NVIDIA H100 80GB HBM3, 16x16 shared-memory tiling hurt (0.83x at size=1024)")
    assert "as on the article's RTX A4000 (0.90x), unlike its GeForce MX330 (2.35x, faster)" in s
    v = verdict.judge("atomics", "atomic_per_match", "block_reduce", "one atomic per block", "fraction=0.1", T(1.0), T(0.5))
    assert "as on the article's GeForce MX330 (1.35x), unlike its RTX A4000 (1.01x, same)" in \
        verdict.transfer_sentence(v, "H200")
    v = verdict.judge("fusion", "two_kernels", "fused", "fusing", "size=16777216", T(1.0), T(0.6))
    assert verdict.transfer_sentence(v, "H200").endswith("the article's claim transfers.")
    w = verdict.judge("fusion", "two_kernels", "fused", "fusing", "size=4096", T(1.0), T(1.0))
    s = verdict.transfer_sentence(w, "H200", [v, w])
    assert "is not visible here" in s and "Across the sweep: helped at size=16777216; made no measurable difference at size=4096." in s
    h = verdict.judge("fusion", "two_kernels", "fused", "fusing", "size=4096", T(1.0), T(1.5))
    assert "the opposite of the article's claim" in verdict.transfer_sentence(h, "H200")


def test_lesson_verdicts_skip_wrong_variants():
    import lesson_samples

    run = lesson_samples.fake_run("tiling", "GPU X", {("naive", 1024): 2e-3, ("tiled", 1024): 1e-3, ("cublas", 1024): 2e-4},
                                  wrong=("tiled",))
    assert [(v["baseline"], v["optimised"]) for v in run.meta["verdicts"]] == [("naive", "cublas")]
    assert run.meta["headline"] is None or "naive" in run.meta["headline"]["verdict"]["baseline"]


def test_kernels_compile_with_nvcc():
    from gemmlab.errors import ToolMissing
    from gemmlab.runtime import toolchain

    try:
        exe = toolchain.find_nvcc()
    except ToolMissing:
        pytest.skip("nvcc (CUDA toolkit) not found")
    import subprocess
    import tempfile
    from pathlib import Path

    for les in registry.LESSONS:
        with tempfile.TemporaryDirectory() as d:
            src = Path(d) / les.source
            src.write_text(les.code())
            r = subprocess.run([exe, "-cubin", "-arch=sm_90", "-o", str(Path(d) / "k.cubin"), str(src)],
                               capture_output=True, text=True)
            assert r.returncode == 0, r.stderr
