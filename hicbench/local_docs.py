"""Split points on this machine's own documentation: families no model here was trained or tuned on.

    python -m hichunk.bench.local_docs --methods encoder
    python -m hichunk.bench.local_docs --sources info,markdown --markdown-dir /usr/share/doc --methods encoder,numbering

Sources (each skipped when the machine has none): GNU info manuals (``/usr/share/info``, as plain
text, truth from their underlined headings), manual pages (``man`` renders section 1 to plain text;
truth: the title line and the ``.SH`` section lines, at column 0), Markdown files under a directory
(``/usr/share/doc`` by default) and the Markdown long descriptions of the installed Python packages
(truth: the heading markup, hidden from the methods as ``split_eval`` hides it); the Debian
Documentation Project's manuals, held out for independent evaluation, are never read. Per source and method:
documents, pooled F1 without level / F1_L1 / F1_L2, their medians over documents, and the worst five.
A check on documents nobody picked, next to the leave-family-out benchmark; what a machine has
installed varies, so compare methods in one run, not runs on different machines.
"""

from __future__ import annotations

import argparse
import email
import glob
import gzip
import os
import re
import shutil
import statistics
import subprocess
import sys
from collections import Counter

from hichunk.bench.metrics.splits import SplitCounts, count_tree
from hichunk.bench.runners.chunk import chunk_all
from hichunk.bench.runners.methods import parse_methods
from hichunk.document import parse_document
from hichunk.models.train.corpus.truth import Truth, markup_truth, placed_truth

SOURCES = ("info", "man", "markdown", "pypi")
# the Debian Documentation Project's manuals are held out for independent evaluation: never read here
HELD_OUT = re.compile(r"^(?:debian-handbook|debian-reference|maint-guide|developers-reference|debian-faq|debmake-doc|"
                      r"debian-policy|harden-doc)")
MIN_HEADINGS = 3
_MAN_SECTION = re.compile(r"^[A-Z][^\s].{0,58}$")  # a .SH line: at column 0, short


def info_documents(info_dir: str = "/usr/share/info", limit: int = 0) -> dict:
    """id -> (document, truth) for the GNU info manuals of ``info_dir``."""
    from hichunk.models.train.corpus.info import info_plain_text, read_manual

    out = {}
    for path in sorted(glob.glob(os.path.join(info_dir, "*.info.gz")) + glob.glob(os.path.join(info_dir, "*.info"))):
        text, heads = info_plain_text(read_manual(path))
        if len(heads) >= MIN_HEADINGS:
            doc = parse_document(text, "text", path)
            out[os.path.basename(path)] = (doc, placed_truth(doc, [{"level": lv, "title": t, "offset": off, "page": None}
                                                                     for lv, t, off in heads]))
    return _limited(out, limit)


def man_text_truth(text: str) -> Truth:
    """The truth of a manual page as ``man`` prints it: its first line (the title) level 1, the section lines at
    column 0 level 2 (the last line, the footer, aside)."""
    lines = text.split("\n")
    filled = [i for i, line in enumerate(lines) if line.strip()]
    at, pos = {}, 0
    for i, line in enumerate(lines):
        if filled and i == filled[0]:
            at[pos] = 1
        elif filled and i != filled[-1] and _MAN_SECTION.match(line):
            at[pos] = 2
        pos += len(line) + 1
    return Truth(at)


def man_documents(section_dir: str = "/usr/share/man/man1", limit: int = 50) -> dict:
    """id -> (document, truth) for up to ``limit`` manual pages of ``section_dir``, one per name prefix (so that one
    suite's many pages do not fill the sample), rendered by ``man`` (none when it is not installed)."""
    if shutil.which("man") is None or not os.path.isdir(section_dir):
        return {}
    out, prefixes = {}, set()
    for name in sorted(os.listdir(section_dir)):
        if name[:3] in prefixes or len(out) >= limit:
            continue
        run = subprocess.run(["man", "-P", "cat", os.path.join(section_dir, name)], capture_output=True,
                             env={**os.environ, "MANWIDTH": "80", "MAN_KEEP_FORMATTING": ""}, timeout=60)
        text = re.sub(r".\x08", "", run.stdout.decode("utf-8", "replace"))  # overstrikes (bold, underline) go
        truth = man_text_truth(text)
        if run.returncode == 0 and len(text) >= 1500 and len(truth.at) >= MIN_HEADINGS:
            prefixes.add(name[:3])
            out[name] = (parse_document(text, "text", name), truth)
    return out


