"""Rule families. Each module looks at one family of causes and returns an ``Outcome``:

* ``CATEGORIES`` — the categories it can conclude;
* ``NEEDS`` — short metric name → why it is needed: the metrics without which the family cannot
  decide (reported as missing evidence, with the ncu section that collects them);
* ``evaluate(ctx, triage) -> Outcome`` — findings with evidence, impact and confidence, and whether
  the family could decide at all.

Every threshold carries a comment with its hardware reason or the NVIDIA rule it follows.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from gemmlab.analysis.evidence import Finding
from gemmlab.analysis.vocabulary import Category


@dataclass
class Outcome:
    family: str
    categories: tuple[Category, ...]
    evaluated: bool  # False: the metrics that decide this family are missing
    findings: list[Finding] = field(default_factory=list)
    needs: dict[str, str] = field(default_factory=dict)  # missing decisive metrics → why
