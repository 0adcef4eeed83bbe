"""Text a user can read and act on (issue 19, item 4 and the group half of item 5).

What users saw: at 80–120 columns evidence numbers cut (``8,862,56…``), at 160 units cut (``sector/r…``);
eight groups all named ``vectorized_elementwise_kernel``; a suggested ``gemmlab profile --kernel
'^vectorized_elementwise_kernel$' --launch-skip 1`` that profiles another kernel than the card's; a
~4,000-character ``ncu --metrics …`` line on every card; metric names broken mid-token; a group's
"a fix could win" set by one launch's diagnosis.

The captures here are the bundled H100 export's real metric rows under PyTorch kernel names (real
demangled signatures), so every test runs in well under a second.
"""

from __future__ import annotations

import csv
import io
import re
import shlex
from pathlib import Path

import pytest
from conftest import run_cli
from launch_factory import make_launch
from rich.console import Console

from gemmlab.analysis import overview
from gemmlab.analysis.diagnose import diagnose_all
from gemmlab.analysis.evidence import Confidence, Diagnosis, Finding
from gemmlab.analysis.vocabulary import Category
from gemmlab.profile import evidence_command as ec
from gemmlab.profile.load import load
from gemmlab.report import diagnosis_markdown, diagnosis_text, fit
from gemmlab.report.diagnosis_text import value_text

EXAMPLE = Path(__file__).resolve().parents[1] / "src" / "gemmlab" / "data" / "h100_gemm_ladder_raw.csv"
VEC = ("void at::native::vectorized_elementwise_kernel<(int)4, {}, std::array<char *, (unsigned long)3>>"
       "(int, T2, T3)")
ADD = VEC.format("at::native::CUDAFunctor_add<float>")
MUL = VEC.format("at::native::AUnaryFunctor<float, float, float, at::native::binary_internal::MulFunctor<float>>")
EXP = VEC.format("at::native::exp_kernel_cuda(at::TensorIteratorBase &)::[lambda() (instance 2)]::operator ()() "
                 "const::[lambda(float) (instance 1)]")
SUM = ("void at::native::reduce_kernel<(int)512, (int)1, at::native::ReduceOp<float, at::native::func_wrapper_t<float, "
       "at::native::sum_functor<float, float, float>::operator ()(at::TensorIterator &)::[lambda(float, float) "
       "(instance 1)]>, unsigned int, float, (int)4, (int)4>>(T3)")
NVTX = "thread Domain:Push/Pop_Range:PL_Type:PL_Value:CLR_Type:Color:Msg_Type:Msg"
WIDTHS = (80, 100, 120, 160, 200)


def capture_csv(path: Path, names: list[str], rows: list[int], tids: list[int] | None = None,
                grid: str | None = None) -> Path:
    """A raw-page export: launch i is kernel ``names[i]`` with the metrics of the bundled capture's row
    ``rows[i]``; with ``tids``, ncu's NVTX column (the launching thread, the range ``step``)."""
    with open(EXAMPLE, newline="") as f:
        src = list(csv.reader(f))
    header, units, data = src[0], src[1], src[2:]
    col = header.index("Kernel Name")
    if tids is not None:
        header, units = header[:4] + [NVTX] + header[4:], units[:4] + [""] + units[4:]
    out = [header, units]
    for i, (name, r) in enumerate(zip(names, rows)):
        row = list(data[r])
        row[0], row[col] = str(i), name
        if grid is not None:  # one launch shape for all (the same functor and shape make one group)
            row[header.index("Grid Size") - (1 if tids is not None else 0)] = grid
            row[header.index("Block Size") - (1 if tids is not None else 0)] = "(256, 1, 1)"
        if tids is not None:
            row = row[:4] + [f'{tids[i]}  "<default domain>:step:none:none:none:none:none:none" '] + row[4:]
        out.append(row)
    with open(path, "w", newline="") as f:
        csv.writer(f).writerows(out)
    return path


@pytest.fixture
def pytorch(tmp_path):
    """add, mul, exp, add again (the same functor and shape: one group), sum; one launching thread."""
    names = [ADD, MUL, EXP, ADD, SUM]
    return capture_csv(tmp_path / "step_raw.csv", names, [0, 1, 2, 3, 4], tids=[523] * 5, grid="(4096, 1, 1)")


