"""DOCX input: paragraph text as raw text, heading styles as explicit headings, run styles, errors."""

from __future__ import annotations

import builtins
import io

import pytest

docx = pytest.importorskip("docx")

from fakes import chunk_document  # noqa: E402

import hichunk  # noqa: E402
from hichunk.chunkers import ChunkOptions  # noqa: E402
from hichunk.document import load_document  # noqa: E402
from hichunk.document.docx import parse_docx  # noqa: E402
from hichunk.document.inputs import collect_inputs  # noqa: E402
from hichunk.errors import InputError  # noqa: E402

INTRO = "Solar panels turn sunlight into electricity. They work best facing south."
MOUNT = "Mount the panels on a sturdy frame. Connect the inverter before the battery."


def make_docx(title: bool = True) -> bytes:
    from docx.shared import Pt

    d = docx.Document()
    if title:
        d.add_heading("Solar Guide", 0)
    d.add_heading("Panels", 1)
    d.add_paragraph(INTRO)
    d.add_paragraph("")
    d.add_heading("Installation", 2)
    p = d.add_paragraph()
    p.add_run(MOUNT[:35])
    p.add_run(MOUNT[35:])
    d.add_paragraph("First line\nsecond line after a break.")
    run = d.add_paragraph().add_run("A bold big paragraph that is not a heading style.")
    run.bold, run.font.size = True, Pt(16)
    table = d.add_table(rows=2, cols=2)
    for (r, c), text in {(0, 0): "Part", (0, 1): "Count", (1, 0): "Panel", (1, 1): "4"}.items():
        table.cell(r, c).text = text
    d.add_heading("维护", 2)
    d.add_paragraph("每年清洁两次玻璃。暴风雨后检查电缆。")
    buf = io.BytesIO()
    d.save(buf)
    return buf.getvalue()


@pytest.fixture(scope="module")
def doc():
    return parse_docx(make_docx(), "guide.docx")


def test_raw_text_is_paragraphs_joined_by_newline(doc):
    assert doc.text == "\n".join([
        "Solar Guide", "Panels", INTRO, "", "Installation", MOUNT, "First line\nsecond line after a break.",
        "A bold big paragraph that is not a heading style.", "Part", "Count", "Panel", "4", "维护",
        "每年清洁两次玻璃。暴风雨后检查电缆。"])
    assert doc.page_starts == [] and doc.format == "docx"


def test_clean_view_has_headings_paragraph_lines_and_table_rows(doc):
    lines = [line.text for line in doc.lines if line.text]
    assert lines == ["# Solar Guide", "## Panels", INTRO, "### Installation", MOUNT,
                     "First line second line after a break.", "A bold big paragraph that is not a heading style.",
                     "Part | Count", "Panel | 4", "### 维护", "每年清洁两次玻璃。暴风雨后检查电缆。"]
    assert [(doc.lines[i].text, level) for i, level in doc.headings] == [
        ("# Solar Guide", 1), ("## Panels", 2), ("### Installation", 3), ("### 维护", 3)]


def test_heading_levels_without_a_title_start_at_one():
    doc = parse_docx(make_docx(title=False), "x.docx")
    assert [level for _, level in doc.headings] == [1, 2, 2]


def test_styles_come_from_runs_and_heading_styles(doc):
    style = {line.text: line.style for line in doc.lines if line.text}
    assert style[INTRO].size == 1.0 and not style[INTRO].bold and style[INTRO].page == 0
    big = style["A bold big paragraph that is not a heading style."]
    assert big.bold and big.size > 1.2
    assert style["## Panels"].size > 1.0 and style["## Panels"].bold


def test_chunks_are_lossless_and_hints_decide_the_headings(doc):
    use = hichunk.chunk(doc, "structure", merge_over_chunk=False)
    assert "".join(use.raw_text(leaf) for leaf in use.leaves()) == doc.text
    assert [(s.level, s.title) for s in use.splits] == [(1, True), (2, True), (3, True), (3, True)]
    assert [n.title for n in use.nodes if n.kind == "section"] == ["Solar Guide", "Panels"]
    assert use.raw_text(use.nodes[1]).startswith("Solar Guide\nPanels")
    ignore = chunk_document(doc, "structure", ChunkOptions(hints="ignore"))
    assert len(ignore.splits) == 1 and not ignore.splits[0].title  # no heading boundaries from the styles
    model = hichunk.chunk(doc, hints="ignore")
    assert "".join(model.raw_text(leaf) for leaf in model.leaves()) == doc.text
    assert model.pages(model.root) is None


def test_load_and_collect_docx_files(tmp_path):
    path = tmp_path / "guide.docx"
    path.write_bytes(make_docx())
    (tmp_path / "skip.bin").write_bytes(b"\0")
    assert collect_inputs([str(tmp_path)]) == [str(path)]
    assert load_document(str(path)).clean == parse_docx(make_docx(), "x").clean


def test_damaged_docx_gives_a_one_line_error(tmp_path):
    for name, data in {"broken.docx": b"PK\x03\x04 not really a zip", "text.docx": b"plain text"}.items():
        (tmp_path / name).write_bytes(data)
        with pytest.raises(InputError) as err:
            load_document(str(tmp_path / name))
        assert "\n" not in str(err.value) and "cannot read DOCX" in str(err.value)


def test_missing_python_docx_names_the_extra(monkeypatch):
    real_import = builtins.__import__

    def no_docx(name, *args, **kwargs):
        if name == "docx" or name.startswith("docx."):
            raise ImportError("No module named 'docx'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_docx)
    with pytest.raises(InputError) as err:
        parse_docx(b"PK", "a.docx")
    assert 'pip install "hichunk[docx]"' in str(err.value) and "\n" not in str(err.value)


def _counting_style_lookups(monkeypatch) -> list[int]:
    from docx.oxml.styles import CT_Styles

    calls = [0]
    for name in ("get_by_id", "default_for"):
        real = getattr(CT_Styles, name)

        def counted(self, *args, _real=real):
            calls[0] += 1
            return _real(self, *args)

        monkeypatch.setattr(CT_Styles, name, counted)
    return calls


def test_styles_are_resolved_once_per_document_not_per_paragraph(monkeypatch):
    """python-docx scans every style to find a paragraph's style; resolving them per paragraph cost
    ~2.3 ms each (an 82 KB DOCX ran over 10 minutes)."""
    from docx.enum.style import WD_STYLE_TYPE

    def build(paragraphs: int) -> bytes:
        d = docx.Document()
        for i in range(5):
            d.styles.add_style(f"Custom {i}", WD_STYLE_TYPE.PARAGRAPH).base_style = d.styles["Normal"]
        for i in range(paragraphs):
            d.add_paragraph(f"Paragraph {i}.", style=f"Custom {i % 5}" if i % 2 else None)
        buf = io.BytesIO()
        d.save(buf)
        return buf.getvalue()

    small, large = build(20), build(400)
    calls = _counting_style_lookups(monkeypatch)
    parse_docx(small, "small.docx")
    few = calls[0]
    calls[0] = 0
    doc = parse_docx(large, "large.docx")
    assert calls[0] == few <= 10
    assert doc.text.count("\n") == 399 and doc.text.endswith("Paragraph 399.")
