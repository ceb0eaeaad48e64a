"""Build training/eval corpora of multi-level Markdown documents.

Sources are Debian documentation packages (see ``hichunk.models.train.corpus.debian``) or any
folder of the user's own Markdown/HTML/reST/man pages. Each document goes
through hichunk's own parsers, then ``normalise.to_markdown``; it is kept when
it has at least two heading levels and enough text, and is not an exact
duplicate of a document already kept.

Output layout::

    OUT/train.jsonl  OUT/dev.jsonl  OUT/test.jsonl   one JSON document per line, sorted by id
    OUT/manifest.json                                  sources + versions, counts, parameters, hashes

The split of a document depends only on its id (``corpus/relative path``) and
the seed, so adding or removing other documents never moves it.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import logging
import os
from collections.abc import Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass, field

from hichunk.document.decode import decode_bytes
from hichunk.document.load import detect_format, parse_document
from hichunk.errors import HichunkError, InputError
from hichunk.hashing import file_sha256, text_sha256

BUILDER_VERSION = "2.1"  # 2.1: front matter is body text, not a heading
SPLITS = ("train", "dev", "test")
SPLIT_SHARES = (80, 10, 10)  # percent
DEFAULT_MIN_WORDS = 300  # English: whitespace-separated words
DEFAULT_MIN_CHARS = 600  # Chinese: non-space characters
DIR_EXTENSIONS = {".md": "markdown", ".markdown": "markdown", ".html": "html", ".htm": "html",
                  ".xhtml": "html", ".rst": "rst", ".rest": "rst", ".txt": "rst-txt"}

log = logging.getLogger(__name__)


@dataclass
class CorpusDoc:
    """One corpus document (a line of a split file)."""

    id: str
    corpus: str
    lang: str
    title: str
    source: str
    markdown: str
    n_words: int
    n_chars: int
    n_headings: int
    max_depth: int
    format: str = ""
    group: str = ""  # documents of one group share a split (a manual's chapters, its translations, its PDF)

    @property
    def split_key(self) -> str:
        return self.group or self.id

    def to_json(self) -> str:
        return json.dumps(asdict(self), ensure_ascii=False, sort_keys=True)

    @classmethod
    def from_json(cls, line: str) -> CorpusDoc:
        data = json.loads(line)
        return cls(**{k: data[k] for k in cls.__dataclass_fields__ if k in data})


@dataclass(frozen=True)
class SourceDoc:
    """A file to convert, with what is needed to parse it (picklable for worker processes)."""

    corpus: str
    source: str  # path relative to the corpus root
    path: str
    fmt: str
    lang: str | None = None  # None: detect
    gzip: bool = False
    drop_ids: tuple[str, ...] = ()
    drop_classes: tuple[str, ...] = ()
    plain_heading_classes: tuple[str, ...] = ()
    group: str = ""
    split_words: int = 0  # cut longer documents into parts at their top headings

    @property
    def id(self) -> str:
        return f"{self.corpus}/{self.source}"


@dataclass
class Manifest:
    """What a built corpus holds and how it was made."""

    data: dict = field(default_factory=dict)

    def save(self, path: str) -> None:
        with open(path, "w", encoding="utf-8") as fh:
            json.dump(self.data, fh, ensure_ascii=False, indent=2, sort_keys=True)
            fh.write("\n")

    @classmethod
    def load(cls, corpus_dir: str) -> Manifest:
        path = os.path.join(corpus_dir, "manifest.json")
        try:
            with open(path, encoding="utf-8") as fh:
                return cls(json.load(fh))
        except FileNotFoundError:
            raise HichunkError(f"{corpus_dir}: no manifest.json (not a built corpus?)") from None
        except json.JSONDecodeError as exc:
            raise HichunkError(f"{path}: not valid JSON ({exc.msg})") from None

    @property
    def counts(self) -> dict:
        return self.data.get("counts", {})


def corpus_provenance(corpus_dir: str) -> dict:
    """Sources and content hash of a built corpus, for a trained model's record (None values without a manifest)."""
    try:
        manifest = Manifest.load(corpus_dir).data
    except HichunkError:  # a folder without manifest still trains; provenance says so
        return {"sources": None, "content_hash": None}
    return {"sources": [{k: s.get(k) for k in ("name", "version", "kind")} for s in manifest.get("sources", [])],
            "content_hash": manifest.get("content_hash")}


