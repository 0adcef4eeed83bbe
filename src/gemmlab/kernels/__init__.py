"""The SGEMM ladder: CUDA C sources and their registry."""
