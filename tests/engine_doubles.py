"""A scripted split-point model for engine tests (a test double of hichunk.protocol.SplitPointModel).

Token counts are whitespace-separated words, so a numbered line
``"{i} @ {word}\\n"`` of a one-word unit costs exactly 3 tokens and window
sizes can be worked out by hand. Answers are strings run through the real
parser (``hichunk.models.prompt.parse_answer``), so the engine sees exactly what a
generative model would give it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from hichunk.models.prompt import format_answer, parse_answer
from hichunk.protocol import ChunkStart, Prediction, Window


class ScriptedModel:
    """Answers from ``script``: a function of the window, or a list of answers used in turn (the last repeats)."""

    def __init__(self, script: Callable[[Window], str] | Sequence[str], window_tokens: int = 100, overhead: int = 10,
                 strict_empty: bool = False, name: str = "scripted"):
        self.script = script
        self.window_tokens = window_tokens
        self.overhead = overhead
        self.strict_empty = strict_empty
        self.name = name
        self.seen: list[Window] = []

    def count_tokens(self, text: str) -> int:
        return len(text.split())

    def overhead_tokens(self) -> int:
        return self.overhead

    def predict(self, window: Window) -> Prediction:
        self.seen.append(window)
        if callable(self.script):
            answer = self.script(window)
        else:
            answer = self.script[min(len(self.seen) - 1, len(self.script) - 1)]
        return Prediction(parse_answer(answer, self.strict_empty), raw=answer)


def oracle(levels: dict[str, int]) -> Callable[[Window], str]:
    """A script that starts a chunk on every line whose text has a level in ``levels``."""

    def answer(window: Window) -> str:
        return format_answer(ChunkStart(i, levels[t], True) for i, t in enumerate(window.lines) if t in levels)

    return answer


def load_scripted(settings) -> ScriptedModel:
    """A registry loader (``hichunk.models.registry.MODELS`` entry) giving a model that starts a chunk on line 0."""
    return ScriptedModel(["0, Level One, True"], window_tokens=settings.window_tokens or 100)