def split_of(doc_id: str, seed: int = 0) -> str:
    """train/dev/test from a hash of the id and seed (80/10/10)."""
    bucket = int(hashlib.sha256(f"{seed}\0{doc_id}".encode()).hexdigest()[:8], 16) % 100
    edge = 0
    for name, share in zip(SPLITS, SPLIT_SHARES):
        edge += share
        if bucket < edge:
            return name
    return SPLITS[-1]


def detect_lang(text: str) -> str:
    """'zh' when CJK ideographs are over a fifth of the non-space characters outside code fences, else 'en'."""
    if "```" in text:
        prose, fence = [], False
        for line in text.split("\n"):
            if line.lstrip().startswith("```"):
                fence = not fence
            elif not fence:
                prose.append(line)
        text = "\n".join(prose)
    chars = [c for c in text if not c.isspace() and c.isalpha()]
    if not chars:
        return "en"
    cjk = sum(1 for c in chars if "\u3400" <= c <= "\u9fff" or "\uf900" <= c <= "\ufaff")
    return "zh" if cjk * 5 > len(chars) else "en"


def count_words(markdown: str) -> tuple[int, int]:
    """(whitespace-separated words, non-space characters)."""
    return len(markdown.split()), sum(1 for c in markdown if not c.isspace())


def _read(src: SourceDoc) -> str:
    with open(src.path, "rb") as fh:
        data = fh.read()
    if src.gzip or src.path.endswith(".gz"):
        import gzip

        try:
            data = gzip.decompress(data)
        except (OSError, EOFError) as exc:
            raise InputError(f"{src.path}: not a valid gzip file ({exc})") from None
    return decode_bytes(data, src.path)


def _items(src: SourceDoc) -> list:
    """Corpus items of a file in one of the converted markups (LaTeX, info, DocBook, AsciiDoc)."""
    if src.fmt == "info":
        from hichunk.models.train.corpus.info import info_items, read_manual

        return info_items(read_manual(src.path))
    try:
        text = _read(src)
    except InputError:  # old TeX files are often Latin-1: keep their text, replace what does not decode
        with open(src.path, "rb") as fh:
            data = fh.read()
        if src.path.endswith(".gz"):
            import gzip

            data = gzip.decompress(data)
        text = data.decode("utf-8", errors="replace")
    if src.fmt == "latex":
        from hichunk.models.train.corpus.latex import latex_items

        return latex_items(text)
    if src.fmt == "docbook":
        from hichunk.models.train.corpus.docbook import docbook_items

        return docbook_items(text, os.path.dirname(src.path))
    if src.fmt == "asciidoc":
        from hichunk.models.train.corpus.asciidoc import asciidoc_items

        return asciidoc_items(text)
    raise InputError(f"{src.path}: unknown format {src.fmt!r}")


CONVERTED_FORMATS = ("info", "latex", "docbook", "asciidoc")


