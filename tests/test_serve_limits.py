"""``hichunk serve`` under hostile clients, slow inputs and other writers (issue 19; TCP_NODELAY from issue 21).

Each test speaks HTTP to a real server on a free 127.0.0.1 port (a thread, as in ``test_serve``)."""

from __future__ import annotations

import http.client
import json
import socket
import threading
import time

import pytest
from fakes import HashEmbedder
from test_index import DOCS, write_docs
from test_serve import assert_error, multipart, request

pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")

from hichunk.document import parse_document  # noqa: E402
from hichunk.retrieval.index import Index, IndexConfig  # noqa: E402
from hichunk.serve import BackgroundServer  # noqa: E402
from hichunk.serve.app import ServiceSettings  # noqa: E402
from hichunk.serve.protocol import ConnectionLimits  # noqa: E402

CONFIG = IndexConfig(leaf_tokens=24, method="structure")


@pytest.fixture
def index(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write_docs("docs", DOCS)
    idx = Index.create(str(tmp_path / "idx"), CONFIG, embedder=HashEmbedder())
    idx.add_paths(["docs"])
    return idx


def _host_port(url: str) -> tuple[str, int]:
    host, port = url.removeprefix("http://").split(":")
    return host, int(port)


def _warm(server: BackgroundServer) -> None:
    """Workers up (started and warm) before a test that times its requests."""
    assert server.service.pool.wait_ready(120)


def test_keep_alive_requests_do_not_wait_for_delayed_acks(index):
    """Issue 21: without TCP_NODELAY each keep-alive request stalled ~40 ms (Nagle against delayed ACK)."""
    server = BackgroundServer(index)
    with server as url:
        conn = http.client.HTTPConnection(*_host_port(url), timeout=30)
        conn.request("GET", "/health")
        conn.getresponse().read()
        started = time.perf_counter()
        for _ in range(100):
            conn.request("GET", "/health")
            resp = conn.getresponse()
            assert resp.status == 200 and json.loads(resp.read())["status"] == "ok"
        took = time.perf_counter() - started
        accepted = [c.transport.get_extra_info("socket") for c in server.server.server_state.connections]
        assert accepted and all(s.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) for s in accepted)
        conn.close()
    assert took < 2.5, f"100 keep-alive requests took {took:.2f} s"  # a 40 ms stall each would be >= 4 s


def test_clients_that_send_half_a_request_cannot_hold_the_server(index):
    limits = ConnectionLimits(header_timeout=1.0, max_connections=16)
    with BackgroundServer(index, connections=limits) as url:
        host, port = _host_port(url)
        slow = []
        for _ in range(40):  # more than the connection limit, each stuck in its headers
            s = socket.create_connection((host, port), timeout=10)
            s.sendall(b"POST /query HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n")
            slow.append(s)
        started = time.monotonic()
        status, health = request(url, "/health")
        assert status == 200 and health["status"] == "ok"
        status, result = request(url, "/query", {"query": "knead the dough", "budget": 40})
        assert status == 200 and result["passages"]
        assert time.monotonic() - started < 5
        closed = 0
        for s in slow:  # the server closes them: evicted to make room, or after the header timeout
            try:
                closed += s.recv(1024) == b""
            except (ConnectionResetError, TimeoutError, OSError):
                closed += 1
            s.close()
        assert closed == len(slow)


def test_a_body_that_does_not_arrive_in_time_gets_408(index):
    with BackgroundServer(index, settings=ServiceSettings(body_timeout=1.0)) as url:
        s = socket.create_connection(_host_port(url), timeout=20)
        s.sendall(b"POST /query HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n"
                  b'{"query": ')
        reply = b""
        while chunk := s.recv(4096):  # headers and body may come in two segments; the server closes after
            reply += chunk
        reply = reply.decode()
        s.close()
        assert reply.startswith("HTTP/1.1 408") and "did not arrive within 1 s" in reply


def test_chunk_work_has_a_time_limit_and_never_takes_the_query_threads(index):
    settings = ServiceSettings(chunk_seconds=1.0, workers=1, queue=1)
    server = BackgroundServer(index, settings=settings)
    with server as url:
        _warm(server)
        big = "Sentence number one is here. " * 200_000  # minutes of chunking with the model
        answers = []
        heavy = threading.Thread(target=lambda: answers.append(request(url, "/chunk", {"text": big})))
        heavy.start()
        time.sleep(0.3)
        for _ in range(5):  # served at once while the chunking runs
            t0 = time.monotonic()
            assert request(url, "/health")[0] == 200
            assert request(url, "/query", {"query": "tea storage", "budget": 30})[0] == 200
            assert time.monotonic() - t0 < 3
        heavy.join(60)
        assert_error(*answers[0], 503)
        assert "limit" in answers[0][1]["error"]
        _warm(server)  # the killed worker's replacement starts and warms up in the background
        status, tree = request(url, "/chunk", {"text": "# Small\n\nA small document.", "format": "markdown",
                                               "method": "structure"})
        assert status == 200 and tree["text"] == "# Small\n\nA small document."  # a new worker took over


def test_heavy_requests_over_the_queue_get_503_at_once(index):
    settings = ServiceSettings(chunk_seconds=2.0, workers=1, queue=1)
    server = BackgroundServer(index, settings=settings)
    with server as url:
        _warm(server)
        big = {"text": "Sentence number one is here. " * 50_000}
        threads = [threading.Thread(target=request, args=(url, "/chunk", big)) for _ in range(2)]  # one runs, one waits
        for t in threads:
            t.start()
        time.sleep(0.5)
        started = time.monotonic()
        status, body = request(url, "/chunk", big)
        assert_error(status, body, 503)
        assert "retry later" in body["error"] and time.monotonic() - started < 2
        for t in threads:
            t.join(60)