def analysed(path: Path):
    launches = load(path)
    diagnoses = overview.exact_commands(launches, diagnose_all(launches))
    return launches, diagnoses, overview.build(launches, diagnoses)


def text_at(path: Path, width: int, verbose: bool = False) -> str:
    _, diagnoses, ov = analysed(path)
    buf = io.StringIO()
    console = Console(file=buf, width=width, no_color=True, markup=False)
    diagnosis_text.render(diagnoses, str(path), console, overview=ov, top=0, verbose=verbose)
    return buf.getvalue()


# --- a kernel is its functor, and its command reaches exactly it ---------------------------------------

def test_groups_and_cards_name_the_functor(pytorch):
    _, _, ov = analysed(pytorch)
    labels = sorted(g.label for g in ov.groups)
    assert labels == ["elementwise: add", "elementwise: exp", "elementwise: mul", "reduce: sum"]
    add = next(g for g in ov.groups if g.label == "elementwise: add")
    assert add.launch_ids == (0, 3) and add.name == "vectorized_elementwise_kernel"  # one functor, one shape
    text = text_at(pytorch, 120)
    for label in labels:
        assert re.search(rf"^── #\d+ {re.escape(label)}  →  ", text, re.M), label
    assert "── #" in text and not re.search(r"^── #\d+ vectorized_elementwise_kernel", text, re.M)


def test_json_keeps_the_full_names(capsys, pytorch):
    import json

    code, out, err = run_cli(capsys, "analyze", str(pytorch), "--json")
    assert code == 0, err
    doc = json.loads(out)
    k = doc["kernels"][1]
    assert (k["identity"], k["name"], k["demangled"]) == ("elementwise: mul", "vectorized_elementwise_kernel", MUL)
    g = next(g for g in doc["overview"]["kernel_groups"] if g["identity"] == "elementwise: add")
    assert g["demangled"] == ADD and g["launch_ids"] == [0, 3]
    assert doc["overview"]["capture"]["threads"] == 1 and doc["overview"]["capture"]["thread_ids"] == [523]


def _profile_lines(text: str) -> dict[int, list[str]]:
    """Card id → its `gemmlab profile` line, split as the shell would."""
    out, card = {}, None
    for line in text.splitlines():
        m = re.match(r"── #(\d+) ", line)
        if m:
            card = int(m.group(1))
        elif card is not None and line.strip().startswith("gemmlab profile "):
            out.setdefault(card, shlex.split(line))
    return out


def test_suggested_command_selects_exactly_the_cards_launch(pytorch):
    """--launch-skip counts the earlier launches the same --kernel filter lets by; it used to be 1 for all."""
    launches = load(pytorch)
    lines = _profile_lines(text_at(pytorch, 160))
    assert set(lines) == {g.representative.kernel_id for g in analysed(pytorch)[2].groups}
    for kid, argv in lines.items():
        regex = argv[argv.index("--kernel") + 1]
        skip = int(argv[argv.index("--launch-skip") + 1])
        matching = [k.id for k in sorted(launches, key=lambda k: k.id) if re.search(regex, k.name)]
        assert matching[skip] == kid, (kid, regex, skip, matching)  # the (skip+1)-th match is the card's launch
    assert any(int(a[a.index("--launch-skip") + 1]) >= 2 for a in lines.values())


def test_the_ncu_command_skips_the_same_way(pytorch):
    _, diagnoses, _ = analysed(pytorch)
    exp = next(d for d in diagnoses if d.kernel_id == 2)
    argv = exp.collect_argv
    assert argv[argv.index("-k") + 1] == "regex:^vectorized_elementwise_kernel$"
    assert argv[argv.index("--launch-skip") + 1] == "2"  # add and mul before it
    assert "the capture has 2 earlier launches of vectorized_elementwise_kernel (#0, #1)" in exp.collect_note
    assert "warm-up" not in exp.collect_note


# --- the long metric list once per report ------------------------------------------------------------