def convert(src: SourceDoc) -> list[tuple[str, CorpusDoc | None, str]]:
    """Parse and normalise one file: [(id, document or None, reason it was dropped)], one per part.

    A file longer than ``src.split_words`` becomes several documents, one per top-level
    section (ids ``SOURCE#01``, ``#02``...); they keep the file's group, so they share a split.
    """
    from hichunk.document.html import html_title, parse_html
    from hichunk.models.train.corpus.normalise import _layout, items_to_markdown, split_items

    text = ""
    try:
        if src.fmt in CONVERTED_FORMATS:
            items = _items(src)
        else:
            text = _read(src)
            if src.fmt == "html":
                doc = parse_html(
                    text, src.path, drop_ids=src.drop_ids, drop_classes=src.drop_classes,
                    plain_heading_classes=src.plain_heading_classes,
                )
            else:
                doc = parse_document(text, src.fmt, src.path)
            items = _layout(doc)[0]
        parts = split_items(items, src.split_words) if src.split_words else [items]
        mds = [items_to_markdown(part, src.path) for part in parts]
    except (InputError, OSError, RecursionError, ValueError) as exc:
        return [(src.id, None, f"unreadable: {exc}")]
    out = []
    for k, md in enumerate(mds):
        doc_id = src.id if len(mds) == 1 else f"{src.id}#{k + 1:02d}"
        title = next((t for _, level, t in md.headings if level == 1), "")
        if not title and src.fmt == "html" and len(mds) == 1:
            title = html_title(text) or ""
        if not title:
            title = os.path.basename(src.source).split(".")[0]
        n_words, n_chars = count_words(md.markdown)
        lang = src.lang or detect_lang(md.markdown)
        cdoc = CorpusDoc(
            id=doc_id, corpus=src.corpus, lang=lang, title=title, source=src.source, markdown=md.markdown,
            n_words=n_words, n_chars=n_chars, n_headings=len(md.headings), max_depth=md.max_depth, format=src.fmt,
            group=src.group or (src.id if len(mds) > 1 else ""),
        )
        out.append((doc_id, cdoc, ""))
    return out


def dir_sources(root: str, corpus: str | None = None) -> list[SourceDoc]:
    """Every Markdown/HTML/reST/man page under ``root`` (sorted; ``.txt`` only as ``.rst.txt``)."""
    if not os.path.isdir(root):
        raise HichunkError(f"{root}: not a directory")
    name = corpus or os.path.basename(os.path.abspath(root).rstrip(os.sep)) or "dir"
    out = []
    for base, dirs, files in os.walk(root):
        dirs.sort()
        for fname in sorted(files):
            path = os.path.join(base, fname)
            rel = os.path.relpath(path, root).replace(os.sep, "/")
            lower = fname.lower()
            if lower.endswith(".rst.txt"):
                fmt = "rst"
            elif os.path.splitext(lower)[1] in DIR_EXTENSIONS and DIR_EXTENSIONS[os.path.splitext(lower)[1]] != "rst-txt":
                fmt = DIR_EXTENSIONS[os.path.splitext(lower)[1]]
            elif detect_format(lower) == "groff":
                fmt = "groff"
            else:
                continue
            if os.path.islink(path):
                continue
            out.append(SourceDoc(name, rel, path, fmt))
    return sorted(out, key=lambda s: s.source)


def package_sources(pkg) -> list[SourceDoc]:
    """SourceDocs of an unpacked Debian package (``debian.FetchedPackage``)."""
    from hichunk.models.train.corpus.debian import list_documents

    spec = pkg.spec
    return [
        SourceDoc(
            spec.name, rel, path, spec.fmt, spec.lang or None, spec.gzip, spec.drop_ids, spec.drop_classes,
            spec.plain_heading_classes, spec.group_of(rel), spec.split_words,
        )
        for rel, path in list_documents(pkg)
    ]


def _convert_all(sources: list[SourceDoc], jobs: int, progress: bool) -> Iterator[list[tuple[str, CorpusDoc | None, str]]]:
    from tqdm import tqdm

    bar = tqdm(total=len(sources), desc="converting", unit="doc", disable=not progress)
    try:
        if jobs <= 1:
            for src in sources:
                yield convert(src)
                bar.update()
        else:
            with ProcessPoolExecutor(max_workers=jobs) as pool:
                for result in pool.map(convert, sources, chunksize=2):
                    yield result
                    bar.update()
    finally:
        bar.close()



def _files_hash(found: list[SourceDoc]) -> str:
    """One hash over the (relative path, sha256) of every source file used from a package."""
    return text_sha256("".join(f"{s.source}:{file_sha256(s.path)}\n" for s in sorted(found, key=lambda s: s.source)))


