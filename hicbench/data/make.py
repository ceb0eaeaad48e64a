"""``hichunk bench make``: a benchmark in the HiCBench layout from a built corpus or a folder of documents.

Each language becomes its own dataset (``<name>-en``, ``<name>-zh``), holding
every document of that language (the chunking benchmark scores them all;
lines that start with '#' without being headings get a leading space, so the
HiCBench ground-truth rule sees exactly the real headings) and the structure-derived T1/T2 questions of ``hichunk.bench.data.questions``; with an
endpoint, also LLM-written questions with answers and facts. ``manifest.json``
records the source (corpus content hash or folder), the rules and every
dataset's data version.
"""

from __future__ import annotations

import datetime as _dt
import json
import logging
import os
import random
from collections.abc import Iterable
from dataclasses import dataclass

from tqdm import tqdm

from hichunk.bench.data import questions as Q
from hichunk.bench.data.hicbench_format import doc_stem, write_dataset
from hichunk.bench.llm import Endpoint
from hichunk.document.markdown import parse_markdown
from hichunk.errors import HichunkError
from hichunk.models.train.corpus.corpus import CorpusDoc, Manifest, convert, dir_sources, load_split

log = logging.getLogger(__name__)
MAKER_VERSION = "1.0"


@dataclass
class MakeOptions:
    seed: int = 0
    t1_per_doc: int = 3
    t2_per_doc: int = 2
    llm_per_doc: int = 2
    endpoint: Endpoint | None = None
    progress: bool = True


def heading_safe(markdown: str) -> str:
    """The text with a space before every line that starts with '#' but is no heading.

    HiCBench's scorer takes every line starting with '#' as a heading; Markdown
    does not (``#. item`` of a reST list, ``# comment`` in a code fence). One
    space makes both readings agree and changes nothing else: the heading set
    is checked to be the same before and after.
    """
    doc = parse_markdown(markdown)
    heading_lines = {i for i, _ in doc.headings}
    lines = markdown.split("\n")
    if len(lines) != len(doc.lines):
        raise HichunkError("line count mismatch while protecting '#' lines")
    changed = False
    for i, line in enumerate(lines):
        if line.startswith("#") and i not in heading_lines:
            lines[i] = " " + line
            changed = True
    if not changed:
        return markdown
    out = "\n".join(lines)
    if parse_markdown(out).headings != doc.headings:
        raise HichunkError("protecting '#' lines changed the headings")
    return out


def _records(cdoc: CorpusDoc, stem: str, opts: MakeOptions) -> list[dict]:
    doc = parse_markdown(cdoc.markdown, stem)
    out = []
    for q in Q.structure_questions(stem, cdoc.title, doc, cdoc.lang, opts.seed, opts.t1_per_doc, opts.t2_per_doc):
        out.append({"input": q.input, "answers": [], "facts": [], "evidences": q.evidences, "all_classes": [q.type],
                    "_id": stem, "qid": q.qid, "type": q.type, "sections": q.sections, "words": q.words,
                    "generator": "structure"})
    if opts.endpoint is not None:
        from hichunk.bench.data.llm_questions import section_question

        sections = Q.document_sections(doc, cdoc.lang)
        rng = random.Random(f"{opts.seed}\0llm\0{stem}")
        for sec in Q.t1_sections(sections, cdoc.lang, rng, opts.llm_per_doc):
            got = section_question(opts.endpoint, cdoc.title, sec)
            if got is None:
                continue
            out.append({"input": got.input, "answers": [got.answer], "facts": got.facts, "evidences": got.evidences,
                        "all_classes": ["LLM"], "_id": stem, "qid": f"{stem}#LLM-{sec.index}", "type": "LLM",
                        "sections": [sec.path], "words": sec.words, "generator": opts.endpoint.id})
    return out


