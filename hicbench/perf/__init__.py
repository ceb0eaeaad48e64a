"""Speed and scale benchmarks: chunking, PDF reading, index builds, search latency, the HTTP service."""
