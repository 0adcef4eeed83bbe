"""Which ladder a run measured, and how the report and ``gemmlab compare`` name it.

A run holds one ladder (cuBLAS is timed once per run, with the rungs' types):

- the SGEMM ladder: FP32 A, B, C; cuBLAS SGEMM in true FP32 (TF32 off); % of the FP32 peak
  (SMs x FP32 lanes x 2 x max SM clock);
- the BF16 tensor-core ladder: bf16 A, B, FP32 accumulate, C in bf16 (or fp32); cuBLAS BF16 at its
  best (the fastest of cublasGemmEx's default and cuBLASLt's heuristic candidates); % of the dense
  BF16 tensor peak at the SM clock each row's run saw;
- the FP8 ladder: e4m3 A (M x K) and B (given N x K, "TN"), the tensor cores' accumulator, C in
  bf16; cuBLASLt FP8 at its best; % of the dense FP8 tensor peak at each row's clock.

A run's types are its rows' (``report.model.run_types``).
"""

from __future__ import annotations

from dataclasses import dataclass

from gemmlab.errors import InputError


@dataclass(frozen=True)
class Ladder:
    dtype: str  # input dtype: "fp32", "bf16" or "fp8"
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
    if dtype == "fp8":
        out = out_dtype or "bf16"
        if out != "bf16":
            raise InputError(f"output dtype {out!r}: the FP8 ladder writes bf16")
        return Ladder("fp8", "bf16", "FP8 (e4m3) tensor-core ladder",
                      "e4m3 A, B (B given N x K), tensor-core accumulate, C bf16", "dense FP8 tensor peak",
                      "% of FP8 peak", "cuBLASLt FP8 at its best", "TFLOP/s", 1e12, "dense FP8 tensor", 1, 2)
    raise InputError(f"dtype {dtype!r}: expected fp32, bf16 or fp8")
