"""The collect commands of a report's cards, as people copy them.

A card shows the short ``gemmlab profile …`` line when its collection has one; otherwise its ncu
command, with a long ``--metrics`` list (gemmlab's default collection is about 4,000 characters)
replaced by ``"$GEMMLAB_METRICS"``. The list itself is printed once, at the end of the report
(``footer``), as an ``export`` line, with the ncu command behind the ``gemmlab profile`` lines;
``--verbose`` prints every card's full ncu command as well. Commands are whole lines: a renderer
prints them without wrapping (a terminal may fold a long one, but no line break is put in it).
"""

from __future__ import annotations

from typing import Optional, Sequence

from gemmlab.analysis.evidence import Diagnosis
from gemmlab.profile.command import render

LONG_METRICS = 200  # a --metrics value longer than this is named once per report
VAR = "GEMMLAB_METRICS"
_MARK = "GEMMLABMETRICSMARK{}X"  # shell-safe: render() leaves it unquoted


class Commands:
    """The long metric lists of one report, each named once (``GEMMLAB_METRICS``, ``GEMMLAB_METRICS_2``, …)."""

    def __init__(self) -> None:
        self.names: dict[str, str] = {}  # --metrics value → variable name
        self.example: Optional[tuple[int, str]] = None  # (launch id, ncu line) behind a gemmlab profile line

    def _name(self, value: str) -> str:
        if value not in self.names:
            self.names[value] = VAR if not self.names else f"{VAR}_{len(self.names) + 1}"
        return self.names[value]

    def short(self, argv: Sequence[str]) -> str:
        """The ncu command with a long ``--metrics`` value written as ``"$GEMMLAB_METRICS"``."""
        words, marks = list(argv), {}
        for i, w in enumerate(words[:-1]):
            if w == "--metrics" and len(words[i + 1]) > LONG_METRICS:
                name = self._name(words[i + 1])
                marks[_MARK.format(len(marks))] = f'"${name}"'
                words[i + 1] = _MARK.format(len(marks) - 1)
        line = render(words)
        for mark, var in marks.items():
            line = line.replace(mark, var)
        return line

    def card(self, d: Diagnosis, verbose: bool = False) -> list[tuple[str, str]]:
        """(label, command) lines for one card: the ``gemmlab profile`` line when there is one (its ncu
        command only with ``verbose``), else the ncu command."""
        out = []
        if d.collect_profile:
            out.append(("", d.collect_profile))
            ncu = self.short(d.collect_argv)
            if self.example is None:
                self.example = (d.kernel_id, ncu)
            if verbose:
                out.append(("the ncu command it runs:", ncu))
        else:
            out.append(("", self.short(d.collect_argv)))
        return out

    def footer(self, verbose: bool = False) -> list[tuple[str, str]]:
        """(text, command) lines printed once at the end of the report: the ncu command behind the
        ``gemmlab profile`` lines (one card's, for the others change ``-k`` and ``--launch-skip`` as in
        their lines) and each long metric list as an ``export`` line. Empty when nothing needs it."""
        out: list[tuple[str, str]] = []
        for value, name in self.names.items():
            out.append((f"{name}: the {value.count(',') + 1} metrics the ncu commands collect (set it first):",
                        f"export {name}={render([value])}"))
        if self.example is not None and not verbose:
            kid, line = self.example
            out.append(("The gemmlab profile lines run ncu with gemmlab's default collection; for #"
                        f"{kid} that is the command below (the other cards differ in -k, --launch-skip and -o; "
                        "--verbose prints each card's):", line))
        return out
