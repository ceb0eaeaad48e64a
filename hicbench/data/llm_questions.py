"""Questions, answers and facts written by an LLM from one section, the way HiCBench was made (optional).

The endpoint sees the document title, the section's heading path and its body
sentences, numbered, and returns JSON with a question that needs much of the
section, a short answer, the answer's facts and the numbers of the evidence
sentences. Answers that do not validate are retried, then skipped and counted
(generation is data making, not scoring, so a skipped section biases nothing).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from hichunk.bench.data.questions import Section
from hichunk.bench.llm import Endpoint, extract_json

log = logging.getLogger(__name__)

PROMPT = """Below is one section of a document, one sentence per numbered line.
Write one question that can only be answered well by reading most of this section, a concise reference
answer, the answer's key facts (short statements), and the numbers of the sentences that support the answer.
Write the question and answer in the language of the section.
Return only JSON: {{"question": "...", "answer": "...", "facts": ["...", "..."], "evidence": [1, 2, 3]}}

Document: {title}
Section: {path}

{numbered}
"""


@dataclass
class LLMQuestion:
    input: str
    answer: str
    facts: list[str]
    evidences: list[str]


def _validate(data: dict | None, sentences: list[str]) -> LLMQuestion | None:
    if not data:
        return None
    q, a, facts, ev = data.get("question"), data.get("answer"), data.get("facts"), data.get("evidence")
    if not (isinstance(q, str) and q.strip() and isinstance(a, str) and a.strip()):
        return None
    if not (isinstance(facts, list) and facts and all(isinstance(f, str) and f.strip() for f in facts)):
        return None
    if not (isinstance(ev, list) and ev and all(isinstance(i, int) and 1 <= i <= len(sentences) for i in ev)):
        return None
    return LLMQuestion(q.strip(), a.strip(), [f.strip() for f in facts], [sentences[i - 1] for i in sorted(set(ev))])


def section_question(endpoint: Endpoint, title: str, section: Section, attempts: int = 3) -> LLMQuestion | None:
    """One LLM-written question for a section, or None when the endpoint never gave valid JSON."""
    numbered = "\n".join(f"{i} @ {s}" for i, s in enumerate(section.sentences, 1))
    prompt = PROMPT.format(title=title, path=" > ".join(section.path), numbered=numbered)
    for attempt in range(attempts):
        got = _validate(extract_json(endpoint.complete(prompt, max_tokens=2048, temperature=0.0 if attempt == 0 else 0.7)[0]),
                        section.sentences)
        if got:
            return got
    log.warning("no valid question for section %r of %r after %d tries", section.title, title, attempts)
    return None