def content_hash(files: dict[str, str]) -> str:
    """One hash naming a corpus version: over the (file name, file hash) pairs."""
    return text_sha256("".join(f"{k}:{v}\n" for k, v in sorted(files.items())))


def build_corpus(
    out_dir: str,
    packages: Iterable[str] = (),
    dirs: Iterable[str] = (),
    cache_dir: str | None = None,
    min_words: int = DEFAULT_MIN_WORDS,
    min_chars: int = DEFAULT_MIN_CHARS,
    min_depth: int = 2,
    seed: int = 0,
    jobs: int = 1,
    refresh: bool = False,
    progress: bool = True,
) -> Manifest:
    """Convert, filter, dedupe and split documents from packages and folders into ``out_dir``."""
    from hichunk.models.train.corpus import debian
    from hichunk.models.train.corpus import sources as registry

    packages, dirs = list(packages), list(dirs)
    if not packages and not dirs:
        raise HichunkError("nothing to build: give Debian package names and/or folders")
    if min_words < 0 or min_chars < 0:
        raise HichunkError("minimum lengths must not be negative")
    cache_dir = cache_dir or debian.default_cache_dir()
    sources: list[SourceDoc] = []
    source_info = []
    for name in packages:
        pkg = registry.fetch_source(name, cache_dir, refresh=refresh)
        found = package_sources(pkg)
        log.info("%s %s: %d files", name, pkg.version, len(found))
        sources.extend(found)
        source_info.append({"kind": pkg.spec.registry, "name": name, "version": pkg.version,
                            "lang": pkg.spec.lang or "detected", "format": pkg.spec.fmt,
                            "archive": os.path.basename(pkg.deb), "archive_sha256": pkg.deb_sha256,
                            "files": len(found), "files_sha256": _files_hash(found)})
    for root in dirs:
        found = dir_sources(root)
        corpus = found[0].corpus if found else os.path.basename(os.path.abspath(root))
        sources.extend(found)
        source_info.append({"kind": "dir", "name": corpus, "path": os.path.abspath(root), "files": len(found)})
    ids = [s.id for s in sources]
    if len(set(ids)) != len(ids):
        raise HichunkError("two sources give documents the same id (two folders with one name?)")

    kept: dict[str, list[CorpusDoc]] = {s: [] for s in SPLITS}
    seen: dict[str, str] = {}
    dropped: dict[str, dict[str, int]] = {}
    for doc_id, doc, reason in (r for results in _convert_all(sources, jobs, progress) for r in results):
        corpus = doc_id.split("/", 1)[0]
        if doc is not None:
            if doc.max_depth < min_depth:
                reason = "flat"
            elif (doc.n_chars < min_chars) if doc.lang == "zh" else (doc.n_words < min_words):
                reason = "short"
            else:
                digest = hashlib.sha256(doc.markdown.encode("utf-8")).hexdigest()
                if digest in seen:
                    reason = "duplicate"
                    log.debug("%s duplicates %s", doc_id, seen[digest])
                else:
                    seen[digest] = doc_id
        else:
            log.warning("%s", reason)
            reason = "unreadable"
        if reason:
            bucket = dropped.setdefault(corpus, {})
            bucket[reason] = bucket.get(reason, 0) + 1
            continue
        kept[split_of(doc.split_key, seed)].append(doc)

    try:
        return _write(out_dir, kept, dropped, source_info, min_words, min_chars, min_depth, seed)
    except OSError as exc:
        raise HichunkError(f"{out_dir}: cannot write the corpus ({exc.strerror or exc})") from None


