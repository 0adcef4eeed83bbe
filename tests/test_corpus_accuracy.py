"""The analyzer scored on the labelled diagnosis corpus: real H100 captures of 125 launches (PyTorch ops,
cuBLAS/cuBLASLt in every precision, cuDNN, Triton, the FP32 ladder, planted bottlenecks), their truth set
from first principles (tests/fixtures/corpus/h100/truth.json, never from the rules).

Thresholds are issue #9's: ≥ 95% of primaries right on the raw page, the details page and the .ncu-rep,
for the --set full capture and for gemmlab's targeted collection; ≥ 97% right among answers marked high.
``benchmarks/diagnosis_accuracy.py`` prints the same scores with every wrong answer and the confusion table.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from gemmlab.analysis.diagnose import diagnose_all
from gemmlab.corpus import files
from gemmlab.corpus.score import score
from gemmlab.profile.load import load

CORPUS = Path(__file__).parent / "fixtures" / "corpus" / "h100"
# the bar (≥ 97% per export and collection, ≥ 99% of high answers right); today 97.4–99.1% and
# 449 of 449 high (docs/results/diagnosis-accuracy.md)
ACCURACY = 0.97
HIGH_ACCURACY = 0.99


@pytest.fixture(scope="module")
def unpack(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("corpus")


def _score(collection: str, fmt: str, unpack_dir: Path):
    diags, entries = [], []
    for cap, ents in files.entries_for(CORPUS, collection):
        diags += diagnose_all(load(cap.path(fmt, unpack_dir)))
        entries += ents
    return score(diags, entries)


def test_truth_covers_every_captured_launch_once():
    truth = files.truth(CORPUS)
    scored = [t for t in truth if "truth" in t]
    assert len(truth) == 125 and len(scored) >= 100
    for t in truth:
        assert ("truth" in t) != ("excluded" in t), t["case"]
        if "truth" in t:
            assert t["truth"] and t["evidence"], t["case"]
    for coll in files.COLLECTIONS:
        assert sum(len(e) for _, e in files.entries_for(CORPUS, coll)) == len(truth)


@pytest.mark.parametrize("fmt", files.FORMATS)
@pytest.mark.parametrize("collection", files.COLLECTIONS)
def test_primary_accuracy(collection, fmt, unpack):
    if fmt == "ncu-rep":
        pytest.importorskip("ncu_report", reason="reading .ncu-rep needs the ncu-report package")
    s = _score(collection, fmt, unpack)
    wrong = "\n".join(f"{w.case}: truth {w.truth}, got {w.primary} ({w.confidence})" for w in s.wrong())
    assert s.accuracy >= ACCURACY, f"{collection}/{fmt}: {s.correct}/{s.total}\n{wrong}"
    correct, answered = s.by_confidence()["high"]
    assert answered and correct / answered >= HIGH_ACCURACY, f"{collection}/{fmt}: high {correct}/{answered}\n{wrong}"


def test_full_capture_is_at_least_as_right_as_the_targeted_one(unpack):
    """More evidence never hurts (issue #9, item 8): on the exports that keep every collected metric (raw
    page, .ncu-rep) the --set full capture of the same launches scores at least as well as gemmlab's
    targeted collection. (The details page of a --set full capture keeps only the sections' own rows, so
    it lacks counters a --metrics capture lists — the shared-atomic ones; docs/results says which kernel.)"""
    pytest.importorskip("ncu_report", reason="reading .ncu-rep needs the ncu-report package")
    for fmt in ("raw", "ncu-rep"):
        full, targeted = _score("full", fmt, unpack), _score("targeted", fmt, unpack)
        assert full.correct >= targeted.correct, (fmt, full.correct, targeted.correct)


def test_scoring_counts_an_accepted_alternative_and_rejects_inconclusive():
    from gemmlab.analysis.evidence import Confidence, Diagnosis, Finding
    from gemmlab.analysis.vocabulary import Category

    def diag(cat):
        f = Finding(cat, "", Confidence.HIGH, 0.0, "")
        return Diagnosis(0, "k", "k", "", "raw", False, {}, f, [], [], "", [], "re-measure", "", [])

    entries = [{"case": "a", "truth": ["dram_bound", "l2_bound"]}, {"case": "b", "truth": ["tensor_bound"]},
               {"case": "c", "excluded": "mixed"}]
    s = score([diag(Category.L2_BOUND), diag(Category.INCONCLUSIVE), diag(Category.DRAM_BOUND)], entries)
    assert (s.correct, s.total) == (1, 2)
    assert s.by_confidence()["high"] == (1, 2)
    with pytest.raises(ValueError):
        score([diag(Category.L2_BOUND)], entries)


GROWN = Path(__file__).parent / "fixtures" / "corpus" / "h100_grown"
# The grown corpus (issue 19): 150 launches of families the first corpus lacks, labelled from first
# principles (benchmarks/corpus/label_grown.py). The bar, on the corpus as a whole: ≥ 97% right in
# every export and collection, ≥ 99% of "high" answers right (99.3% and 99.4% today,
# docs/results/diagnosis-accuracy.md). Each part has a floor a regression must not cross: ≥ 97% right
# (98.4–100% today), high ≥ 97% (the held-out part's 98.5%: one launch wrong at high on four exports).
GROWN_ACCURACY = 0.97
GROWN_HIGH_ACCURACY = 0.97
GROWN_WHOLE_HIGH_ACCURACY = 0.99


def test_grown_truth_covers_every_launch_and_keeps_the_held_out_rule():
    truth = files.truth(GROWN)
    assert len(truth) == 150 and sum("truth" in t for t in truth) >= 140
    for t in truth:
        assert ("truth" in t) != ("excluded" in t), t["case"]
        assert t["held_out"] == files.held_out(t["case"]), t["case"]
    held = {t["case"] for t in truth if t["held_out"]}
    assert 15 <= len(held) <= 30  # one case in three, by hash of its name
    for coll in files.COLLECTIONS:
        assert sum(len(e) for _, e in files.entries_for(GROWN, coll)) == len(truth)


_GROWN_DIAGNOSES: dict = {}


@pytest.mark.parametrize("held_out", [False, True], ids=["tuning-part", "held-out"])
@pytest.mark.parametrize("fmt", files.FORMATS)
@pytest.mark.parametrize("collection", files.COLLECTIONS)
def test_grown_corpus_accuracy(collection, fmt, held_out, unpack):
    if fmt == "ncu-rep":
        pytest.importorskip("ncu_report", reason="reading .ncu-rep needs the ncu-report package")
    key = (collection, fmt)
    if key not in _GROWN_DIAGNOSES:  # both parts of one capture and format share one load
        diags, entries = [], []
        for cap, ents in files.entries_for(GROWN, collection):
            diags += diagnose_all(load(cap.path(fmt, unpack)))
            entries += ents
        _GROWN_DIAGNOSES[key] = list(zip(diags, entries))
    pairs = [(d, e) for d, e in _GROWN_DIAGNOSES[key] if e["held_out"] == held_out]
    s = score([d for d, _ in pairs], [e for _, e in pairs])
    wrong = "\n".join(f"{w.case}: truth {w.truth}, got {w.primary} ({w.confidence})" for w in s.wrong())
    assert s.accuracy >= GROWN_ACCURACY, f"{collection}/{fmt}: {s.correct}/{s.total}\n{wrong}"
    correct, answered = s.by_confidence()["high"]
    assert answered and correct / answered >= GROWN_HIGH_ACCURACY, f"high {correct}/{answered}\n{wrong}"


@pytest.mark.parametrize("fmt", files.FORMATS)
@pytest.mark.parametrize("collection", files.COLLECTIONS)
def test_grown_corpus_meets_the_bar_as_a_whole(collection, fmt, unpack):
    """Both parts together, per export and collection: the issue's 97% / 99%-of-high bar."""
    if fmt == "ncu-rep":
        pytest.importorskip("ncu_report", reason="reading .ncu-rep needs the ncu-report package")
    key = (collection, fmt)
    if key not in _GROWN_DIAGNOSES:
        test_grown_corpus_accuracy(collection, fmt, False, unpack)
    pairs = _GROWN_DIAGNOSES[key]
    s = score([d for d, _ in pairs], [e for _, e in pairs])
    assert s.accuracy >= GROWN_ACCURACY, f"{collection}/{fmt}: {s.correct}/{s.total}"
    high = s.by_confidence()["high"]
    assert high[1] and high[0] / high[1] >= GROWN_WHOLE_HIGH_ACCURACY, f"{collection}/{fmt}: high {high}"


