"""Captures arriving through a pipe: '-', a FIFO, /dev/stdin, <(cat f.csv) are read once.

The loader used to read the first 4 KB to check the file, then read it again from the start: a pipe
had nothing left the second time, and a good capture was refused as "not Nsight Compute CSV output".
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from conftest import NCU_H100
from conftest import run_cli as run

from gemmlab.errors import InputError, UserError
from gemmlab.profile import load as load_mod
from gemmlab.profile import ncu_rep
from gemmlab.profile.records import KernelLaunch

RAW = NCU_H100 / "gemm_ladder_raw.csv"
SRC = str(Path(__file__).resolve().parents[1] / "src")


@contextlib.contextmanager
def fifo_of(tmp_path: Path, data: bytes, name: str = "capture"):
    """A FIFO that a thread fills with ``data`` once; a reader that opens it again afterwards gets
    end of file at once, as from a consumed pipe (instead of waiting forever for a writer)."""
    path = tmp_path / name
    os.mkfifo(path)
    stop = threading.Event()

    def feed() -> None:
        try:
            with open(path, "wb") as f:
                f.write(data)
        except BrokenPipeError:  # the reader stopped after the first 4 KB
            pass
        deadline = time.monotonic() + 10
        while not stop.is_set() and time.monotonic() < deadline:
            try:
                fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
            except OSError:  # no reader now
                time.sleep(0.005)
                continue
            os.close(fd)

    t = threading.Thread(target=feed, daemon=True)
    t.start()
    try:
        yield path
    finally:
        stop.set()
        t.join(timeout=15)


def fake_stdin(monkeypatch, data: bytes) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))


def analyze_json(capsys, path) -> dict:
    code, out, err = run(capsys, "analyze", str(path), "--json")
    assert code == 0, err
    return json.loads(out)


def without_source(doc: dict, source: str) -> str:
    return json.dumps(doc, sort_keys=True).replace(json.dumps(source)[1:-1], "<SOURCE>")


def test_analyze_a_fifo_gives_the_regular_files_diagnosis(capsys, tmp_path):
    want = analyze_json(capsys, RAW)
    with fifo_of(tmp_path, RAW.read_bytes()) as fifo:
        got = analyze_json(capsys, fifo)
    assert got["source"] == str(fifo)
    assert without_source(got, str(fifo)) == without_source(want, str(RAW))


def test_analyze_dash_reads_stdin(capsys, monkeypatch):
    want = analyze_json(capsys, RAW)
    fake_stdin(monkeypatch, RAW.read_bytes())
    got = analyze_json(capsys, "-")
    assert got["source"] == "<stdin>"
    assert without_source(got, "<stdin>") == without_source(want, str(RAW))


def test_loader_names_stdin_and_reads_it_once(monkeypatch):
    fake_stdin(monkeypatch, RAW.read_bytes())
    launches = load_mod.load("-")
    assert [k.name for k in launches] == [k.name for k in load_mod.load(RAW)]
    assert sys.stdin.buffer.read() == b""  # consumed, exactly once


def test_an_empty_pipe_is_one_line_exit_2(capsys, monkeypatch):
    fake_stdin(monkeypatch, b"")
    code, out, err = run(capsys, "analyze", "-")
    assert code == 2 and out == ""
    assert err == "gemmlab: error: <stdin>: input is empty; " + load_mod.EXPECTED + "\n"


def test_a_non_capture_on_a_pipe_says_what_is_wrong(monkeypatch):
    fake_stdin(monkeypatch, b"hello\nworld\n")
    with pytest.raises(InputError, match=r"^<stdin>: not Nsight Compute CSV output"):
        load_mod.load("-")


@pytest.mark.parametrize("arg", ["/dev/stdin", "-"])
def test_a_real_process_reads_its_stdin_pipe(arg):
    env = dict(os.environ, PYTHONPATH=SRC + os.pathsep + os.environ.get("PYTHONPATH", ""), COLUMNS="160")
    p = subprocess.run([sys.executable, "-m", "gemmlab", "analyze", arg, "--json"], input=RAW.read_bytes(),
                       capture_output=True, timeout=120, env=env)
    assert p.returncode == 0, p.stderr.decode()
    doc = json.loads(p.stdout)
    assert len(doc["kernels"]) == len(load_mod.load(RAW))


def test_diff_of_a_fifo_and_a_file(capsys, tmp_path):
    code, out, err = run(capsys, "diff", str(RAW), str(RAW), "--json")
    assert code == 0, err
    want = json.loads(out)
    with fifo_of(tmp_path, RAW.read_bytes()) as fifo:
        code, out, err = run(capsys, "diff", str(fifo), str(RAW), "--json")
    assert code == 0, err
    got = json.loads(out)
    assert got["kernels"] == want["kernels"]


def test_diff_refuses_stdin_twice(capsys):
    code, _, err = run(capsys, "diff", "-", "-")
    assert code == 2 and err.startswith("gemmlab: error: diff - -: standard input can be read only once")


def test_report_diagnosis_from_a_fifo_equals_the_file(tmp_path):
    from gemmlab.workflows import report_inputs as sources

    want = sources.load_diagnoses([RAW])
    with fifo_of(tmp_path, RAW.read_bytes()) as fifo:
        got = sources.load_diagnoses([fifo])
    assert without_source(got, str(fifo)) == without_source(want, str(RAW))


def test_report_diagnosis_json_from_stdin(monkeypatch):
    from gemmlab.workflows import report_inputs as sources

    doc = {"source": "x.csv", "kernels": [{"name": "k"}]}
    fake_stdin(monkeypatch, json.dumps(doc).encode())
    assert sources.load_diagnoses(["-"])["kernels"] == [{"name": "k"}]


def test_an_ncu_rep_on_a_pipe_is_spooled_to_a_temporary_file(tmp_path, monkeypatch):
    rep = (NCU_H100 / "gemm_tiled16.ncu-rep").read_bytes()
    seen = {}

    def read_rep(path, metrics=None):
        seen["path"], seen["bytes"] = path, Path(path).read_bytes()
        return [KernelLaunch(id=0, name="k", demangled="k", source=str(path))]

    monkeypatch.setattr(ncu_rep, "read_rep", read_rep)
    with fifo_of(tmp_path, rep, "report") as fifo:
        launches = load_mod.load(fifo)
    assert seen["bytes"] == rep  # every byte, head and rest
    assert launches[0].source == str(fifo)
    assert not Path(seen["path"]).exists()  # the spooled copy is removed


def test_an_error_about_a_spooled_report_names_the_input(tmp_path, monkeypatch):
    def read_rep(path, metrics=None):
        raise UserError(f"{path}: the report is damaged")

    monkeypatch.setattr(ncu_rep, "read_rep", read_rep)
    fake_stdin(monkeypatch, ncu_rep.MAGIC + b"\x01\x02" * 3000)
    with pytest.raises(UserError) as e:
        load_mod.load("-")
    assert str(e.value) == "<stdin>: the report is damaged"
