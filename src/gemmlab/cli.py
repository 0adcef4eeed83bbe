"""The front door: builds the ``gemmlab`` command from the command modules. No logic lives here.

Each module in ``gemmlab.commands`` owns its commands and exposes ``register(app)``.
Errors a user can cause are ``UserError``s: printed as one line on stderr, non-zero exit.
"""

from __future__ import annotations

import importlib
import sys

import typer

from gemmlab.errors import UserError

# One module per command family; each defines register(app: typer.Typer).
COMMAND_MODULES = (
    "analyze",  # gemmlab analyze
    "ladder",  # gemmlab ladder / bench / sweep / kernels
    "profile",  # gemmlab profile / timeline / diff
    "calc",  # gemmlab occupancy / waves / banks / roofline / ceilings
    "report",  # gemmlab report / compare
    "runs",  # gemmlab runs: the stored runs
    "lesson",  # gemmlab lesson: the fourth seed article's experiments
    "shapes",  # gemmlab shapes: the shape map (% of cuBLAS over a grid of shapes)
)

app = typer.Typer(
    name="gemmlab",
    help="A GEMM kernel ladder, an honest benchmark harness and an Nsight Compute analyzer.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

for _name in COMMAND_MODULES:
    importlib.import_module(f"gemmlab.commands.{_name}").register(app)


def main(argv: list[str] | None = None) -> None:
    """Entry point: run the app, turning UserErrors into one stderr line and an exit code."""
    try:
        app(args=argv, standalone_mode=False)
    except UserError as e:
        print(f"gemmlab: error: {e.message}", file=sys.stderr)
        sys.exit(e.code)
    except KeyboardInterrupt:
        print("gemmlab: interrupted", file=sys.stderr)
        sys.exit(130)
    except SystemExit:
        raise
    except Exception as e:  # click usage errors etc. come through here in non-standalone mode
        click_exception, abort = _click_errors()
        if isinstance(e, click_exception):
            e.show()
            sys.exit(e.exit_code)
        if isinstance(e, abort):
            print("gemmlab: aborted", file=sys.stderr)
            sys.exit(1)
        raise


def _click_errors() -> tuple[type, type]:
    """Click's usage-error and abort classes (typer ≥ 0.2x vendors click as typer._click)."""
    try:
        import click

        return click.exceptions.ClickException, click.exceptions.Abort
    except ImportError:
        from typer import Abort
        from typer._click.exceptions import ClickException

        return ClickException, Abort