def make_benchmark(docs: Iterable[CorpusDoc], out_dir: str, name: str, source: dict, opts: MakeOptions) -> dict:
    """Write one dataset per language under ``out_dir`` and the manifest; returns the manifest."""
    by_lang: dict[str, dict[str, str]] = {}
    records: dict[str, list[dict]] = {}
    ids: dict[str, str] = {}
    docs = list(docs)
    for cdoc in tqdm(docs, desc="questions", unit="doc", disable=not opts.progress):
        stem = doc_stem(cdoc.id)
        if stem in ids:
            raise HichunkError(f"documents {ids[stem]!r} and {cdoc.id!r} map to the same file name {stem!r}")
        ids[stem] = cdoc.id
        cdoc.markdown = heading_safe(cdoc.markdown)
        by_lang.setdefault(cdoc.lang, {})[stem] = cdoc.markdown
        records.setdefault(cdoc.lang, []).extend(_records(cdoc, stem, opts))
    if not by_lang:
        raise HichunkError("no documents to make a benchmark from")
    datasets = {}
    for lang in sorted(by_lang):
        ds = f"{name}-{lang}"
        qas = records.get(lang, [])
        version = write_dataset(out_dir, ds, by_lang[lang], qas)
        types: dict[str, int] = {}
        for r in qas:
            types[r["type"]] = types.get(r["type"], 0) + 1
        datasets[ds] = {"lang": lang, "docs": len(by_lang[lang]), "questions": dict(sorted(types.items())),
                        "data_version": version}
        log.info("%s: %d documents, %d questions", ds, len(by_lang[lang]), len(qas))
    manifest = {
        "maker": "hichunk bench make", "maker_version": MAKER_VERSION,
        "created": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "source": source,
        "rules": {"T1_words": Q.T1_WORDS, "T2_words": Q.T2_WORDS, "T2_total_words": Q.T2_TOTAL_WORDS,
                  "T2_sections": Q.T2_SECTIONS, "zh_units_per_word": Q.ZH_UNITS_PER_WORD,
                  "min_evidence_chars": Q.MIN_EVIDENCE_CHARS, "seed": opts.seed, "t1_per_doc": opts.t1_per_doc,
                  "t2_per_doc": opts.t2_per_doc, "llm": opts.endpoint.id if opts.endpoint else None,
                  "llm_per_doc": opts.llm_per_doc if opts.endpoint else 0},
        "datasets": datasets,
        "doc_ids": dict(sorted(ids.items())),
    }
    with open(os.path.join(out_dir, "manifest.json"), "w", encoding="utf-8") as fh:
        json.dump(manifest, fh, ensure_ascii=False, indent=2)
        fh.write("\n")
    return manifest


def corpus_documents(corpus_dir: str, split: str, langs: Iterable[str] | None = None) -> tuple[list[CorpusDoc], dict]:
    """Documents of a built corpus split (optionally some languages only) and a source record."""
    manifest = Manifest.load(corpus_dir)
    wanted = set(langs) if langs else None
    docs = [d for d in load_split(corpus_dir, split) if wanted is None or d.lang in wanted]
    return docs, {"kind": "corpus", "path": os.path.abspath(corpus_dir), "split": split,
                  "content_hash": manifest.data.get("content_hash"), "langs": sorted(wanted) if wanted else None}


def folder_documents(folder: str, progress: bool = True) -> tuple[list[CorpusDoc], dict]:
    """Every Markdown/HTML/reST/man page under ``folder``, converted to corpus Markdown."""
    sources = dir_sources(folder)
    docs, failed = [], 0
    for src in tqdm(sources, desc="converting", unit="doc", disable=not progress):
        for _, cdoc, reason in convert(src):  # folder documents are never cut into parts: one result
            if cdoc is None:
                failed += 1
                log.warning("%s: skipped (%s)", src.path, reason)
            else:
                docs.append(cdoc)
    if not docs:
        raise HichunkError(f"{folder}: no readable Markdown, HTML, reST or man pages found")
    return docs, {"kind": "folder", "path": os.path.abspath(folder), "files": len(sources), "unreadable": failed}
