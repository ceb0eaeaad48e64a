"""The OpenAI-compatible client and everything that uses it, against a scripted server on 127.0.0.1."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from hichunk.bench.answering import answer_question
from hichunk.bench.data.llm_questions import section_question
from hichunk.bench.data.questions import Section
from hichunk.bench.llm import Endpoint, extract_json
from hichunk.bench.metrics.factcov import Coverage, extract_facts, judge_coverage, pooled_fact_coverage
from hichunk.errors import HichunkError


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


def test_rag_runner_answers_and_judges_through_the_endpoint(server, tmp_path, tokenizer):
    from fakes import HashEmbedder

    from hichunk.bench.data.hicbench_format import load_dataset, write_dataset
    from hichunk.bench.runners.methods import parse_methods
    from hichunk.bench.runners.rag import RagSettings, rag_report, run_rag

    url, script = server

    def reply(body):
        prompt = body["messages"][0]["content"]
        if "Facts:" in prompt:
            return chat(json.dumps({"classifications": [{"statement": "f1", "attributed": 1},
                                                        {"statement": "f2", "attributed": 0}]}))
        return chat("alpha beta")

    script.replies += [reply] * 20
    write_dataset(str(tmp_path / "b"), "x", {"d": "# A\n\nAlpha beta gamma.\n\n## B\n\nDelta epsilon.\n"},
                  [{"input": "alpha?", "_id": "d", "evidences": ["Alpha beta gamma."], "answers": ["alpha beta gamma"],
                    "facts": ["f1", "f2"]},
                   {"input": "delta?", "_id": "d", "evidences": ["Delta epsilon."]}])
    ds = load_dataset(str(tmp_path / "b"))
    settings = RagSettings(budgets=[50, 100], endpoint=Endpoint(url, "m"), answer_budget=100, progress=False)
    run = run_rag(ds, parse_methods("structure,fixed:32"), HashEmbedder(), tokenizer, settings)
    first = run.items["structure"][0]
    assert first.answer == "alpha beta" and first.fact_cov == 0.5 and first.n_facts == 2
    assert first.rouge_l == pytest.approx(2 * 1.0 * (2 / 3) / (1.0 + 2 / 3 + 1e-8))
    assert run.items["structure"][1].answer is None  # no reference answer or facts: not judged
    prompts = [b["messages"][0]["content"] for _, b in script.requests]
    answer_prompts = [p for p in prompts if p.startswith("Read the text below") and "Question: alpha?" in p]
    assert len(answer_prompts) == 2 and all("Alpha beta gamma." in p for p in answer_prompts)  # one per method
    text = open(rag_report(ds, run, settings, str(tmp_path / "o"))[0], encoding="utf-8").read()
    assert "## Answer quality at 100 tokens" in text and "| structure | 1 |" in text
    with pytest.raises(HichunkError, match="answer budget"):
        run_rag(ds, parse_methods("structure"), HashEmbedder(), tokenizer,
                RagSettings(budgets=[50], endpoint=Endpoint(url, "m"), answer_budget=100))
