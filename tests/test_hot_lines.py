"""Hot source lines: ranking (analysis.hot_lines), the sentence tying a diagnosis to its line, the
renderers (report.hot_lines: table rows, HTML fragment), and ``gemmlab analyze`` on an .ncu-rep."""

from __future__ import annotations

import html.parser
import json

import pytest
from conftest import NCU_H100, run_cli
from rich.console import Console

from gemmlab.analysis.evidence import Confidence, Finding
from gemmlab.analysis.hot_lines import MIN_SAMPLES, finding_line, hot_lines
from gemmlab.analysis.vocabulary import Category as C
from gemmlab.errors import UserError
from gemmlab.profile import source_lines
from gemmlab.profile.source_lines import (
    NO_LINE_INFO,
    Instruction,
    LaunchLines,
    SourceLine,
    read_lines,
)
from gemmlab.report import hot_lines as render

TILED = NCU_H100 / "gemm_tiled16.ncu-rep"


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    """One cache of decoded reports for the module: the report is decoded once, then every analyze
    run below reads it from there."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("GEMMLAB_NCU_REP_CACHE", "1")
        mp.setenv("GEMMLAB_CACHE_DIR", str(tmp_path_factory.mktemp("rep-cache")))
        yield mp


@pytest.fixture(scope="module")
def tiled(cache) -> LaunchLines:
    (only,) = read_lines(TILED)
    return only


@pytest.fixture(scope="module")
def hot(tiled):
    return hot_lines(tiled)


def ins(pc, sass, samples=0, **kw) -> Instruction:
    return Instruction(pc=pc, sass=sass, samples=samples, stalls=kw.pop("stalls", {"long_scoreboard": samples}), **kw)


def line(n, text, instructions, file="/src/k.cu") -> SourceLine:
    ln = SourceLine(file=file, line=n, text=text)
    for i in instructions:
        ln.add(i)
        ln.instructions.append(i)
    return ln


def launch(lines, **kw) -> LaunchLines:
    ll = LaunchLines(id=kw.pop("id", 0), name="k", function="k", mangled="_Z1kv", demangled="k()",
                     has_line_info=True, has_samples=True, has_memory=True, lines=lines, **kw)
    for ln in lines:
        ll.total.add(ln)
    return ll


def uncoalesced() -> LaunchLines:
    """B[k * N + col] read down a column: line 23 holds 94 of the 100 excess sectors."""
    return launch([
        line(22, "    float a = A[row * K + k];",
             [ins(0x10, "LDG.E R2, desc[UR4][R2.64]", 300, global_sectors=10, global_ideal=4, global_excess=6)]),
        line(23, "    float b = B[k * N + col];",
             [ins(0x20, "@!P0 LDG.E R4, desc[UR4][R4.64]", 500, global_sectors=98, global_ideal=4, global_excess=94)]),
        line(24, "    acc += a * b;", [ins(0x30, "FFMA R0, R2, R4, R0", 200, stalls={"wait": 200})]),
        line(30, "    tile[threadIdx.x][k] = v;",
             [ins(0x40, "STS [R6], R7", 100, shared_wavefronts=64, shared_ideal=2, shared_excess=62)]),
    ])


# --- ranking -------------------------------------------------------------------------------------------


def test_tiled16_ranking(hot, tiled):
    assert [(ln.file, ln.line) for ln in hot.lines] == [("/tmp/ladder.cu", n) for n in (49, 41, 40, 42, 43)]
    assert [ln.rank for ln in hot.lines] == [1, 2, 3, 4, 5]
    assert hot.lines[0].share == pytest.approx(249_158 / 367_449)
    assert all(a.share >= b.share for a, b in zip(hot.lines, hot.lines[1:]))
    every = hot_lines(tiled, top=0)
    assert sum(ln.share for ln in every.lines) == pytest.approx(1.0)  # every sample sits on a line here
    assert hot.ranked_by == "samples" and hot.total_samples == 367_449 and hot.no_line_info is None


def test_top_stalls_and_sass(hot):
    for ln in hot.lines:
        assert 1 <= len(ln.top_stalls) <= 3 and 1 <= len(ln.instructions) <= 3
        assert all(a.samples >= b.samples for a, b in zip(ln.top_stalls, ln.top_stalls[1:]))
        assert sum(s.share for s in ln.stalls) == pytest.approx(1.0)
        assert all(i.sass for i in ln.instructions)
    by_line = {ln.line: ln for ln in hot.lines}
    top41 = by_line[41].top_stalls[0]
    assert top41.reason == "long_scoreboard" and top41.label == "long scoreboard"
    assert by_line[41].instructions[0].sass == "STS [R11], R14"  # the store that waits on the global load
    assert by_line[49].top_stall(ineligible=True).reason == "short_scoreboard"  # past not_selected
    assert by_line[40].top_stalls[0].reason == "barrier"


def test_hotspots(hot):
    assert hot.global_excess is None and hot.shared_excess is None  # coalesced and conflict-free
    assert hot.hotspots["shared_wavefronts"].line == 49
    assert hot.hotspots["shared_wavefronts"].share == pytest.approx(536_870_912 / 570_425_344)
    assert hot.hotspots["barrier"].line == 40


def test_to_dict_is_json(hot):
    d = json.loads(json.dumps(hot.to_dict()))
    first = d["lines"][0]
    assert first["line"] == 49 and first["source"].startswith("for (int k = 0; k < TILE; ++k)")
    assert first["top_stalls"][0]["reason"] == "not_selected" and first["top_stalls"][0]["meaning"]
    assert first["sass"][0]["pc_hex"].startswith("0x") and first["sass"][0]["sass"]
    assert d["global_excess"] is None and d["no_line_info"] is None and d["files"] == ["/tmp/ladder.cu"]


def test_excess_global_and_shared():
    h = hot_lines(uncoalesced())
    assert (h.global_excess.line, h.global_excess.share) == (23, pytest.approx(0.94))
    assert (h.shared_excess.line, h.shared_excess.amount) == (30, 62)
    assert h.lines[0].line == 23 and h.lines[0].global_excess == 94


# --- finding_line --------------------------------------------------------------------------------------


def test_finding_line_uncoalesced():
    h = hot_lines(uncoalesced())
    assert finding_line(C.UNCOALESCED_GLOBAL_LOADS, h) == \
        "94% of the excess global sectors of loads come from line 23, `float b = B[k * N + col];`."
    assert finding_line(C.UNCOALESCED_GLOBAL_STORES, h) is None  # the excess is the loads'
    assert finding_line(C.SHARED_BANK_CONFLICTS, h) == \
        "100% of the excess shared wavefronts come from line 30, `tile[threadIdx.x][k] = v;`."
    finding = Finding(category=C.UNCOALESCED_GLOBAL_LOADS, summary="", confidence=Confidence.HIGH, impact=0.5,
                      impact_basis="")
    assert finding_line(finding, h) == finding_line("uncoalesced_global_loads", h) == \
        finding_line(C.UNCOALESCED_GLOBAL_LOADS, h)
    for none in (C.OCCUPANCY_REGISTERS, C.TAIL_EFFECT, C.INCONCLUSIVE, "not_a_category", None):
        assert finding_line(none, h) is None


def test_finding_line_tiled16(hot):
    assert finding_line(C.SHARED_MEMORY_THROUGHPUT, hot) == (
        "94% of the shared-memory wavefronts come from line 49, "
        "`for (int k = 0; k < TILE; ++k) acc += As[threadIdx.y][k] *…`.")
    latency = finding_line(C.LATENCY_BOUND, hot)
    assert latency.startswith("68% of the warp samples are on line 49, `for (int k")
    assert latency.endswith("; its top stall is short scoreboard (27% of the line's samples): "
                            "shared-memory / MIO result latency.")
    assert "another" not in latency  # line 41 holds 17%: below MIN_SHARE, not named
    assert finding_line(C.BARRIER_STALLS, hot).startswith("58% of the barrier stall samples are on line 40, ")
    assert finding_line(C.UNCOALESCED_GLOBAL_LOADS, hot) is None  # no excess to point at


def test_barrier_sentence_splits_out_wgmma_waits():
    # Hopper: a warp in wgmma.wait_group is sampled with the barrier reason (H100, gemmlab's fp8
    # 128x256c2: 2414 of 2426 samples on its WARPGROUP.DEPBAR line), so the sentence says how many
    # of the barrier samples are those waits rather than waits for other warps
    wait = line(664, 'asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(N) : "memory");',
                [ins(0x100, "WARPGROUP.DEPBAR.LE gsb0, 0x1", 240, stalls={"barrier": 240})])
    bar = line(515, 'asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(count) : "memory");',
               [ins(0x200, "BAR.SYNC.DEFER_BLOCKING R3, 0x80", 60, stalls={"barrier": 60})])
    sentence = finding_line(C.BARRIER_STALLS, hot_lines(launch([wait, bar])))
    assert sentence.startswith("80% of the barrier stall samples are on line 664, ")
    assert sentence.endswith("; 80% of them are on wgmma.wait_group (WARPGROUP.DEPBAR): warps waiting "
                             "for their own MMAs, not for other warps.")
    # a kernel whose barrier samples are all bar.sync gets no such clause
    plain = finding_line(C.BARRIER_STALLS, hot_lines(launch([bar])))
    assert plain.startswith("100% of the barrier stall samples are on line 515") and "wgmma" not in plain


def test_a_wgmma_wait_reads_as_its_own_mmas_not_a_barrier():
    # the hot-lines table and JSON give each stall its meaning: a barrier sample on
    # WARPGROUP.DEPBAR is a warp waiting for its own MMAs (H100 fp8 128x256c2: 2346 of the 2381
    # samples on its wgmma.wait_group line), one on BAR.SYNC waits for the other warps
    wait = line(664, 'asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(N) : "memory");',
                [ins(0x100, "WARPGROUP.DEPBAR.LE gsb0, 0x1", 240, stalls={"barrier": 230, "wait": 10}),
                 ins(0x110, "ISETP.GE.AND P0, PT, R6, 0x80, PT", 30, stalls={"barrier": 20, "wait": 10})])
    bar = line(515, 'asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(count) : "memory");',
               [ins(0x200, "BAR.SYNC.DEFER_BLOCKING R3, 0x80", 60, stalls={"barrier": 60})])
    hot = hot_lines(launch([wait, bar]))
    by_line = {ln.line: ln for ln in hot.lines}
    waited, synced = by_line[664], by_line[515]
    assert waited.top_stalls[0].reason == "barrier" and "own MMAs" in waited.top_stalls[0].meaning
    assert waited.top_stalls[0].label == "barrier (wgmma wait)" and synced.top_stalls[0].label == "barrier"
    assert waited.instructions[0].top_stall.meaning == waited.top_stalls[0].meaning
    # the ISETP's barrier samples (skid after the wait) keep the plain meaning
    assert "other warps (__syncthreads()" in waited.instructions[1].top_stall.meaning
    assert synced.top_stalls[0].to_dict()["meaning"].startswith("waiting at a barrier for the other warps")
    assert "own MMAs" not in synced.instructions[0].top_stall.meaning
    # the HTML report's tooltip carries the same meaning
    frag = render.html_fragment(launch([wait, bar]), hot)
    assert 'title="waiting in wgmma.wait_group for its warpgroup&#x27;s own MMAs (not for other warps)"' in frag
    assert "barrier (wgmma wait)" in frag


def test_finding_line_names_a_second_line_that_shares_it():
    # the 32-way conflicts of a 32×32 float tile written and read by column: half the excess each
    src = [("    for (int k = 0; k < 32; ++k) t[x][k] = x + k;", "STS [R2], R4"),
           ("    for (int k = 0; k < 32; ++k) acc += t[x][k];", "LDS R5, [R2]")]
    ll = launch([line(n, text, [ins(n, sass, 100, shared_wavefronts=32, shared_ideal=1, shared_excess=31)])
                 for n, (text, sass) in zip((11, 14), src)])
    assert finding_line(C.SHARED_BANK_CONFLICTS, hot_lines(ll)) == (
        "50% of the excess shared wavefronts come from line 11, "
        "`for (int k = 0; k < 32; ++k) t[x][k] = x + k;` (line 14: another 50%).")
    assert hot_lines(ll).shared_excess.to_dict()["second"] == {"file": "/src/k.cu", "line": 14, "amount": 31,
                                                               "share": 0.5}


def test_finding_line_thresholds():
    # the excess spread evenly over six lines: no line is *the* source
    spread = launch([line(n, f"x{n} = g[{n} * s];", [ins(n, "LDG.E R2, desc[UR4][R2.64]", 100, global_excess=10,
                                                          global_sectors=14, global_ideal=4)]) for n in range(1, 7)])
    assert finding_line(C.UNCOALESCED_GLOBAL_LOADS, hot_lines(spread)) is None
    # a line with every sample, but too few samples to say so
    few = launch([line(5, "y = x;", [ins(1, "MOV R1, R2", MIN_SAMPLES - 1)])])
    assert finding_line(C.LATENCY_BOUND, hot_lines(few)) is None
    enough = launch([line(5, "y = x;", [ins(1, "MOV R1, R2", MIN_SAMPLES)])])
    assert finding_line(C.LATENCY_BOUND, hot_lines(enough)).startswith(
        "100% of the warp samples are on line 5, `y = x;`")


def test_finding_line_names_the_file_when_several():
    ll = uncoalesced()
    ll.lines.append(line(7, "inline float f(float x) { return x; }", [ins(0x90, "MOV R1, R2", 1)],
                         file="/src/util.cuh"))
    assert finding_line(C.UNCOALESCED_GLOBAL_LOADS, hot_lines(ll)).startswith(
        "94% of the excess global sectors of loads come from line 23 of k.cu, `float b")


def test_ranked_by_instructions_without_samples():
    ll = launch([line(1, "a();", [ins(1, "MOV R1, R2", executed=30, stalls={})]),
                 line(2, "b();", [ins(2, "MOV R3, R4", executed=10, stalls={})])])
    ll.has_samples = False
    h = hot_lines(ll)
    assert h.ranked_by == "executed" and h.no_line_info is None
    assert [(ln.line, ln.share) for ln in h.lines] == [(1, 0.75), (2, 0.25)]
    assert "40 executed warp instructions; the report has no warp samples" in render.title(h)
    assert finding_line(C.LATENCY_BOUND, h) is None  # no samples to point at
    assert finding_line(C.INSTRUCTION_OVERHEAD, h) == \
        "75% of the executed instructions are on line 1, `a();` (line 2: another 25%)."


def test_no_line_info():
    ll = launch([])
    ll.has_line_info = False
    h = hot_lines(ll)
    assert h.no_line_info == NO_LINE_INFO and h.lines == [] and h.hotspots == {}
    assert finding_line(C.LATENCY_BOUND, h) is None
    assert json.loads(json.dumps(h.to_dict()))["no_line_info"] == NO_LINE_INFO
    assert render.note(h).count("\n") == 0 and "-lineinfo" in render.note(h)
    assert render.csv_rows([h]) == [["0", "k", "", "", "", "", "", NO_LINE_INFO]]


# --- rendering -----------------------------------------------------------------------------------------


def test_rows_keep_numbers_whole(hot):
    rows = render.rows(hot)
    assert rows[0] == ["1", "ladder.cu:49", "67.8%", "249,158",
                       "not selected 31.9%, short scoreboard 26.7%, wait 10.6%",
                       "for (int k = 0; k < TILE; ++k) acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];"]
    console = Console(width=70, record=True)
    console.print(render.rich_table(hot), crop=False)
    out = console.export_text()
    for r in rows:
        assert r[1] in out and r[2] in out and r[3] in out


class Tags(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.open: list[str] = []
        self.seen: set[str] = set()

    def handle_starttag(self, tag, attrs):
        self.seen.add(tag)
        if tag not in ("col", "br", "meta"):
            self.open.append(tag)

    def handle_endtag(self, tag):
        assert self.open and self.open[-1] == tag, (tag, self.open[-5:])
        self.open.pop()


def balanced(fragment: str) -> set[str]:
    p = Tags()
    p.feed(fragment)
    p.close()
    assert p.open == []
    return p.seen


def test_html_escapes_everything():
    ll = uncoalesced()
    evil = '    if (a < b && s == "</td><script>alert(1)</script>") x = 1;'
    ll.lines[1].text = evil
    ll.lines[1].instructions[0].sass = "@!P0 LDG.E R4, <script>"
    ll.lines = [SourceLine(**{**vars(ln), "file": "/src/<b>k</b>.cu"}) for ln in ll.lines]
    h = hot_lines(ll)
    frag = render.html_fragment(ll, h, finding=finding_line(C.UNCOALESCED_GLOBAL_LOADS, h))
    assert "<script" not in frag and "<b>" not in frag
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in frag and "&amp;&amp;" in frag
    assert "&lt;b&gt;k&lt;/b&gt;.cu" in frag
    assert frag.startswith('<section class="hotlines"') and "<style>" in frag and "http" not in frag
    tags = balanced(frag)
    assert {"table", "details", "style"} <= tags
    assert "text not in the report: profile with ncu --import-source yes" in frag  # no text for this file


def test_html_of_tiled16(tiled, hot):
    frag = render.html_fragment(tiled, hot, finding=finding_line(C.LATENCY_BOUND, hot))
    balanced(frag)
    assert 'id="hl0-tmp-ladder-cu-49"' in frag and 'href="#hl0-tmp-ladder-cu-49"' in frag
    assert "SASS: 8 instruction(s) on this line" in frag and "FFMA R0, R3, R2, R0" in frag
    assert "embedded in the report" in frag
    assert "Held-out evaluation kernels" not in frag  # line 1 of a 281-line file: outside the windows shown
    assert "acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];" in frag
    none = LaunchLines(id=3, name="lib_kernel", function="lib_kernel", mangled="", demangled="",
                       has_line_info=False, has_samples=True, has_memory=False)
    frag = render.html_fragment(none, hot_lines(none))
    assert NO_LINE_INFO in frag and "<table" not in frag
    balanced(frag)


# --- gemmlab analyze -----------------------------------------------------------------------------------


def test_analyze_text(capsys, tiled):
    code, out, err = run_cli(capsys, "analyze", str(TILED))
    assert code == 0, err
    assert "Source line: 94% of the shared-memory wavefronts come from line 49" in out
    assert "Hot source lines (share of the kernel's 367,449 warp samples)" in out
    assert "ladder.cu:49" in out and "249,158" in out
    assert out.index("Recommendations:") < out.index("Hot source lines")


def test_analyze_json_and_csv(capsys, tiled):
    code, out, _ = run_cli(capsys, "analyze", str(TILED), "--json")
    assert code == 0
    k = json.loads(out)["kernels"][0]
    first = k["hot_lines"]["lines"][0]
    assert first["line"] == 49 and first["share"] == pytest.approx(0.678, abs=1e-3)
    assert k["hot_lines"]["finding_line"].startswith("94% of the shared-memory wavefronts come from line 49")
    code, out, _ = run_cli(capsys, "analyze", str(TILED), "--csv")
    assert code == 0
    block = out.split("# Hot source lines per launch\n", 1)[1].splitlines()
    assert block[0] == ",".join(render.CSV_COLUMNS) and block[1].startswith("0,gemm_tiled16,1,ladder.cu:49,67.8%")


def test_analyze_without_lines(capsys, tiled):
    code, out, _ = run_cli(capsys, "analyze", str(TILED), "--json", "--no-lines")
    assert code == 0 and "hot_lines" not in json.loads(out)["kernels"][0]
    code, out, _ = run_cli(capsys, "analyze", str(NCU_H100 / "gemm_ladder_raw.csv"), "--json")  # a CSV: no per-PC data
    assert code == 0 and all("hot_lines" not in k for k in json.loads(out)["kernels"])


def test_analyze_survives_unreadable_lines(capsys, monkeypatch, tiled):
    def fail(*a, **k):
        raise UserError(f"{TILED}: reading its source lines took more than 600 s")

    monkeypatch.setattr(source_lines, "read_lines", fail)
    code, out, err = run_cli(capsys, "analyze", str(TILED))
    assert code == 0 and "shared_memory_throughput" in out and "Hot source lines" not in out
    assert "hot source lines left out" in err and "took more than 600 s" in err
