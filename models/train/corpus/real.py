"""Real labelled documents: files people have, with ground truth that ships inside them.

* PDFs whose bookmark outline gives the heading tree (R manuals, Octave, bash, LilyPond,
  GLPK, GAP, PARI, PSPP, gnuplot, zsh, GnuCash, the TeX Live documentation in English and
  Chinese): level = outline depth, title and page from the outline. A PDF without an outline
  of at least three entries, or whose text is neither English nor Chinese, is skipped.
* GNU info manuals read whole as plain text (``info.info_plain_text``): the underline
  character gives the level, offsets are exact.

Both take the split of their group (``manual:R-intro``, ``texlive:latex/lshort-chinese``),
the same group the corpus gives the manual's chapters, so a real document and the corpus
documents made from the same manual never sit in different splits.
"""

from __future__ import annotations

import gzip
import logging
import os
import re
import shutil

from hichunk.models.train.corpus.corpus import detect_lang, split_of
from hichunk.models.train.corpus.render import Labelled, file_name

log = logging.getLogger(__name__)


def pdf_outline(path: str) -> list[dict]:
    """[{level, title, offset: None, page}] from a PDF's outline (empty when it has none or is unreadable).

    Read with PDFium (``hichunk.document.pdf_outline``): a 1,300-page manual's outline takes
    milliseconds, where resolving every destination in pure Python took tens of seconds."""
    from hichunk.document.pdf import pdf_outline as read_outline

    try:
        entries = read_outline(path)
    except Exception as exc:  # noqa: BLE001 - a broken PDF is skipped, whatever the reader raises
        log.warning("%s: no outline (%s)", path, exc)
        return []
    out = []
    for entry in entries:
        title = " ".join(entry.title.split())
        if title:
            out.append({"level": entry.level, "title": title, "offset": None, "page": entry.page})
    return out


def _pdf_files(fetched) -> list[tuple[str, str]]:
    """(relative path, path) of the PDFs (or gzipped PDFs) of a package, less the spec's exclusions; links are
    followed when they stay inside it (Debian's r-doc-pdf and bash-doc ship their PDFs as relative links)."""
    import fnmatch
    import glob

    spec = fetched.spec
    root = os.path.join(fetched.tree, spec.root)
    tree = os.path.realpath(fetched.tree)
    found = set()
    for pattern in spec.patterns:
        for path in glob.glob(os.path.join(root, pattern), recursive=True):
            real = os.path.realpath(path)
            rel = os.path.relpath(path, root).replace(os.sep, "/")
            if any(fnmatch.fnmatch(rel, ex) for ex in spec.exclude):
                continue
            if real.startswith(tree + os.sep) and os.path.isfile(real):
                found.add(rel)
    return [(rel, os.path.realpath(os.path.join(root, rel))) for rel in sorted(found)]


def _place(spec, rel: str, out_dir: str, seed: int, kind: str) -> tuple[str, str, str, str]:
    """(document id, group, split, path under OUT) of a real document; its folder is made."""
    doc_id = f"{spec.name}/{rel}"
    group = spec.group_of(rel) or doc_id
    split = split_of(group, seed)
    target = os.path.join("real", kind, split, file_name(doc_id, ".pdf" if kind == "pdf" else ".txt"))
    os.makedirs(os.path.dirname(os.path.join(out_dir, target)), exist_ok=True)
    return doc_id, group, split, target


_EN_FUNCTION_WORDS = frozenset("the of and to a in is for that with this are be as it on by or can an if you not".split())
_SAMPLE_PAGES = 12


def text_lang(text: str) -> str | None:
    """'zh', 'en', or None for text in another language (Japanese kana, or Latin script with few English
    function words: the French, German... manuals that ship beside English ones)."""
    cjk = sum(1 for c in text if "\u3400" <= c <= "\u9fff")
    kana = sum(1 for c in text if "\u3040" <= c <= "\u30ff")
    if cjk >= 200 and detect_lang(text) == "zh":
        return "zh" if kana * 10 < cjk else None
    words = re.findall(r"[a-z]+", text.casefold())
    if len(words) < 200:
        return None
    return "en" if sum(1 for w in words if w in _EN_FUNCTION_WORDS) >= 0.12 * len(words) else None


def _pdf_text_sample(path: str) -> tuple[str, int]:
    """The text of the first pages of a PDF and its page count (empty text when it cannot be read)."""
    import pypdfium2 as pdfium

    try:
        pdf = pdfium.PdfDocument(path)
    except Exception:  # noqa: BLE001 - an unreadable PDF is skipped
        return "", 0
    try:
        parts = []
        for i in range(min(len(pdf), _SAMPLE_PAGES)):
            page = pdf[i]
            textpage = page.get_textpage()
            parts.append(textpage.get_text_range())
            textpage.close()
            page.close()
        return "\n".join(parts), len(pdf)
    finally:
        pdf.close()


def real_pdfs(fetched, out_dir: str, seed: int = 0) -> list[Labelled]:
    """Labelled documents for the outlined PDFs of one fetched package (copied, gunzipped, under OUT/real/pdf).

    A PDF is kept when its outline has at least three entries and its text is English or Chinese
    (the spec's language, when it names one, is trusted)."""
    spec = fetched.spec
    out = []
    for rel, path in _pdf_files(fetched):
        doc_id, group, split, target = _place(spec, rel.removesuffix(".gz"), out_dir, seed, "pdf")
        dest = os.path.join(out_dir, target)
        if path.endswith(".gz"):
            with gzip.open(path, "rb") as src, open(dest, "wb") as dst:
                shutil.copyfileobj(src, dst)
        else:
            shutil.copyfile(path, dest)
        heads = pdf_outline(dest)
        sample, pages = _pdf_text_sample(dest) if len(heads) >= 3 else ("", 0)
        lang = (spec.lang or text_lang(sample)) if pages else None
        if lang is None:
            os.remove(dest)
            continue
        out.append(Labelled(f"real-pdf:{doc_id}", doc_id, split, lang, spec.name, "pdf",
                            {"version": fetched.version, "group": group, "pages": pages}, target, heads, real=True))
    return out


def real_texts(fetched, out_dir: str, seed: int = 0) -> list[Labelled]:
    """Labelled plain-text documents for the info manuals of one fetched package (OUT/real/text)."""
    from hichunk.models.train.corpus.debian import list_documents
    from hichunk.models.train.corpus.info import info_plain_text, read_manual

    spec = fetched.spec
    out = []
    for rel, path in list_documents(fetched):
        text, heads = info_plain_text(read_manual(path))
        if len(heads) < 3:
            continue
        doc_id, group, split, target = _place(spec, rel, out_dir, seed, "text")
        with open(os.path.join(out_dir, target), "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
        labels = [{"level": lv, "title": t, "offset": off, "page": None} for lv, t, off in heads]
        out.append(Labelled(f"real-text:{doc_id}", doc_id, split, spec.lang or detect_lang(text), spec.name, "text",
                            {"version": fetched.version, "group": group, "format": "info"}, target, labels,
                            real=True))
    return out
