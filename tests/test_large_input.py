"""A 50 MB text file: completes, stays lossless, memory stays under 10x the file size."""

import hashlib
import json
import random
import subprocess
import sys

SIZE = 50 * 1024 * 1024
PEAK_OF_CHILD = ("import os, subprocess, sys; p = subprocess.Popen(sys.argv[1:]); _, status, usage = os.wait4(p.pid, 0); "
                 "print(usage.ru_maxrss); sys.exit(os.waitstatus_to_exitcode(status))")


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
    # A forked child inherits its parent's peak-memory mark, and this pytest process may be large by now
    # (other tests load models), so the command runs under a small wrapper that reports its own child's peak.
    proc = subprocess.run([sys.executable, "-c", PEAK_OF_CHILD, sys.executable, "-m", "hichunk", "-q", "chunk", str(path),
                           "--method", "fixed", "--format", "splits", "-o", str(out)], capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr
    peak = int(proc.stdout.split()[-1]) * 1024  # Linux reports KiB
    splits = json.loads(out.read_text(encoding="utf-8"))[str(path)]["splits"]
    rebuilt = "".join(text for text, _ in splits).encode("utf-8")
    assert hashlib.sha256(rebuilt).digest() == hashlib.sha256(data).digest()
    assert peak < 10 * len(data), f"peak memory {peak / 2**20:.0f} MiB for a {len(data) / 2**20:.0f} MiB file"
