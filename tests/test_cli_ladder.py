"""gemmlab ladder / bench / sweep / kernels / runs through the CLI, on a CPU.

Bad input must fail with one line naming the input, before any GPU work; with no GPU the measuring
commands say so in one line and exit 3.
"""

from __future__ import annotations

import json
import subprocess
import sys
import types
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping

import pytest
from conftest import gpu_status, run_cli
from fakes_bench import article_result

from gemmlab.store import Store

SRC = Path(__file__).resolve().parents[1] / "src"




@pytest.fixture(autouse=True)
def wide(monkeypatch):
    monkeypatch.setenv("COLUMNS", "250")  # rich tables unwrapped in captured output


@dataclass(frozen=True)
class FakeRung:
    name: str
    order: int
    family: str
    summary: str
    params: Mapping[str, int] = field(default_factory=dict)
    source: str = "fake.cu"
    kernel: str = "fake"
    dtype: str = "fp32"
    out_dtype: str = "fp32"
    arch: str | None = None


@pytest.fixture
def fake_registry(monkeypatch):
    """A stand-in registry module, so these tests do not depend on which rungs exist."""
    ladder = (
        FakeRung("naive", 0, "naive", "one thread per output, uncoalesced"),
        FakeRung("coalesced", 1, "naive", "threadIdx.x along the contiguous column"),
    )
    sweep = (FakeRung("tiled_t8", 10, "tiled", "tile 8", {"TILE": 8, "UNROLL": 0}),)
    mod = types.ModuleType("gemmlab.kernels.registry")
    mod.LADDER = ladder
    mod.all_rungs = lambda dtype="fp32": ladder + sweep
    mod.ladder = lambda dtype="fp32": ladder
    mod.sweep_variants = lambda: sweep
    mod.get = lambda name: {r.name: r for r in ladder + sweep}[name]
    import gemmlab.kernels

    monkeypatch.setitem(sys.modules, "gemmlab.kernels.registry", mod)
    monkeypatch.setattr(gemmlab.kernels, "registry", mod, raising=False)
    return mod