def test_long_metric_list_once_per_report(pytorch):
    text = text_at(pytorch, 120)
    cards = len(re.findall(r"^── #", text, re.M))
    assert cards == 4
    assert text.count("gpu__time_duration.sum,") == 1  # the list, once
    assert text.count("export GEMMLAB_METRICS=") == 1
    assert len(re.findall(r"^  gemmlab profile ", text, re.M)) == cards  # each card: the short form
    assert len(re.findall(r"^  ncu ", text, re.M)) == 1  # the ncu form of one of them, in the footer
    assert max(len(line) for line in text.splitlines() if not line.startswith("  export ")) < 600
    verbose = text_at(pytorch, 120, verbose=True)
    assert len(re.findall(r"^  ncu .*--metrics \"\$GEMMLAB_METRICS\"", verbose, re.M)) == cards
    assert verbose.count("gpu__time_duration.sum,") == 1


def test_markdown_names_the_functor_and_lists_the_metrics_once(pytorch):
    _, diagnoses, ov = analysed(pytorch)
    md = diagnosis_markdown.render(diagnoses, "x", overview=ov, top=0)
    assert "## #2 `elementwise: exp` — " in md and "| `elementwise: mul` |" in md
    assert md.count("gpu__time_duration.sum,") == 1 and "## Collection commands" in md


# --- nothing a reader compares or copies is cut --------------------------------------------------------

@pytest.mark.parametrize("width", WIDTHS)
def test_numbers_units_and_names_are_whole_at_every_width(pytorch, width):
    _, diagnoses, ov = analysed(pytorch)
    text = text_at(pytorch, width)
    assert "…" not in text
    tokens = set(text.split())
    for g in ov.groups:
        p = g.representative.primary
        for e in p.evidence:
            assert value_text(e.value) in tokens, (width, e.metric, value_text(e.value))
            if e.unit:
                assert e.unit in tokens, (width, e.unit)
            if e.source != "ncu-rule":
                assert e.metric in tokens, (width, e.metric)
        for f in g.representative.findings:
            assert f.category.value in tokens
    for line in text.splitlines():  # only whole names and commands may be wider than the console
        if len(line) > width:
            assert (line.lstrip().startswith(("gemmlab profile ", "ncu ", "export ", "── #", "gemmlab analyze — "))
                    or len(line.split()) == 1), line


@pytest.mark.parametrize("width", WIDTHS)
def test_missing_evidence_names_never_break(width):
    """A launch with few counters: its missing metrics, ncu names and sections print whole."""
    k = make_launch("my_kernel", duration=1e6, sm_pct=20.0, dram_pct=85.0)
    d = diagnose_all([k])[0]
    assert d.missing_evidence
    buf = io.StringIO()
    diagnosis_text.render_diagnosis(d, Console(file=buf, width=width, no_color=True, markup=False))
    out = buf.getvalue()
    words = set(out.split())
    for m in d.missing_evidence:
        assert m.metric in words and m.ncu_names[0] in words, (width, m.ncu_names[0])
        if m.section:
            assert m.section in words


def test_fit_keeps_names_and_numbers_whole_or_gives_up():
    cols = [fit.Col("metric", fit.NAME), fit.Col("value", fit.NUMBER, "right"), fit.Col("why", fit.PROSE)]
    rows = [("l2_red_sectors", "67,108,746", "atomic / reduction operations executed in L2")]
    assert fit.widths(cols, rows, 80) is not None
    assert fit.widths(cols, rows, 30) is None  # 14 + 10 + the narrowest prose do not fit: blocks instead
    blocks = fit.stacked(cols, rows, 30)
    assert blocks[0].plain == "  l2_red_sectors  67,108,746"
    name = "smsp__average_warp_latency_issue_stalled_long_scoreboard.ratio"
    assert fit.wrap(f"see {name} here", 30) == ["see", name, "here"]  # a name in prose stays whole
    assert fit.wrap(name, 30, break_words=True)[0].endswith("_")  # a label may break after "_"


# --- the group's estimate is its launches' own ---------------------------------------------------------

def _fake(kid, ns, category, impact):
    k = make_launch("k", duration=ns)
    k.id, k.grid, k.block = kid, (10, 1, 1), (128, 1, 1)
    f = Finding(category, category.value, Confidence.HIGH, impact, "test" if impact else "not estimated: x")
    d = Diagnosis(kernel_id=kid, name="k", demangled=k.demangled, source="s", format="raw-csv", is_gemm=False,
                  triage={}, primary=f, findings=[], missing_evidence=[], collect_command="ncu", collect_argv=["ncu"],
                  collect_purpose="re-measure", collect_note="", recommendations=[])
    return k, d


