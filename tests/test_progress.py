"""Progress while a build embeds: a leaves bar that moves batch by batch (index build, index update,
``Index.add_paths``, ``add_trees``, the Ray pipeline), and a sentence bar for the semantic chunker."""

from __future__ import annotations

import re

import pytest
from fakes import HashEmbedder
from test_index import DOCS, write_docs

import hichunk.cli as cli
from hichunk.chunkers import ChunkOptions
from hichunk.chunkers import semantic as semantic_module
from hichunk.document import parse_document
from hichunk.retrieval.index import Index, IndexConfig
from hichunk.retrieval.index.distributed import InlineExecutor
from hichunk.retrieval.index.progress import BuildProgress

MORE = {f"topic{i}.md": f"# Topic {i}\n\n" + f"Sentence {i} about kites and wind. " * 20 + "\n" for i in range(4)}


@pytest.fixture
def corpus(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write_docs("docs", {**DOCS, **MORE})
    return tmp_path


@pytest.fixture
def steps(monkeypatch):
    """Every BuildProgress.embedded call, in order (the bar moves once per encoded batch)."""
    calls: list[int] = []
    original = BuildProgress.embedded

    def record(self, leaves):
        calls.append(leaves)
        original(self, leaves)

    monkeypatch.setattr(BuildProgress, "embedded", record)
    return calls


def final_count(err: str, label: str) -> tuple[int, int]:
    """(done, total) of the last state of the bar called ``label`` in captured stderr."""
    found = re.findall(rf"{re.escape(label)}: +\d+%\|[^|]*\| (\d+)/(\d+) ", err)
    assert found, f"no {label!r} bar in {err[-500:]!r}"
    return tuple(map(int, found[-1]))


def test_add_paths_shows_leaves_as_they_are_embedded(corpus, capsys, steps):
    index = Index.create("idx", IndexConfig(leaf_tokens=24), embedder=HashEmbedder(batch_size=1))  # <= 4 a batch
    report = index.add_paths(["docs"], progress=True)
    err = capsys.readouterr().err
    assert final_count(err, "chunking") == (7, 7)
    assert final_count(err, "embedding") == (report.leaves, report.leaves) and report.leaves > 8
    assert sum(steps) == report.leaves and len([n for n in steps if n]) >= report.encoded // 4  # batch by batch

    write_docs("docs", {"solar.md": DOCS["solar.md"].replace("twice a year", "every spring")})
    steps.clear()
    report = index.add_paths(["docs"], progress=True)  # an update: only the changed document's leaves
    err = capsys.readouterr().err
    changed = index.docs["docs/solar.md"]["leaves"]
    assert final_count(err, "embedding") == (changed, changed) == (report.leaves, report.leaves)
    assert sum(steps) == changed


def test_no_progress_prints_nothing(corpus, capsys):
    Index.create("idx", IndexConfig(leaf_tokens=24), embedder=HashEmbedder()).add_paths(["docs"])
    assert capsys.readouterr().err == ""


def test_add_trees_shows_the_leaves_bar(corpus, capsys):
    index = Index.memory(IndexConfig(leaf_tokens=24), embedder=HashEmbedder())
    from hichunk.chunkers import chunk_document

    trees = [(name, chunk_document(parse_document(text, "markdown", name), "structure", ChunkOptions(leaf_tokens=24)))
             for name, text in MORE.items()]
    report = index.add_trees(trees, progress=True)
    assert final_count(capsys.readouterr().err, "embedding") == (report.leaves, report.leaves)


def test_the_ray_pipeline_shows_leaves_as_batches_return(corpus, capsys, steps):
    index = Index.create("idx", IndexConfig(leaf_tokens=24), embedder=HashEmbedder())
    index.add_paths(["docs/solar.md"])
    write_docs("docs", {"solar.md": DOCS["solar.md"].replace("twice a year", "every spring")})
    steps.clear()
    report = index.add_paths(["docs"], progress=True, ray=InlineExecutor(2))
    err = capsys.readouterr().err
    assert final_count(err, "indexing (ray)") == (7, 7)
    assert final_count(err, "embedding") == (report.leaves, report.leaves)
    assert report.cache_hits > 0 and report.cache_hits in steps  # the unchanged leaves of solar.md count at once
    assert sum(steps) == report.leaves


def test_cli_index_build_and_update_show_the_leaves_bar(corpus, capsys, monkeypatch):
    monkeypatch.setattr("hichunk.retrieval.index.index.load_embedder", lambda name: HashEmbedder())
    assert cli.main(["index", "build", "docs", "--index", "idx", "--method", "structure", "--leaf-tokens", "24"]) == 0
    captured = capsys.readouterr()
    leaves = int(re.search(r"; (\d+) leaves embedded", captured.out).group(1))
    assert final_count(captured.err, "embedding") == (leaves, leaves)
    write_docs("docs", {"bread.md": DOCS["bread.md"] + "\nOne more line about the oven.\n"})
    assert cli.main(["index", "update", "docs", "--index", "idx", "-q"]) == 0  # -q after the command: no bars
    assert capsys.readouterr().err == ""
    write_docs("docs", {"bread.md": DOCS["bread.md"]})
    assert cli.main(["index", "update", "docs", "--index", "idx"]) == 0
    captured = capsys.readouterr()
    leaves = int(re.search(r"; (\d+) leaves embedded", captured.out).group(1))
    assert final_count(captured.err, "embedding") == (leaves, leaves) and "1 updated" in captured.out


class CountingEmbedder(HashEmbedder):
    """Records whether each embed_passages call got a progress callable, and what it reported."""

    def __init__(self):
        super().__init__(batch_size=1)  # batches of at most 4 texts
        self.progress_given: list[bool] = []
        self.reported: list[int] = []

    def embed_passages(self, texts, progress=None):
        self.progress_given.append(progress is not None)

        def report(n):
            self.reported.append(n)
            progress(n)

        return super().embed_passages(texts, report if progress else None)


def test_semantic_chunker_shows_sentences_embedded(capsys, monkeypatch):
    monkeypatch.setattr(semantic_module, "PROGRESS_DELAY", 0)
    text = "".join(f"Sentence number {i} talks about {'kites' if i % 7 < 3 else 'bread'}. " for i in range(40))
    doc = parse_document(text, "text", "t.txt")
    quiet = CountingEmbedder()
    tree = semantic_module.SemanticChunker(ChunkOptions(leaf_tokens=30), quiet).chunk(doc)
    assert quiet.progress_given == [False] and capsys.readouterr().err == ""
    shown = CountingEmbedder()
    again = semantic_module.SemanticChunker(ChunkOptions(leaf_tokens=30), shown, progress=True).chunk(doc)
    assert shown.progress_given == [True] and again == tree  # the bar changes nothing in the tree
    err = capsys.readouterr().err
    assert shown.calls == 40 and sum(shown.reported) == 40 and len(shown.reported) >= 10  # batch by batch
    assert "semantic: embedding sentences:   0%|" in err and "0/40" in err


def test_cli_chunk_semantic_passes_progress_unless_quiet(tmp_path, monkeypatch):
    seen = []
    real = semantic_module.SemanticChunker.__init__

    def spy(self, options, embedder=None, *args, progress=False, **kw):
        seen.append(progress)
        real(self, options, HashEmbedder(), *args, progress=progress, **kw)

    monkeypatch.setattr(semantic_module.SemanticChunker, "__init__", spy)
    (tmp_path / "a.txt").write_text("One sentence here. Another sentence there.\n", encoding="utf-8")
    assert cli.main(["chunk", str(tmp_path / "a.txt"), "--method", "semantic", "-o", str(tmp_path / "o")]) == 0
    assert cli.main(["chunk", str(tmp_path / "a.txt"), "--method", "semantic", "-q", "-o", str(tmp_path / "o")]) == 0
    assert seen == [True, False]
