"""The whole-program overview of `gemmlab analyze`: launches grouped by kernel and launch shape, ranked by
GPU time, where the time goes by category, --top, and the overview leading the JSON and Markdown.

Most tests run on a real H100 capture of 125 launches (PyTorch, cuBLAS, cuDNN, Triton, planted kernels);
the arithmetic is checked exactly on a few synthetic launches."""

from __future__ import annotations

import json
import math
import re
from collections import defaultdict

import pytest
from conftest import FIXTURES, run_cli as run
from launch_factory import make_launch

from gemmlab.analysis import overview
from gemmlab.analysis.diagnose import diagnose_all
from gemmlab.analysis.evidence import Confidence, Diagnosis, Finding, report_dict
from gemmlab.analysis.kernel_names import identity
from gemmlab.analysis.vocabulary import Category
from gemmlab.output import dumps
from gemmlab.profile.load import load
from gemmlab.report import overview as ov_render

CORPUS = FIXTURES / "corpus" / "h100" / "corpus_targeted_raw.csv"
DURATION = "gpu__time_duration.sum"  # read straight from the records, not through gemmlab's metric table

OVERVIEW_KEYS = {"launches", "capture", "timed_launches", "groups", "total_time_ns", "grouped_by", "ranked_by",
                 "summary", "by_category", "kernel_groups"}
GROUP_KEYS = {"rank", "identity", "name", "demangled", "demangled_variants", "grid", "block", "launches", "launch_ids",
              "representative_id", "time_ns", "share", "primary_category", "confidence", "at_limit", "impact", "agree",
              "categories", "fix_could_win_ns", "fix_could_win_share", "fix_estimated_launches"}
CATEGORY_KEYS = {"category", "at_limit", "launches", "time_ns", "share"}


@pytest.fixture(scope="module")
def corpus():
    launches = load(CORPUS)
    diagnoses = diagnose_all(launches)
    return launches, diagnoses, overview.build(launches, diagnoses)


def independent_groups(launches):
    """(demangled, grid, block) → [launches], and → summed duration, computed here without gemmlab (on this
    capture no two demangled names share a short identity, so these are the overview's groups)."""
    members, time = defaultdict(list), defaultdict(float)
    for k in launches:
        key = (k.demangled, k.grid, k.block)
        members[key].append(k)
        time[key] += k.metrics[DURATION].value
    return members, time


# --- grouping on the real capture --------------------------------------------------------------------

def test_capture_shape(corpus):
    launches, _, ov = corpus
    assert ov.launches == len(launches) == 125 and ov.timed == 125
    members, _ = independent_groups(launches)
    assert len(ov.groups) == len(members) == 106


def test_same_kernel_same_shape_is_one_group(corpus):
    _, _, ov = corpus
    by_id = {i: g for g in ov.groups for i in g.launch_ids}
    # three FusedAdam multi_tensor_apply_kernel launches with grid 320, block 512: one group
    adam = by_id[61]
    assert adam.name == "multi_tensor_apply_kernel"
    assert adam.launch_ids == (61, 62, 63)
    assert adam.grid == (320, 1, 1) and adam.block == (512, 1, 1)
    # the same kernel (same demangled name) launched with grid 64: its own group
    assert by_id[64] is not adam and by_id[64].demangled == adam.demangled and by_id[64].grid == (64, 1, 1)
    # same name, same grid and block, another template instantiation (functor): another group
    assert by_id[65].launch_ids == (65, 67) and by_id[66] is not by_id[65]
    # CUB's radix sort: four launches of one shape
    assert by_id[27].name == "DeviceRadixSortOnesweepKernel" and len(by_id[27].launch_ids) == 4


def test_every_launch_in_exactly_one_group_of_one_key(corpus):
    launches, _, ov = corpus
    ids = [i for g in ov.groups for i in g.launch_ids]
    assert sorted(ids) == sorted(k.id for k in launches) and len(ids) == len(set(ids))
    by_id = {k.id: k for k in launches}
    keys = set()
    for g in ov.groups:
        key = {(identity(by_id[i].demangled, by_id[i].name), by_id[i].grid, by_id[i].block) for i in g.launch_ids}
        assert len(key) == 1, g.launch_ids
        assert g.label == next(iter(key))[0]
        keys |= key
    assert len(keys) == len(ov.groups)


