"""DOCX parsing speed: seconds to parse a DOCX of about ``--mb`` MB (or real files), medians with 95% CIs.

    python -m hichunk.bench.perf.docx_speed --mb 1 --runs 5
    python -m hichunk.bench.perf.docx_speed --files DIR --runs 3

The synthetic file is seeded: paragraphs of random words (so that it compresses like
text, not like one repeated line), a heading every 40 paragraphs, ``--styles`` custom
paragraph styles used by a third of the paragraphs (python-docx resolves styles by
scanning all of them, which made parsing slow per paragraph), until the file reaches
the size asked for.
"""

from __future__ import annotations

import argparse
import io
import os
import sys
import time

import numpy as np

from hichunk.bench.stats import bootstrap_ci


def synthetic_docx(mb: float, styles: int = 150, seed: int = 0) -> tuple[bytes, int]:
    """(file bytes, paragraphs) of a seeded DOCX of about ``mb`` MB."""
    import docx
    from docx.enum.style import WD_STYLE_TYPE

    from hichunk.bench.perf.serve_load import WORDS

    rng = np.random.default_rng(seed)
    d = docx.Document()
    for i in range(styles):
        d.styles.add_style(f"Custom {i}", WD_STYLE_TYPE.PARAGRAPH).base_style = d.styles["Normal"]
    paragraphs, size = 0, 0
    while size < mb * 1_000_000:
        for _ in range(500):
            if paragraphs % 40 == 0:
                d.add_heading(f"Section {paragraphs // 40}", 1 + (paragraphs // 40) % 3)
            words = " ".join(rng.choice(WORDS, size=int(rng.integers(20, 60)))) + f" {rng.integers(10**9)}."
            d.add_paragraph(words.capitalize(), style=f"Custom {paragraphs % styles}" if paragraphs % 3 == 0 else None)
            paragraphs += 1
        buf = io.BytesIO()
        d.save(buf)
        size = len(buf.getvalue())
    return buf.getvalue(), paragraphs


def _time(data: bytes, name: str, runs: int) -> tuple[list[float], int]:
    from hichunk.document.docx import parse_docx

    times, chars = [], 0
    for _ in range(runs):
        t0 = time.perf_counter()
        chars = len(parse_docx(data, name).text)
        times.append(time.perf_counter() - t0)
    return times, chars


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m hichunk.bench.perf.docx_speed", description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mb", type=float, default=1.0, help="size of the synthetic DOCX (default: 1)")
    parser.add_argument("--styles", type=int, default=150, help="custom paragraph styles (default: 150)")
    parser.add_argument("--files", metavar="DIR", help="time the .docx files of DIR instead")
    parser.add_argument("--runs", type=int, default=5, help="parses per file (default: 5)")
    args = parser.parse_args(argv)
    if args.files:
        items = [(os.path.join(args.files, f), None) for f in sorted(os.listdir(args.files)) if f.endswith(".docx")]
        files = [(path, open(path, "rb").read(), n) for path, n in items]
    else:
        data, paragraphs = synthetic_docx(args.mb, args.styles)
        files = [(f"synthetic ({paragraphs} paragraphs, {args.styles} styles)", data, paragraphs)]
    print(f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}", flush=True)
    for name, data, _ in files:
        times, chars = _time(data, name, args.runs)
        med, low, high = bootstrap_ci(np.asarray(times), np.median)
        print(f"{name}: {len(data) / 1e6:.2f} MB, {chars:,} characters; parse median {med:.2f} s [{low:.2f}-{high:.2f}] "
              f"(n={len(times)}); load average {os.getloadavg()[0]:.1f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
