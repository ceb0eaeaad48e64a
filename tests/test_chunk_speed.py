"""The side-by-side speed benchmark: it runs, and its checks catch lost, duplicated and misplaced text."""

from __future__ import annotations

import json

import pytest

from hichunk.bench.perf.chunk_speed import checks, load_corpus, main
from hichunk.bench.perf.peers import Chunk
from hichunk.tokens import load_tokenizer

TEXT = "# Title\n\nFirst paragraph here. It has two sentences.\n\n## Part\n\nSecond paragraph, with more words.\n"


@pytest.fixture
def corpus(tmp_path):
    (tmp_path / "a.md").write_text(TEXT)
    (tmp_path / "b.txt").write_text("Plain text. " * 60)
    return tmp_path


def test_checks_measure_offsets_loss_and_duplication():
    half = TEXT.index("## Part")
    exact = [Chunk(TEXT[:half], 0), Chunk(TEXT[half:], half)]
    row = checks([("a", "markdown", TEXT)], [exact], load_tokenizer())
    assert row["exact offsets"] == "all" and row["lost %"] == row["duplicated %"] == 0 and row["measured on"] == "chars"
    overlapping = [Chunk(TEXT[:half + 8], 0), Chunk(TEXT[half:], half)]
    assert checks([("a", "markdown", TEXT)], [overlapping], load_tokenizer())["duplicated %"] > 0
    wrong = [Chunk(TEXT[:half], 0), Chunk(TEXT[half:], 3)]  # a misplaced offset: judged on words
    row = checks([("a", "markdown", TEXT)], [wrong], load_tokenizer())
    assert row["exact offsets"] == "1 of 2" and row["measured on"] == "words" and row["lost %"] == 0
    stripped = [Chunk("First paragraph here. It has two sentences.", None), Chunk("Second paragraph, with more words.", None)]
    row = checks([("a", "markdown", TEXT)], [stripped], load_tokenizer())
    assert row["exact offsets"] == "none reported" and row["lost %"] > 0  # the headings are gone


def test_the_benchmark_runs_hichunk_methods_on_a_folder(corpus, tmp_path, capsys):
    out = tmp_path / "rows.json"
    assert main(["--corpus", str(corpus), "--repeats", "2", "--methods", "fixed,cdc", "--no-peers",
                 "--size", "20", "--json", str(out)]) == 0
    rows = {r["chunker"]: r for r in json.loads(out.read_text())["chunking"]}
    assert set(rows) == {"hichunk parse only", "hichunk fixed", "hichunk cdc"}
    for name in ("hichunk fixed", "hichunk cdc"):
        assert rows[name]["exact offsets"] == "all" and rows[name]["lost %"] == 0 and rows[name]["max"] <= 20
    assert "| hichunk cdc |" in capsys.readouterr().out


def test_a_built_corpus_is_read_by_split(tmp_path):
    (tmp_path / "dev.jsonl").write_text(json.dumps({"id": "x", "corpus": "c", "lang": "en", "title": "T", "source": "s", "markdown": TEXT,
                                                    "n_words": 1, "n_chars": 1, "n_headings": 2, "max_depth": 2}) + "\n")
    assert [(n, f) for n, f, _ in load_corpus(str(tmp_path), "dev", "*", None)] == [("x", "markdown")]


@pytest.mark.slow
def test_the_benchmark_runs_every_installed_peer(corpus, tmp_path):
    out = tmp_path / "rows.json"
    assert main(["--corpus", str(corpus), "--repeats", "1", "--methods", "structure", "--size", "20", "--json", str(out)]) == 0
    rows = {r["chunker"]: r for r in json.loads(out.read_text())["chunking"]}
    assert {"semchunk", "LangChain RecursiveCharacterTextSplitter", "LlamaIndex SentenceSplitter"} <= set(rows)
    assert any(name.startswith("chonkie") for name in rows) and rows["semchunk"]["exact offsets"] == "all"