def test_ranked_by_total_time(corpus):
    launches, _, ov = corpus
    members, time = independent_groups(launches)
    expected = sorted(time.values(), reverse=True)
    assert [g.time_ns for g in ov.groups] == pytest.approx(expected)
    by_id = {k.id: k for k in launches}
    top = [(by_id[g.launch_ids[0]].demangled, g.grid, g.block) for g in ov.groups[:10]]
    assert top == sorted(time, key=lambda k: -time[k])[:10]
    assert [g.rank for g in ov.groups] == list(range(1, len(ov.groups) + 1))
    assert ov.groups[0].name == "planted_local"  # the planted local-memory kernel: 177 ms of 256


def test_shares_sum_to_one(corpus):
    launches, _, ov = corpus
    total = sum(k.metrics[DURATION].value for k in launches)
    assert ov.total_ns == pytest.approx(total)
    assert math.isclose(sum(g.share for g in ov.groups), 1.0, rel_tol=1e-9)
    assert math.isclose(sum(c.share for c in ov.categories), 1.0, rel_tol=1e-9)
    assert sum(c.launches for c in ov.categories) == 125


def test_representative_is_the_longest_launch_and_agreement_is_counted(corpus):
    launches, diagnoses, ov = corpus
    by_id = {k.id: (k, d) for k, d in zip(launches, diagnoses)}
    disagreeing = 0
    for g in ov.groups:
        longest = max(g.launch_ids, key=lambda i: by_id[i][0].metrics[DURATION].value)
        assert g.representative is by_id[longest][1]
        cats = [by_id[i][1].primary.category for i in g.launch_ids]
        assert g.agree == cats.count(g.primary.category)
        assert sum(n for _, n in g.categories) == len(g.launch_ids)
        disagreeing += g.agree < len(g.launch_ids)
        # a fix could win: each launch's own time × its own primary's impact, summed; unestimated add nothing
        own = [by_id[i][0].metrics[DURATION].value * by_id[i][1].primary.impact for i in g.launch_ids
               if overview.impact_estimated(by_id[i][1].primary)]
        assert g.estimated == len(own)
        if own:
            assert g.fix_ns == pytest.approx(sum(own))
            assert g.fix_share == pytest.approx(g.fix_ns / ov.total_ns)
        else:
            assert g.fix_ns is None
    assert disagreeing >= 1  # the capture has groups whose launches disagree: the overview must say so


def test_category_breakdown_is_per_launch(corpus):
    launches, diagnoses, ov = corpus
    want = defaultdict(float)
    for k, d in zip(launches, diagnoses):
        want[(d.primary.category.value, d.primary.at_limit)] += k.metrics[DURATION].value
    assert {(c.category, c.at_limit): c.time_ns for c in ov.categories} == pytest.approx(dict(want))
    assert [c.time_ns for c in ov.categories] == sorted(want.values(), reverse=True)
    assert ov.where_time_goes().startswith(f"{100 * ov.categories[0].share:.1f}% of GPU time is ")


def test_build_refuses_mismatched_inputs(corpus):
    launches, diagnoses, _ = corpus
    with pytest.raises(ValueError):
        overview.build(launches, diagnoses[:-1])
    with pytest.raises(ValueError):
        overview.build(launches[:2], diagnoses[1:3])


# --- exact arithmetic on synthetic launches ------------------------------------------------------------

