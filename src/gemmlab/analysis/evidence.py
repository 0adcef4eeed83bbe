"""The analyzer's result objects: evidence, findings, the per-kernel diagnosis, and their JSON form.

``Diagnosis.to_dict()`` is the documented JSON schema (``docs/analyzer.md``); keys may be added in
later schema versions, never renamed or removed without bumping ``SCHEMA_VERSION``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Optional, Union

from gemmlab.analysis.vocabulary import Category

SCHEMA_VERSION = 1


class Confidence(str, Enum):
    HIGH = "high"
    MEDIUM = "medium"
    LOW = "low"

    def __str__(self) -> str:
        return self.value

    @property
    def rank(self) -> int:
        return {"low": 0, "medium": 1, "high": 2}[self.value]

    def cap(self, ceiling: "Confidence") -> "Confidence":
        """The lower of this confidence and ``ceiling``."""
        return self if self.rank <= ceiling.rank else ceiling


def lowest(*levels: Confidence) -> Confidence:
    return min(levels, key=lambda c: c.rank)


def _num(v: Any) -> Any:
    """Numbers as plain floats/ints for JSON; NaN/inf become None (strict JSON)."""
    if isinstance(v, bool):
        return v
    if isinstance(v, float):
        if math.isnan(v) or math.isinf(v):
            return None
        return int(v) if v.is_integer() and abs(v) < 2**53 else v
    return v


@dataclass(frozen=True)
class Evidence:
    """One observation a finding rests on."""

    metric: str  # gemmlab short name, a derived quantity name, or "ncu rule <Identifier>"
    ncu_name: str  # the raw ncu metric name(s) or rule identifier it came from
    value: Union[float, str, None]
    unit: str
    compared_with: str  # the threshold, ideal or peak it was held against
    why: str  # why that comparison matters for this finding
    source: str = "counter"  # counter | derived | ncu-rule | launch

    def to_dict(self) -> dict[str, Any]:
        return {
            "metric": self.metric,
            "ncu_name": self.ncu_name,
            "value": _num(self.value),
            "unit": self.unit,
            "compared_with": self.compared_with,
            "why": self.why,
            "source": self.source,
        }


@dataclass(frozen=True)
class LadderStep:
    """For GEMM kernels: the next rung of the optimisation ladder the evidence points to."""

    rung: str  # one of gemmlab.analysis.gemm.RUNGS or gemmlab.analysis.tc_ladder.RUNGS
    action: str  # what to change
    because: str  # which finding asks for it

    def to_dict(self) -> dict[str, Any]:
        return {"rung": self.rung, "action": self.action, "because": self.because}


@dataclass
class Finding:
    """One problem (or limit) of one kernel, with the evidence for it and what to do."""

    category: Category
    summary: str
    confidence: Confidence
    impact: float  # estimated fraction of the kernel's time recoverable by fixing it (0..1)
    impact_basis: str  # how ``impact`` was estimated
    evidence: list[Evidence] = field(default_factory=list)
    recommendations: list[str] = field(default_factory=list)
    at_limit: bool = False  # the unit involved runs near peak doing necessary work
    ncu_estimate: Optional[float] = None  # Nsight Compute's own estimated speedup, percent
    ncu_rule: str = ""  # the ncu rule that gave ncu_estimate
    ladder: Optional[LadderStep] = None
    candidates: list[str] = field(default_factory=list)  # for inconclusive: what it could be

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "category": self.category.value,
            "confidence": self.confidence.value,
            "summary": self.summary,
            "at_limit": self.at_limit,
            "impact": _num(round(self.impact, 4)),
            "impact_basis": self.impact_basis,
            "evidence": [e.to_dict() for e in self.evidence],
            "recommendations": list(self.recommendations),
            "ncu_estimated_speedup_pct": _num(self.ncu_estimate),
            "ncu_rule": self.ncu_rule or None,
        }
        if self.ladder is not None:
            d["ladder"] = self.ladder.to_dict()
        if self.candidates:
            d["candidates"] = list(self.candidates)
        return d


@dataclass(frozen=True)
class MissingEvidence:
    """A metric that would confirm or change the verdict, and how to collect it."""

    metric: str  # short name
    ncu_names: tuple[str, ...]
    section: str  # ncu --section that collects it ("" when only --metrics will)
    why: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "metric": self.metric,
            "ncu_names": list(self.ncu_names),
            "section": self.section or None,
            "why": self.why,
        }


@dataclass
class Diagnosis:
    """The analyzer's verdict on one kernel launch. Never averaged over kernels."""

    kernel_id: int
    name: str
    demangled: str
    source: str
    format: str
    is_gemm: bool
    triage: dict[str, Any]
    primary: Finding
    findings: list[Finding]  # secondary findings, ranked by impact (the primary excluded)
    missing_evidence: list[MissingEvidence]
    collect_command: str
    collect_argv: list[str]
    collect_purpose: str  # "missing-evidence" | "re-measure"
    collect_note: str
    recommendations: list[str]
    ladder: Optional[LadderStep] = None
    collect_profile: str = ""  # the same collection through ``gemmlab profile`` ("" when it has none)
    library: Optional[str] = None  # whose kernel it is (cuBLAS, cuDNN, PyTorch (ATen), ...): advice is for its caller

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.kernel_id,
            "name": self.name,
            "demangled": self.demangled,
            "source": self.source,
            "format": self.format,
            "is_gemm": self.is_gemm,
            "library": self.library,
            "triage": {k: _num(v) for k, v in self.triage.items()},
            "primary": self.primary.to_dict(),
            "findings": [f.to_dict() for f in self.findings],
            "missing_evidence": [m.to_dict() for m in self.missing_evidence],
            "collect_command": self.collect_command,
            "collect_argv": list(self.collect_argv),
            "collect_purpose": self.collect_purpose,
            "collect_note": self.collect_note,
            "collect_profile": self.collect_profile or None,
            "recommendations": list(self.recommendations),
            "ladder": self.ladder.to_dict() if self.ladder else None,
        }


def report_dict(source: str, diagnoses: list[Diagnosis], note: str = "",
                overview: Optional[dict[str, Any]] = None) -> dict[str, Any]:
    """The top-level JSON document for ``gemmlab analyze --json``; ``overview`` (``Overview.to_dict()``,
    the launches grouped and ranked by GPU time) leads it when given."""
    d: dict[str, Any] = {"schema_version": SCHEMA_VERSION, "source": source}
    if overview is not None:
        d["overview"] = overview
    d["kernels"] = [x.to_dict() for x in diagnoses]
    if note:
        d["note"] = note
    return d
