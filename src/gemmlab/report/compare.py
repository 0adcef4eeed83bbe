"""Two runs side by side (usually two GPUs): which change on the ladder helped where.

The fourth seed article runs the same kernels on a Pascal and an Ampere card and finds that
shared-memory tiling gave 2.35x on one and 0.90x on the other. ``compare(a, b)`` makes that table
for any two runs: per kernel the time on each GPU, the speedup over the previous rung on each,
and for every step of the ladder whether it helped, hurt, or stayed within the noise on each GPU.

Whether a step made the kernel faster, slower or stayed the same within noise on each GPU is
``bench.stats.effect``'s verdict on the two rungs' raw samples - the one judgement every part of
gemmlab uses.

Both runs must have measured the same ladder (``gemmlab.report.ladders``): an SGEMM run and a BF16
tensor-core run share no rung and their cuBLAS rows are different GEMMs, so ``compare`` refuses the
pair in one line; two BF16 runs (two GPUs, two dates) compare like two SGEMM runs, and where the
BF16 reference is cuBLAS at its best, each side's winning candidate is named.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from gemmlab.bench.results import Row
from gemmlab.bench.stats import FASTER, SLOWER, Effect, effect
from gemmlab.errors import InputError
from gemmlab.report.ladders import Ladder, ladder_of
from gemmlab.report.model import RunView


@dataclass(frozen=True)
class KernelRow:
    name: str
    time_a_ms: float
    time_b_ms: float
    speedup_a: float | None  # vs the previous rung on GPU A; None for the first rung
    speedup_b: float | None
    pct_a: float | None  # % of cuBLAS on each GPU (None without a reference)
    pct_b: float | None
    reference: bool = False

    @property
    def b_vs_a(self) -> float:
        """How many times faster this kernel runs on B than on A."""
        return self.time_a_ms / self.time_b_ms

    def to_dict(self) -> dict:
        return {
            "kernel": self.name,
            "reference": self.reference,
            "time_a_ms": self.time_a_ms,
            "time_b_ms": self.time_b_ms,
            "speedup_vs_previous_a": self.speedup_a,
            "speedup_vs_previous_b": self.speedup_b,
            "pct_of_cublas_a": self.pct_a,
            "pct_of_cublas_b": self.pct_b,
            "b_vs_a": self.b_vs_a,
        }


@dataclass(frozen=True)
class Step:
    """One rung-to-rung change and its effect on each GPU."""

    previous: str
    kernel: str
    change_a: Effect
    change_b: Effect

    @property
    def speedup_a(self) -> float:
        return self.change_a.speedup

    @property
    def speedup_b(self) -> float:
        return self.change_b.speedup

    @property
    def effect_a(self) -> str:
        return self.change_a.verdict

    @property
    def effect_b(self) -> str:
        return self.change_b.verdict

    @property
    def noise_checked(self) -> bool:
        """Both GPUs had raw samples for both kernels."""
        return self.change_a.basis == "samples" and self.change_b.basis == "samples"

    @property
    def verdict(self) -> str:
        """One phrase: where the change helped."""
        a, b = self.effect_a, self.effect_b
        if a == b:
            return {FASTER: "helped on both", SLOWER: "hurt on both"}.get(a, "same on both")
        if a == FASTER:
            return "helped on A only"
        if b == FASTER:
            return "helped on B only"
        return f"A: {a}, B: {b}"

    def to_dict(self) -> dict:
        return {
            "previous": self.previous,
            "kernel": self.kernel,
            "speedup_a": self.speedup_a,
            "speedup_b": self.speedup_b,
            "effect_a": self.effect_a,
            "effect_b": self.effect_b,
            "noise_checked": self.noise_checked,
            "verdict": self.verdict,
            "change_a": self.change_a.to_dict(),
            "change_b": self.change_b.to_dict(),
        }


@dataclass(frozen=True)
class ShapeComparison:
    shape: tuple[int, int, int]
    rows: tuple[KernelRow, ...]
    steps: tuple[Step, ...]
    reference_a: str = ""  # what the cuBLAS row ran on each side (the BF16 best-of winner), when recorded
    reference_b: str = ""

    def to_dict(self) -> dict:
        M, N, K = self.shape
        return {"M": M, "N": N, "K": K, "kernels": [r.to_dict() for r in self.rows],
                "steps": [s.to_dict() for s in self.steps], "reference_a": self.reference_a,
                "reference_b": self.reference_b}


@dataclass(frozen=True)
class Comparison:
    label_a: str
    label_b: str
    shapes: tuple[ShapeComparison, ...]
    only_a: tuple[str, ...]  # "name at M,N,K" measured on A but not on B
    only_b: tuple[str, ...]
    ladder: Ladder = ladder_of("fp32")  # the one ladder both runs measured

    def lines(self) -> list[str]:
        """Each step as one sentence: "gemm_tiled16 (vs gemm_coalesced): 2.35x on A, 0.90x on B"."""
        out = []
        for sc in self.shapes:
            for s in sc.steps:
                note = "" if s.noise_checked else " [no samples: noise not checked]"
                out.append(
                    f"{s.kernel} (vs {s.previous}): {s.speedup_a:.2f}x on {self.label_a}, "
                    f"{s.speedup_b:.2f}x on {self.label_b}: {s.verdict}{note}"
                )
        return out

    def to_dict(self) -> dict:
        return {
            "a": self.label_a,
            "b": self.label_b,
            "ladder": self.ladder.title,
            "dtype": self.ladder.dtype,
            "out_dtype": self.ladder.out_dtype,
            "shapes": [s.to_dict() for s in self.shapes],
            "only_in_a": list(self.only_a),
            "only_in_b": list(self.only_b),
            "summary": self.lines(),
        }


def _labels(a: RunView, b: RunView) -> tuple[str, str]:
    la, lb = a.label, b.label
    if la == lb:  # the same GPU twice (before/after a driver update, say): keep them apart
        la, lb = f"{la} [A]", f"{lb} [B]"
    return la, lb


def _at(name: str, shape: tuple[int, int, int]) -> str:
    return f"{name} at {shape[0]},{shape[1]},{shape[2]}"


def _winner(ref: Row | None) -> str:
    """The candidate a best-of cuBLAS row ran ("" for the SGEMM reference, which has one)."""
    if ref is None:
        return ""
    return str(ref.launched.get("winner") or "")


def same_ladder(a: RunView, b: RunView) -> None:
    """One line when the two runs measured different ladders: their rungs, cuBLAS rows and speedup
    chains are not the same quantities (SGEMM vs tensor cores, or C in bf16 vs fp32)."""
    la, lb = a.ladder_kind, b.ladder_kind
    if la != lb:
        raise InputError(
            f"RUN_A ({a.source or a.label}) is the {la.title} ({la.types}) and RUN_B ({b.source or b.label}) the "
            f"{lb.title} ({lb.types}); compare two runs of one ladder rung by rung (pick them with --run-a/--run-b)"
        )


def compare(a: RunView, b: RunView) -> Comparison:
    """Kernels measured in both runs at the same M,N,K, in run A's ladder order; both runs must have
    measured the same ladder."""
    same_ladder(a, b)
    label_a, label_b = _labels(a, b)
    keys_a = {(r.name, r.shape) for r in a.results}
    keys_b = {(r.name, r.shape) for r in b.results}
    only_a = tuple(_at(n, s) for n, s in sorted(keys_a - keys_b))
    only_b = tuple(_at(n, s) for n, s in sorted(keys_b - keys_a))
    shapes = []
    for shape in a.shapes:
        if shape not in b.shapes:
            continue
        by_b = {r.name: r for r in b.results if r.shape == shape}
        ladder_a = [r for r in a.ladder(shape) if r.name in by_b and not by_b[r.name].reference]
        ladder_b = [by_b[r.name] for r in ladder_a]
        rows = []
        steps = []
        for i, (ra, rb) in enumerate(zip(ladder_a, ladder_b)):
            sa = sb = None
            if i > 0:
                pa, pb = ladder_a[i - 1], ladder_b[i - 1]
                step = Step(pa.name, ra.name, effect(pa.measurement, ra.measurement),
                            effect(pb.measurement, rb.measurement))
                sa, sb = step.speedup_a, step.speedup_b
                steps.append(step)
            rows.append(KernelRow(ra.name, ra.median_s * 1e3, rb.median_s * 1e3, sa, sb, a.pct_of_reference(ra), b.pct_of_reference(rb)))
        ref_a, ref_b = a.reference(shape), b.reference(shape)
        if ref_a is not None and ref_b is not None:
            rows.append(KernelRow(ref_a.name if ref_a.name == ref_b.name else f"{ref_a.name} / {ref_b.name}",
                                  ref_a.median_s * 1e3, ref_b.median_s * 1e3, None, None, 100.0, 100.0, reference=True))
        if rows:
            shapes.append(ShapeComparison(shape, tuple(rows), tuple(steps), _winner(ref_a), _winner(ref_b)))
    if not shapes:
        raise InputError(
            f"{a.source or label_a} and {b.source or label_b} share no kernel at the same M,N,K; "
            "compare runs of the same ladder at the same size"
        )
    return Comparison(label_a, label_b, tuple(shapes), only_a, only_b, a.ladder_kind)


def table_rows(sc: ShapeComparison) -> list[list[Any]]:
    """Rows for the CLI table (COLUMNS order), numbers formatted once here."""
    def x(v: float | None) -> str:
        return "–" if v is None else f"{v:.2f}x"

    def pct(v: float | None) -> str:
        return "–" if v is None else f"{v:.1f}%"

    return [
        [r.name, f"{r.time_a_ms:,.3f}", "reference" if r.reference else x(r.speedup_a), pct(r.pct_a),
         f"{r.time_b_ms:,.3f}", "reference" if r.reference else x(r.speedup_b), pct(r.pct_b), x(r.b_vs_a)]
        for r in sc.rows
    ]


COLUMNS = ("Kernel", "A time (ms)", "A vs previous", "A % of cuBLAS", "B time (ms)", "B vs previous",
           "B % of cuBLAS", "B speed vs A")
