"""Timing, statistics and correctness checks."""
