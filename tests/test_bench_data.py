"""hicbench data: the HiCBench layout, structure-derived questions, benchmark making."""

from __future__ import annotations

import json
import os
import random

import pytest

from hichunk.bench.data import questions as Q
from hichunk.bench.data.hicbench_format import data_version, doc_stem, load_dataset, write_dataset
from hichunk.bench.data.make import MakeOptions, folder_documents, heading_safe, make_benchmark
from hichunk.document.markdown import parse_markdown
from hichunk.errors import HichunkError


def words(n: int, seed: int, lang: str = "en") -> str:
    """Sentences of about ten words (or ten CJK characters) each, n words in all."""
    rng = random.Random(seed)
    vocab = ["alpha", "beta", "gamma", "delta", "omega", "kappa", "sigma", "theta", "lambda", "zeta"]
    chars = "天地玄黄宇宙洪荒日月盈昃辰宿列张寒来暑往秋收冬藏"
    out = []
    for i in range(0, n, 10):
        k = min(10, n - i)
        if lang == "zh":
            out.append("".join(rng.choice(chars) for _ in range(k)) + "。")
        else:
            out.append(" ".join([rng.choice(vocab) for _ in range(k - 1)] + [f"s{seed}x{i}."]).capitalize())
    return ("" if lang == "zh" else " ").join(out)


def structured_doc(lang: str = "en") -> str:
    """Title; a 2100-word section; a parent with three 300-word children; a 100-word section."""
    scale = 1.5 if lang == "zh" else 1.0
    n = lambda k: int(k * scale)  # noqa: E731
    return (f"# Manual\n\nIntro {words(20, 1, lang)}\n\n## Install\n\n{words(n(2100), 2, lang)}\n\n## Usage\n\n"
            f"### Start\n\n{words(n(300), 3, lang)}\n\n### Stop\n\n{words(n(300), 4, lang)}\n\n### Pause\n\n"
            f"{words(n(300), 5, lang)}\n\n## Notes\n\n{words(n(100), 6, lang)}\n")


def test_sections_know_paths_words_and_body_sentences():
    doc = parse_markdown(structured_doc())
    secs = Q.document_sections(doc, "en")
    by_title = {s.title: s for s in secs}
    assert by_title["Start"].path == ["Manual", "Usage", "Start"]
    assert by_title["Install"].words == 2100
    assert by_title["Usage"].words == by_title["Start"].words + by_title["Stop"].words + by_title["Pause"].words
    assert all(not s.startswith("#") for s in by_title["Manual"].sentences)


def test_t1_evidence_is_every_body_sentence_of_one_section():
    doc = parse_markdown(structured_doc())
    qs = Q.structure_questions("manual", "Manual", doc, "en", seed=0)
    t1 = [q for q in qs if q.type == "T1"]
    secs = {tuple(s.path): s for s in Q.document_sections(doc, "en")}
    assert t1
    for q in t1:
        sec = secs[tuple(q.sections[0])]
        assert q.evidences == sec.sentences
        assert Q.T1_WORDS[0] <= sec.words <= Q.T1_WORDS[1]
        assert sec.title in q.input or "Manual" in q.input
    # no chosen T1 section contains another
    paths = [tuple(q.sections[0]) for q in t1]
    assert not any(a != b and b[: len(a)] == a for a in paths for b in paths)


def test_t2_spreads_evidence_over_sibling_sections():
    doc = parse_markdown(structured_doc())
    t2 = [q for q in Q.structure_questions("manual", "Manual", doc, "en", seed=3) if q.type == "T2"]
    assert len(t2) == 1
    q = t2[0]
    assert 2 <= len(q.sections) <= 3
    assert all(p[:-1] == ["Manual", "Usage"] for p in q.sections)
    assert all(f'"{p[-1]}"' in q.input for p in q.sections)
    assert q.words <= Q.T2_TOTAL_WORDS


def test_questions_are_deterministic_per_seed():
    doc = parse_markdown(structured_doc())
    a = Q.structure_questions("m", "Manual", doc, "en", seed=7)
    b = Q.structure_questions("m", "Manual", doc, "en", seed=7)
    assert [(q.qid, q.input, q.evidences) for q in a] == [(q.qid, q.input, q.evidences) for q in b]


def test_chinese_sections_use_scaled_character_ranges():
    doc = parse_markdown(structured_doc("zh"))
    secs = {s.title: s for s in Q.document_sections(doc, "zh")}
    lo, hi = Q.scaled(Q.T1_WORDS, "zh")
    assert (lo, hi) == (768, 6144)
    assert lo <= secs["Install"].words <= hi
    qs = Q.structure_questions("zh", "Manual", doc, "zh", seed=0)
    assert {q.type for q in qs} == {"T1", "T2"}
    assert all("《Manual》" in q.input for q in qs)
    assert Q.count_words("中文 text 和 more words", "zh") == 3 + 3


def test_short_fragments_are_never_evidence():
    doc = parse_markdown("# T\n\n## S\n\n```\n\nvoid\n\n}\n\n" + words(600, 9) + "\n")
    sec = [s for s in Q.document_sections(doc, "en") if s.title == "S"][0]
    assert "void" not in sec.sentences and "```" not in sec.sentences and "}" not in sec.sentences


