"""The front door: builds the ``gemmlab`` command from the command modules. No logic lives here.

Each module in ``gemmlab.commands`` owns its commands and exposes ``register(app)``.
Errors a user can cause are ``UserError``s: printed as one line on stderr, non-zero exit.
"""

from __future__ import annotations

import importlib
import sys
from typing import NoReturn

import typer

from gemmlab.errors import UserError

# One module per command family; each defines register(app: typer.Typer).
COMMAND_MODULES = (
    "analyze",  # gemmlab analyze
    "ladder",  # gemmlab ladder / bench / sweep / kernels
    "profile",  # gemmlab profile / timeline / diff
    "calc",  # gemmlab occupancy / waves / banks
    "calc_roofline",  # gemmlab roofline / ceilings
    "report",  # gemmlab report / compare
    "runs",  # gemmlab runs: the stored runs
    "lesson",  # gemmlab lesson: the fourth seed article's experiments
    "shapes",  # gemmlab shapes: the shape map (% of cuBLAS over a grid of shapes)
    "history",  # gemmlab history: your own kernel's versions (its worklog)
)

app = typer.Typer(
    name="gemmlab",
    help="A GEMM kernel ladder, an honest benchmark harness and an Nsight Compute analyzer.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    # Help is plain text: with rich markup, "As[tid][k]" in a help string printed as "As" (rich read
    # "[tid]" and "[k]" as style tags), and the example then failed when typed.
    rich_markup_mode=None,
    context_settings={"max_content_width": 120},  # click's plain help stops at 80 columns otherwise
)

for _name in COMMAND_MODULES:
    importlib.import_module(f"gemmlab.commands.{_name}").register(app)


INTERRUPTED = 130  # 128 + SIGINT, what a shell reports for a command stopped with Ctrl-C


def main(argv: list[str] | None = None) -> None:
    """Entry point: run the app, turning UserErrors into one stderr line and an exit code.

    In ``standalone_mode=False`` click does not exit: it *returns* the code of an ``Exit`` (typer
    turns a KeyboardInterrupt inside a command into ``Exit(130)``, ``--help`` into ``Exit(0)``) and
    raises ``Abort`` (a prompt left with Ctrl-C or end of input). Both are made the process's exit
    here; an interrupted command says so in one line and exits 130.
    """
    try:
        rv = app(args=argv, standalone_mode=False)
    except UserError as e:
        print(f"gemmlab: error: {e.named(_flag(e.option, argv))}", file=sys.stderr)
        sys.exit(e.code)
    except KeyboardInterrupt:
        _interrupted()
    except SystemExit:
        raise
    except Exception as e:  # click usage errors etc. come through here in non-standalone mode
        click_exception, abort = _click_errors()
        if isinstance(e, click_exception):
            e.show()
            sys.exit(e.exit_code)
        if isinstance(e, abort):
            if _caused_by_interrupt(e):  # click's prompt turns Ctrl-C into Abort
                _interrupted()
            print("gemmlab: aborted", file=sys.stderr)
            sys.exit(1)
        raise
    code = _exit_code(rv)
    if code == INTERRUPTED:
        _interrupted()
    if code:
        sys.exit(code)


def _flag(option: str | None, argv: list[str] | None) -> str | None:
    """The flag of the running command whose parameter is ``option`` (``launch_skip`` is
    ``--launch-skip`` on ``profile``; ``grid`` is ``--preset`` on ``shapes``); ``option`` itself when
    no parameter of that command matches."""
    if option is None:
        return None
    args = sys.argv[1:] if argv is None else argv
    name = next((a for a in args if not a.startswith("-")), None)
    command = typer.main.get_command(app).commands.get(name) if name else None  # type: ignore[union-attr]
    for p in getattr(command, "params", ()):
        if p.name in (option, option + "_") and not p.hidden:
            flags = [o for o in p.opts if o.startswith("--")]
            if flags:
                return flags[0]
    return option


def _exit_code(rv: object) -> int:
    """The exit code click returned in non-standalone mode (an int from ``Exit``; a command's own
    return value, which is None for every gemmlab command, means success)."""
    if isinstance(rv, int) and not isinstance(rv, bool):
        return rv
    return 0


def _caused_by_interrupt(e: BaseException) -> bool:
    seen = set()
    cur: BaseException | None = e
    while cur is not None and id(cur) not in seen:
        if isinstance(cur, KeyboardInterrupt):
            return True
        seen.add(id(cur))
        cur = cur.__cause__ or cur.__context__
    return False


def _interrupted() -> NoReturn:
    print("gemmlab: interrupted", file=sys.stderr)
    sys.exit(INTERRUPTED)


def _click_errors() -> tuple[type, type]:
    """Click's usage-error and abort classes (typer ≥ 0.2x vendors click as typer._click)."""
    try:
        import click

        return click.exceptions.ClickException, click.exceptions.Abort
    except ImportError:
        from typer import Abort
        from typer._click.exceptions import ClickException

        return ClickException, Abort
