"""The HiCBench dataset layout, read and written.

::

    ROOT/docs/<dataset>/<doc_id>.txt|.md    documents with '#' headings; the file stem is the doc id
    ROOT/qas/<dataset>.jsonl                one question per line: input, answers, facts, evidences,
                                            all_classes, _id (the doc id); other fields are kept
    ROOT/manifest.json                      (ours, optional) how the benchmark was made

Users with the real HiCBench point ``--data`` at its ``dataset`` folder and run
it unchanged. The data version reported with every result is a SHA-256 over the
dataset's files (relative path and content hash of each), so two runs on the
same bytes report the same version.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field

from hichunk.document.markdown import parse_markdown
from hichunk.document.model import Document
from hichunk.errors import HichunkError
from hichunk.hashing import file_sha256
from hichunk.models.train.corpus.corpus import content_hash

DOC_EXTENSIONS = (".txt", ".md")
_KNOWN = ("input", "answers", "facts", "evidences", "all_classes", "_id")


@dataclass
class QA:
    """One question. ``index`` is its line number in the jsonl file (0-based, blank lines skipped)."""

    index: int
    doc_id: str
    input: str
    evidences: list[str]
    answers: list[str] = field(default_factory=list)
    facts: list[str] = field(default_factory=list)
    all_classes: list[str] = field(default_factory=list)
    extra: dict = field(default_factory=dict)

    @property
    def qid(self) -> str:
        return str(self.extra.get("qid", f"{self.doc_id}#{self.index}"))

    @property
    def type(self) -> str:
        return str(self.extra.get("type", ""))

    def to_json(self) -> dict:
        return {"input": self.input, "answers": self.answers, "facts": self.facts, "evidences": self.evidences,
                "all_classes": self.all_classes, "_id": self.doc_id, **self.extra}


@dataclass
class BenchDoc:
    doc_id: str
    path: str
    text: str

    def parse(self) -> Document:
        """The document as Markdown ('#' lines outside code fences are headings)."""
        return parse_markdown(self.text, self.path)


@dataclass
class Dataset:
    root: str
    name: str
    docs: dict[str, BenchDoc]
    qas: list[QA]
    version: str
    manifest: dict | None = None

    @property
    def lang(self) -> str | None:
        return (self.manifest or {}).get("datasets", {}).get(self.name, {}).get("lang")


def data_version(root: str, name: str) -> str:
    """SHA-256 over the dataset's documents and question file (paths relative to ``root``)."""
    files = [os.path.join("qas", f"{name}.jsonl")]
    doc_dir = os.path.join(root, "docs", name)
    files += [os.path.join("docs", name, f) for f in sorted(os.listdir(doc_dir)) if f.endswith(DOC_EXTENSIONS)]
    return content_hash({rel.replace(os.sep, "/"): file_sha256(os.path.join(root, rel)) for rel in files})


def dataset_names(root: str) -> list[str]:
    """Datasets under ``root``: those with both a docs folder and a questions file."""
    qas_dir, docs_dir = os.path.join(root, "qas"), os.path.join(root, "docs")
    if not os.path.isdir(qas_dir) or not os.path.isdir(docs_dir):
        raise HichunkError(f"{root}: not a HiCBench-style folder (needs docs/ and qas/)")
    return sorted(f[: -len(".jsonl")] for f in os.listdir(qas_dir)
                  if f.endswith(".jsonl") and os.path.isdir(os.path.join(docs_dir, f[: -len(".jsonl")])))


def resolve(root: str, name: str | None) -> str:
    """The dataset to use: ``name`` if given, else the only one under ``root``."""
    names = dataset_names(root)
    if name is None:
        if len(names) != 1:
            raise HichunkError(f"{root}: {'no dataset' if not names else 'several datasets (' + ', '.join(names) + ')'}"
                               f"; name one with --dataset")
        return names[0]
    if name not in names:
        raise HichunkError(f"{root}: no dataset {name!r} (found: {', '.join(names) or 'none'})")
    return name


def _read_json_list(value, what: str, where: str) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise HichunkError(f"{where}: '{what}' must be a list of strings")
    return value