def markdown_documents(root: str = "/usr/share/doc", limit: int = 0) -> dict:
    """id -> (document, truth) for the Markdown files (``.md``, ``.md.gz``) under ``root``."""
    out = {}
    for path in sorted(glob.glob(os.path.join(root, "**", "*.md"), recursive=True)
                       + glob.glob(os.path.join(root, "**", "*.md.gz"), recursive=True)):
        if HELD_OUT.match(os.path.relpath(path, root)):
            continue
        try:
            with (gzip.open(path) if path.endswith(".gz") else open(path, "rb")) as fh:
                text = fh.read().decode("utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        _add_markdown(out, os.path.relpath(path, root), text)
    return _limited(out, limit)


def pypi_documents(site: str | None = None, limit: int = 0) -> dict:
    """id -> (document, truth) for the Markdown long descriptions of the packages installed in ``site``."""
    import sysconfig

    site = site or sysconfig.get_paths()["purelib"]
    out = {}
    for meta in sorted(glob.glob(os.path.join(site, "*.dist-info", "METADATA"))):
        with open(meta, encoding="utf-8", errors="replace") as fh:
            msg = email.message_from_string(fh.read())
        if "markdown" in (msg.get("Description-Content-Type") or ""):
            _add_markdown(out, os.path.basename(os.path.dirname(meta)).split("-")[0], msg.get_payload() or "")
    return _limited(out, limit)


def _add_markdown(out: dict, key: str, text: str) -> None:
    doc = parse_document(text, "markdown", key)
    truth = markup_truth(doc)
    if len(truth.at) >= MIN_HEADINGS:
        out[key] = (doc, truth)


def _limited(docs: dict, limit: int) -> dict:
    return dict(list(docs.items())[:limit]) if limit else docs


def score(docs: dict, methods: str) -> list[dict]:
    """One row per method: pooled and median F1 / F1_L1 / F1_L2 over ``docs`` and the worst five by F1."""
    from hichunk.tokens import load_tokenizer

    tokenizer, rows = load_tokenizer(), []
    for spec in parse_methods(methods):
        chunked = chunk_all({k: d for k, (d, _) in docs.items()}, spec, tokenizer, on_error="count", progress=False)
        counts = {k: count_tree(chunked[k].tree, truth) if chunked[k].tree is not None
                  else SplitCounts(gt=Counter(truth.levels)) for k, (_, truth) in docs.items()}  # a failure finds nothing
        pooled = sum(counts.values(), SplitCounts())
        row = {"method": spec.label, "n_docs": len(docs)}
        for key, level in (("f1", None), ("f1_l1", 1), ("f1_l2", 2)):
            row[key + "_pooled"] = round(pooled.f1(level), 4)
            row[key + "_median"] = round(statistics.median(c.f1(level) for c in counts.values()), 4)
        row["worst"] = [(k, round(c.f1(), 3)) for k, c in sorted(counts.items(), key=lambda kv: kv[1].f1())[:5]]
        rows.append(row)
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m hichunk.bench.local_docs", description=__doc__.split("\n\n")[0])
    ap.add_argument("--methods", default="encoder", help="comma-separated benchmark methods (default: encoder)")
    ap.add_argument("--sources", default=",".join(SOURCES), help=f"comma-separated, of {', '.join(SOURCES)} (default: all)")
    ap.add_argument("--info-dir", default="/usr/share/info")
    ap.add_argument("--man-dir", default="/usr/share/man/man1")
    ap.add_argument("--markdown-dir", default="/usr/share/doc")
    ap.add_argument("--limit", type=int, default=0, metavar="N", help="at most N documents per source (man: 50 unless set)")
    args = ap.parse_args(argv)
    unknown = set(args.sources.split(",")) - set(SOURCES)
    if unknown:
        ap.error(f"unknown source(s): {', '.join(sorted(unknown))}")
    readers = {"info": lambda: info_documents(args.info_dir, args.limit),
               "man": lambda: man_documents(args.man_dir, args.limit or 50),
               "markdown": lambda: markdown_documents(args.markdown_dir, args.limit),
               "pypi": lambda: pypi_documents(limit=args.limit)}
    print(f"{'source':<9} {'method':<12} {'docs':>5}  {'pooled F1/L1/L2':<20} {'median F1/L1/L2':<20} worst (F1)")
    for source in args.sources.split(","):
        docs = readers[source]()
        if not docs:
            print(f"{source:<9} (none on this machine)")
            continue
        for r in score(docs, args.methods):
            pooled = "/".join(f"{r[k + '_pooled']:.3f}" for k in ("f1", "f1_l1", "f1_l2"))
            median = "/".join(f"{r[k + '_median']:.3f}" for k in ("f1", "f1_l1", "f1_l2"))
            worst = ", ".join(f"{k} {v:.2f}" for k, v in r["worst"])
            print(f"{source:<9} {r['method']:<12} {r['n_docs']:>5}  {pooled:<20} {median:<20} {worst}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