def test_options_share_one_model_and_chunkers_are_few():
    """Issue 19 row 1: one model was loaded per option set, forever (500 requests: 8.9 GB)."""
    from hichunk.models.registry import load_model
    from hichunk.serve import jobs

    assert load_model(None) is load_model(None)
    made = [jobs.chunker_for(jobs.ChunkSpec(leaf_tokens=n), None) for n in range(20, 40)]
    assert len({id(c.model) for c in made}) == 1 and len(jobs._chunkers) <= jobs.MAX_CHUNKERS


def test_documents_over_the_work_limits_get_413(index):
    import io

    from hichunk.document.limits import WorkLimits

    limits = WorkLimits(max_chars=1000, max_paragraphs=50, max_pages=2, max_inflated_bytes=10**8)
    server = BackgroundServer(index, allow_update=True, settings=ServiceSettings(allow_update=True, limits=limits))
    with server as url:
        assert_error(*request(url, "/chunk", {"text": "x" * 1001}), 413)
        assert_error(*request(url, "/index/update", {"documents": [{"id": "big.md", "text": "y" * 1001}]}), 413)
        docx = pytest.importorskip("docx")
        d = docx.Document()
        for i in range(60):
            d.add_paragraph(f"p{i}")
        buf = io.BytesIO()
        d.save(buf)
        body, kind = multipart({}, "many.docx", buf.getvalue())
        status, answer = request(url, "/chunk", body, headers={"Content-Type": kind})
        assert_error(status, answer, 413)
        assert "60 paragraphs" in answer["error"]


def test_lone_surrogates_are_refused_on_every_endpoint(index):
    with BackgroundServer(index, allow_update=True) as url:
        for path, body in (("/chunk", b'{"text": "a\\ud800b"}'), ("/query", b'{"query": "tea \\udfff"}'),
                           ("/index/update", b'{"documents": [{"id": "x.md", "text": "\\ud83d"}]}'),
                           ("/index/update", b'{"remove": ["\\ud800"]}')):
            status, answer = request(url, path, body)
            assert_error(status, answer, 422)
            assert "lone surrogate" in answer["error"]
        upload, kind = multipart({"encoding": "utf-7"}, "a.txt", b"+2AA-")
        assert_error(*request(url, "/chunk", upload, headers={"Content-Type": kind}), 400)


def test_strict_fields_content_types_and_decoders(index):
    with BackgroundServer(index, allow_update=True) as url:
        for body in ({"query": "tea", "budget": True}, {"query": "tea", "auto_merge": "yes"},
                     {"query": "tea", "budget": 1.5}):
            assert_error(*request(url, "/query", body), 422)
        assert_error(*request(url, "/chunk", {"text": "a", "leaf_tokens": True}), 422)
        assert_error(*request(url, "/query", b'{"query": "tea"}', headers={"Content-Type": "text/plain"}), 415)
        assert_error(*request(url, "/index/update", b'{"remove": []}', headers={"Content-Type": "text/plain"}), 415)
        upload, kind = multipart({"encoding": "punycode"}, "a.txt", b"\\ud800 x")
        status, answer = request(url, "/chunk", upload, headers={"Content-Type": kind})
        assert_error(status, answer, 400)
        assert "punycode" in answer["error"]


def test_the_server_follows_commits_of_another_process(index):
    with BackgroundServer(index) as url:
        status, health = request(url, "/health")
        before = health["generation"]
        other = Index.open(index.store.path, embedder=HashEmbedder())  # as `hichunk index update` from cron would
        other.add([("docs/bread.md", lambda: parse_document("# Baking bread\n\nRye bread needs a sourdough starter.\n",
                                                            "markdown", "docs/bread.md"))], remove=["docs/tea.md"])
        status, health = request(url, "/health")
        assert health["generation"] == before + 1 and health["documents"] == 2
        status, result = request(url, "/query", {"query": "rye sourdough starter", "budget": 40, "doc": "docs/bread.md"})
        assert status == 200 and "sourdough" in result["passages"][0]["text"]
        assert_error(*request(url, "/query", {"query": "tea", "doc": "docs/tea.md"}), 404)


def test_updates_are_one_commit_and_queries_run_while_one_is_staged(index):
    with BackgroundServer(index, allow_update=True) as url:
        generation = request(url, "/health")[1]["generation"]
        sections = "".join(f"## Part {i}\n\n" + "Kites fly high on windy days near the river. " * 20 + "\n\n"
                           for i in range(20))
        answers, during = [], []
        update = threading.Thread(target=lambda: answers.append(request(url, "/index/update", {
            "documents": [{"id": "kites.md", "text": "# Kites\n\n" + sections, "format": "markdown"}],
            "remove": ["docs/tea.md"]})))
        update.start()
        while update.is_alive():
            status, _ = request(url, "/query", {"query": "knead the dough", "budget": 30})
            assert status == 200
            if update.is_alive():
                during.append(status)
            time.sleep(0.05)
        status, report = answers[0]
        assert status == 200, report
        assert [(d["doc"], d["status"]) for d in report["docs"]] == [("kites.md", "added"), ("docs/tea.md", "removed")]
        assert request(url, "/health")[1]["generation"] == generation + 1
        assert during, "no query was answered while the update was being staged"


def test_updates_can_require_a_token(index):
    settings = ServiceSettings(allow_update=True, token="s3cret")
    with BackgroundServer(index, settings=settings) as url:
        status, body = request(url, "/index/update", {"remove": []})
        assert_error(status, body, 401)
        assert_error(*request(url, "/index/update", {"remove": []}, headers={"Authorization": "Bearer nope"}), 401)
        status, body = request(url, "/index/update", {"remove": []}, headers={"Authorization": "Bearer s3cret"})
        assert status == 200 and body["docs"] == []
