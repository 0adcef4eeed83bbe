"""gemmlab runs [RUN_ID]: the stored runs, or one of them as its kind prints it."""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from gemmlab.commands import show
from gemmlab.commands.common import DbOpt, JsonOpt, table_command
from gemmlab.errors import InputError
from gemmlab.output import print_json, print_table


def runs(
    run_id: Annotated[Optional[int], typer.Argument(metavar="RUN_ID", help="Show this run (default: list the runs).")] = None,
    db: DbOpt = None,
    limit: Annotated[int, typer.Option("--limit", help="List at most this many runs, newest first.")] = 50,
    json_out: JsonOpt = False,
) -> None:
    """List the stored runs, or show one (its table, or its full record with --json)."""
    from gemmlab.store import Store
    from gemmlab.workflows.kinds import as_dict

    if limit < 1:
        raise InputError(f"--limit must be >= 1, got {limit}")
    with Store(db, create=False) as store:
        if run_id is None:
            summaries = store.list_runs(limit)
            if json_out:
                print_json([s.to_dict() for s in summaries])
                return
            print_table(
                ("Run", "Created (UTC)", "Kind", "GPU", "Dtype", "Results", "Kernels"),
                [(s.id, s.created_utc, s.kind, s.gpu, s.dtypes, s.n_results, s.kernels.replace(",", ", ")) for s in summaries],
                title=f"Stored runs in {store.path}",
            )
            return
        record = store.load_record(run_id)
    if json_out:
        print_json(as_dict(record))
    else:
        show.show(record)


def register(app: typer.Typer) -> None:
    app.command("runs")(table_command(runs))
