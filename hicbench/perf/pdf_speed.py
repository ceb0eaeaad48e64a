"""PDF speed: extraction and parsing throughput, and whole-chunking seconds per 30-page PDF.

    python -m hichunk.bench.perf.pdf_speed --pdfs /work/data/raw/r-doc-pdf

For every PDF under ``--pdfs``: PDFium extraction alone (``read_pdf``), the
whole parse (extraction, layout analysis, clean view: ``parse_pdf``) and the
whole chunking of the file (parse, sentences, the split-point model, tree)
with the model loaded once; medians over ``--repeats`` runs per file. Then
every PDF is cut into ``--pages``-page PDFs (up to ``--slices`` per file, by
PDFium page import) and each slice is chunked whole from its bytes, which is
the per-document cost a user sees for a 30-page PDF. Summaries are medians
over files (or slices) with 95% bootstrap intervals and n.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from collections.abc import Callable

from hichunk.bench.stats import bootstrap_ci, fmt_ci


def _median_seconds(fn: Callable[[], object], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def find_pdfs(root: str) -> list[str]:
    """PDFs under ``root`` in a stable order, each real file once (packages link the same manual twice)."""
    found: dict[str, str] = {}
    for folder, dirs, files in os.walk(root):
        dirs.sort()
        for f in sorted(files):
            path = os.path.join(folder, f)
            if f.lower().endswith(".pdf"):
                found.setdefault(os.path.realpath(path), path)
    return list(found.values())


def slices(data: bytes, pages: int, limit: int) -> list[bytes]:
    """Up to ``limit`` PDFs of ``pages`` consecutive pages each, spread over the document."""
    import io

    import pypdfium2 as pdfium

    src = pdfium.PdfDocument(data)
    try:
        n = len(src)
        if n < pages:
            return []
        starts = list(range(0, n - pages + 1, pages))
        step = max(1, len(starts) // limit)
        out = []
        for start in starts[::step][:limit]:
            new = pdfium.PdfDocument.new()
            new.import_pages(src, list(range(start, start + pages)))
            buf = io.BytesIO()
            new.save(buf)
            new.close()
            out.append(buf.getvalue())
        return out
    finally:
        src.close()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m hichunk.bench.perf.pdf_speed", description=__doc__.split("\n\n")[0])
    ap.add_argument("--pdfs", required=True, help="folder walked for *.pdf")
    ap.add_argument("--repeats", type=int, default=3, help="runs per file; the median counts")
    ap.add_argument("--method", default="hichunk")
    ap.add_argument("--pages", type=int, default=30, help="pages per slice for the per-document timing")
    ap.add_argument("--slices", type=int, default=4, help="slices per file at most")
    ap.add_argument("--json", metavar="OUT", help="also write every measurement here")
    args = ap.parse_args(argv)

    from hichunk.chunkers import ChunkOptions
    from hichunk.document.pdf import parse_pdf, read_pdf
    from hichunk.retrieval.chunking import get_chunker

    chunker = get_chunker(args.method, ChunkOptions())
    paths = find_pdfs(args.pdfs)
    if not paths:
        print(f"no PDFs under {args.pdfs}", file=sys.stderr)
        return 2
    rows = []
    print(f"{'file':<28} {'pages':>6} {'MB':>6} {'extract s':>10} {'parse s':>8} {'chunk s':>8} {'pages/s':>8} {'MB/s':>6}")
    for path in paths:
        with open(path, "rb") as fh:
            data = fh.read()
        pages = read_pdf(data).n_pages
        chunker.chunk(parse_pdf(data, path))  # warm-up: lazy imports and model load
        row = {"file": path, "pages": pages, "mb": len(data) / 1e6,
               "extract_s": _median_seconds(lambda d=data: read_pdf(d), args.repeats),
               "parse_s": _median_seconds(lambda d=data, p=path: parse_pdf(d, p), args.repeats),
               "chunk_s": _median_seconds(lambda d=data, p=path: chunker.chunk(parse_pdf(d, p)), args.repeats)}
        rows.append(row)
        print(f"{os.path.basename(path)[:28]:<28} {pages:>6} {row['mb']:>6.2f} {row['extract_s']:>10.3f} "
              f"{row['parse_s']:>8.3f} {row['chunk_s']:>8.2f} {pages / row['parse_s']:>8.0f} {row['mb'] / row['parse_s']:>6.2f}")
    per_slice = []
    for path in paths:
        with open(path, "rb") as fh:
            for piece in slices(fh.read(), args.pages, args.slices):
                extract = _median_seconds(lambda d=piece: read_pdf(d), args.repeats)
                whole = _median_seconds(lambda d=piece, p=path: chunker.chunk(parse_pdf(d, p)), args.repeats)
                per_slice.append({"file": path, "extract_s": extract, "chunk_s": whole})

    n = len(rows)
    print(f"\nfiles: n={n}, {sum(r['pages'] for r in rows)} pages, {sum(r['mb'] for r in rows):.1f} MB; "
          f"medians over files, 95% bootstrap CIs")
    for label, key in (("extraction (PDFium text + lines)", "extract_s"), ("parse (extraction + layout + clean view)", "parse_s"),
                       ("whole chunking (parse + sentences + model + tree)", "chunk_s")):
        print(f"  {label}: pages/s {fmt_ci([r['pages'] / r[key] for r in rows], digits=3)}; "
              f"MB/s {fmt_ci([r['mb'] / r[key] for r in rows], digits=3)}")
    if per_slice:
        share = [s["extract_s"] / s["chunk_s"] for s in per_slice]
        print(f"{args.pages}-page PDFs ({args.method}): whole chunking seconds "
              f"{fmt_ci([s['chunk_s'] for s in per_slice])}; extraction seconds {fmt_ci([s['extract_s'] for s in per_slice])}; "
              f"extraction share {fmt_ci(share, digits=2)}")
    if args.json:
        summary = {key: bootstrap_ci([r["pages"] / r[key] for r in rows]) for key in ("extract_s", "parse_s", "chunk_s")}
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump({"files": rows, "slices": per_slice, "pages_per_s": summary,
                       "method": args.method, "repeats": args.repeats}, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
