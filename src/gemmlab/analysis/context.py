"""What the rules see of one kernel launch: metric values by short name, ncu's rule numbers, and
helpers that turn them into ``Evidence`` with their units."""

from __future__ import annotations

import math
from typing import Optional

from gemmlab.analysis import ncu_rules
from gemmlab.analysis.evidence import Evidence
from gemmlab.profile import metrics as M
from gemmlab.profile.records import KernelLaunch


def fmt(v: Optional[float], digits: int = 3) -> str:
    """A number for a sentence: ``98.8``, ``0.043``, ``8.86e+09`` → ``8,858,370,048``."""
    if v is None:
        return "n/a"
    if isinstance(v, str):
        return v
    if math.isnan(v) or math.isinf(v):
        return "n/a"
    if v != 0 and abs(v) >= 10_000:
        return f"{v:,.0f}"
    if v == int(v):
        return f"{int(v)}"
    return f"{v:.{digits}g}" if abs(v) < 1 else f"{v:.{max(1, digits - 2)}f}".rstrip("0").rstrip(".")


def pct(fraction: Optional[float]) -> str:
    return "n/a" if fraction is None else f"{100 * fraction:.1f}%"


class Context:
    """One launch, seen through gemmlab's short metric names and ncu's rule messages."""

    def __init__(self, launch: KernelLaunch) -> None:
        self.launch = launch
        self.facts = ncu_rules.parse(launch.rules)
        self._values: dict[str, Optional[float]] = {}  # the rules ask for the same metrics many times
        self._resolved: dict[str, Optional[tuple[str, float]]] = {}
        self.memo: dict = {}  # per-launch results rules share (stall shares), keyed by the rule that made them

    def resolve(self, short: str) -> Optional[tuple[str, float]]:
        """(ncu name, value) behind a short name (``metrics.resolve``), looked up once per launch."""
        if short not in self._resolved:
            self._resolved[short] = M.resolve(self.launch, short)
        return self._resolved[short]

    def v(self, short: str) -> Optional[float]:
        """The numeric value of a short-named metric, or None when the export lacks it. A pipe's
        utilisation the export lacks comes from ncu's HighPipeUtilization rule when that rule names it
        the busiest pipe (details page, live --csv output)."""
        if short in self._values:
            return self._values[short]
        r = self.resolve(short)
        val = None if r is None else r[1]
        if val is None:
            num = self._rule_pipe(short)
            val = None if num is None else num.value
        self._values[short] = val
        return val

    def _rule_pipe(self, short: str):
        """A pipe utilisation quoted by HighPipeUtilization (by elapsed cycles, else by instructions)."""
        for quoted in (self.facts.highest_pipe, self.facts.highest_pipe_inst):
            if quoted is not None and quoted[0] == short:
                return quoted[1]
        return None

    def ev_any(self, short: str, compared_with: str, why: str) -> Evidence:
        """Evidence for ``short`` from the record, or from the ncu rule that quoted it."""
        if self.resolve(short) is None and self._rule_pipe(short) is not None:
            return self.from_rule(self._rule_pipe(short), short, "%", compared_with, why)
        return self.ev(short, compared_with, why)

    def has(self, *shorts: str) -> bool:
        return all(self.v(s) is not None for s in shorts)

    def absent(self, *shorts: str) -> list[str]:
        return [s for s in shorts if self.v(s) is None]

    def ev(self, short: str, compared_with: str, why: str) -> Evidence:
        """Evidence for a metric present in the record (raises KeyError if it is not)."""
        r = self.resolve(short)
        if r is None:
            raise KeyError(f"metric {short!r} is not in this record")
        name, value = r
        # gemmlab's unit for the quantity wins: ncu labels stall ratios "inst" though they count cycles
        unit = M.definition(short).unit or self.launch.metrics[name].unit
        return Evidence(short, name, value, unit, compared_with, why, "launch" if name.startswith(
            ("launch__", "device__")) else "counter")

    @staticmethod
    def derived(metric: str, formula: str, value: Optional[float], unit: str, compared_with: str,
                why: str) -> Evidence:
        """Evidence for a quantity gemmlab computed from counters (``formula`` names them)."""
        return Evidence(metric, formula, value, unit, compared_with, why, "derived")

    @staticmethod
    def from_rule(num: ncu_rules.RuleNumber, metric: str, unit: str, compared_with: str,
                  why: str) -> Evidence:
        return Evidence(metric, f"ncu rule {num.rule}", num.value, unit, compared_with, why, "ncu-rule")

    def names(self, *shorts: str) -> str:
        """The ncu names behind short names, for a derived quantity's formula."""
        out = []
        for s in shorts:
            r = self.resolve(s)
            out.append(r[0] if r else M.definition(s).names[0])
        return out[0] if len(out) == 1 else ", ".join(out)
