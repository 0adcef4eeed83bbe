"""The analyzer's verdicts as one table, a row per kernel launch: what ``analyze --csv`` and
``profile --csv`` print (the cards stay on the terminal; ``--json`` has everything)."""

from __future__ import annotations

from typing import Sequence

from gemmlab.analysis.evidence import Diagnosis
from gemmlab.analysis.kernel_names import identity

# "kernel": the function name as ncu prints it; "identity": its short form (the op or functor)
COLUMNS = ("id", "kernel", "identity", "library", "primary category", "confidence", "at limit", "impact", "summary",
           "missing evidence", "collect command")


def rows(diagnoses: Sequence[Diagnosis]) -> list[tuple[str, ...]]:
    out = []
    for d in diagnoses:
        p = d.primary
        out.append((str(d.kernel_id), d.name, identity(d.demangled, d.name), d.library or "", p.category.value,
                    p.confidence.value, "yes" if p.at_limit else "no", f"{p.impact:.4f}", p.summary,
                    ";".join(m.metric for m in d.missing_evidence), d.collect_command))
    return out
