"""The OpenAI-compatible client and everything that uses it, against a scripted server on 127.0.0.1."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from hichunk.errors import HichunkError
from hicbench.answering import answer_question
from hicbench.data.llm_questions import section_question
from hicbench.data.questions import Section
from hicbench.llm import Endpoint, extract_json
from hicbench.metrics.factcov import Coverage, extract_facts, judge_coverage, pooled_fact_coverage


class Script:
    """Replies in order; each reply is (status, body) or a callable of the request JSON."""

    def __init__(self):
        self.replies: list = []
        self.requests: list[tuple[str, dict]] = []


@pytest.fixture
def server():
    script = Script()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            script.requests.append((self.path, body))
            reply = script.replies.pop(0) if script.replies else (500, {"error": "no reply scripted"})
            status, payload = reply(body) if callable(reply) else reply
            data = payload.encode() if isinstance(payload, str) else json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args):
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}", script
    finally:
        httpd.shutdown()
        httpd.server_close()


def chat(*texts: str) -> tuple[int, dict]:
    return 200, {"choices": [{"index": i, "message": {"role": "assistant", "content": t}} for i, t in enumerate(texts)]}


def completion(*texts: str) -> tuple[int, dict]:
    return 200, {"choices": [{"index": i, "text": t} for i, t in enumerate(texts)]}


def test_chat_and_completions_requests(server):
    url, script = server
    script.replies += [chat("hello"), completion("world")]
    assert Endpoint(url, "m", "chat", api_key="k").complete("hi", max_tokens=7) == ["hello"]
    assert Endpoint(url + "/v1/", "m", "completions").complete("raw prompt") == ["world"]
    (p1, b1), (p2, b2) = script.requests
    assert p1 == "/v1/chat/completions" and b1["messages"] == [{"role": "user", "content": "hi"}]
    assert b1["max_tokens"] == 7 and b1["temperature"] == 0.0 and b1["model"] == "m"
    assert p2 == "/v1/completions" and b2["prompt"] == "raw prompt"


def test_server_errors_are_retried_then_reported(server):
    url, script = server
    script.replies += [(503, {"error": "busy"}), chat("ok")]
    assert Endpoint(url, "m", retries=1, backoff=0).complete("x") == ["ok"]
    script.replies += [(400, {"error": "bad"})]
    with pytest.raises(HichunkError, match="HTTP 400"):
        Endpoint(url, "m", retries=3).complete("x")
    script.replies += [(200, {"nothing": 1})]
    with pytest.raises(HichunkError, match="unexpected answer shape"):
        Endpoint(url, "m").complete("x")


def test_unreachable_endpoint_is_one_line_error():
    with pytest.raises(HichunkError, match="endpoint http://127.0.0.1:9/v1"):
        Endpoint("http://127.0.0.1:9", "m", retries=0, timeout=2).complete("x")
    with pytest.raises(HichunkError, match="api must be"):
        Endpoint("http://x", "m", api="grpc")


def test_extract_json_skips_thinking_and_prose():
    assert extract_json('<think>{"no": 1}</think> Sure! {"facts": ["a {b}"]} done') == {"facts": ["a {b}"]}
    assert extract_json("no json {here") is None
    assert extract_json('[1, 2] {"a": 1}') == {"a": 1}


def test_answer_question_sends_context_and_question(server):
    url, script = server
    script.replies.append(chat("  Blue.  "))
    assert answer_question(Endpoint(url, "m"), "The sky is blue.", "What colour is the sky?") == "Blue."
    prompt = script.requests[0][1]["messages"][0]["content"]
    assert "The sky is blue." in prompt and prompt.rstrip().endswith("Question: What colour is the sky?\nAnswer:")


def test_fact_coverage_counts_valid_items_over_samples(server):
    url, script = server
    judged = {"classifications": [{"statement": "a", "attributed": 1}, {"statement": "b", "attributed": 0},
                                  {"statement": "c", "attributed": "maybe"}]}
    script.replies += [chat("garbage"), chat(json.dumps(judged)), chat(json.dumps(judged))]
    cov = judge_coverage(Endpoint(url, "m"), "q", "resp", ["a", "b", "c"], samples=2)
    assert (cov.attributed, cov.judged, cov.n_facts) == (2, 4, 3) and cov.coverage == 0.5
    assert pooled_fact_coverage([cov, Coverage(1.0, 1, 1, 1)]) == pytest.approx((0.5 * 3 + 1.0) / 4)
    script.replies += [chat("never json")] * 3
    with pytest.raises(HichunkError, match="no usable JSON"):
        judge_coverage(Endpoint(url, "m"), "q", "resp", ["a"], attempts=3)
    with pytest.raises(HichunkError, match="at least one fact"):
        judge_coverage(Endpoint(url, "m"), "q", "resp", [])


def test_fact_extraction(server):
    url, script = server
    script.replies += [chat('{"facts": []}'), chat('{"facts": ["It is blue.", "It is big."]}')]
    assert extract_facts(Endpoint(url, "m"), "q", "Blue and big.") == ["It is blue.", "It is big."]


def test_llm_section_question_validates_evidence_numbers(server):
    url, script = server
    sec = Section(0, 1, "Setup", 0, None, ["Guide", "Setup"], ["First do A.", "Then do B.", "Finally C."], 9)
    bad = {"question": "Q?", "answer": "A", "facts": ["f"], "evidence": [7]}
    good = {"question": "How is it set up?", "answer": "A then B.", "facts": ["A first", "B next"], "evidence": [2, 1, 2]}
    script.replies += [chat(json.dumps(bad)), chat(json.dumps(good))]
    got = section_question(Endpoint(url, "m"), "Guide", sec)
    assert got.input == "How is it set up?" and got.evidences == ["First do A.", "Then do B."]
    first_prompt = script.requests[0][1]["messages"][0]["content"]
    assert "1 @ First do A.\n2 @ Then do B." in first_prompt and "Guide > Setup" in first_prompt
    assert script.requests[1][1]["temperature"] > 0  # a retry samples
    script.replies += [chat("{}")] * 3
    assert section_question(Endpoint(url, "m"), "Guide", sec) is None
