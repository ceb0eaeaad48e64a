"""Incremental builder of a clean view, its lines and its offset map.

Markup parsers (HTML, reST, groff) scan the raw text left to right and feed
the builder with copied raw spans and inserted text. The builder keeps the
three things that must agree - the clean string, the ``Line`` list and the
``OffsetMap`` breakpoints - in step, so each parser only decides *what* the
clean view says, never how offsets are recorded.

Contract with callers: every raw position passed in is at or after every raw
position passed before (the scan only moves forward); that keeps the offset
map monotone.
"""

from __future__ import annotations

from hichunk.document.model import Document, Line, LineStyle, OffsetMap


class CleanBuilder:
    """Accumulates clean text line by line with exact raw offsets.

    ``new_line(raw_start)`` begins a line whose cut point is ``raw_start`` (where
    the line's markup begins); ``copy`` appends raw characters (cuts inside map
    exactly); ``insert`` appends generated text (cuts inside map to a boundary).
    """

    def __init__(self, raw: str):
        self.raw = raw
        self._parts: list[str] = []
        self._points: list[tuple[int, int, int | None]] = []
        self._lines: list[Line] = []
        self.pos = 0
        self._line_open = False
        self._line_start = 0
        self._line_raw = 0
        self._line_heading: int | None = None
        self._line_style: LineStyle | None = None
        self._copy_end = -1  # raw end of the last copy run, if the last run is a copy
        self._last_raw = 0

    # -- lines -------------------------------------------------------------
    @property
    def started(self) -> bool:
        """True once any line exists."""
        return self._line_open

    @property
    def line_has_text(self) -> bool:
        """True when the current line has any characters."""
        return self._line_open and self.pos > self._line_start

    def new_line(self, raw_start: int, heading: int | None = None, style: LineStyle | None = None) -> None:
        """End the current line (if any) and begin a new one at ``raw_start`` (``style``: its typography)."""
        raw_start = max(raw_start, self._last_raw)
        if self._line_open:
            self._close_line()
            if self._copy_end >= 0 and self._copy_end == raw_start - 1 and self.raw[self._copy_end] == "\n":
                # the raw newline itself separates the lines: extend the copy run
                self._parts.append("\n")
                self.pos += 1
                self._copy_end = raw_start
                self._open_line(raw_start, heading, style)
                return
            # a cut after an empty line is a cut at its start: keep that line's own position
            boundary = self._line_raw if self.pos == self._line_start else raw_start
            self._points.append((self.pos, boundary, None))
            self._parts.append("\n")
            self.pos += 1
            self._copy_end = -1
        self._open_line(raw_start, heading, style)

    def _open_line(self, raw_start: int, heading: int | None, style: LineStyle | None = None) -> None:
        self._line_open = True
        self._line_start = self.pos
        self._line_raw = raw_start
        self._line_heading = heading
        self._line_style = style
        self._last_raw = raw_start

    def _close_line(self) -> None:
        # the text is filled in by finish(), once the clean string exists
        self._lines.append(Line(self._line_start, self.pos, "", self._line_heading, self._line_style))

    def set_heading(self, level: int | None) -> None:
        """Set the heading level of the current line."""
        self._line_heading = level

    # -- runs --------------------------------------------------------------
    def _ensure_line(self) -> None:
        if not self._line_open:
            self._open_line(0, None)

    def copy(self, raw_start: int, raw_end: int) -> None:
        """Append ``raw[raw_start:raw_end]`` (must not contain a newline)."""
        if raw_end <= raw_start:
            return
        self._ensure_line()
        if raw_start == self._copy_end:
            pass  # continues the previous copy run
        elif self.pos == self._line_start:
            self._points.append((self.pos, self._line_raw, raw_start))
        else:
            self._points.append((self.pos, raw_start, raw_start))
        self._parts.append(self.raw[raw_start:raw_end])
        self.pos += raw_end - raw_start
        self._copy_end = raw_end
        self._last_raw = raw_end

    def insert(self, text: str, raw_at: int) -> None:
        """Append generated ``text`` (no newline); cuts inside it map to ``raw_at``."""
        if not text:
            return
        self._ensure_line()
        raw_at = max(raw_at, self._last_raw)
        boundary = self._line_raw if self.pos == self._line_start else raw_at
        self._points.append((self.pos, boundary, None))
        self._parts.append(text)
        self.pos += len(text)
        self._copy_end = -1
        self._last_raw = raw_at

    # -- result ------------------------------------------------------------
    def finish(self, name: str, fmt: str) -> Document:
        """The finished Document (an empty clean view has one empty line)."""
        if self._line_open:
            self._close_line()
        clean = "".join(self._parts)
        lines = [Line(ln.clean_start, ln.clean_end, clean[ln.clean_start : ln.clean_end], ln.heading, ln.style)
                 for ln in self._lines]
        if not lines:
            lines = [Line(0, 0, "")]
        return Document(name, fmt, self.raw, clean, lines, OffsetMap(self._points, len(clean), len(self.raw)))