CLUSTERS = Path(__file__).parent / "fixtures" / "corpus" / "h200_clusters"
# The cluster corpus (issue 20): 14 launches in thread-block clusters on the H200, labelled from first
# principles (benchmarks/corpus/label_clusters.py). No rule had seen them: the analyzer read 11 of 14 in
# every export and collection; with a cluster round's idle SMs counted (waves.tail_idle_bound), 13 of
# 14 (docs/results/corpus-clusters-2026-11-29). The floor: at most one launch wrong, every high answer right.
CLUSTERS_ACCURACY = 13 / 14
_CLUSTER_DIAGNOSES: dict = {}


def _cluster_pairs(collection: str, fmt: str, unpack_dir: Path) -> list:
    key = (collection, fmt)
    if key not in _CLUSTER_DIAGNOSES:
        diags, entries = [], []
        for cap, ents in files.entries_for(CLUSTERS, collection):
            diags += diagnose_all(load(cap.path(fmt, unpack_dir)))
            entries += ents
        _CLUSTER_DIAGNOSES[key] = list(zip(diags, entries))
    return _CLUSTER_DIAGNOSES[key]


def test_cluster_truth_covers_every_launch_and_keeps_the_held_out_rule():
    truth = files.truth(CLUSTERS)
    assert len(truth) == 14 and all("truth" in t and t["evidence"] for t in truth)
    assert all(t["held_out"] == files.held_out(t["case"]) for t in truth)
    for coll in files.COLLECTIONS:
        assert sum(len(e) for _, e in files.entries_for(CLUSTERS, coll)) == len(truth)


