"""Several writers and readers on one index directory (issue 19): readers follow other processes' commits,
an update with additions and removals is one commit, staging runs outside a caller's lock, and document
ids do not depend on the working directory (indexes made before roots were recorded keep working)."""

from __future__ import annotations

import json
import os
import threading

import pytest
from fakes import HashEmbedder

import hichunk.cli as cli
from hichunk.document import parse_document
from hichunk.errors import HichunkError, IndexChanged
from hichunk.retrieval.index import Index, IndexConfig
from hichunk.retrieval.search import FillOptions

CONFIG = IndexConfig(method="structure", leaf_tokens=24)


def _doc(text: str, name: str):
    return name, (lambda: parse_document(text, "markdown", name))


def test_a_reader_follows_another_writers_commit(tmp_path):
    writer = Index.create(str(tmp_path / "idx"), CONFIG, embedder=HashEmbedder())
    writer.add([_doc("# Tea\n\nGreen tea wants water at eighty degrees.\n", "tea.md")])
    reader = Index.open(str(tmp_path / "idx"), embedder=HashEmbedder())
    assert reader.search("green tea", FillOptions(budget=50)).passages
    assert not reader.changed_on_disk() and not reader.refresh()
    writer.add([_doc("# Kites\n\nFly kites on windy days, far from trees.\n", "kites.md")], remove=["tea.md"])
    assert reader.changed_on_disk()
    assert {p.doc for p in reader.search("windy kites", FillOptions(budget=50)).passages} == {"tea.md"}  # not yet
    assert reader.refresh() and reader.generation == writer.generation and not reader.changed_on_disk()
    passages = reader.search("windy kites", FillOptions(budget=50)).passages
    assert {p.doc for p in passages} == {"kites.md"} and set(reader.docs) == {"kites.md"}


def test_a_view_of_files_another_writer_deleted_says_so(tmp_path):
    writer = Index.create(str(tmp_path / "idx"), CONFIG, embedder=HashEmbedder())
    writer.add([_doc("# Tea\n\nGreen tea wants water at eighty degrees.\n", "tea.md")])
    reader = Index.open(str(tmp_path / "idx"), embedder=HashEmbedder())
    writer.add([_doc("# Tea\n\nBlack tea wants boiling water.\n", "tea.md")])  # the old tree file is deleted
    with pytest.raises(IndexChanged):
        reader.tree("tea.md")


def test_additions_and_removals_of_one_update_are_one_commit(tmp_path):
    index = Index.create(str(tmp_path / "idx"), CONFIG, embedder=HashEmbedder())
    index.add([_doc("# A\n\nAlpha.\n", "a.md"), _doc("# B\n\nBeta.\n", "b.md")])
    before = index.generation
    report = index.add([_doc("# C\n\nGamma.\n", "c.md")], remove=["a.md"])
    assert index.generation == before + 1 and set(index.docs) == {"b.md", "c.md"}
    assert [(d.doc, d.status) for d in report.docs] == [("c.md", "added"), ("a.md", "removed")]
    with pytest.raises(HichunkError, match="both added and removed"):
        index.add([_doc("# B\n\nBeta again.\n", "b.md")], remove=["b.md"])
    with pytest.raises(HichunkError, match="no document 'zzz.md'"):
        index.add([_doc("# D\n\nDelta.\n", "d.md")], remove=["zzz.md"])
    assert index.generation == before + 1 and set(index.docs) == {"b.md", "c.md"}  # refused whole