def _write(out_dir, kept, dropped, source_info, min_words, min_chars, min_depth, seed) -> Manifest:
    """Write the split files and the manifest."""
    os.makedirs(out_dir, exist_ok=True)
    counts: dict[str, dict[str, dict[str, int]]] = {}
    files = {}
    for split in SPLITS:
        docs = sorted(kept[split], key=lambda d: d.id)
        path = os.path.join(out_dir, f"{split}.jsonl")
        tmp = path + ".tmp"
        with open(tmp, "w", encoding="utf-8") as fh:
            for d in docs:
                fh.write(d.to_json() + "\n")
                c = counts.setdefault(d.corpus, {}).setdefault(split, {})
                c[d.lang] = c.get(d.lang, 0) + 1
        os.replace(tmp, path)
        files[f"{split}.jsonl"] = file_sha256(path)
    content = content_hash(files)
    manifest = Manifest(
        {
            "builder_version": BUILDER_VERSION,
            "created": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "parameters": {"min_words": min_words, "min_chars": min_chars, "min_depth": min_depth, "seed": seed,
                           "split_shares": dict(zip(SPLITS, SPLIT_SHARES))},
            "sources": source_info,
            "counts": counts,
            "dropped": dropped,
            "total": sum(len(v) for v in kept.values()),
            "files": files,
            "content_hash": content,
        }
    )
    manifest.save(os.path.join(out_dir, "manifest.json"))
    return manifest


def load_split(corpus_dir: str, split: str) -> Iterator[CorpusDoc]:
    """Documents of one split of a built corpus, in file order."""
    if split not in SPLITS:
        raise HichunkError(f"unknown split {split!r} (choose from {', '.join(SPLITS)})")
    path = os.path.join(corpus_dir, f"{split}.jsonl")
    try:
        fh = open(path, encoding="utf-8")
    except FileNotFoundError:
        raise HichunkError(f"{path}: no such file (not a built corpus?)") from None
    with fh:
        for n, line in enumerate(fh, 1):
            if line.strip():
                try:
                    yield CorpusDoc.from_json(line)
                except (json.JSONDecodeError, TypeError, KeyError) as exc:
                    raise HichunkError(f"{path}:{n}: not a corpus document ({exc})") from None


def corpus_stats(corpus_dir: str) -> dict:
    """Counts, median words/chars and heading-depth histogram per corpus and language."""
    import statistics

    groups: dict[tuple[str, str], list[CorpusDoc]] = {}
    for split in SPLITS:
        for d in load_split(corpus_dir, split):
            groups.setdefault((d.corpus, d.lang), []).append(d)
    out = {}
    for (corpus, lang), docs in sorted(groups.items()):
        depth: dict[int, int] = {}
        for d in docs:
            depth[d.max_depth] = depth.get(d.max_depth, 0) + 1
        out[f"{corpus} [{lang}]"] = {
            "docs": len(docs),
            "median_words": statistics.median(d.n_words for d in docs),
            "median_chars": statistics.median(d.n_chars for d in docs),
            "median_headings": statistics.median(d.n_headings for d in docs),
            "max_depth": dict(sorted(depth.items())),
        }
    return out


def write_denumbered(corpus_dir: str, out_dir: str) -> Manifest:
    """Copy a corpus with heading numbering stripped ("3.2 Title" -> "Title")."""
    from hichunk.models.train.corpus.normalise import denumber_markdown

    manifest = Manifest.load(corpus_dir)
    os.makedirs(out_dir, exist_ok=True)
    files = {}
    for split in SPLITS:
        path = os.path.join(out_dir, f"{split}.jsonl")
        with open(path + ".tmp", "w", encoding="utf-8") as fh:
            for d in load_split(corpus_dir, split):
                d.markdown = denumber_markdown(d.markdown)
                fh.write(d.to_json() + "\n")
        os.replace(path + ".tmp", path)
        files[f"{split}.jsonl"] = file_sha256(path)
    data = dict(manifest.data)
    data["denumbered_from"] = {"path": os.path.abspath(corpus_dir), "content_hash": manifest.data.get("content_hash")}
    data["files"] = files
    data["content_hash"] = content_hash(files)
    out = Manifest(data)
    out.save(os.path.join(out_dir, "manifest.json"))
    return out