def test_one_launch_no_longer_sets_the_groups_estimate():
    """1 of 4 launches says 80% could be won; the others 10% or nothing. The group's estimate used to be
    the group's time × the longest launch's 80% (321 ns); it is each launch's own, summed."""
    pairs = [_fake(0, 101.0, Category.UNCOALESCED_GLOBAL_LOADS, 0.8), _fake(1, 100.0, Category.DRAM_BOUND, 0.1),
             _fake(2, 100.0, Category.DRAM_BOUND, 0.1), _fake(3, 100.0, Category.INCONCLUSIVE, 0.0)]
    ov = overview.build([p[0] for p in pairs], [p[1] for p in pairs])
    (g,) = ov.groups
    assert g.fix_ns == pytest.approx(101 * 0.8 + 2 * 100 * 0.1) and g.estimated == 3
    assert g.disagree and g.disagreement().startswith("its launches disagree on the primary: 2 dram_bound")
    from gemmlab.report import overview as ov_render

    note = ov_render.group_note(g)
    assert "disagree on the primary" in note and "3 of 4 launches whose primary has an estimate" in note
    assert ov_render.fix_text(g).endswith(ov_render.PARTIAL)
    assert g.to_dict()["fix_estimated_launches"] == 3


# --- the range and the threads ---------------------------------------------------------------------

def test_header_says_the_launches_and_threads(tmp_path):
    path = capture_csv(tmp_path / "t.csv", [ADD, MUL, ADD], [0, 1, 2], tids=[523, 530, 523])
    _, _, ov = analysed(path)
    assert ov.capture.threads == (523, 530) and ov.capture.common_range == "step"
    line = ov.capture.line()
    assert line.startswith("NVTX range step: all 3 launches ran inside it")
    assert "under the NVTX stack of 2 host threads (TIDs 523, 530)" in line
    assert line in text_at(path, 200)


def test_without_nvtx_the_header_does_not_invent_threads(tmp_path):
    path = capture_csv(tmp_path / "t.csv", [ADD, MUL], [0, 1])
    _, _, ov = analysed(path)
    assert ov.capture.threads is None and ov.capture.line() == ""


def test_a_range_capture_says_its_range_and_keeps_it_in_the_commands():
    """An .ncu-rep from `gemmlab profile --range step`: ncu's recorded command names the range; the
    report has no thread ids, and the header says so rather than counting any."""
    line = ("/opt/ncu/ncu --section SpeedOfLight --nvtx --nvtx-include step/ --nvtx-push-pop-scope process "
            "-k regex:elementwise --launch-skip 2 --launch-count 3 -o out python3 train.py --steps 1")
    launches = []
    for i in range(3):
        k = make_launch("vectorized_elementwise_kernel", duration=1000.0 + i)
        k.id, k.command_line, k.process = 10 + i, line, ""
        launches.append(k)
    cap = overview.capture(launches)
    assert cap.line() == ("NVTX range step (ncu --nvtx-include step/, process scope): 3 launches in it; the range is "
                          "process-wide (--nvtx-push-pop-scope process): it holds the launches of every thread, and "
                          "the export does not say which thread launched each.")
    sel = ec.selection(launches, 2)
    assert (sel.kernel_regex, sel.launch_skip, sel.nvtx_range) == ("elementwise", 4, "step")
    argv = ["ncu", "--section", "SpeedOfLight", "-k", "regex:^vectorized_elementwise_kernel$", "--launch-skip", "1",
            "--launch-count", "1", "-o", "e", "python3", "train.py", "--steps", "1"]
    profile = "gemmlab profile --kernel '^x$' --launch-skip 1 --launch-count 1 -o e -- python3 train.py --steps 1"
    new_argv, new_line, note = ec.retarget(argv, profile, "", sel)
    assert new_argv == ["ncu", "--section", "SpeedOfLight", "--nvtx", "--nvtx-include", "step/",
                        "--nvtx-push-pop-scope", "process", "-k", "regex:elementwise", "--launch-skip", "4",
                        "--launch-count", "1", "-o", "e", "python3", "train.py", "--steps", "1"]
    assert shlex.split(new_line) == ["gemmlab", "profile", "--range", "step", "--kernel", "elementwise",
                                     "--launch-skip", "4", "--launch-count", "1", "-o", "e", "--", "python3",
                                     "train.py", "--steps", "1"]
    assert "--launch-skip 4" in note and "--launch-skip 2" in note


