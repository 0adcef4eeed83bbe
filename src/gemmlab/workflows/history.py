"""``gemmlab history``: your kernel's versions, read from the results database.

Every ``gemmlab bench FILE.cu`` of your own kernel is stored as a run of kind "user" filed under the
kernel's name; this reads them back (``Store.user_kernels``, ``Store.user_runs``, read-only: reading
never writes to the database), builds the history (``analysis.versions``) and writes the worklog page
(``report.worklog_html``). The HTML file is checked before anything is read and never replaced
without ``force``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from gemmlab.analysis.versions import History, history
from gemmlab.errors import InputError
from gemmlab.fileio import write_new
from gemmlab.store import Store, UserKernel, default_path


def _open(db: Optional[Path]) -> Store:
    """The database, read-only; one line when there is none yet."""
    path = Path(db).expanduser() if db is not None else default_path()
    if not path.exists():
        raise InputError(f"{path}: no results database yet; `gemmlab bench FILE.cu` stores each version of your "
                         "kernel there")
    return Store(path, create=False)


@dataclass(frozen=True)
class Kernels:
    db: Path
    kernels: list[UserKernel]


def kernels(db: Optional[Path]) -> Kernels:
    """The names of your kernels in the database, with their version and run counts."""
    with _open(db) as store:
        return Kernels(store.path, store.user_kernels())


@dataclass(frozen=True)
class Loaded:
    db: Path
    history: History

    def to_dict(self) -> dict:
        return {"db": str(self.db), **self.history.to_dict()}


def load(db: Optional[Path], name: str) -> Loaded:
    """The history of your kernel ``name``; InputError naming the kernels there are when it has no runs."""
    with _open(db) as store:
        records = store.user_runs(name)
        if not records:
            names = [k.name for k in store.user_kernels()]
            have = (f"it has {', '.join(names)}" if names else
                    "it holds no runs of your own kernels yet (`gemmlab bench FILE.cu` adds them)")
            raise InputError(f"kernel {name!r}: no runs of it in {store.path}; {have}")
        return Loaded(store.path, history(name, records))


def check_html(out: Path, force: bool) -> None:
    """InputError now, before anything is read, if the page could not be written to ``out``."""
    if out.is_dir():
        raise InputError(f"{out}: is a directory; expected an .html file path", option="html")
    if out.exists() and not force:
        raise InputError(f"{out}: file exists; pass --force to replace it", option="html")
    if not out.parent.exists():
        raise InputError(f"{out}: folder {out.parent} does not exist", option="html")


def write_html(loaded: Loaded, out: Path, force: bool = False, with_plot: bool = True) -> Path:
    """Write the worklog page of ``loaded`` to ``out`` (never replacing a file unless ``force``)."""
    from gemmlab.report.worklog_html import render

    check_html(out, force)
    page = render(loaded.history, source=f"{loaded.db}, runs of kind \"user\" named {loaded.history.name!r}",
                  with_plot=with_plot)
    try:
        write_new(out, page, force=force)
    except FileExistsError:
        raise InputError(f"{out}: file exists (created meanwhile); pass --force to replace it", option="html") from None
    except OSError as e:
        raise InputError(f"{out}: cannot write it ({e.strerror or e})", option="html") from None
    return out
