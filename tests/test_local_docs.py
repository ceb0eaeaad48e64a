"""The machine's own documentation as a benchmark: readers for each source, truth, scoring and the command."""

from __future__ import annotations

import gzip

from hichunk.bench import local_docs

INFO = ("This is demo.info, produced by makeinfo.\n\n"
        "\x1f\nFile: demo.info,  Node: Top,  Next: Usage,  Up: (dir)\n\nDemo\n****\n\nA demo manual.\n\n"
        "\x1f\nFile: demo.info,  Node: Usage,  Next: Limits,  Prev: Top,  Up: Top\n\n1 Usage\n*******\n\nRun it.\n\n"
        "1.1 Options\n===========\n\nThere are none.\n\n"
        "\x1f\nFile: demo.info,  Node: Limits,  Prev: Usage,  Up: Top\n\n2 Limits\n********\n\nFew.\n")

MAN = ("LS(1)                     User Commands                    LS(1)\n\nNAME\n       ls - list directory contents\n\n"
       "SYNOPSIS\n       ls [OPTION]... [FILE]...\n\nDESCRIPTION\n       List information about the FILEs.\n\n"
       "SEE ALSO\n       dir(1)\n\nGNU coreutils 9.1            September 2022                   LS(1)\n")


def test_readers_find_headings_in_each_source(tmp_path):
    (tmp_path / "demo.info").write_text(INFO)
    info = local_docs.info_documents(str(tmp_path))
    assert list(info) == ["demo.info"] and sorted(info["demo.info"][1].levels) == [1, 2, 2, 3]
    docs = tmp_path / "doc" / "pkg"
    docs.mkdir(parents=True)
    (docs / "README.md").write_text("# Tool\n\nIntro.\n\n## Install\n\nRun it.\n\n## Use\n\nType.\n")
    with gzip.open(docs / "NEWS.md.gz", "wt") as fh:
        fh.write("# News\n\n## 1.1\n\nFixes.\n\n## 1.0\n\nFirst.\n")
    (docs / "short.md").write_text("# Only\n\n## Two headings\n")  # too few to score
    (docs / "bad.md").write_bytes(b"# \xff\xfe\n")  # not UTF-8: skipped
    held_out = tmp_path / "doc" / "debian-reference-en"
    held_out.mkdir()
    (held_out / "index.md").write_text("# Reference\n\n## One\n\nx\n\n## Two\n\ny\n")  # never read
    assert sorted(local_docs.markdown_documents(str(tmp_path / "doc"))) == ["pkg/NEWS.md.gz", "pkg/README.md"]
    site = tmp_path / "site" / "demo-1.0.dist-info"
    site.mkdir(parents=True)
    (site / "METADATA").write_text("Metadata-Version: 2.1\nName: demo\nDescription-Content-Type: text/markdown\n\n"
                                   "# Demo\n\nA tool.\n\n## Install\n\npip.\n\n## Use\n\nRun.\n")
    assert list(local_docs.pypi_documents(str(tmp_path / "site"))) == ["demo"]


def test_a_man_page_as_text_has_its_title_and_sections_for_truth():
    truth = local_docs.man_text_truth(MAN)
    assert sorted(truth.at.values()) == [1, 2, 2, 2, 2]  # the footer, at column 0 too, is none
    assert MAN.index("SEE ALSO") in truth.at and MAN.index("GNU coreutils") not in truth.at


def test_scores_and_the_command(tmp_path, capsys):
    docs = tmp_path / "doc" / "pkg"
    docs.mkdir(parents=True)
    (docs / "README.md").write_text("# Tool\n\nIntro.\n\n## 1. Install\n\nRun it.\n\n## 2. Use\n\nType.\n")
    rows = local_docs.score(local_docs.markdown_documents(str(tmp_path / "doc")), "numbering")
    assert rows[0]["n_docs"] == 1 and 0.0 <= rows[0]["f1_pooled"] <= 1.0 and rows[0]["worst"][0][0] == "pkg/README.md"
    assert local_docs.main(["--sources", "markdown,info", "--markdown-dir", str(tmp_path / "doc"), "--info-dir",
                            str(tmp_path / "none"), "--methods", "numbering"]) == 0
    out = capsys.readouterr().out
    assert "markdown  numbering" in out and "info      (none on this machine)" in out