def test_recorded_options_gemmlab_profile_cannot_say_drop_its_line():
    k = make_launch("k", duration=1.0)
    k.command_line = "ncu --profile-from-start off --kernel-name-base demangled -k regex:foo -o r ./app"
    sel = ec.selection([k], 0)
    assert sel.extra == ("--profile-from-start", "off") and sel.name_base == "demangled"
    argv, line, _ = ec.retarget(["ncu", "-k", "regex:^k$", "--launch-skip", "1", "./app"], "gemmlab profile -- ./app",
                                "", sel)
    assert argv == ["ncu", "--profile-from-start", "off", "--kernel-name-base", "demangled", "-k", "regex:foo",
                    "--launch-skip", "0", "./app"]
    assert line == ""  # no `gemmlab profile` line that would reach another launch


def test_profile_of_a_range_says_the_range_and_reaches_each_launch(tmp_path, monkeypatch, capsys):
    """`gemmlab profile --range step`: the launches of the range are grouped like analyze's, the header
    names the range and its launches, and each card's command keeps --range and counts --launch-skip in it."""
    from gemmlab.cli import main
    from gemmlab.commands import profile as cmd
    from gemmlab.profile.runner import ProfiledKernel
    from gemmlab.workflows import profile_run

    recorded = ("/opt/ncu --section SpeedOfLight --nvtx --nvtx-include step/ --nvtx-push-pop-scope process "
                "--launch-count 3 -o r python3 train.py")
    launches = load(capture_csv(tmp_path / "r.csv", [ADD, MUL, ADD], [0, 1, 2], grid="(4096, 1, 1)"))
    for k in launches:
        k.command_line = recorded

    def fake_run_profile(target, collection, **kw):
        res = profile_run.ProfileResult(target, collection, recorded.split(), tmp_path / "r.ncu-rep", 3.0,
                                        [ProfiledKernel("vectorized_elementwise_kernel", i, 11) for i in range(3)],
                                        launches)
        res.diagnoses = profile_run.diagnose(launches)
        return res

    monkeypatch.setenv("COLUMNS", "120")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(cmd, "find_ncu", lambda explicit: "/opt/ncu")
    monkeypatch.setattr(profile_run, "run_profile", fake_run_profile)
    main(["profile", "--range", "step", "--", "python3", "train.py"])
    out = capsys.readouterr().out
    assert "NVTX range step (ncu --nvtx-include step/, process scope): 3 launches in it" in out
    lines = _profile_lines(out)
    assert len(lines) == 2 and 1 in lines  # add (launches 0 and 2: one group) and mul
    for kid, argv in lines.items():  # every launch is a vectorized_elementwise_kernel: the skip is the id
        assert argv[2:4] == ["--range", "step"] and argv[argv.index("--launch-skip") + 1] == str(kid)


def test_profiled_launches_table_names_kernels_whole(tmp_path, capsys):
    """ncu's progress lines cut long names ("sm80_xmma_gemm_..."): the table takes each launch's whole
    name from the report read back."""
    from gemmlab.commands.profile import show_profile
    from gemmlab.profile.runner import ProfiledKernel
    from gemmlab.workflows import profile_run

    launches = load(capture_csv(tmp_path / "r.csv", [ADD, MUL], [0, 1], grid="(4096, 1, 1)"))
    from gemmlab.profile import collect

    res = profile_run.ProfileResult(None, collect.default_collection(), ["ncu"], tmp_path / "r.ncu-rep", 3.0,
                                    [ProfiledKernel("vectorized_elem...", i, 11) for i in range(2)], launches)
    show_profile(res)
    out = capsys.readouterr().out
    assert "vectorized_elem..." not in out and out.count(launches[0].name) >= 2
