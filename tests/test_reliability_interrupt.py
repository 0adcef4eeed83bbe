"""Ctrl-C and click's returned exit codes reach the process exit status (cli.main)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import typer
from conftest import NCU_H100
from conftest import run_cli as run

RAW = str(NCU_H100 / "gemm_ladder_raw.csv")
SRC = str(Path(__file__).resolve().parents[1] / "src")


def _raise(exc):
    def fake(*args, **kwargs):
        raise exc

    return fake


def test_keyboard_interrupt_in_a_command_exits_130_with_one_line(capsys, monkeypatch):
    monkeypatch.setattr("gemmlab.commands.analyze.load", _raise(KeyboardInterrupt()))
    code, out, err = run(capsys, "analyze", RAW)
    assert code == 130
    assert err == "gemmlab: interrupted\n" and out == ""


def test_main_raises_system_exit_130(capsys, monkeypatch):
    from gemmlab.cli import main

    monkeypatch.setattr("gemmlab.commands.analyze.load", _raise(KeyboardInterrupt()))
    with pytest.raises(SystemExit) as e:
        main(["analyze", RAW])
    assert e.value.code == 130
    assert capsys.readouterr().err == "gemmlab: interrupted\n"


def test_ctrl_c_at_a_prompt_is_an_interrupt_too(capsys, monkeypatch):
    def prompt_interrupted(*args, **kwargs):
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt:
            raise typer.Abort() from None  # what click's prompt does

    monkeypatch.setattr("gemmlab.commands.analyze.load", prompt_interrupted)
    code, _, err = run(capsys, "analyze", RAW)
    assert code == 130 and err == "gemmlab: interrupted\n"


def test_an_exit_code_click_returns_becomes_the_process_exit_code(capsys, monkeypatch):
    monkeypatch.setattr("gemmlab.commands.analyze.load", _raise(typer.Exit(4)))
    code, _, err = run(capsys, "analyze", RAW)
    assert code == 4 and err == ""


def test_help_still_exits_0(capsys):
    code, out, _ = run(capsys, "analyze", "--help")
    assert code == 0 and "Usage" in out


def test_sigint_to_a_real_process_exits_130():
    # The loader sends SIGINT to its own process, as a Ctrl-C in the middle of the work would.
    # The child restores Python's own SIGINT handler first: started from a background job of a
    # non-interactive shell it inherits SIGINT ignored (and Python then installs none), which a
    # user's foreground Ctrl-C never meets.
    prog = (
        "import os, signal\n"
        "signal.signal(signal.SIGINT, signal.default_int_handler)\n"
        "import gemmlab.commands.analyze as a\n"
        "def load(*args, **kw):\n"
        "    os.kill(os.getpid(), signal.SIGINT)\n"
        "    import time; time.sleep(5)\n"
        "a.load = load\n"
        "from gemmlab.cli import main\n"
        f"main(['analyze', {RAW!r}])\n"
    )
    env = dict(os.environ, PYTHONPATH=SRC + os.pathsep + os.environ.get("PYTHONPATH", ""))
    p = subprocess.run([sys.executable, "-c", prog], capture_output=True, text=True, timeout=60, env=env)
    assert p.returncode == 130, p.stderr
    assert p.stderr == "gemmlab: interrupted\n"
    assert signal.SIGINT == 2  # the 130 is 128 + SIGINT
