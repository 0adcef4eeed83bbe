"""Reading .ncu-rep fast without changing what gemmlab concludes (issue #9, item 11).

- decoding only the metrics gemmlab reads (``profile/needed.py``) gives the same diagnosis, roofline,
  occupancy and diff as decoding all of them, and keeps every metric name gemmlab's code mentions or
  touches;
- the lean copy (``profile/rep_strip.py``: results without section bodies and unread metrics) decodes
  to the same records as the report as written;
- several children (``--shard I/K``) give the same records as one;
- the cache of decoded records (``profile/rep_cache.py``): hit, miss, invalidation, damaged entries.

No timings are asserted here; benchmarks/analyze_speed.py measures them.
"""

from __future__ import annotations

import ast
import json
import math
import os
import re
from pathlib import Path

import pytest
from conftest import NCU_H100
from launch_factory import RecordingMetrics

from gemmlab.profile import (
    ncu_rep,
    ncu_rep_isolated,
    needed,
    protobuf,
    rep_cache,
    rep_strip,
)
from gemmlab.profile.load import load

pytest.importorskip("ncu_report")

REPS = sorted(NCU_H100.glob("*.ncu-rep"))
SRC = Path(__file__).resolve().parents[1] / "src" / "gemmlab"


def _same(a, b) -> bool:
    """Equal, NaN equal to NaN (JSON-ish values, metrics)."""
    if isinstance(a, float) and isinstance(b, float):
        return a == b or (math.isnan(a) and math.isnan(b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return a == b


@pytest.fixture(autouse=True)
def in_process(monkeypatch):
    monkeypatch.setenv("GEMMLAB_NCU_REP_ISOLATE", "0")  # the child path is tested at the end
    monkeypatch.setenv("GEMMLAB_NCU_REP_CACHE", "0")


@pytest.fixture(scope="module")
def full_and_needed():
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("GEMMLAB_NCU_REP_ISOLATE", "0")
        return {p.name: (load(p, metrics="all"), load(p)) for p in REPS}


# --- decoding only the needed metrics ------------------------------------------------------------

def _everything(launches):
    """What gemmlab derives from launches, as plain data: the analyze document, ncu's roofline
    ceilings and point, occupancy and ncu's disagreements, waves, and a diff against itself."""
    from gemmlab.analysis.diagnose import diagnose_all
    from gemmlab.analysis.diff import diff_launches
    from gemmlab.analysis.evidence import report_dict
    from gemmlab.analysis.occupancy import ncu_disagreements, occupancy_from_launch
    from gemmlab.analysis.roofline import ncu_ceilings, point_from_launch
    from gemmlab.analysis.waves import waves_from_launch

    def attempt(f, *args):
        try:
            return repr(f(*args))
        except Exception as e:  # a missing metric raises; the same one must be missing both ways
            return f"{type(e).__name__}: {e}"

    out = {"analyze": report_dict("x", diagnose_all(launches))}
    for k in launches:
        occ = attempt(occupancy_from_launch, k)
        out[k.id] = [attempt(ncu_ceilings, k), attempt(point_from_launch, k), occ,
                     attempt(lambda k: ncu_disagreements(occupancy_from_launch(k), k), k),
                     attempt(waves_from_launch, k)]
    out["diff"] = repr(diff_launches(launches, launches))
    return json.loads(json.dumps(out, default=repr))


@pytest.mark.parametrize("name", [p.name for p in REPS])
def test_needed_metrics_give_the_same_results_as_all(full_and_needed, name):
    full, lean = full_and_needed[name]
    assert len(lean[0].metrics) < len(full[0].metrics) / 3
    assert _same(_everything(lean), _everything(full))


def test_every_metric_the_analysis_touches_is_kept(full_and_needed):
    RecordingMetrics.touched = set()
    for full, _ in full_and_needed.values():
        for k in full:
            k.metrics = RecordingMetrics(k.metrics)
        _everything(full)
        for k in full:
            k.metrics = dict(k.metrics)
    assert len(RecordingMetrics.touched) > 50
    assert sorted(n for n in RecordingMetrics.touched if not needed.is_needed(n)) == []


_METRIC_LITERAL = re.compile(r"^[a-z][a-z0-9_]*__[a-z0-9_]+(\.[a-z0-9_]+)*$")


def test_every_metric_name_in_gemmlabs_source_is_kept():
    """A string in the source that looks like an ncu metric name (``unit__counter.rollup``) is one
    gemmlab may read: the needed set must keep it (else add it to needed.RAW_READS)."""
    found = set()
    for py in SRC.rglob("*.py"):
        tree = ast.parse(py.read_text())
        in_fstrings = {id(v) for n in ast.walk(tree) if isinstance(n, ast.JoinedStr) for v in n.values}
        for node in ast.walk(tree):
            if (isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in in_fstrings
                    and _METRIC_LITERAL.match(node.value)):
                found.add((node.value, str(py.relative_to(SRC))))
    assert len(found) > 50
    assert sorted((n, f) for n, f in found if not needed.is_needed(n)) == []


def test_selection():
    assert needed.selection() == "needed"
    assert needed.selection("all") == "all"
    with pytest.raises(Exception, match="needed' or 'all"):
        needed.selection("some")


# --- the lean copy -----------------------------------------------------------------------------

@pytest.mark.parametrize("sel", ["all", "needed"])
@pytest.mark.parametrize("rep", REPS, ids=lambda p: p.name)
def test_lean_copy_decodes_to_the_same_records(rep, sel, tmp_path):
    data = rep.read_bytes()
    keep = None if sel == "all" else needed.is_needed
    pieces = rep_strip.strip_sections(data, keep)
    lean = tmp_path / "lean.ncu-rep"
    lean.write_bytes(b"".join(pieces))
    assert lean.stat().st_size < 0.9 * len(data)
    as_written = ncu_rep.decode(rep, sel)
    assert _same(ncu_rep.decode(lean, sel, source=str(rep)), as_written)
    with rep_strip.lean_copy(rep, data, keep) as copy:
        assert copy != rep and copy.read_bytes() == lean.read_bytes()
    assert not copy.exists()  # removed after reading


def test_unexpected_layout_reads_the_report_as_written(tmp_path):
    odd = tmp_path / "odd.ncu-rep"
    data = bytearray((NCU_H100 / "gemm_tiled16.ncu-rep").read_bytes())
    data[10:14] = b"\xff\xff\xff\x7f"  # the first block header's length (after NVR, 4 + 2 bytes): past the end
    odd.write_bytes(bytes(data))
    with pytest.raises(rep_strip.Layout):
        rep_strip.strip_sections(bytes(data))
    with rep_strip.lean_copy(odd) as path:
        assert path == odd
    with pytest.raises(rep_strip.Layout):
        rep_strip.strip_sections(b"not a report")


def test_lean_copy_can_be_turned_off(monkeypatch):
    monkeypatch.setenv("GEMMLAB_NCU_REP_LEAN", "0")
    rep = NCU_H100 / "gemm_tiled16.ncu-rep"
    with rep_strip.lean_copy(rep) as path:
        assert path == rep


def test_session_command_walks_the_blocks_like_the_whole_file_scan():
    for rep in REPS:
        data = rep.read_bytes()
        assert ncu_rep._block_headers(rep) is not None
        command = ncu_rep.session_command(rep)
        assert command.startswith("/") and " ncu " not in command[:1] and "--set full" in command
        assert command == ncu_rep._find_command(data)


# --- many launches, several children -----------------------------------------------------------

@pytest.fixture(scope="module")
def five_kernel_rep(tmp_path_factory):
    path = tmp_path_factory.mktemp("multi") / "five.ncu-rep"
    path.write_bytes(rep_strip.splice([p.read_bytes() for p in REPS], 7))
    return path


def test_spliced_report_holds_every_launch(five_kernel_rep):
    launches = load(five_kernel_rep)
    singles = [load(p)[0] for p in REPS]
    assert [k.id for k in launches] == list(range(7))
    assert [k.name for k in launches] == [singles[i % 5].name for i in range(7)]
    assert all(_same(k.metrics, singles[i % 5].metrics) for i, k in enumerate(launches))


def test_children_sharing_the_launches_give_the_same_records(five_kernel_rep, monkeypatch):
    monkeypatch.delenv("GEMMLAB_NCU_REP_ISOLATE")
    one = ncu_rep_isolated.read_in_children(five_kernel_rep, "needed", procs=1)
    three = ncu_rep_isolated.read_in_children(five_kernel_rep, "needed", procs=3)
    assert _same(one, three) and len(one["launches"]) == 7
    monkeypatch.setenv("GEMMLAB_NCU_REP_PROCS", "2")
    assert ncu_rep_isolated.child_count(five_kernel_rep) == 2
    monkeypatch.delenv("GEMMLAB_NCU_REP_PROCS")
    assert ncu_rep_isolated.child_count(five_kernel_rep, lean=True) == 1  # small: one child
    monkeypatch.setattr(ncu_rep_isolated, "SHARD_BYTES", 1)
    monkeypatch.setattr(ncu_rep_isolated, "usable_cpus", lambda: 8)
    monkeypatch.setattr(os, "getloadavg", lambda: (5.2, 0.0, 0.0))
    assert ncu_rep_isolated.child_count(five_kernel_rep) == 3  # 8 CPUs, 5 busy
    monkeypatch.setattr(os, "getloadavg", lambda: (0.1, 0.0, 0.0))
    assert ncu_rep_isolated.child_count(five_kernel_rep) == ncu_rep_isolated.MAX_PROCS
    monkeypatch.setattr(os, "getloadavg", lambda: (30.0, 0.0, 0.0))
    assert ncu_rep_isolated.child_count(five_kernel_rep) == 1
    assert [k.name for k in load(five_kernel_rep)] == [k.name for k in ncu_rep.to_launches(one, "x")]


def test_merge_refuses_shards_that_disagree():
    a = {"format": ncu_rep.PAYLOAD_FORMAT, "selection": "needed", "total": 3, "launches": [{"id": 0}, {"id": 2}]}
    b = {**a, "launches": [{"id": 1}]}
    assert [d["id"] for d in ncu_rep_isolated.merge([a, b])["launches"]] == [0, 1, 2]
    with pytest.raises(Exception, match="disagree"):
        ncu_rep_isolated.merge([a])


# --- the cache ---------------------------------------------------------------------------------

@pytest.fixture
def cache(monkeypatch, tmp_path):
    folder = tmp_path / "cache"
    monkeypatch.setenv("GEMMLAB_NCU_REP_CACHE", "1")
    monkeypatch.setenv("GEMMLAB_CACHE_DIR", str(folder))
    calls = []
    real = ncu_rep.decode

    def counting(*args, **kwargs):
        calls.append(args[0])
        return real(*args, **kwargs)

    monkeypatch.setattr(ncu_rep, "decode", counting)
    return folder, calls


def test_cache_miss_then_hit(cache, tmp_path):
    folder, calls = cache
    rep = tmp_path / "r.ncu-rep"
    rep.write_bytes((NCU_H100 / "gemm_tiled16.ncu-rep").read_bytes())
    first = load(rep)
    assert len(calls) == 1
    entries = list(folder.iterdir())
    assert len(entries) == 1 and entries[0].name.endswith("-needed-v1.json")
    second = load(rep)
    assert len(calls) == 1  # from the cache
    assert [(k.name, k.source, k.command_line, k.rules, k.block) for k in second] == [
        (k.name, k.source, k.command_line, k.rules, k.block) for k in first]
    assert all(_same(a.metrics, b.metrics) for a, b in zip(first, second))
    copy = tmp_path / "copy.ncu-rep"  # same bytes elsewhere: a hit that names its own path
    copy.write_bytes(rep.read_bytes())
    assert load(copy)[0].source == str(copy) and len(calls) == 1
    load(rep, metrics="all")  # another selection: its own entry
    assert len(calls) == 2 and len(list(folder.iterdir())) == 2
    assert not [p for p in folder.iterdir() if p.name.startswith(".tmp")]  # no temporary files left


def test_cache_misses_when_the_report_changes(cache, tmp_path):
    folder, calls = cache
    rep = tmp_path / "r.ncu-rep"
    rep.write_bytes((NCU_H100 / "gemm_tiled16.ncu-rep").read_bytes())
    assert load(rep)[0].name == "gemm_tiled16"
    rep.write_bytes((NCU_H100 / "ladder_warptiling_2048_full.ncu-rep").read_bytes())  # same path, new bytes
    assert load(rep)[0].name == "gemmlab_warptiling"
    assert len(calls) == 2 and len(list(folder.iterdir())) == 2


@pytest.mark.parametrize("damage", [b"", b"{not json", b'{"version": 1}', b"[1, 2]",
                                    b'{"version": 1, "sha256": "0", "size": 1, "payload": {"launches": []}}',
                                    "right key, payload of another format", "right key, launches unreadable"])
def test_damaged_or_foreign_cache_entry_is_ignored_and_replaced(cache, tmp_path, damage):
    folder, calls = cache
    rep = NCU_H100 / "gemm_tiled16.ncu-rep"
    load(rep)
    (entry,) = folder.iterdir()
    if isinstance(damage, str):
        good = json.loads(entry.read_bytes())
        if "format" in damage:
            good["payload"]["format"] = "something-else/9"
        else:
            good["payload"]["launches"] = [{"id": 0, "metrics": 5}]
        damage = json.dumps(good).encode()
    entry.write_bytes(damage)
    assert load(rep)[0].name == "gemm_tiled16"
    assert len(calls) == 2
    assert json.loads(entry.read_bytes())["payload"]["launches"][0]["function"] == "gemm_tiled16"
    assert load(rep)[0].name == "gemm_tiled16" and len(calls) == 2


def test_cache_off_and_unwritable(cache, monkeypatch, tmp_path):
    folder, calls = cache
    rep = NCU_H100 / "gemm_tiled16.ncu-rep"
    monkeypatch.setenv("GEMMLAB_NCU_REP_CACHE", "0")
    load(rep)
    load(rep)
    assert len(calls) == 2 and not folder.exists()
    monkeypatch.setenv("GEMMLAB_NCU_REP_CACHE", "1")
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("GEMMLAB_CACHE_DIR", str(blocker / "cache"))
    assert load(rep)[0].name == "gemm_tiled16"  # a cache that cannot be written is only skipped


def test_cache_folder_default(monkeypatch, tmp_path):
    monkeypatch.delenv("GEMMLAB_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert rep_cache.folder() == tmp_path / "gemmlab" / "ncu-rep"


def test_cache_keeps_at_most_max_entries(cache, monkeypatch):
    folder, _ = cache
    import os

    monkeypatch.setattr(rep_cache, "MAX_ENTRIES", 2)
    keys = [rep_cache.Key(folder, f"{i}{'0' * 39}-1-needed-v1.json", str(i), 1, 0) for i in range(4)]
    for i, k in enumerate(keys[:3]):
        rep_cache.put(k, {"launches": []})
        os.utime(k.path, ns=(i * 10**9, i * 10**9))  # written one second apart
    rep_cache.put(keys[3], {"launches": []})
    assert sorted(p.name[0] for p in folder.iterdir()) == ["2", "3"]  # the least recently written go


def test_a_lean_copy_that_fails_falls_back_to_the_report_as_written(monkeypatch):
    rep = NCU_H100 / "gemm_tiled16.ncu-rep"
    monkeypatch.setattr(rep_strip, "strip_sections", lambda data, keep=None: [b"NVR\x00", bytes(range(256)) * 8])
    (launch,) = load(rep)
    assert launch.name == "gemm_tiled16" and launch.source == str(rep) and len(launch.metrics) > 300


def test_a_lean_copy_may_keep_no_metric_of_a_launch(tmp_path):
    rep = NCU_H100 / "gemm_tiled16.ncu-rep"
    lean = tmp_path / "lean.ncu-rep"
    lean.write_bytes(b"".join(rep_strip.strip_sections(rep.read_bytes(), keep=lambda name: False)))
    (d,) = ncu_rep.decode(lean, "needed", source=str(rep))["launches"]
    assert d["function"] == "gemm_tiled16" and d["metrics"] == [[], [], []]


def test_cache_keeps_at_most_max_bytes(cache, monkeypatch):
    folder, _ = cache
    monkeypatch.setattr(rep_cache, "MAX_BYTES", 1000)
    keys = [rep_cache.Key(folder, f"{i}{'0' * 39}-1-needed-v1.json", str(i), 1, 0) for i in range(3)]
    for i, k in enumerate(keys):
        rep_cache.put(k, {"launches": ["x" * 400]})
        os.utime(k.path, ns=(i * 10**9, i * 10**9))
    rep_cache.put(keys[2], {"launches": ["x" * 400]})  # the newest, written again
    assert sorted(p.name[0] for p in folder.iterdir()) == ["1", "2"]


def _two_results_in_one_block(data: bytes) -> bytes:
    """The report with its results block holding its result twice (NumResults 2), as ncu may write."""
    head, blocks = rep_strip.blocks(data)
    out = [head]
    for kind, b in blocks:
        if kind == "results":
            n = int.from_bytes(b[:4], "little")
            header, payload = b[4:4 + n], b[4 + n:]
            header = protobuf.with_varint(header, protobuf.fields(header), 2, 2)
            header = protobuf.with_varint(header, protobuf.fields(header), 5, 2 * len(payload))
            b = len(header).to_bytes(4, "little") + header + payload + payload
        out.append(b)
    return b"".join(out)


def test_lean_copy_of_a_block_holding_several_results(tmp_path):
    rep = tmp_path / "two.ncu-rep"
    rep.write_bytes(_two_results_in_one_block((NCU_H100 / "gemm_tiled16.ncu-rep").read_bytes()))
    as_written = ncu_rep.decode(rep, "needed")
    assert as_written["total"] == 2
    with rep_strip.lean_copy(rep, keep=needed.is_needed) as lean:
        assert lean != rep and lean.stat().st_size < rep.stat().st_size / 2
        assert _same(ncu_rep.decode(lean, "needed", source=str(rep)), as_written)
    a, b = load(rep)
    assert (a.id, b.id, a.name, b.name) == (0, 1, "gemm_tiled16", "gemm_tiled16")
