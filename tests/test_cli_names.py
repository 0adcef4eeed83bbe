"""One meaning per option name, one name per concept: walks gemmlab's command tree.

A name used by several commands must be declared in ``VOCABULARY`` with its one meaning, and is
then checked to be the same kind of option everywhere (a switch, a number, a text/path). A former
name stays accepted but hidden, with a warning, and only as ``FORMER`` lists it. Every command
that prints a table has ``--json`` and ``--csv``; help prints no ``<bool>`` and prints brackets as
written; the flags error messages name exist.
"""

from __future__ import annotations

import ast
import csv
import io
import json
import re
from collections import defaultdict
from pathlib import Path

import pytest
import typer
from conftest import run_cli

from gemmlab.cli import app

SRC = Path(__file__).resolve().parents[1] / "src" / "gemmlab"
COMMANDS = typer.main.get_command(app).commands

# Every option name more than one command uses, and what it means in all of them.
VOCABULARY = {
    "--arch": "an SM architecture (sm_90)",
    "--block": "the thread block's shape or size",
    "--ceilings": "where the roofline ceilings come from",
    "--csv": "print the tables as CSV",
    "--db": "the results database",
    "--declare": "a declaration key of your own .cu kernel (KEY=VALUE)",
    "--dtype": "which ladder (fp32, bf16, fp8)",
    "--force": "replace an existing output file",
    "--from-capture": "an Nsight Compute capture to read launches from",
    "--gpu": "a GPU model, by spec key or device name",
    "--json": "print JSON instead of tables",
    "--kernel": "a regular expression on kernel names",
    "-k": "a regular expression on kernel names",
    "--lesson": "which lesson's runs",
    "--ncu": "the ncu executable",
    "--no-l2-flush": "do not flush L2 between timed runs",
    "--no-store": "do not append the run to the results database",
    "--out": "the file the command writes",
    "--profile": "also profile what was timed with ncu",
    "--regs": "registers per thread",
    "--rep-ms": "measurement budget per kernel",
    "--repeats": "timed runs per measurement",
    "--rung": "a ladder rung (by name)",
    "--script": "a Python script to run",
    "--seed": "seed of the random inputs",
    "--shape": "a GEMM shape M,N,K",
    "--size": "a square problem size (M = N = K, or a lesson's n)",
    "--smem": "shared memory per block",
    "--sms": "the number of SMs of the GPU to compute for",
    "--store": "the ceilings store",
    "--threads": "threads per block",
    "--timeout": "seconds before the profiled program is stopped",
    "--top": "how many of the ranked items are shown in full",
    "--warmup-ms": "warm-up budget per kernel",
}
# Former names, still accepted (hidden, with a warning): (command, former) -> current.
FORMER = {
    ("ladder", "--rungs"): "--rung",
    ("kernels", "--sweep"): "--with-sweep",
    ("lesson", "--sweep"): "--points",
    ("shapes", "--grid"): "--preset",
    ("roofline", "--gemm"): "--shape",
    ("ceilings", "--n"): "--size",
    ("ceilings", "--runs"): "--repeats",
    ("profile", "--output"): "--out",
    ("profile", "--warmup"): "--warmup-launches",
}
# Commands that print no table (report writes files).
NO_TABLE = {"report"}
# Flags of other tools that error messages may name.
OTHER_TOOLS = {"--format", "--report", "--section", "--set", "--metrics", "--csv"}


def options(command: str, *, hidden: bool = False):
    for p in COMMANDS[command].params:
        if type(p).__name__.endswith("Argument") or bool(p.hidden) != hidden:
            continue
        yield p, [o for o in (*p.opts, *p.secondary_opts) if o.startswith("-")]


def kind(p) -> str:
    if p.is_flag:
        return "switch"
    t = p.type_descriptor.annotation
    t = getattr(t, "__args__", (t,))[0] if getattr(t, "__origin__", None) is list else t
    return {int: "integer", float: "number"}.get(t, "text")  # str and Path: both a text on the command line


def test_a_name_used_twice_is_declared_and_means_one_kind_of_value():
    used: dict[str, set[str]] = defaultdict(set)
    kinds: dict[str, set[str]] = defaultdict(set)
    for command in COMMANDS:
        for p, names in options(command):
            for name in names:
                used[name].add(command)
                kinds[name].add(kind(p))
    shared = {n for n, cs in used.items() if len(cs) > 1}
    assert shared - set(VOCABULARY) == set(), "declare the meaning of each newly shared name in VOCABULARY"
    assert {n: k for n, k in kinds.items() if len(k) > 1} == {}
    assert set(VOCABULARY) - shared == set(), "a VOCABULARY name no longer shared: remove it"


