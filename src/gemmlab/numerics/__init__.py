"""The number formats gemmlab computes in and the error bounds that follow from them.

Pure NumPy/CuPy functions with no GPU or gemmlab dependency, so every layer may use them: the
runtime converts operands (bfloat16 and e4m3 travel as ``uint16`` / ``uint8`` bit patterns), the
autotuner rejects wrong candidates, and the harness's correctness checks derive their bounds here.

- ``bounds``: FP32 unit roundoff, Higham's γ_n, the normwise bound of an FP32 GEMM;
- ``bf16``: bfloat16 bit patterns and the bound of a BF16 tensor-core GEMM;
- ``fp8``: e4m3 bit patterns and the bound of an FP8 tensor-core GEMM.
"""
