"""Collection and parsing of profiler output (Nsight Compute, Nsight Systems)."""
