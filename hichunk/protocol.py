"""The contract between the split-point engine and any split-point model, and the window format.

The engine (``hichunk/engine``) turns a document into windows of numbered
lines; a model only answers, for one window, where chunks start, at which
level, and whether the starting line can serve as the chunk's title. Window
filling, residual lines, validation, fallbacks, caching and tree building are
all the engine's job, so generative models (an answer string to parse) and
encoder models (labels per line) plug in the same way.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from hichunk.document.model import MAX_LEVEL


class ParseError(ValueError):
    """A model answer that cannot be read as chunk starts (the engine counts it and falls back).

    ``raw`` keeps the unreadable answer so traces and the prediction cache can
    record what the model said.
    """

    def __init__(self, message: str, raw: str | None = None):
        super().__init__(message)
        self.raw = raw


@dataclass(frozen=True, slots=True)
class ChunkStart:
    """A chunk starts at window line ``line`` (0-based, residual lines first) at ``level`` 1..10."""

    line: int
    level: int
    title: bool = False


@dataclass(frozen=True, slots=True)
class LineLayout:
    """Where a model line sits in the document's layout (plain text layout and typography, not markup).

    A heading is usually a whole source line with blank lines around it, often
    underlined in plain text or set larger or bold in a PDF; a sentence that
    merely wraps onto a new line, or ends mid-line, is not. Typography is
    relative to the body text (``hichunk.document.LineStyle``); formats without
    it keep the neutral defaults. ``role`` marks lines that look like headings
    and are not: table-of-contents entries and asides (callouts, captions).
    """

    starts_line: bool = True  # nothing but whitespace before it on its source line
    ends_line: bool = True  # nothing but whitespace after it on its source line
    blank_before: bool = False  # starts its line, and the line above is blank (or the document starts)
    blank_after: bool = False  # ends its line, and the line below is blank (or the document ends)
    indented: bool = False  # its source line begins with whitespace
    underline: str = ""  # the character of a rule line right below it ("=", "-", "~", "*", ...), plain-text headings
    size: float = 1.0  # font size / body font size
    bold: bool = False
    italic: bool = False
    gap: float = 0.0  # vertical space above its line, in body line heights
    role: str = ""  # "toc" or "aside" (hichunk.document.roles): never a chunk start, whatever a model says


@dataclass(frozen=True, slots=True)
class Window:
    """What a model sees: model-input lines (heading markers hidden, truncated), residual lines first.

    ``n_residual`` lines at the front were carried over from earlier windows
    (context only: starts predicted on them are dropped); the rest are new.
    ``is_last`` tells whether the window reaches the end of the document.
    ``layout`` gives each line's ``LineLayout`` when the engine knows it (empty
    otherwise); models that read only text ignore it.
    """

    lines: tuple[str, ...]
    n_residual: int = 0
    is_last: bool = True
    layout: tuple[LineLayout, ...] = ()


@dataclass(slots=True)
class Prediction:
    """A model's answer for one window: chunk starts, plus the raw answer text when there is one."""

    starts: list[ChunkStart]
    raw: str | None = None
    info: dict = field(default_factory=dict)


@runtime_checkable
class SplitPointModel(Protocol):
    """Anything that predicts chunk starts for a window of numbered lines."""

    name: str  # stable identifier: cache keys and provenance use it
    window_tokens: int  # default window size L, in this model's tokens

    def count_tokens(self, text: str) -> int:
        """Tokens of ``text`` in the model's own tokenizer (the engine fills windows with it)."""
        ...

    def overhead_tokens(self) -> int:
        """Fixed tokens every window costs besides its lines (instruction, template)."""
        ...

    def predict(self, window: Window) -> Prediction:
        """Chunk starts for one window; raise ``ParseError`` for an answer that cannot be read."""
        ...

@runtime_checkable
class OutlineReader(Protocol):
    """A split-point model that also reads a document's whole outline once its windows are done."""

    def outline_levels(self, points: dict[int, tuple[int, bool]], texts: Sequence[str],
                       layout: Sequence[LineLayout] | None) -> dict[int, tuple[int, bool]]:
        """``points`` (unit -> (level, title)) with the levels of titled starts as the whole outline shows them."""
        ...


def render_line(number: int, sentence: str) -> str:
    """One numbered input line, newline included (the engine counts tokens of exactly this)."""
    return f"{number} @ {sentence}\n"


def check_starts(starts: Sequence[ChunkStart], n_lines: int) -> str | None:
    """Why these starts are not a valid answer for a window of ``n_lines`` lines (None when valid).

    Every start must lie inside the window and have a level in 1..10, and the
    starts of each level must strictly increase in answer order. The reference
    code checked level 1 only and never bounded its first point; we check all.
    """
    last: dict[int, int] = {}
    for s in starts:
        if not 0 <= s.line < n_lines:
            return f"line {s.line} outside the window (0..{n_lines - 1})"
        if not 1 <= s.level <= MAX_LEVEL:
            return f"level {s.level} outside 1..{MAX_LEVEL}"
        if s.line <= last.get(s.level, -1):
            return f"level-{s.level} line {s.line} does not increase"
        last[s.level] = s.line
    return None
