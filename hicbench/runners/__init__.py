"""Benchmark runners behind ``hichunk bench``: chunking, rag, update-cost."""
