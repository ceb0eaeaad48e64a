"""Odd inputs get a valid result or one clear line (issue 19): decoders, pipes in folders, gzip bombs,
long lines for Punkt, an index without documents, a failure reported once."""

from __future__ import annotations

import gzip
import json
import logging
import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import hichunk.sentences as sentences
from hichunk.document import decode_bytes, load_document
from hichunk.document.inputs import collect_inputs
from hichunk.errors import InputError

WORDS = "The cat sat on a mat. Dr. Smith went home at 5 p.m. and then it rained! Was it? yes U.S. e.g. (quoted.) etc.".split()


@pytest.mark.parametrize("encoding, data, says", [
    ("punycode", b"\\ud800x", "cannot decode as punycode"),  # a UnicodeError that is not a UnicodeDecodeError
    ("utf-7", b"+2AA-", "lone surrogate"),  # decodes to text no UTF-8 output can hold
    ("unicode_escape", b"\\ud800", "lone surrogate"),
    ("base64", b"aGVsbG8=", "not a text encoding"),
    ("rot13", b"hello", "not a text encoding"),
    ("no-such-codec", b"hello", "unknown encoding"),
])
def test_every_decoder_error_is_one_line(encoding, data, says):
    with pytest.raises(InputError) as err:
        decode_bytes(data, "x.txt", encoding)
    assert says in str(err.value) and "\n" not in str(err.value)


def test_folder_walks_skip_named_pipes_and_name_them_once(tmp_path, caplog):
    (tmp_path / "a.md").write_text("# A\n\nText.\n")
    os.mkfifo(tmp_path / "b.md")  # opening it would block until a writer comes
    os.symlink(tmp_path / "gone.md", tmp_path / "c.md")
    with caplog.at_level(logging.WARNING):
        assert collect_inputs([str(tmp_path)]) == [str(tmp_path / "a.md")]
    notes = [r.getMessage() for r in caplog.records if "not regular files" in r.getMessage()]
    assert len(notes) == 1 and "b.md" in notes[0] and "c.md" in notes[0] and "2 entries" in notes[0]


def test_cli_chunk_of_a_folder_with_a_pipe_finishes(tmp_path, monkeypatch, capsys):
    import hichunk.cli as cli

    monkeypatch.chdir(tmp_path)
    os.makedirs("docs")
    (tmp_path / "docs" / "a.md").write_text("# A\n\nText.\n")
    os.mkfifo(tmp_path / "docs" / "pipe.txt")
    assert cli.main(["-q", "chunk", "docs", "--method", "structure", "--format", "splits"]) == 0
    assert list(json.loads(capsys.readouterr().out)) == ["docs/a.md"]


def test_gzip_inputs_inflate_only_up_to_the_limit(tmp_path, monkeypatch):
    import hichunk.document.load as load

    path = tmp_path / "bomb.txt.gz"
    path.write_bytes(gzip.compress(b"a" * 2_000_000))  # 2 KB on disk
    monkeypatch.setattr(load, "MAX_INFLATED_BYTES", 1_000_000)
    with pytest.raises(InputError, match="inflates to more than 1,000,000 bytes"):
        load_document(str(path))
    small = tmp_path / "ok.txt.gz"
    small.write_bytes(gzip.compress(b"Two sentences. Here they are.\n") + gzip.compress(b"A second member.\n"))
    assert load_document(str(small)).text == "Two sentences. Here they are.\nA second member.\n"


def _line(n_words: int, seed: int) -> str:
    import random

    rng = random.Random(seed)
    return " ".join(rng.choice(WORDS) for _ in range(n_words))


def test_punkt_reads_a_long_line_in_bounded_windows(monkeypatch):
    seen: list[int] = []
    real = sentences._punkt_starts  # what runs Punkt's steps on each window
    monkeypatch.setattr(sentences, "_punkt_starts", lambda text: (seen.append(len(text)), real(text))[1])
    monkeypatch.setattr(sentences, "PUNKT_WINDOW", 1000)
    line = _line(3000, 1)  # ~14 KB in one line
    spans = sentences.split_line(line)
    assert max(seen) <= 1000 and len(seen) > 10
    assert spans[0][0] == 0 and spans[-1][1] == len(line) and all(a[1] == b[0] for a, b in zip(spans, spans[1:]))


@settings(max_examples=60, deadline=None)
@given(words=st.integers(1, 250), seed=st.integers(0, 10_000), window=st.sampled_from([24, 40, 64, 100, 257]),
       doubled=st.booleans())
def test_windows_give_the_sentences_of_a_whole_line_run(words, seed, window, doubled):
    line = _line(words, seed)
    line = line.replace(" ", "  ") if doubled else line
    default = sentences.PUNKT_WINDOW
    try:
        sentences.PUNKT_WINDOW = 10**9
        whole = sentences.split_line(line)
        sentences.PUNKT_WINDOW = window
        assert sentences.split_line(line) == whole
    finally:
        sentences.PUNKT_WINDOW = default


def test_a_line_without_spaces_longer_than_a_window_is_covered(monkeypatch):
    monkeypatch.setattr(sentences, "PUNKT_WINDOW", 50)
    line = ("x" * 120 + ". ") * 3 + "Done."
    spans = sentences.split_line(line)
    assert spans[0][0] == 0 and spans[-1][1] == len(line) and all(a[1] == b[0] for a, b in zip(spans, spans[1:]))


def test_an_index_without_documents_answers_an_empty_context(tmp_path, monkeypatch, capsys):
    import hichunk.cli as cli

    monkeypatch.chdir(tmp_path)
    (tmp_path / "bad.txt").write_bytes(b"\x00\x01\x02 binary")
    assert cli.main(["-q", "index", "build", "bad.txt", "--index", "idx", "--method", "structure"]) == 2
    capsys.readouterr()
    assert cli.main(["query", "--index", "idx", "--json", "anything?"]) == 0
    out, err = capsys.readouterr()
    result = json.loads(out)
    assert result["passages"] == [] and result["context"] == "" and result["tokens"] == 0
    assert err.count("\n") == 1 and "holds no documents" in err


@pytest.mark.parametrize("search", ["exact", "ann"])
def test_an_empty_index_searches_to_nothing(search):
    if search == "ann":
        pytest.importorskip("usearch")
    from fakes import HashEmbedder

    from hichunk.retrieval.index import Index, IndexConfig
    from hichunk.retrieval.search import FillOptions

    index = Index.memory(IndexConfig(method="structure", search=search), embedder=HashEmbedder())
    assert index.search("anything", FillOptions(budget=100)).passages == []
    index.add_trees([])
    index.remove([])
    assert index.search("anything", FillOptions(budget=100)).to_dict()["passages"] == []


def test_index_build_reports_each_failure_once(tmp_path, monkeypatch, capsys, caplog):
    import hichunk.cli as cli

    monkeypatch.chdir(tmp_path)
    (tmp_path / "bad.txt").write_bytes(b"\x00\x01\x02 binary")
    (tmp_path / "good.md").write_text("# Good\n\nText.\n")
    with caplog.at_level(logging.INFO, logger="hichunk"):
        assert cli.main(["index", "build", "bad.txt", "good.md", "--index", "idx", "--method", "structure"]) == 1
    shown = capsys.readouterr().err.count("looks like a binary file")
    logged = sum("looks like a binary file" in r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING)
    assert shown + logged == 1
