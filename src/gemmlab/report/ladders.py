"""Which ladder a run measured, and how the report and ``gemmlab compare`` name it.

A run holds one ladder (cuBLAS is timed once per run, with the rungs' types):

- the SGEMM ladder: FP32 A, B, C; cuBLAS SGEMM in true FP32 (TF32 off); % of the FP32 peak
  (SMs x FP32 lanes x 2 x max SM clock);
- the BF16 tensor-core ladder: bf16 A, B, FP32 accumulate, C in bf16 (or fp32); cuBLAS BF16 at its
  best (the fastest of cublasGemmEx's default and cuBLASLt's heuristic candidates); % of the dense
  BF16 tensor peak at the SM clock each row's run saw.

``run_dtypes`` reads a run's (input, output) types from its rows' ``spec.dtype`` (every row of
every run carries one), falling back to the run's ``dtype`` key.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from gemmlab.errors import InputError

# BenchSpec.dtype -> (input dtype, output dtype), the registry's names
SPEC_DTYPES = {"float32": ("fp32", "fp32"), "bf16": ("bf16", "bf16"), "bf16_fp32out": ("bf16", "fp32")}


@dataclass(frozen=True)
class Ladder:
    dtype: str  # input dtype: "fp32" or "bf16"
    out_dtype: str  # C's dtype
    name: str  # "SGEMM ladder", "BF16 tensor-core ladder"
    types: str  # what is multiplied, in words
    peak_name: str  # the compute peak "% of peak" is measured against
    peak_column: str
    reference: str  # what the cuBLAS row is
    rate_unit: str  # the unit rates are shown in
    rate_scale: float  # FLOP/s per rate_unit
    roof: str  # the compute roof of the roofline
    in_bytes: int  # bytes per element of A and B
    out_bytes: int  # bytes per element of C

    @property
    def key(self) -> str:
        """A file-name-safe name: "" for the SGEMM ladder (its anchors and plot names predate the
        second ladder), "bf16" or "bf16-c-fp32" otherwise."""
        if self.dtype == "fp32":
            return ""
        return self.dtype + ("" if self.out_dtype == self.dtype else f"-c-{self.out_dtype}")

    @property
    def title(self) -> str:
        return self.name + ("" if self.out_dtype == self.dtype or self.dtype == "fp32" else f" (C {self.out_dtype})")


def ladder_of(dtype: str, out_dtype: str | None = None) -> Ladder:
    """The ladder with inputs of ``dtype`` (and C of ``out_dtype``, default the BF16 ladder's bf16)."""
    if dtype == "fp32":
        return Ladder("fp32", "fp32", "SGEMM ladder", "FP32 A, B, C", "FP32 peak", "% of FP32 peak",
                      "cuBLAS SGEMM (true FP32, TF32 off)", "GFLOP/s", 1e9, "FP32", 4, 4)
    if dtype == "bf16":
        out = out_dtype or "bf16"
        if out not in ("bf16", "fp32"):
            raise InputError(f"output dtype {out!r}: expected bf16 or fp32")
        return Ladder("bf16", out, "BF16 tensor-core ladder", f"bf16 A, B, FP32 accumulate, C {out}",
                      "dense BF16 tensor peak", "% of BF16 peak", "cuBLAS BF16 at its best", "TFLOP/s", 1e12,
                      "dense BF16 tensor", 2, 2 if out == "bf16" else 4)
    raise InputError(f"dtype {dtype!r}: expected fp32 or bf16")


def _spec_dtype(row: Any) -> str | None:
    spec = row.get("spec") if isinstance(row, Mapping) else None
    v = spec.get("dtype") if isinstance(spec, Mapping) else None
    return v if isinstance(v, str) else None


def run_dtypes(d: Mapping[str, Any], rows: Sequence[Any], source: str) -> tuple[str, str]:
    """(input dtype, output dtype) of one run; one line naming ``source`` when its rows disagree."""
    found = sorted({v for v in (_spec_dtype(r) for r in rows) if v is not None})
    unknown = [v for v in found if v not in SPEC_DTYPES]
    if unknown:
        raise InputError(f"{source}: unknown dtype {unknown[0]!r} in a result row; expected one of {', '.join(SPEC_DTYPES)}")
    if len(found) > 1:
        raise InputError(f"{source}: its rows mix dtypes {', '.join(found)}; a run measures one ladder")
    if found:
        return SPEC_DTYPES[found[0]]
    dtype = d.get("dtype") or "fp32"
    out = (d.get("options") or {}).get("out_dtype") if isinstance(d.get("options"), Mapping) else None
    if dtype not in ("fp32", "bf16"):
        raise InputError(f"{source}: dtype {dtype!r}; expected fp32 or bf16")
    return dtype, out or dtype


def dtypes_of_spec(spec_dtypes: str) -> tuple[str, str] | None:
    """(input, output) dtype of a stored run from its rows' comma-joined spec dtypes; None when they
    are mixed or unknown."""
    found = {SPEC_DTYPES.get(v) for v in spec_dtypes.split(",") if v}
    return found.pop() if len(found) == 1 else None
