"""A 50 MB text file: completes, stays lossless, memory stays under 10x the file size."""

import hashlib
import json
import random
import subprocess
import sys

import pytest

SIZE = 50 * 1024 * 1024

# The CLI, reporting its own peak memory (VmHWM) on stderr at exit. RUSAGE_CHILDREN cannot be used:
# a child started by vfork shares the parent's memory until exec and is charged its size, so a test
# process that has loaded torch would make any child look huge.
PEAK_REPORTING_CLI = """
import runpy, sys
sys.argv[0] = "hichunk"
try:
    runpy.run_module("hichunk", run_name="__main__", alter_sys=True)
finally:
    sys.stderr.write([line for line in open("/proc/self/status") if line.startswith("VmHWM")][0])
"""


@pytest.mark.slow
def test_fifty_megabyte_file(tmp_path):
    rng = random.Random(0)
    words = "the of and to in retrieval chunk tree level section budget leaf merge token index 中文 句子".split()
    path = tmp_path / "big.txt"
    with open(path, "w", encoding="utf-8") as fh:
        written = 0
        while written < SIZE:
            para = " ".join(rng.choice(words) for _ in range(rng.randint(20, 120))) + ".\n\n"
            fh.write(para)
            written += len(para.encode("utf-8"))
    data = path.read_bytes()
    out = tmp_path / "out.json"
    proc = subprocess.run([sys.executable, "-c", PEAK_REPORTING_CLI, "-q", "chunk", str(path), "--method", "fixed",
                           "--format", "splits", "-o", str(out)], capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr
    peak = int(proc.stderr.strip().splitlines()[-1].split()[1]) * 1024  # VmHWM is in kB
    splits = json.loads(out.read_text(encoding="utf-8"))[str(path)]["splits"]
    rebuilt = "".join(text for text, _ in splits).encode("utf-8")
    assert hashlib.sha256(rebuilt).digest() == hashlib.sha256(data).digest()
    assert peak < 10 * len(data), f"peak memory {peak / 2**20:.0f} MiB for a {len(data) / 2**20:.0f} MiB file"