def fake(kid: int, name: str, ns, category: Category, impact: float, at_limit: bool = False,
         grid=(10, 1, 1), block=(128, 1, 1), demangled: str = ""):
    k = make_launch(name) if ns is None else make_launch(name, duration=ns)
    k.id, k.grid, k.block = kid, grid, block
    if demangled:
        k.demangled = demangled
    basis = "not estimated: the cause is not identified" if category == Category.INCONCLUSIVE else "test"
    f = Finding(category, f"{category.value}", Confidence.HIGH if impact else Confidence.LOW, impact, basis,
                at_limit=at_limit)
    d = Diagnosis(kernel_id=kid, name=name, demangled=k.demangled, source="synthetic", format="raw-csv",
                  is_gemm=False, triage={}, primary=f, findings=[], missing_evidence=[], collect_command="ncu",
                  collect_argv=["ncu"], collect_purpose="re-measure", collect_note="", recommendations=[])
    return k, d


@pytest.fixture
def synthetic():
    pairs = [
        fake(0, "a", 100.0, Category.DRAM_BOUND, 0.1, at_limit=True),
        fake(1, "a", 300.0, Category.DRAM_BOUND, 0.5),  # the longest of group a: its representative
        fake(2, "a", 200.0, Category.L2_BOUND, 0.3),
        fake(3, "a", 50.0, Category.LATENCY_BOUND, 0.2, grid=(20, 1, 1)),  # another grid: another group
        fake(4, "b", 400.0, Category.INCONCLUSIVE, 0.0),
        fake(5, "b", 400.0, Category.INCONCLUSIVE, 0.0),  # a tie: the first launch represents
    ]
    launches, diagnoses = [p[0] for p in pairs], [p[1] for p in pairs]
    return launches, diagnoses, overview.build(launches, diagnoses)


def test_synthetic_groups_and_arithmetic(synthetic):
    _, _, ov = synthetic
    assert ov.total_ns == 1450.0
    b, a, a20 = ov.groups
    assert (b.launch_ids, a.launch_ids, a20.launch_ids) == ((4, 5), (0, 1, 2), (3,))
    assert (b.time_ns, a.time_ns, a20.time_ns) == (800.0, 600.0, 50.0)
    assert b.representative.kernel_id == 4 and a.representative.kernel_id == 1
    # each launch's own estimate, summed: 100 × 0.1 + 300 × 0.5 + 200 × 0.3 (not 600 × the longest's 0.5)
    assert a.share == 600 / 1450 and a.fix_ns == pytest.approx(220.0) and a.fix_share == pytest.approx(220 / 1450)
    assert a.estimated == 3 and a.fix_basis() == ""
    assert a20.fix_ns == pytest.approx(10.0)
    assert b.fix_ns is None and b.fix_share is None and b.estimated == 0  # inconclusive: not "0 to win"
    assert a.agree == 2 and a.categories == (("dram_bound", 2), ("l2_bound", 1))
    assert a.agreement() == "2 of 3 launches: dram_bound (1 l2_bound)"
    assert a.disagreement() == "its launches disagree on the primary: 2 dram_bound, 1 l2_bound"
    assert [(c.category, c.at_limit, c.launches, c.time_ns) for c in ov.categories] == [
        ("inconclusive", False, 2, 800.0), ("dram_bound", False, 1, 300.0), ("l2_bound", False, 1, 200.0),
        ("dram_bound", True, 1, 100.0), ("latency_bound", False, 1, 50.0)]
    assert ov.headline() == "6 launches in 3 groups (same kernel, grid and block), 1.45 µs of GPU time."
    assert ov.where_time_goes() == ("55.2% of GPU time is in launches with an inconclusive diagnosis; "
                                    "20.7% is dram_bound work below its limit.")


def test_synthetic_rows(synthetic):
    _, _, ov = synthetic
    rows = ov_render.rows(ov)
    assert rows[1] == ("#1", "a", "10 / 128", "3", "600 ns", "41.4%", "dram_bound (2/3)", "high", "no",
                       "220 ns (15.2%)")
    assert rows[0][-1] == "n/e" and rows[0][6] == "inconclusive"
    assert rows[2][2] == "20 / 128"
    assert ov_render.group_note(ov.groups[2]) == ""
    note = ov_render.group_note(ov.groups[1])
    assert "#0, #1, #2" in note and "disagree on the primary" in note and "summed over all 3 launches" in note
    assert ov_render.rest_note(ov, 1).startswith("2 more group(s) (4 launch(es), 44.8% of GPU time)")
    assert ov_render.rest_note(ov, 0) == "" and ov_render.rest_note(ov, 3) == ""