# --- input validation happens first, GPU or not -----------------------------------------------
@pytest.mark.parametrize(
    "argv, line",
    [
        (["ladder", "--shape", "0,5,5"], "gemmlab: error: --shape 0,5,5: M must be >= 1, got 0"),
        (["ladder", "--shape", "abc"], "gemmlab: error: --shape expects three positive integers M,N,K (e.g. 2048,2048,2048), got 'abc'"),
        (["bench", "coalesced", "--shape", "5,5"], "gemmlab: error: --shape expects three positive integers M,N,K (e.g. 2048,2048,2048), got '5,5'"),
        (["sweep", "--size", "0"], "gemmlab: error: --size must be a positive integer, got 0"),
        (["ladder", "--size", "64", "--shape", "64,64,64"], "gemmlab: error: give either --size or --shape, not both (got --size 64 and --shape 64,64,64)"),
        (["ladder", "--shape", "65536,1,65536"], "gemmlab: error: shape M,N,K=65536,1,65536: M*K (A) has 4294967296 elements; the ladder kernels index with 32-bit int, so at most 2147483647 are allowed"),
        (["ladder", "--repeats", "0"], "gemmlab: error: --repeats must be an integer from 1 to 100000, got 0"),
        (["ladder", "--warmup-ms", "-5"], "gemmlab: error: --warmup-ms must be a finite number >= 0, got -5.0"),
        (["bench", "coalesced", "--beta", "nan"], "gemmlab: error: beta must be a finite number, got nan"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(capsys, argv, line):
    code, out, err = run_cli(capsys, *argv)
    assert code == 2
    assert err.strip() == line
    assert out == ""


def test_unknown_rung_suggests_close_names(capsys, fake_registry):
    code, _, err = run_cli(capsys, "ladder", "--rung", "coalesced,coalesce")
    assert code == 2
    assert err.strip() == (
        "gemmlab: error: --rung: unknown rung 'coalesce'; did you mean coalesced? `gemmlab kernels --with-sweep` lists all 3 names"
    )
    code, _, err = run_cli(capsys, "bench", "zzz")
    assert err.strip() == "gemmlab: error: RUNG: unknown rung 'zzz'; `gemmlab kernels --with-sweep` lists all 3 names"


def test_out_refuses_to_overwrite_before_any_gpu_work(capsys, tmp_path, fake_registry):
    out = tmp_path / "results.json"
    out.write_text('{"mine": true}\n')
    code, _, err = run_cli(capsys, "ladder", "--size", "64", "--out", str(out))
    assert code == 2
    assert err.strip() == f"gemmlab: error: --out {out}: file exists; pass --force to replace it"
    assert out.read_text() == '{"mine": true}\n'


def test_db_that_is_a_directory_is_refused(capsys, tmp_path, fake_registry):
    code, _, err = run_cli(capsys, "ladder", "--db", str(tmp_path))
    assert code == 2 and err.strip() == f"gemmlab: error: --db {tmp_path}: is a directory; expected a SQLite file path"


# --- no GPU -------------------------------------------------------------------------------
NO_GPU = not gpu_status()[0]


@pytest.mark.skipif(not NO_GPU, reason="this machine has a GPU; the no-GPU path cannot be exercised")
@pytest.mark.parametrize("argv", [["ladder", "--size", "64"], ["bench", "coalesced"], ["sweep"]])
def test_no_gpu_is_one_line_and_exit_3(argv, tmp_path):
    """Through a real subprocess (`python -m gemmlab`), with the real registry and runtime."""
    pytest.importorskip("gemmlab.runtime.device", reason="gemmlab.runtime.device comes with the kernels branch")
    from gemmlab.kernels import ladders

    if argv[0] == "bench":
        argv = ["bench", ladders.LADDER[1].name]
    env = {"PYTHONPATH": str(SRC), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "COLUMNS": "120"}
    p = subprocess.run([sys.executable, "-m", "gemmlab", *argv], capture_output=True, text=True, env=env, timeout=120)
    assert p.returncode == 3, p.stderr
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("gemmlab: error: "), p.stderr
    assert "GPU" in lines[0] or "CuPy" in lines[0]
    assert p.stdout == ""
    assert not (tmp_path / ".local").exists()  # nothing stored for a run that did not happen


# --- kernels and runs (CPU) ---------------------------------------------------------------
def test_kernels_lists_rungs(capsys, fake_registry):
    code, out, _ = run_cli(capsys, "kernels")
    assert code == 0
    assert "coalesced" in out and "threadIdx.x along the contiguous column" in out
    assert "tiled_t8" not in out
    code, out, _ = run_cli(capsys, "kernels", "--json", "--with-sweep")
    items = json.loads(out)
    assert [i["name"] for i in items] == ["naive", "coalesced", "tiled_t8"]
    assert items[2]["params"] == {"TILE": 8, "UNROLL": 0} and items[2]["in_ladder"] is False


def test_kernels_with_the_real_registry(capsys):
    ladders = pytest.importorskip("gemmlab.kernels.ladders", reason="the ladders come with the kernels branch")
    code, out, _ = run_cli(capsys, "kernels", "--json")
    assert code == 0
    items = json.loads(out)
    assert [i["name"] for i in items] == [r.name for r in ladders.LADDER]
    assert all(i["summary"] for i in items)


def test_runs_lists_and_shows_stored_runs(capsys, tmp_path):
    db = tmp_path / "runs.sqlite"
    with Store(db) as s:
        s.add_record(article_result())
    code, out, _ = run_cli(capsys, "runs", "--db", str(db))
    assert code == 0 and "ladder" in out and "Fake GPU" in out and "tiled16_unroll" in out
    code, out, _ = run_cli(capsys, "runs", "--db", str(db), "--json")
    assert json.loads(out)[0]["id"] == 1
    code, out, _ = run_cli(capsys, "runs", "1", "--db", str(db))
    assert code == 0
    for cell in ("Speedup vs previous", "% of cuBLAS", "4.09x", "0.91x", "1.48x", "13.8", "stored as run 1"):
        assert cell in out, cell
    code, out, _ = run_cli(capsys, "runs", "1", "--db", str(db), "--json")
    assert json.loads(out)["rows"][1]["kernel"] == "coalesced"


def test_runs_errors(capsys, tmp_path):
    code, _, err = run_cli(capsys, "runs", "--db", str(tmp_path / "none.sqlite"))
    assert code == 2 and "no such results database" in err
    assert not (tmp_path / "none.sqlite").exists()
    db = tmp_path / "r.sqlite"
    Store(db).close()
    code, _, err = run_cli(capsys, "runs", "4", "--db", str(db))
    assert code == 2 and err.strip() == f"gemmlab: error: run 4: no such run in {db} (see `gemmlab runs`)"
