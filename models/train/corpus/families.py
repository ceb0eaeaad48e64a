"""Document families: a project and every package and rendering of its documentation.

A split-point model is only as good as its worst unseen family, so models are judged
leave-family-out: every document of a family (its Markdown, its plain-text, styled and PDF
renderings, its real PDFs and info manuals, its translations) is held out together. Packages
of one project share conventions (the R manuals as info and as PDF; LilyPond's English and
Chinese manuals; the KDE handbooks, written to one DocBook style guide), so they form one
family; a package not listed here is a family of its own. TeX Live's documentation packages
share LaTeX's conventions (its document classes, its PDFs), so they are two families: the
English guides and package manuals, and the Chinese and CJK ones.
"""

from __future__ import annotations

import re

FAMILIES: dict[str, str] = {
    "r-doc-info": "r",
    "r-doc-pdf": "r",
    "lilypond-doc": "lilypond",
    "lilypond-doc-pdf": "lilypond",
    "lilypond-doc-html-zh": "lilypond",
    "kicad-doc-en": "kicad",
    "kicad-doc-zh": "kicad",
    "konsole": "kde",
    "kstars-data": "kde",
    "kmymoney-common": "kde",
    "kile-doc": "kde",
    "kdenlive-data": "kde",
    "postgresql-doc-15": "postgresql",
    "python3.11-doc": "python",
    "python-django-doc": "django",
    "libreoffice-help-zh-cn": "libreoffice",
    "exim4-doc-info": "exim",
    "gnucash-docs": "gnucash",
    "glpk-doc": "glpk",
    "asymptote-doc": "asymptote",
    "gap-doc": "gap",
    "pari-doc": "pari",
    "zsh-doc": "zsh",
    "gnuplot-doc": "gnuplot",
    "linuxcnc-doc-en": "linuxcnc",
    "nodejieba": "jieba",  # the Node binding ships cppjieba's README: one project
    **{f"texlive-{name}": "texlive" for name in ("lang-english", "pictures-doc", "latex-base-doc", "science-doc",
                                                 "latex-recommended-doc", "humanities-doc", "metapost-doc",
                                                 "publishers-doc")},
    "texlive-lang-chinese": "texlive-zh",
    "texlive-lang-cjk": "texlive-zh",
}


def family_of(package: str) -> str:
    """The family of a corpus source or real-document package (its own name when it has no project family)."""
    return FAMILIES.get(package, package)


# id prefixes of labelled renderings ("text:", "markdown:styled:", "real-pdf:" ...) and of unnumbered copies
_ID_PREFIX = re.compile(r"^(?:unnumbered:)?(?:(?:markdown:(?:original|styled)|text|pdf|real-text|real-pdf):)?(?:book:)?")


def document_family(doc_id: str) -> str:
    """The family of a document from its id: corpus ids (``package/path``), rendering ids (``text:package/path``,
    ``text:book:package:...``) and benchmark ids made from corpus ids (``package__path``) name their package first."""
    rest = _ID_PREFIX.sub("", doc_id, count=1)
    return family_of(re.split(r"/|__|:", rest, maxsplit=1)[0])
