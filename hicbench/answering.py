"""Answer a question from a retrieved context through an LLM endpoint (HiCBench's prompt, our wording)."""

from __future__ import annotations

from hichunk.bench.llm import Endpoint

ANSWER_PROMPT = """Read the text below and answer the question briefly.

{context}

Answer the question using only the text above. Give only the answer, with no other words.

Question: {question}
Answer:"""


def answer_question(endpoint: Endpoint, context: str, question: str, max_tokens: int = 512) -> str:
    """Greedy answer (HiCBench: temperature 0, up to 512 new tokens)."""
    return endpoint.complete(ANSWER_PROMPT.format(context=context, question=question), max_tokens=max_tokens)[0].strip()