@pytest.mark.parametrize("fmt", files.FORMATS)
@pytest.mark.parametrize("collection", files.COLLECTIONS)
def test_cluster_corpus_accuracy(collection, fmt, unpack):
    if fmt == "ncu-rep":
        pytest.importorskip("ncu_report", reason="reading .ncu-rep needs the ncu-report package")
    pairs = _cluster_pairs(collection, fmt, unpack)
    s = score([d for d, _ in pairs], [e for _, e in pairs])
    wrong = "\n".join(f"{w.case}: truth {w.truth}, got {w.primary} ({w.confidence})" for w in s.wrong())
    assert s.accuracy >= CLUSTERS_ACCURACY - 1e-9, f"{collection}/{fmt}: {s.correct}/{s.total}\n{wrong}"
    correct, answered = s.by_confidence()["high"]
    assert answered and correct == answered, f"high {correct}/{answered}\n{wrong}"


@pytest.mark.parametrize("collection", files.COLLECTIONS)
def test_more_clusters_than_fit_are_a_tail_on_every_export(collection, unpack):
    """The launches whose clusters outnumber those the GPU holds at once (facts from the raw page): a
    tail on every export that carries the two cluster metrics - the targeted collection's since it asks
    for them, and --set full's."""
    truth = files.truth(CLUSTERS)
    over = {t["case"] for t in truth if (t["facts"]["cluster_rounds"] or 0) > 1 and
            t["facts"]["cluster_rounds"] % 1}
    assert over == {"planted_cluster4_per_sm", "planted_cluster8_sixteen", "planted_cluster4_forty"}
    for d, e in _cluster_pairs(collection, "raw", unpack):
        if e["case"] in over:
            assert d.primary.category.value == "tail_effect", (e["case"], d.primary.summary)
            assert {x.metric for x in d.primary.evidence} >= {"cluster_waves", "clusters_at_once"}


SEEDS = Path(__file__).parent / "fixtures" / "ncu" / "h100"


def test_seed_captures_give_one_primary_on_every_export_of_the_same_capture():
    """The five seed kernels (one --set full capture exported as raw, raw in base units and details; one
    kernel also as .ncu-rep) get the same primary from each export; the details page only less sure."""
    by_kernel: dict[str, dict[str, str]] = {}
    exports = ["gemm_ladder_raw.csv", "gemm_ladder_raw_base.csv", "gemm_ladder_details.csv"]
    if _has_ncu_report():
        exports.append("gemm_tiled16.ncu-rep")
    for name in exports:
        for d in diagnose_all(load(SEEDS / name)):
            by_kernel.setdefault(d.name, {})[name] = d.primary.category.value
    assert len(by_kernel) == 5
    for kernel, answers in by_kernel.items():
        assert len(set(answers.values())) == 1, (kernel, answers)
        assert "inconclusive" not in answers.values(), (kernel, answers)


def test_incomplete_basic_capture_stays_inconclusive_with_evidence_to_collect():
    """The seed lesson: the default-section CSV lacks what separates the L1 causes, so no guess is made
    there; the verdict is inconclusive, low, with the missing evidence and the command that collects it."""
    for d in diagnose_all(load(SEEDS / "gemm_ladder_basic.csv")):
        assert (d.primary.category.value, d.primary.confidence.value) == ("inconclusive", "low"), d.name
        assert d.missing_evidence and d.collect_command.startswith("ncu ")


def _has_ncu_report() -> bool:
    try:
        import ncu_report  # noqa: F401
    except ImportError:
        return False
    return True


@pytest.mark.parametrize("corpus", [CORPUS, GROWN, CLUSTERS], ids=lambda p: p.name)
def test_no_rule_decides_from_a_kernel_name(corpus):
    """Issue #9 item 9: names may shape the advice (library, ladder rung), never the category. Every corpus
    launch renamed to a neutral name gets the same primary, confidence and findings."""
    import dataclasses

    for cap, _ in files.entries_for(corpus, "full"):
        launches = load(cap.path("raw"))
        named = diagnose_all(launches)
        anonymous = diagnose_all([dataclasses.replace(k, name=f"k{i}", demangled=f"void k{i}(float *)")
                                  for i, k in enumerate(launches)])
        for a, b in zip(named, anonymous):
            assert (a.primary.category, a.primary.confidence, a.primary.at_limit) == \
                   (b.primary.category, b.primary.confidence, b.primary.at_limit), a.name
            assert [f.category for f in a.findings] == [f.category for f in b.findings], a.name
            assert b.library is None