def load_questions(path: str) -> list[QA]:
    out: list[QA] = []
    try:
        fh = open(path, encoding="utf-8")
    except OSError as exc:
        raise HichunkError(f"{path}: cannot read ({exc.strerror})") from None
    with fh:
        index = 0
        for n, line in enumerate(fh, 1):
            if not line.strip():
                continue
            where = f"{path}:{n}"
            try:
                rec = json.loads(line)
            except json.JSONDecodeError as exc:
                raise HichunkError(f"{where}: not JSON ({exc.msg})") from None
            if not isinstance(rec, dict) or "input" not in rec or "_id" not in rec:
                raise HichunkError(f"{where}: a question needs 'input' and '_id'")
            out.append(QA(index, str(rec["_id"]), str(rec["input"]),
                          _read_json_list(rec.get("evidences"), "evidences", where),
                          _read_json_list(rec.get("answers"), "answers", where),
                          _read_json_list(rec.get("facts"), "facts", where),
                          _read_json_list(rec.get("all_classes"), "all_classes", where),
                          {k: v for k, v in rec.items() if k not in _KNOWN}))
            index += 1
    return out


def load_dataset(root: str, name: str | None = None) -> Dataset:
    """Documents and questions of one dataset; every question's ``_id`` must name a document."""
    name = resolve(root, name)
    doc_dir = os.path.join(root, "docs", name)
    docs: dict[str, BenchDoc] = {}
    for fname in sorted(os.listdir(doc_dir)):
        stem, ext = os.path.splitext(fname)
        if ext not in DOC_EXTENSIONS:
            continue
        if stem in docs:
            raise HichunkError(f"{doc_dir}: two documents with the id {stem!r}")
        path = os.path.join(doc_dir, fname)
        try:
            with open(path, encoding="utf-8") as fh:
                docs[stem] = BenchDoc(stem, path, fh.read())
        except (OSError, UnicodeDecodeError) as exc:
            raise HichunkError(f"{path}: cannot read as UTF-8 text ({exc})") from None
    qas = load_questions(os.path.join(root, "qas", f"{name}.jsonl"))
    missing = sorted({q.doc_id for q in qas} - set(docs))
    if missing:
        raise HichunkError(f"{name}: {len(missing)} questions name documents that do not exist (e.g. {missing[0]!r})")
    manifest = None
    mpath = os.path.join(root, "manifest.json")
    if os.path.exists(mpath):
        try:
            with open(mpath, encoding="utf-8") as fh:
                manifest = json.load(fh)
        except json.JSONDecodeError as exc:
            raise HichunkError(f"{mpath}: not valid JSON ({exc.msg})") from None
    return Dataset(root, name, docs, qas, data_version(root, name), manifest)


_UNSAFE = re.compile(r"[^\w.-]+")


def doc_stem(doc_id: str) -> str:
    """A file-name-safe id: '/' becomes '__', other unsafe runs '_'."""
    return "__".join(_UNSAFE.sub("_", part) for part in doc_id.split("/")).strip(".") or "doc"


def write_dataset(root: str, name: str, docs: dict[str, str], qas: list[dict], ext: str = ".md") -> str:
    """Write documents (``{doc_id: text}``, ids already file-safe) and questions; returns the data version."""
    if ext not in DOC_EXTENSIONS:
        raise HichunkError(f"document extension must be one of {DOC_EXTENSIONS}")
    doc_dir = os.path.join(root, "docs", name)
    os.makedirs(doc_dir, exist_ok=True)
    os.makedirs(os.path.join(root, "qas"), exist_ok=True)
    for old in os.listdir(doc_dir):  # a rebuilt dataset must not keep documents of an older build
        if old.endswith(DOC_EXTENSIONS):
            os.remove(os.path.join(doc_dir, old))
    for doc_id, text in docs.items():
        with open(os.path.join(doc_dir, doc_id + ext), "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
    qpath = os.path.join(root, "qas", f"{name}.jsonl")
    with open(qpath + ".tmp", "w", encoding="utf-8") as fh:
        for rec in qas:
            fh.write(json.dumps(rec, ensure_ascii=False) + "\n")
    os.replace(qpath + ".tmp", qpath)
    return data_version(root, name)
