"""``hichunk corpus``: build multi-level Markdown corpora from Debian docs or your own folders."""

from __future__ import annotations

import argparse
import json
import logging


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("corpus", help="build and inspect training/eval corpora")
    sub = parser.add_subparsers(dest="corpus_command", metavar="ACTION")
    parser.set_defaults(handler=lambda args: parser.print_help() or 2)

    build = sub.add_parser("build", help="convert documents to Markdown and split them train/dev/test")
    build.add_argument("--packages", nargs="*", metavar="PKG", default=None,
                       help="sources: Debian, npm or PyPI packages known to the builder (default: all of them unless --from is given)")
    build.add_argument("--from", dest="dirs", action="append", default=[], metavar="DIR",
                       help="a folder of Markdown/HTML/reST/man pages (repeatable)")
    build.add_argument("--out", required=True, metavar="DIR", help="output folder")
    build.add_argument("--cache", metavar="DIR", help="download cache (default ${XDG_CACHE_HOME:-~/.cache}/hichunk/debian)")
    build.add_argument("--min-words", type=int, default=300, help="minimum words of an English document")
    build.add_argument("--min-chars", type=int, default=600, help="minimum characters of a Chinese document")
    build.add_argument("--seed", type=int, default=0, help="split seed")
    build.add_argument("--jobs", type=int, default=1, help="worker processes")
    build.add_argument("--refresh", action="store_true", help="download packages again")
    build.set_defaults(handler=_build)

    render = sub.add_parser("render", help="render a corpus as labelled text/Markdown/PDF documents (+ real ones)")
    render.add_argument("--corpus", required=True, metavar="DIR", help="a built corpus")
    render.add_argument("--out", required=True, metavar="DIR", help="output folder (labels.jsonl, manifest.json, files)")
    render.add_argument("--kinds", default="markdown,text,pdf", help="comma-separated: markdown,text,pdf")
    render.add_argument("--seed", type=int, default=0, help="style seed")
    render.add_argument("--pdf-share", type=float, default=0.1,
                        help="share of train/dev documents also rendered as PDF (every test document is)")
    render.add_argument("--books", type=int, default=2, help="plain-text books per corpus, language and split")
    render.add_argument("--no-real", dest="real", action="store_false",
                        help="skip real documents (outlined PDFs, info manuals; downloads their packages)")
    render.add_argument("--cache", metavar="DIR", help="download cache for the real documents' packages")
    render.add_argument("--jobs", type=int, default=1, help="worker processes")
    render.set_defaults(handler=_render)

    stats = sub.add_parser("stats", help="counts and lengths of a built corpus")
    stats.add_argument("dir", metavar="DIR")
    stats.set_defaults(handler=_stats)

    denum = sub.add_parser("denumber", help="copy a corpus with heading numbering stripped")
    denum.add_argument("dir", metavar="DIR")
    denum.add_argument("--out", required=True, metavar="DIR")
    denum.set_defaults(handler=_denumber)


def _build(args: argparse.Namespace) -> int:
    from hichunk.models.train.corpus.corpus import build_corpus
    from hichunk.models.train.corpus.sources import DEFAULT_SOURCES as DEFAULT_PACKAGES

    packages = args.packages
    if packages is None:
        packages = [] if args.dirs else list(DEFAULT_PACKAGES)
    manifest = build_corpus(
        args.out, packages=packages, dirs=args.dirs, cache_dir=args.cache, min_words=args.min_words,
        min_chars=args.min_chars, seed=args.seed, jobs=args.jobs, refresh=args.refresh,
        progress=logging.getLogger().level <= logging.WARNING,
    )
    print(json.dumps({"total": manifest.data["total"], "counts": manifest.counts}, ensure_ascii=False, indent=2))
    return 0


def _render(args: argparse.Namespace) -> int:
    from hichunk.models.train.corpus.render_corpus import render_corpus

    kinds = [k.strip() for k in args.kinds.split(",") if k.strip()]
    manifest = render_corpus(
        args.corpus, args.out, kinds=kinds, seed=args.seed, pdf_share=args.pdf_share, books_per_source=args.books,
        real=args.real, cache_dir=args.cache, jobs=args.jobs, progress=logging.getLogger().level <= logging.WARNING,
    )
    print(json.dumps({k: manifest[k] for k in ("total", "counts", "failures", "seconds")}, ensure_ascii=False,
                     indent=2))
    return 1 if manifest["failures"] else 0


def _stats(args: argparse.Namespace) -> int:
    from hichunk.models.train.corpus.corpus import Manifest, corpus_stats

    manifest = Manifest.load(args.dir)
    out = {"counts": manifest.counts, "dropped": manifest.data.get("dropped", {}), "stats": corpus_stats(args.dir)}
    print(json.dumps(out, ensure_ascii=False, indent=2))
    return 0


def _denumber(args: argparse.Namespace) -> int:
    from hichunk.models.train.corpus.corpus import write_denumbered

    manifest = write_denumbered(args.dir, args.out)
    print(json.dumps({"content_hash": manifest.data["content_hash"]}, indent=2))
    return 0