@pytest.mark.slow
def test_a_kill_in_a_combined_update_leaves_it_unapplied(tmp_path):
    import subprocess
    import sys

    path = str(tmp_path / "idx")
    index = Index.create(path, CONFIG, embedder=HashEmbedder())
    index.add([_doc("# A\n\nAlpha.\n", "a.md")])
    tests = os.path.dirname(__file__)
    script = (f"import sys; sys.path.insert(0, {tests!r}); from fakes import HashEmbedder; "
              "from hichunk.document import parse_document; from hichunk.retrieval.index import Index; "
              f"i = Index.open({path!r}, embedder=HashEmbedder()); "
              "i.add([('b.md', lambda: parse_document('# B\\n\\nBeta.\\n', 'markdown', 'b.md'))], remove=['a.md'])")
    for point in ("tree-written", "before-manifest"):
        env = {**os.environ, "HICHUNK_FAULT": point}
        assert subprocess.run([sys.executable, "-c", script], env=env).returncode == -9
        assert set(Index.open(path).docs) == {"a.md"}
    assert subprocess.run([sys.executable, "-c", script]).returncode == 0
    assert set(Index.open(path).docs) == {"b.md"}


def test_staging_runs_outside_the_guard_and_the_commit_inside(tmp_path):
    index = Index.create(str(tmp_path / "idx"), CONFIG, embedder=HashEmbedder())
    guard = threading.Lock()
    seen = []

    def load():
        seen.append(("load", guard.locked()))
        return parse_document("# A\n\nAlpha beta gamma.\n", "markdown", "a.md")

    commit = index.store.commit

    def watched_commit(*args):
        seen.append(("commit", guard.locked()))
        return commit(*args)

    index.store.commit = watched_commit
    index.add([("a.md", load)], guard=lambda: guard)
    assert seen == [("load", False), ("commit", True)] and not guard.locked()


def test_document_ids_do_not_depend_on_the_working_directory(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    os.makedirs("docs")
    (tmp_path / "docs" / "a.md").write_text("# A\n\nAlpha text here.\n")
    assert cli.main(["-q", "index", "build", "docs", "--index", "idx", "--method", "structure"]) == 0
    capsys.readouterr()
    monkeypatch.chdir(tmp_path / "docs")
    (tmp_path / "docs" / "a.md").write_text("# A\n\nAlpha text, changed.\n")
    assert cli.main(["-q", "index", "update", "a.md", "--index", "../idx", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert [(d["doc"], d["status"]) for d in report["docs"]] == [("docs/a.md", "updated")]
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    (tmp_path / "docs" / "a.md").write_text("# A\n\nAlpha text, changed twice.\n")
    assert cli.main(["-q", "index", "update", str(tmp_path / "docs" / "a.md"), "--index", str(tmp_path / "idx"),
                     "--json"]) == 0
    assert [(d["doc"], d["status"]) for d in json.loads(capsys.readouterr().out)["docs"]] == [("docs/a.md", "updated")]
    assert set(Index.open(str(tmp_path / "idx")).docs) == {"docs/a.md"}


def test_an_index_made_before_roots_were_recorded_finds_its_root(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    os.makedirs("docs/sub")
    (tmp_path / "docs" / "a.md").write_text("# A\n\nAlpha.\n")
    (tmp_path / "docs" / "sub" / "b.md").write_text("# B\n\nBeta.\n")
    assert cli.main(["-q", "index", "build", "docs", "--index", "idx", "--method", "structure"]) == 0
    capsys.readouterr()
    manifest_path = tmp_path / "idx" / "manifest.json"
    manifest = json.loads(manifest_path.read_text())
    del manifest["root"]  # as an index made by an earlier version
    manifest_path.write_text(json.dumps(manifest))
    monkeypatch.chdir(tmp_path / "docs" / "sub")
    (tmp_path / "docs" / "sub" / "b.md").write_text("# B\n\nBeta, changed.\n")
    assert cli.main(["-q", "index", "update", "b.md", "--index", "../../idx", "--json"]) == 0
    assert [(d["doc"], d["status"]) for d in json.loads(capsys.readouterr().out)["docs"]] == [("docs/sub/b.md", "updated")]
    assert json.loads(manifest_path.read_text())["root"] == str(tmp_path)  # recorded by that commit
