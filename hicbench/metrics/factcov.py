"""Fact-Cov: the share of a question's reference facts that an answer states, judged by an LLM.

As in HiCBench: the judge sees the question, the response and the list of facts, and returns JSON
``{"classifications": [{"statement": ..., "attributed": 0|1}, ...]}``; with
``samples`` judge samples, a response's coverage is the attributed items over
all valid items of all samples. A dataset's Fact-Cov pools over facts:
``sum(cov_q * |facts_q|) / sum(|facts_q|)``. Questions without facts get them
extracted from the reference answer by the same endpoint. The prompts are our
own wording. Unlike the reference, a judge that keeps answering unusable JSON
fails the question after ``attempts`` tries instead of retrying forever.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from hichunk.bench.llm import Endpoint, extract_json
from hichunk.errors import HichunkError

EXTRACT_PROMPT = """Break the answer below into short, self-contained factual statements, one fact each.
Return only JSON of the form {{"facts": ["...", "..."]}}.

Question: {question}
Answer: {answer}
"""

JUDGE_PROMPT = """You check whether a response states given facts.
For each fact in the list, write "attributed": 1 if the response states it or clearly implies it, else 0.
Return only JSON of the form {{"classifications": [{{"statement": "<fact>", "attributed": 0 or 1}}, ...]}}.

Question: {question}
Response: {response}
Facts: {facts}
"""


@dataclass(frozen=True)
class Coverage:
    coverage: float
    attributed: int
    judged: int
    n_facts: int


def extract_facts(endpoint: Endpoint, question: str, answer: str, attempts: int = 3) -> list[str]:
    """Facts of a reference answer, through the endpoint."""
    for _ in range(attempts):
        data = extract_json(endpoint.complete(EXTRACT_PROMPT.format(question=question, answer=answer), max_tokens=1024)[0])
        facts = data.get("facts") if data else None
        if isinstance(facts, list) and all(isinstance(f, str) for f in facts) and facts:
            return facts
    raise HichunkError(f"fact extraction gave no usable JSON after {attempts} tries")


def _valid_items(data: dict | None) -> list[int] | None:
    items = data.get("classifications") if data else None
    if not isinstance(items, list):
        return None
    return [int(it["attributed"]) for it in items if isinstance(it, dict) and it.get("attributed") in (0, 1)]


def judge_coverage(endpoint: Endpoint, question: str, response: str, facts: Sequence[str], samples: int = 1,
                   temperature: float = 0.0, attempts: int = 3) -> Coverage:
    """Coverage of ``facts`` by ``response`` over ``samples`` judge samples."""
    if not facts:
        raise HichunkError("Fact-Cov needs at least one fact")
    prompt = JUDGE_PROMPT.format(question=question, response=response, facts=json.dumps(list(facts), ensure_ascii=False))
    labels: list[int] = []
    for _ in range(samples):
        for _attempt in range(attempts):
            got = _valid_items(extract_json(endpoint.complete(prompt, max_tokens=2048, temperature=temperature)[0]))
            if got:
                labels.extend(got)
                break
        else:
            raise HichunkError(f"the Fact-Cov judge gave no usable JSON after {attempts} tries")
    return Coverage(sum(labels) / len(labels), sum(labels), len(labels), len(facts))


def pooled_fact_coverage(results: Sequence[Coverage]) -> float:
    """Dataset Fact-Cov: coverage pooled over facts (micro)."""
    total = sum(r.n_facts for r in results)
    return sum(r.coverage * r.n_facts for r in results) / total if total else float("nan")
