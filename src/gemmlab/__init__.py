"""gemmlab: a GEMM kernel ladder, an honest benchmark harness, and an Nsight Compute analyzer."""

__version__ = "0.1.0"
