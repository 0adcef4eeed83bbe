"""Per-source-line counters of an .ncu-rep (gemmlab.profile.source_lines): the real H100 captures, read
through child processes as ``gemmlab analyze`` reads them, and a fake ncu_report for what the fixtures
do not hold (no line info, no samples, a report without ncu's derived excess metrics)."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest
from conftest import NCU_H100

from gemmlab.errors import InputError, UserError
from gemmlab.profile import ncu_rep, source_lines
from gemmlab.profile.source_lines import (
    NO_LINE_INFO,
    NO_SAMPLES,
    LaunchLines,
    attach_sources,
    decode_lines,
    read_lines,
)

TILED = NCU_H100 / "gemm_tiled16.ncu-rep"  # -lineinfo, --import-source yes: /tmp/ladder.cu embedded
WARP = NCU_H100 / "ladder_warptiling_2048_full.ncu-rep"  # -lineinfo, no source embedded


@pytest.fixture(scope="module")
def tiled() -> LaunchLines:
    (only,) = read_lines(TILED)
    return only


@pytest.fixture(scope="module")
def warp() -> LaunchLines:
    (only,) = read_lines(WARP)
    return only


def by_samples(ll: LaunchLines):
    return sorted(ll.lines, key=lambda ln: -ln.samples)


def test_tiled16_lines_in_sample_order(tiled):
    assert tiled.id == 0 and tiled.name == "gemm_tiled16" and tiled.function == "gemm_tiled16"
    assert tiled.mangled == "_Z12gemm_tiled16PKfS0_Pfiii"
    assert tiled.demangled.startswith("gemm_tiled16(const float *")
    assert tiled.has_line_info and tiled.has_samples and tiled.has_memory and tiled.note == ""
    top = [(ln.file, ln.line) for ln in by_samples(tiled)[:4]]
    assert top == [("/tmp/ladder.cu", 49), ("/tmp/ladder.cu", 41), ("/tmp/ladder.cu", 40), ("/tmp/ladder.cu", 42)]
    assert [(ln.file, ln.line) for ln in tiled.lines] == sorted((ln.file, ln.line) for ln in tiled.lines)


def ncu_per_pc(report: Path, name: str) -> dict[int, int]:
    """{pc: value} of a per-instruction metric, read here through ncu_report itself."""
    act = ncu_rep.ncu_report_module().load_report(str(report)).range_by_idx(0).action_by_idx(0)
    m = act.metric_by_name(name)
    ids = m.correlation_ids()
    return {ids.as_uint64(i): m.as_uint64(i) for i in range(m.num_instances())}


def test_samples_add_up(tiled, warp):
    for ll, report in ((tiled, TILED), (warp, WARP)):
        lines = sum(ln.samples for ln in ll.lines) + sum(i.samples for i in ll.unattributed)
        assert lines == ll.total.samples > 0
        for ln in ll.lines:
            assert ln.samples == sum(i.samples for i in ln.instructions)
            assert ln.executed == sum(i.executed for i in ln.instructions)
        # a PC's samples (the sum of its reasons) are ncu's own sample count there, to the sample
        ncu = ncu_per_pc(report, "smsp__pcsamp_sample_count")
        mine = {i.pc: i.samples for ln in ll.lines for i in ln.instructions}
        assert {pc: n for pc, n in mine.items() if n} == {pc: n for pc, n in ncu.items() if n}
    assert tiled.total.samples == 367_449


def test_stall_reasons_named_as_gemmlab_does(tiled):
    lines = {ln.line: ln for ln in tiled.lines}
    top41 = max(lines[41].stalls, key=lines[41].stalls.get)
    top40 = max(lines[40].stalls, key=lines[40].stalls.get)
    assert top41 == "long_scoreboard"  # the global loads of the A tile
    assert top40 == "barrier"  # the k-tile loop's __syncthreads()
    assert "no_instruction" in tiled.total.stalls  # the sampler's "no_instructions", in gemmlab's spelling
    assert not any(r.endswith("not_issued") for r in tiled.total.stalls)


def test_sass_on_each_line(tiled):
    lines = {ln.line: ln for ln in tiled.lines}
    ops = {i.opcode for i in lines[49].instructions}
    assert {"LDS", "FFMA"} <= ops
    assert all(i.sass and "  " not in i.sass for ln in tiled.lines for i in ln.instructions)
    ldg = [i for i in lines[41].instructions if i.opcode.startswith("LDG")]
    assert len(ldg) == 1 and ldg[0].sass.startswith("@!P1 LDG.E")
    # memory counters sit on the memory instructions: coalesced, conflict-free here
    assert ldg[0].global_sectors == ldg[0].global_ideal > 0 and ldg[0].global_excess == 0
    assert lines[49].shared_wavefronts == lines[49].shared_ideal > 0 and lines[49].shared_excess == 0


def test_embedded_source_text(tiled):
    assert tiled.source_origin == {"/tmp/ladder.cu": "embedded"}
    assert "__global__ void gemm_tiled16" in tiled.sources["/tmp/ladder.cu"]
    line49 = next(ln for ln in tiled.lines if ln.line == 49)
    assert "acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];" in line49.text


def test_no_embedded_source_then_given_text(warp):
    assert warp.has_line_info and "embedded" not in warp.source_origin.values()
    copy = LaunchLines.from_dict(warp.to_dict())
    for ln in copy.lines:  # a path that is on no disk: only the given text can fill it in
        ln.file, ln.text = "/nonexistent-gemmlab-test/" + Path(ln.file).name, None
    copy.sources, copy.source_origin = {}, {}
    text = "\n".join(f"// line {n}" for n in range(1, 400))
    attach_sources(copy, {"gemmlab_warptiling.cu": text})
    assert set(copy.source_origin.values()) == {"given"}
    assert all(ln.text == f"// line {ln.line}" for ln in copy.lines)
    bare = LaunchLines.from_dict(copy.to_dict())
    bare.sources, bare.source_origin = {}, {}
    for ln in bare.lines:
        ln.text = None
    attach_sources(bare)  # nothing given, nothing on disk: no text, and no error
    assert bare.sources == {} and all(ln.text is None for ln in bare.lines)


def test_round_trip_through_json(tiled):
    again = LaunchLines.from_dict(json.loads(json.dumps(tiled.to_dict())))
    assert again == tiled


def test_launch_selection_and_bad_ids():
    with pytest.raises(InputError) as e:
        read_lines(TILED, [3])
    assert "gemm_tiled16.ncu-rep" in str(e.value) and "no launch 3" in str(e.value)
    assert "\n" not in str(e.value)


def test_not_a_report(tmp_path):
    with pytest.raises(InputError, match="no such file"):
        read_lines(tmp_path / "nope.ncu-rep")
    csv = tmp_path / "export.csv"
    csv.write_text('"ID","Kernel Name"\n"0","k"\n')
    with pytest.raises(InputError, match=r"export\.csv: is text"):
        read_lines(csv)


def test_truncated_report_is_one_line_error(tmp_path):
    bad = tmp_path / "cut.ncu-rep"
    bad.write_bytes(TILED.read_bytes()[:5000])
    with pytest.raises(UserError) as e:
        read_lines(bad)
    msg = str(e.value)
    assert "cut.ncu-rep" in msg and "\n" not in msg and "Traceback" not in msg


def test_timeout_is_one_line_error():
    with pytest.raises(UserError) as e:
        read_lines(TILED, timeout_s=0.05)
    assert str(e.value) == f"{TILED}: reading its source lines took more than 0.05 s"


def test_cache_serves_a_second_read(tmp_path, monkeypatch, tiled):
    monkeypatch.setenv("GEMMLAB_NCU_REP_CACHE", "1")
    monkeypatch.setenv("GEMMLAB_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("GEMMLAB_NCU_REP_ISOLATE", "0")  # decode in this process: the fake below counts calls
    calls = []
    real = source_lines.decode_lines
    monkeypatch.setattr(source_lines, "decode_lines", lambda *a, **k: calls.append(a) or real(*a, **k))
    first = read_lines(TILED, [0])
    again = read_lines(TILED)
    assert len(calls) == 1 and first == again == [tiled]


# --- a fake ncu_report: the paths the fixtures do not take ---------------------------------------------


class FakeMetric:
    def __init__(self, values: dict[int, float], double: bool = False):
        self.values, self.double = list(values.items()), double

    def has_correlation_ids(self):
        return True

    def correlation_ids(self):
        return SimpleNamespace(as_uint64=lambda i: self.values[i][0])

    def num_instances(self):
        return len(self.values)

    def kind(self):
        return FakeModule.IMetric.ValueKind_DOUBLE if self.double else 6

    def as_uint64(self, i):
        return int(self.values[i][1])

    def as_double(self, i):
        return float(self.values[i][1])


class FakeAction:
    def __init__(self, metrics: dict, lines: dict[int, tuple[str, int]], sources: dict[str, str]):
        self.metrics, self.lines, self.sources = metrics, lines, sources

    def name(self, base=None):
        return {None: "k", "mangled": "_Z1kv", "demangled": "k()"}[base]

    def metric_names(self):
        return list(self.metrics)

    def metric_by_name(self, n):
        return self.metrics.get(n)

    def source_info(self, pc):
        where = self.lines.get(pc)
        return None if where is None else SimpleNamespace(file_name=lambda: where[0], line=lambda: where[1])

    def sass_by_pc(self, pc):
        return {0x10: "  @!P0  LDG.E R2, desc[UR4][R2.64]", 0x20: "  STG.E desc[UR4][R4.64], R2",
                0x30: "  EXIT"}.get(pc, "NOP")

    def source_files(self):
        return self.sources


class FakeModule:
    IMetric = SimpleNamespace(ValueKind_DOUBLE=4, ValueKind_FLOAT=3)
    IAction = SimpleNamespace(NameBase_DEMANGLED="demangled", NameBase_MANGLED="mangled")

    def __init__(self, action):
        self.action = action

    def load_report(self, path):
        rng = SimpleNamespace(num_actions=lambda: 1, action_by_idx=lambda j: self.action)
        return SimpleNamespace(num_ranges=lambda: 1, range_by_idx=lambda r: rng)


def fake_metrics(samples: bool = True) -> dict:
    m = {
        "inst_executed": FakeMetric({0x10: 100, 0x20: 100, 0x30: 100}),
        "thread_inst_executed": FakeMetric({0x10: 3200, 0x20: 1600, 0x30: 3200}),
        # no derived__..._excessive: the excess is total − ideal; one metric written as doubles
        "memory_l2_theoretical_sectors_global": FakeMetric({0x10: 800.0, 0x20: 100.0}, double=True),
        "memory_l2_theoretical_sectors_global_ideal": FakeMetric({0x10: 100, 0x20: 100}),
    }
    if samples:
        m |= {
            "smsp__pcsamp_warps_issue_stalled_long_scoreboard": FakeMetric({0x10: 80, 0x20: 0, 0x30: 0}),
            "smsp__pcsamp_warps_issue_stalled_no_instructions": FakeMetric({0x10: 10, 0x20: 7, 0x30: 3}),
            "smsp__pcsamp_warps_issue_stalled_long_scoreboard_not_issued": FakeMetric({0x10: 50}),
        }
    return m


@pytest.fixture
def fake_report(tmp_path, monkeypatch):
    path = tmp_path / "fake.ncu-rep"
    path.write_bytes(ncu_rep.MAGIC + bytes(64))

    def use(action):
        monkeypatch.setattr(ncu_rep, "ncu_report_module", lambda: FakeModule(action))
        return path

    return use


def test_no_line_info(fake_report):
    path = fake_report(FakeAction(fake_metrics(), lines={}, sources={}))
    (d,) = decode_lines(path)["launches"]
    ll = LaunchLines.from_dict(d)
    assert not ll.has_line_info and ll.has_samples and ll.lines == [] and ll.unattributed == []
    assert ll.total.samples == 100 and ll.total.global_excess == 700  # what was measured is still counted
    assert ll.note == NO_LINE_INFO
    assert "\n" not in NO_LINE_INFO and "-lineinfo" in NO_LINE_INFO and "--import-source yes" in NO_LINE_INFO


def test_no_samples(fake_report):
    path = fake_report(FakeAction({}, lines={}, sources={}))
    (d,) = decode_lines(path)["launches"]
    assert LaunchLines.from_dict(d).note == NO_SAMPLES


def test_fake_with_lines(fake_report):
    src = "__global__ void k() {\n  x = a[i * 32];\n  b[i] = x;\n}\n"
    lines = {0x10: ("/src/k.cu", 2), 0x20: ("/src/k.cu", 3)}  # EXIT (0x30) has no line
    path = fake_report(FakeAction(fake_metrics(), lines=lines, sources={"/src/k.cu": src, "/other.h": "x"}))
    payload = decode_lines(path)
    assert payload["total"] == 1
    ll = LaunchLines.from_dict(payload["launches"][0])
    assert ll.has_line_info and ll.note == ""
    assert [(ln.line, ln.samples, ln.text) for ln in ll.lines] == [(2, 90, "  x = a[i * 32];"), (3, 7, "  b[i] = x;")]
    assert [i.sass for i in ll.unattributed] == ["EXIT"] and ll.unattributed[0].samples == 3
    load = ll.lines[0].instructions[0]
    assert load.sass == "@!P0 LDG.E R2, desc[UR4][R2.64]" and load.opcode == "LDG.E"
    assert load.global_excess == 700 and load.global_sectors == 800 and load.global_ideal == 100
    assert ll.lines[0].stalls == {"long_scoreboard": 80, "no_instruction": 10}  # _not_issued left out
    assert ll.lines[1].thread_executed == 1600
    assert ll.sources == {"/src/k.cu": src}  # only the files with lines


def test_child_count_follows_launches(monkeypatch, tmp_path):
    monkeypatch.setattr(source_lines.ncu_rep_isolated, "idle_cpus", lambda: 16)
    monkeypatch.delenv("GEMMLAB_NCU_REP_PROCS", raising=False)
    f = tmp_path / "r.ncu-rep"
    f.write_bytes(b"NVR\x00")
    assert source_lines._child_count(f, [0]) == 1
    assert source_lines._child_count(f, list(range(20))) == 3
    assert source_lines._child_count(f, list(range(200))) == source_lines.ncu_rep_isolated.MAX_PROCS
    monkeypatch.setenv("GEMMLAB_NCU_REP_PROCS", "2")
    assert source_lines._child_count(f, [0]) == 1 and source_lines._child_count(f, [0, 1, 2]) == 2


# --- a user's own kernel, profiled by `gemmlab bench examples/your-kernel/01_bad.cu --profile` on an H100
# (docs/results/your-kernel-h100-2026-11-24): -lineinfo under the file's own path, --import-source yes.
USER_BAD = Path(__file__).parent / "fixtures" / "user" / "01_bad_lineinfo.ncu-rep"


@pytest.fixture(scope="module")
def user_bad():
    from gemmlab.profile.source_lines import read_lines

    return read_lines(USER_BAD)


def test_a_user_kernel_report_maps_its_samples_and_excess_sectors_to_its_own_line(user_bad):
    from gemmlab.analysis.hot_lines import finding_line, hot_lines

    (launch,) = user_bad
    hot = hot_lines(launch)
    top = hot.lines[0]
    assert top.file.endswith("examples/your-kernel/01_bad.cu") and top.line == 21 and top.share > 0.99
    assert "B[k * N + col]" in top.text  # the embedded source (ncu --import-source yes), not the disk
    assert launch.source_origin[top.file] == "embedded"
    assert hot.global_excess.line == 21 and hot.global_excess.share > 0.99
    assert top.top_stalls[0].reason == "lg_throttle"
    sentence = finding_line("uncoalesced_global_loads", hot)
    assert "line 21" in sentence and "excess global sectors" in sentence
