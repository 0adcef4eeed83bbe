"""gemmlab history [NAME]: your kernel's worklog — its versions, what each edit did, what mattered."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from gemmlab.commands.common import DbOpt, ForceOpt, JsonOpt, table_command
from gemmlab.errors import InputError
from gemmlab.output import console, err_console, print_json, print_table

HtmlOpt = Annotated[Optional[Path], typer.Option(
    "--html", metavar="FILE", help="Also write the worklog as one self-contained HTML page: the versions table, "
    "GFLOP/s per version, what mattered, each version's hot lines and source diff.")]


def history(
    name: Annotated[Optional[str], typer.Argument(
        metavar="NAME", help="Your kernel's name, as `gemmlab bench` stored it (default: list your kernels).")] = None,
    db: DbOpt = None,
    html: HtmlOpt = None,
    force: ForceOpt = False,
    json_out: JsonOpt = False,
) -> None:
    """Your own kernel's versions (one per source text you benchmarked): time, GFLOP/s, % of cuBLAS, the
    speed-up of each edit judged from the runs' samples, what the profiler showed, then the edits ranked
    by what mattered."""
    from gemmlab.workflows import history as H

    if name is None:
        if html is not None:
            raise InputError("needs a kernel NAME: the worklog is of one kernel (`gemmlab history` lists them)",
                             option="html")
        found = H.kernels(db)
        if json_out:
            print_json({"db": str(found.db), "kernels": [k.to_dict() for k in found.kernels]})
            return
        _kernels(found)
        return
    if html is not None:
        H.check_html(html, force)
    loaded = H.load(db, name)
    written = H.write_html(loaded, html, force) if html is not None else None
    if json_out:
        print_json({**loaded.to_dict(), **({"html": str(written)} if written else {})})
    else:
        _tables(loaded)
    if written is not None:
        (err_console if json_out else console).print(f"wrote {written}", highlight=False, soft_wrap=True, markup=False)


def _kernels(found) -> None:
    from gemmlab.report import worklog as W

    print_table(W.KERNEL_COLUMNS, W.kernel_rows(found.kernels), title=f"Your kernels in {found.db}",
                caption="gemmlab history NAME: one kernel's versions" if found.kernels else
                "none yet: `gemmlab bench FILE.cu` stores each version of your kernel")


def _tables(loaded) -> None:
    from gemmlab.report import worklog as W

    h = loaded.history
    print_table(W.VERSION_COLUMNS, W.version_rows(h), title=W.title(h), caption=W.VERSIONS_CAPTION)
    if h.steps:
        print_table(W.MATTERED_COLUMNS, W.mattered_table(h), title="What actually mattered", caption=W.MATTERED_CAPTION)


def register(app: typer.Typer) -> None:
    app.command("history")(table_command(history))
