"""The text format generative split-point models read and write.

A window is an instruction followed by numbered lines ``"{i} @ {sentence}\\n"``
(0-based, residual lines first). The answer names every chunk start on its own
line: ``"{i}, Level {One..Ten}, {True|False}"`` (line number, level, whether the
line can serve as the chunk's title). Training data and inference share this
module so both sides always agree on the format.

The instruction is our own text. A released model should be driven with the
exact instruction it was trained with: ``load_instruction(path)`` reads one
from a file byte for byte.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from hichunk.errors import HichunkError
from hichunk.protocol import MAX_LEVEL, ChunkStart, ParseError, render_line

LEVEL_WORDS = ("One", "Two", "Three", "Four", "Five", "Six", "Seven", "Eight", "Nine", "Ten")
_LEVEL_OF_WORD = {w.lower(): i + 1 for i, w in enumerate(LEVEL_WORDS)}
assert len(LEVEL_WORDS) == MAX_LEVEL

INSTRUCTION = (
    "Below is a document that has already been split into sentences, one per line. Every line reads "
    '"{line number} @ {sentence}". Divide the document into segments at up to ten levels of detail: '
    "Level One segments are the largest self-contained parts, a Level One segment may hold several "
    "Level Two segments, a Level Two segment may hold Level Three segments, and so on. Use both the "
    "meaning and the layout of the text. For every line where a segment starts, write one answer line "
    '"{line number}, Level {level}, {title}", where level is a word from One to Ten and title is True '
    "when that line can serve as the segment's title and False otherwise. List the starts in order "
    "of line number and write nothing else. If no segment starts in the text, write nothing.\n\n"
    "Text:\n"
)

_ANSWER_LINE = re.compile(r"^\s*(\d+)\s*,\s*level\s+([a-z]+)\s*,\s*(true|false)\s*$", re.IGNORECASE)




def build_prompt(lines: Sequence[str], instruction: str = INSTRUCTION) -> str:
    """The window text: the instruction, then every line numbered from 0."""
    return instruction + "".join(render_line(i, line) for i, line in enumerate(lines))


def format_answer(starts: Iterable[ChunkStart]) -> str:
    """The answer a model should give for these starts (sorted by line, then level)."""
    ordered = sorted(starts, key=lambda s: (s.line, s.level))
    return "\n".join(f"{s.line}, Level {LEVEL_WORDS[s.level - 1]}, {s.title}" for s in ordered)


def parse_answer(answer: str, strict_empty: bool = False) -> list[ChunkStart]:
    """Chunk starts from an answer, in answer order; ``ParseError`` when any line is malformed.

    Blank lines and surrounding whitespace are tolerated, and the level word and
    flag are read case-insensitively; anything else on a line (an unknown level
    word, a missing field, prose) makes the whole answer unreadable, unlike the
    reference code, which silently skipped unknown level words. An empty answer
    means "no chunk starts here" (that is how a window without starts is
    trained); ``strict_empty=True`` treats it as a parse error, as the reference
    code did.
    """
    starts: list[ChunkStart] = []
    for raw_line in answer.splitlines():
        if not raw_line.strip():
            continue
        m = _ANSWER_LINE.match(raw_line)
        if m is None:
            raise ParseError(f"unreadable answer line {raw_line.strip()[:80]!r}", raw=answer)
        level = _LEVEL_OF_WORD.get(m.group(2).lower())
        if level is None:
            raise ParseError(f"unknown level {m.group(2)!r}", raw=answer)
        starts.append(ChunkStart(int(m.group(1)), level, m.group(3).lower() == "true"))
    if not starts and strict_empty:
        raise ParseError("empty answer", raw=answer)
    return starts




def load_instruction(path: str) -> str:
    """An instruction from a UTF-8 file, exactly as written (a released model needs its own bytes)."""
    try:
        with open(path, encoding="utf-8", newline="") as fh:
            text = fh.read()
    except OSError as exc:
        raise HichunkError(f"{path}: cannot read the prompt file ({exc.strerror})") from None
    except UnicodeDecodeError:
        raise HichunkError(f"{path}: the prompt file is not UTF-8 text") from None
    if not text.strip():
        raise HichunkError(f"{path}: the prompt file is empty")
    return text
