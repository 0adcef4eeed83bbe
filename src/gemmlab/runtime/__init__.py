"""Compiling (with a persistent cache) and launching kernels through CuPy; cuBLAS reference."""
