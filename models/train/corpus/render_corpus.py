"""``hichunk corpus render``: every corpus document as labelled text, Markdown and PDF, plus real documents.

Per document: ``markdown:original`` (the corpus Markdown, titles as they are),
``markdown:styled`` (numbering rewritten by a drawn profile), ``text`` (a drawn plain-text
profile), and ``pdf`` for every test document and a seeded share of train/dev documents
(``pdf_share``; PDFs are the slow kind). Books: documents of one corpus, language and split
concatenated as chapters into plain-text books of 50k-120k words (80k-200k characters in
Chinese), at most ``books_per_source`` per corpus, language and split.
"""

from __future__ import annotations

import datetime as _dt
import json
import logging
import os
import random
import time
from concurrent.futures import ProcessPoolExecutor

from hichunk.errors import HichunkError
from hichunk.models.train.corpus.corpus import SPLITS, Manifest, load_split
from hichunk.models.train.corpus.render import KINDS, plan_books, render_book, render_one, write_labels

RENDER_VERSION = "1.0"
log = logging.getLogger(__name__)


def _job(args):
    kind, doc, split, seed, out_dir, variant = args
    if kind == "pdf":
        from hichunk.models.train.corpus.render_pdf import render_pdf_doc

        return render_pdf_doc(doc, split, seed, out_dir)
    return render_one(doc, split, kind, seed, out_dir, variant)


def _book_job(args):
    book, split, n, seed, out_dir = args
    return render_book(book, split, n, seed, out_dir)


def render_corpus(corpus_dir: str, out_dir: str, kinds=KINDS, seed: int = 0, pdf_share: float = 0.1,
                  books_per_source: int = 2, real: bool = True, cache_dir: str | None = None, jobs: int = 1,
                  progress: bool = True) -> dict:
    """Render a built corpus into ``out_dir``; returns the manifest written there."""
    from tqdm import tqdm

    kinds = tuple(kinds)
    bad = [k for k in kinds if k not in KINDS]
    if bad:
        raise HichunkError(f"unknown kind(s) {', '.join(bad)} (choose from {', '.join(KINDS)})")
    if not 0 <= pdf_share <= 1:
        raise HichunkError("--pdf-share must be between 0 and 1")
    corpus_manifest = Manifest.load(corpus_dir)
    os.makedirs(out_dir, exist_ok=True)
    started = time.time()
    jobs_list = []
    docs_by_split = {}
    for split in SPLITS:
        docs = list(load_split(corpus_dir, split))
        docs_by_split[split] = docs
        for d in docs:
            if "markdown" in kinds:
                jobs_list.append(("markdown", d, split, seed, out_dir, "original"))
                jobs_list.append(("markdown", d, split, seed, out_dir, "styled"))
            if "text" in kinds:
                jobs_list.append(("text", d, split, seed, out_dir, ""))
            if "pdf" in kinds:
                pick = split == "test" or random.Random(f"{seed}\0pdf-pick\0{d.id}").random() < pdf_share
                if pick:
                    jobs_list.append(("pdf", d, split, seed, out_dir, ""))
    book_jobs = []
    if "text" in kinds and books_per_source > 0:
        for split in SPLITS:
            for d in docs_by_split[split]:
                d._split = split
            for n, book in enumerate(plan_books(docs_by_split[split], seed, books_per_source)):
                book_jobs.append((book, split, n + 1, seed, out_dir))
    labelled = []
    failures: dict[str, int] = {}
    bar = tqdm(total=len(jobs_list) + len(book_jobs), desc="rendering", unit="doc", disable=not progress)
    try:
        if jobs <= 1:
            results = (_run_safe(_job, j) for j in jobs_list)
            book_results = (_run_safe(_book_job, j) for j in book_jobs)
            for r in list(results) + list(book_results):
                _collect(r, labelled, failures)
                bar.update()
        else:
            with ProcessPoolExecutor(max_workers=jobs) as pool:
                # PDFs first: they are the slow ones
                order = sorted(range(len(jobs_list)), key=lambda i: jobs_list[i][0] != "pdf")
                for r in pool.map(_run_safe, [_job] * len(order), [jobs_list[i] for i in order], chunksize=4):
                    _collect(r, labelled, failures)
                    bar.update()
                for r in pool.map(_run_safe, [_book_job] * len(book_jobs), book_jobs):
                    _collect(r, labelled, failures)
                    bar.update()
    finally:
        bar.close()
    real_info = []
    if real:
        labelled_real, real_info = _real(out_dir, seed, cache_dir)
        labelled.extend(labelled_real)
    write_labels(out_dir, labelled)
    counts: dict = {}
    for item in labelled:
        kind = ("real-" if item.real else "") + item.kind + (":book" if item.source_ids else "")
        c = counts.setdefault(kind, {}).setdefault(item.split, {})
        c[item.lang] = c.get(item.lang, 0) + 1
    manifest = {
        "render_version": RENDER_VERSION,
        "created": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "corpus": {"path": os.path.abspath(corpus_dir), "content_hash": corpus_manifest.data.get("content_hash")},
        "parameters": {"kinds": list(kinds), "seed": seed, "pdf_share": pdf_share, "pdf_splits": "all test + share of train/dev",
                       "books_per_source": books_per_source, "real": real},
        "counts": counts,
        "total": len(labelled),
        "failures": failures,
        "real_sources": real_info,
        "seconds": round(time.time() - started, 1),
    }
    with open(os.path.join(out_dir, "manifest.json"), "w", encoding="utf-8") as fh:
        json.dump(manifest, fh, ensure_ascii=False, indent=2, sort_keys=True)
        fh.write("\n")
    return manifest


def _run_safe(fn, job):
    try:
        return fn(job)
    except Exception as exc:  # noqa: BLE001 - one bad document must not stop a long render; it is counted
        kind = job[0] if isinstance(job[0], str) else "text:book"
        return ("error", kind, f"{type(exc).__name__}: {exc}")


def _collect(result, labelled, failures) -> None:
    if isinstance(result, tuple) and result and result[0] == "error":
        failures[result[1]] = failures.get(result[1], 0) + 1
        log.warning("render failed (%s): %s", result[1], result[2])
        return
    labelled.append(result)


def _real(out_dir: str, seed: int, cache_dir: str | None):
    from hichunk.models.train.corpus import debian
    from hichunk.models.train.corpus.real import real_pdfs, real_texts
    from hichunk.models.train.corpus.sources import REAL_PDFS, REAL_TEXTS, fetch_source

    cache_dir = cache_dir or debian.default_cache_dir()
    out, info = [], []
    for spec, make in [(s, real_pdfs) for s in REAL_PDFS] + [(s, real_texts) for s in REAL_TEXTS]:
        fetched = fetch_source(spec.name, cache_dir, spec=spec)
        found = make(fetched, out_dir, seed)
        out.extend(found)
        info.append({"name": spec.name, "version": fetched.version, "archive_sha256": fetched.deb_sha256,
                     "kind": spec.fmt, "documents": len(found)})
    return out, info