def test_former_names_are_hidden_aliases_only():
    hidden = {(c, n) for c in COMMANDS for _, names in options(c, hidden=True) for n in names}
    assert hidden == set(FORMER)
    visible = {n for c in COMMANDS for _, names in options(c) for n in names}
    for (command, former), current in FORMER.items():
        assert current in {n for _, names in options(command) for n in names}, (command, current)
        assert former not in {n for _, names in options(command) for n in names}
    assert {"--rungs", "--runs", "--output", "--warmup", "--n"} & visible == set()


def test_a_former_name_still_works_and_says_the_new_one(capsys):
    code, out, err = run_cli(capsys, "kernels", "--sweep", "--json")
    assert code == 0 and "--sweep is now --with-sweep" in err
    assert len(json.loads(out)) > len(json.loads(run_cli(capsys, "kernels", "--json")[1]))
    code, _, err = run_cli(capsys, "kernels", "--sweep", "--with-sweep")
    assert code == 2 and "--sweep is the former name of --with-sweep" in err


@pytest.mark.parametrize("command", sorted(set(COMMANDS) - NO_TABLE))
def test_every_table_printing_command_has_json_and_csv(command):
    names = {n: p for p, ns in options(command) for n in ns}
    assert "--json" in names and "--csv" in names
    assert names["--csv"].is_flag and names["--json"].is_flag


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_help_shows_no_bool_metavar_and_keeps_brackets(capsys, command):
    code, out, _ = run_cli(capsys, command, "--help")
    assert code == 0 and "<bool>" not in out
    if command == "banks":
        assert "As[tid][k]" in out


def test_csv_prints_the_cells_the_table_shows(capsys):
    code, out, err = run_cli(capsys, "occupancy", "--arch", "sm_90", "--threads", "256", "--regs", "64", "--csv")
    assert code == 0, err
    rows = list(csv.reader(io.StringIO(out)))
    assert rows[0][:2] == ["limit", "blocks/SM"] and any(r[0].startswith("registers") and r[1] == "4" for r in rows)
    assert "cut registers" in err  # the advice is not CSV: it goes to stderr
    code, out, err = run_cli(capsys, "analyze", "--csv")
    assert code == 0, err
    blocks = out.split("\n\n")
    assert [b.splitlines()[0] for b in blocks] == ["# Kernels ranked by total GPU time", "# Diagnosis per launch"]
    per_launch = list(csv.DictReader(io.StringIO(blocks[1].split("\n", 1)[1])))
    assert len(per_launch) == 5 and {r["confidence"] for r in per_launch} <= {"high", "medium", "low"}
    code, _, err = run_cli(capsys, "runs", "--json", "--csv")
    assert code == 2 and "choose one output format" in err


def test_error_messages_name_flags_that_exist():
    visible = {n for c in COMMANDS for _, names in options(c) for n in names}
    unknown = []
    for path in SRC.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call):
                for part in ast.walk(node.exc):
                    if isinstance(part, ast.JoinedStr):  # f"--{name}": a flag made up from a field name
                        for left, right in zip(part.values, part.values[1:]):
                            if isinstance(left, ast.Constant) and str(left.value).endswith("--") \
                                    and isinstance(right, ast.FormattedValue):
                                unknown.append(f"{path.relative_to(SRC)}:{node.lineno} a flag built from a name")
                    if isinstance(part, ast.Constant) and isinstance(part.value, str):
                        for flag in re.findall(r"(?<![\w-])--[a-z][a-z0-9-]*", part.value):
                            if flag not in visible | OTHER_TOOLS:
                                unknown.append(f"{path.relative_to(SRC)}:{node.lineno} {flag}")
    assert unknown == []


@pytest.mark.parametrize("argv, line", [
    (["shapes", "--preset", "nope", "--list"], "gemmlab: error: --preset 'nope': unknown shape grid"),
    (["profile", "coalesced", "--warmup-launches", "-1", "--dry-run"], "gemmlab: error: --warmup-launches -1: expected 0"),
    (["banks", "tid", "--bytes", "3"], "gemmlab: error: --bytes 3: element size must be one of"),
    (["analyze", "--example", "-k", "("], "gemmlab: error: --kernel '(': not a valid regular expression"),
])
def test_library_errors_name_the_flag_of_the_command_that_ran(capsys, argv, line):
    """The library names the parameter (``grid``, ``warmup``); the CLI shows the running command's flag."""
    code, _, err = run_cli(capsys, *argv)
    assert code == 2 and err.startswith(line), err