def test_untimed_launches_keep_file_order_and_say_so():
    pairs = [fake(0, "x", None, Category.DRAM_BOUND, 0.2), fake(1, "y", None, Category.L2_BOUND, 0.1)]
    ov = overview.build([p[0] for p in pairs], [p[1] for p in pairs])
    assert [g.name for g in ov.groups] == ["x", "y"]
    assert ov.total_ns == 0 and ov.timed == 0 and all(g.share is None and g.fix_ns is None for g in ov.groups)
    assert "no launch has a duration" in ov.headline() and ov.where_time_goes() == ""
    assert ov_render.rows(ov)[0][4:6] == ("–", "–")
    strict = json.loads(dumps(ov.to_dict()))
    assert strict["kernel_groups"][0]["time_ns"] is None

    pairs.append(fake(2, "z", 100.0, Category.LATENCY_BOUND, 0.5))
    ov = overview.build([p[0] for p in pairs], [p[1] for p in pairs])
    assert [g.name for g in ov.groups] == ["z", "x", "y"] and ov.groups[0].share == 1.0
    assert "2 launch(es) without a duration are not counted" in ov.headline()


# --- the CLI: --top, text, Markdown, JSON ----------------------------------------------------------------

CARD = re.compile(r"^── #(\d+) ", re.M)


def test_default_top_limits_the_cards(capsys, corpus):
    _, _, ov = corpus
    code, out, err = run(capsys, "analyze", str(CORPUS))
    assert code == 0, err
    assert [int(i) for i in CARD.findall(out)] == [g.representative.kernel_id for g in ov.groups[:overview.DEFAULT_TOP]]
    assert out.index("Kernels ranked by total GPU time") < out.index("── #")  # the overview leads
    assert "96 more group(s) (115 launch(es)" in out
    for g in ov.groups[-3:]:  # the smallest groups: in the table, without a card
        assert f"#{g.representative.kernel_id} " in out and f"── #{g.representative.kernel_id} " not in out


@pytest.mark.parametrize("argv, cards", [(["--top", "3"], 3), (["--top", "0"], 106), (["--all"], 106),
                                         (["--top", "500"], 106)])
def test_top_option(capsys, argv, cards):
    code, out, err = run(capsys, "analyze", str(CORPUS), *argv)
    assert code == 0, err
    assert len(CARD.findall(out)) == cards
    assert ("more group(s)" in out) is (cards < 106)


def test_group_card_says_what_it_stands_for(capsys):
    code, out, _ = run(capsys, "analyze", str(CORPUS), "--top", "30")
    assert code == 0
    assert re.search(r"Group \d+: 3 launches of this kernel with grid 320 and block 512 \(#61, #62, #63\)", out)
    assert "This card is the longest launch" in out


@pytest.mark.parametrize("argv, what", [(["--top", "-1"], "--top -1"), (["--top", "3", "--all"], "--top and --all")])
def test_top_errors(capsys, argv, what):
    code, out, err = run(capsys, "analyze", str(CORPUS), *argv)
    assert code == 2 and out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("gemmlab: error: ") and what in lines[0]


def test_few_kernels_look_like_before_plus_the_overview(capsys):
    code, out, _ = run(capsys, "analyze", "--example")
    assert code == 0
    assert len(CARD.findall(out)) == 5 and "more group(s)" not in out and "Group " not in out
    assert "5 launches in 5 groups" in out and "diagnosis card follows for every group" in " ".join(out.split())