def test_layout_round_trip_and_data_version(tmp_path):
    root = str(tmp_path)
    qas = [{"input": "q?", "answers": ["a"], "facts": ["f"], "evidences": ["e1"], "all_classes": ["T1"], "_id": "d1",
            "qid": "x", "type": "T1"}]
    v1 = write_dataset(root, "ds", {"d1": "# A\ntext\n", "d2": "plain\n"}, qas)
    ds = load_dataset(root)
    assert ds.name == "ds" and set(ds.docs) == {"d1", "d2"} and ds.version == v1
    q = ds.qas[0]
    assert (q.doc_id, q.input, q.answers, q.facts, q.evidences, q.qid, q.type) == ("d1", "q?", ["a"], ["f"], ["e1"], "x", "T1")
    assert q.to_json()["_id"] == "d1"
    with open(os.path.join(root, "docs", "ds", "d2.md"), "a", encoding="utf-8") as fh:
        fh.write("changed\n")
    assert data_version(root, "ds") != v1


def test_hicbench_txt_documents_load_unchanged(tmp_path):
    os.makedirs(tmp_path / "docs" / "HiCBench")
    os.makedirs(tmp_path / "qas")
    (tmp_path / "docs" / "HiCBench" / "p1.txt").write_text("# Title\nBody.\n", encoding="utf-8")
    (tmp_path / "qas" / "HiCBench.jsonl").write_text(
        json.dumps({"input": "q", "answers": "single", "evidences": ["Body."], "_id": "p1", "extra": 1}) + "\n\n", encoding="utf-8")
    ds = load_dataset(str(tmp_path), "HiCBench")
    assert ds.qas[0].answers == ["single"] and ds.qas[0].extra == {"extra": 1} and ds.qas[0].qid == "p1#0"
    assert ds.docs["p1"].parse().headings == [(0, 1)]


@pytest.mark.parametrize("content, message", [
    ('{"input": "q", "_id": "missing"}\n', "do not exist"),
    ("not json\n", "not JSON"),
    ('{"_id": "p1"}\n', "needs 'input'"),
    ('{"input": "q", "_id": "p1", "evidences": [1]}\n', "list of strings"),
])
def test_bad_question_files_give_one_line_errors(tmp_path, content, message):
    os.makedirs(tmp_path / "docs" / "x")
    os.makedirs(tmp_path / "qas")
    (tmp_path / "docs" / "x" / "p1.txt").write_text("# T\n", encoding="utf-8")
    (tmp_path / "qas" / "x.jsonl").write_text(content, encoding="utf-8")
    with pytest.raises(HichunkError, match=message):
        load_dataset(str(tmp_path))


def test_dataset_choice_errors(tmp_path):
    with pytest.raises(HichunkError, match="not a HiCBench-style folder"):
        load_dataset(str(tmp_path))
    write_dataset(str(tmp_path), "a", {"d": "x"}, [])
    write_dataset(str(tmp_path), "b", {"d": "x"}, [])
    with pytest.raises(HichunkError, match="several datasets"):
        load_dataset(str(tmp_path))
    with pytest.raises(HichunkError, match="no dataset 'c'"):
        load_dataset(str(tmp_path), "c")


def test_doc_stem_is_file_safe():
    assert doc_stem("python3.11-doc/library/os.rst.txt") == "python3.11-doc__library__os.rst.txt"
    assert "/" not in doc_stem("a b/c:d") and doc_stem("a b/c:d") == "a_b__c_d"


def test_heading_safe_only_touches_lines_that_are_not_headings():
    md = "# Title\n\n#. item one\n\n```\n# comment\n```\n\n## Real\n"
    out = heading_safe(md)
    assert out == "# Title\n\n #. item one\n\n```\n # comment\n```\n\n## Real\n"
    assert parse_markdown(out).headings == parse_markdown(md).headings
    assert heading_safe("# A\nb\n") == "# A\nb\n"


def test_make_benchmark_from_a_folder(tmp_path):
    src = tmp_path / "my_docs"
    src.mkdir()
    (src / "manual.md").write_text(structured_doc(), encoding="utf-8")
    (src / "zh.md").write_text(structured_doc("zh").replace("Manual", "手册"), encoding="utf-8")
    (src / "ignored.bin").write_bytes(b"\x00\x01")
    docs, source = folder_documents(str(src), progress=False)
    assert source["kind"] == "folder" and len(docs) == 2
    out = str(tmp_path / "bench")
    manifest = make_benchmark(docs, out, "my_docs", source, MakeOptions(progress=False))
    assert set(manifest["datasets"]) == {"my_docs-en", "my_docs-zh"}
    for name, info in manifest["datasets"].items():
        ds = load_dataset(out, name)
        assert ds.version == info["data_version"]
        assert ds.qas and all(q.evidences for q in ds.qas)
        assert {q.type for q in ds.qas} <= {"T1", "T2"}
    again = make_benchmark(docs, str(tmp_path / "bench2"), "my_docs", source, MakeOptions(progress=False))
    assert again["datasets"] == manifest["datasets"]  # same input, same data version


def test_make_from_nothing_fails_clearly(tmp_path):
    with pytest.raises(HichunkError):
        folder_documents(str(tmp_path), progress=False)
    with pytest.raises(HichunkError, match="not a directory"):
        folder_documents(str(tmp_path / "nope"), progress=False)
