"""Real labelled documents: files people have, with ground truth that ships inside them.

* PDFs whose bookmark outline gives the heading tree (R manuals, Octave, bash, LilyPond,
  the Chinese TeX Live documentation): level = outline depth, title and page from the
  outline. A PDF without an outline of at least three entries is skipped.
* GNU info manuals read whole as plain text (``info.info_plain_text``): the underline
  character gives the level, offsets are exact.

Both take the split of their group (``manual:R-intro``, ``texlive:latex/lshort-chinese``),
the same group the corpus gives the manual's chapters, so a real document and the corpus
documents made from the same manual never sit in different splits.
"""

from __future__ import annotations

import logging
import os
import shutil

from hichunk.models.train.corpus.corpus import detect_lang, split_of
from hichunk.models.train.corpus.render import Labelled, file_name

log = logging.getLogger(__name__)


def pdf_outline(path: str) -> list[dict]:
    """[{level, title, offset: None, page}] from a PDF's outline (empty when it has none or is unreadable)."""
    from pypdf import PdfReader

    try:
        reader = PdfReader(path)
        outline = reader.outline
    except Exception as exc:  # noqa: BLE001 - a broken PDF is skipped, whatever pypdf raises
        log.warning("%s: no outline (%s)", path, exc)
        return []
    out: list[dict] = []

    def walk(items, depth: int) -> None:
        for item in items:
            if isinstance(item, list):
                walk(item, depth + 1)
                continue
            try:
                page = reader.get_destination_page_number(item) + 1
            except Exception:  # noqa: BLE001 - a dangling destination
                page = None
            title = " ".join(str(getattr(item, "title", "") or "").split())
            if title:
                out.append({"level": depth, "title": title, "offset": None, "page": page})

    try:
        walk(outline, 1)
    except Exception as exc:  # noqa: BLE001
        log.warning("%s: unreadable outline (%s)", path, exc)
        return []
    return out


def _pdf_files(fetched) -> list[tuple[str, str]]:
    """(relative path, path) of the PDFs of a package; links are followed when they stay inside it
    (Debian's r-doc-pdf and bash-doc ship their PDFs as relative links)."""
    import glob

    spec = fetched.spec
    root = os.path.join(fetched.tree, spec.root)
    tree = os.path.realpath(fetched.tree)
    found = set()
    for pattern in spec.patterns:
        for path in glob.glob(os.path.join(root, pattern), recursive=True):
            real = os.path.realpath(path)
            if real.startswith(tree + os.sep) and os.path.isfile(real):
                found.add(os.path.relpath(path, root).replace(os.sep, "/"))
    return [(rel, os.path.realpath(os.path.join(root, rel))) for rel in sorted(found)]


def _place(spec, rel: str, out_dir: str, seed: int, kind: str) -> tuple[str, str, str, str]:
    """(document id, group, split, path under OUT) of a real document; its folder is made."""
    doc_id = f"{spec.name}/{rel}"
    group = spec.group_of(rel) or doc_id
    split = split_of(group, seed)
    target = os.path.join("real", kind, split, file_name(doc_id, ".pdf" if kind == "pdf" else ".txt"))
    os.makedirs(os.path.dirname(os.path.join(out_dir, target)), exist_ok=True)
    return doc_id, group, split, target


def _pdf_lang(path: str, headings: list[dict]) -> str:
    return detect_lang(" ".join(h["title"] for h in headings))


def real_pdfs(fetched, out_dir: str, seed: int = 0) -> list[Labelled]:
    """Labelled documents for the outlined PDFs of one fetched package (copied under OUT/real/pdf)."""
    spec = fetched.spec
    out = []
    for rel, path in _pdf_files(fetched):
        heads = pdf_outline(path)
        if len(heads) < 3:
            continue
        doc_id, group, split, target = _place(spec, rel, out_dir, seed, "pdf")
        shutil.copyfile(path, os.path.join(out_dir, target))
        lang = spec.lang or _pdf_lang(path, heads)
        out.append(Labelled(f"real-pdf:{doc_id}", doc_id, split, lang, spec.name, "pdf",
                            {"version": fetched.version, "group": group}, target, heads, real=True))
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