def test_markdown_leads_with_the_overview(capsys):
    code, out, _ = run(capsys, "analyze", str(CORPUS), "--markdown", "--top", "2")
    assert code == 0
    assert out.index("## Overview") < out.index("### Kernels ranked by total GPU time") < out.index("## #")
    assert len(re.findall(r"^## #\d+ ", out, re.M)) == 2
    table = [line for line in out.splitlines() if re.match(r"\| #\d+ \|", line)]
    assert len(table) == 106 and table[0].startswith("| #115 | `planted_local` |")
    assert "## Collection commands" in out and out.count("export GEMMLAB_METRICS=") == 1
    assert "### GPU time by primary category" in out and "_104 more group(s)" in out


def test_json_overview_first_with_documented_keys(capsys, corpus):
    launches, _, _ = corpus
    code, out, _ = run(capsys, "analyze", str(CORPUS), "--json", "--top", "2")
    assert code == 0
    doc = json.loads(out)
    assert list(doc) == ["schema_version", "source", "overview", "kernels"] and doc["schema_version"] == 1
    ov = doc["overview"]
    assert set(ov) == OVERVIEW_KEYS
    assert len(doc["kernels"]) == 125  # --top trims cards, never the JSON
    assert ov["groups"] == len(ov["kernel_groups"]) == 106 and ov["launches"] == 125
    for g in ov["kernel_groups"]:
        assert set(g) == GROUP_KEYS
    for c in ov["by_category"]:
        assert set(c) == CATEGORY_KEYS
    _, time = independent_groups(launches)
    assert [g["time_ns"] for g in ov["kernel_groups"]] == pytest.approx(sorted(time.values(), reverse=True))
    assert sum(g["share"] for g in ov["kernel_groups"]) == pytest.approx(1.0)
    assert ov["summary"].startswith("125 launches in 106 groups")
    ids = {k["id"] for k in doc["kernels"]}
    assert all(g["representative_id"] in g["launch_ids"] and set(g["launch_ids"]) <= ids for g in ov["kernel_groups"])


def test_report_dict_without_overview_is_unchanged(corpus):
    _, diagnoses, ov = corpus
    assert list(report_dict("x", diagnoses[:2])) == ["schema_version", "source", "kernels"]
    assert list(report_dict("x", diagnoses, "n", ov.to_dict())) == ["schema_version", "source", "overview",
                                                                    "kernels", "note"]


def _overview_text(ov, width: int) -> str:
    import io

    from rich.console import Console
    from rich.text import Text

    buf = io.StringIO()
    console = Console(file=buf, width=width, no_color=True)
    for part in ov_render.rich_tables(ov, 10, width):
        console.print(part, soft_wrap=isinstance(part, Text))
    return buf.getvalue()


@pytest.mark.parametrize("width, compact", [(80, True), (100, True), (120, True), (160, False), (200, False)])
def test_table_fits_the_console_and_cuts_nothing(corpus, width, compact):
    """The group table is laid out to the console's width: every number and unit of every row printed
    whole, every kernel's short identity whole on one line (a line longer than the console holds only a
    name too long for it); narrow consoles get short headers and the grid / block beside the kernel."""
    _, _, ov = corpus
    text = _overview_text(ov, width)
    lines = text.splitlines()
    labels = {g.label for g in ov.groups}
    for line in lines:
        if len(line.rstrip()) > width:  # only a name wider than the console may be
            assert line.strip().split("  (grid")[0] in labels and len(line.strip()) > width - 6, line
    header = next(line for line in lines if line.lstrip().startswith("id "))
    assert ("grid / block" in header) is not compact and (" n " in header) is compact
    flat = "\n".join(line.strip() for line in lines)
    for cells in ov_render.rows(ov):
        for j, col in enumerate(ov_render.COLUMNS):
            if col in ("id", "kernel", "total time", "share"):
                assert cells[j] in text, (col, cells[j])
        fix = cells[-1]
        assert fix in text or all(part in text for part in fix.split(" (", 1)[:1]), fix
    for g in ov.groups:  # a kernel's identity is never broken across lines
        assert re.search(rf"(^|  ){re.escape(g.label)}($|  )", flat, re.M), g.label
    top = ov.groups[0]
    assert top.fix_share is not None and f"({100 * top.fix_share:.1f}%)" in text
