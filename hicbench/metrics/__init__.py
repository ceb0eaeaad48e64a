"""Benchmark metrics."""
