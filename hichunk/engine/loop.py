"""The iterative windowed inference of REFERENCE.md §1, independent of the model.

Over a list of unit texts (one model line each), with their layout when known:

1. Fill a window: residual lines first, then new lines up to the token budget.
2. Ask the model for chunk starts (through the prediction cache). An answer
   that cannot be parsed, or starts outside the window, non-increasing within
   a level, or with a level outside 1..10, counts as an error and is replaced
   by one level-1 start at the window's first new line.
3. Starts on residual lines are dropped (they were context); the rest map to
   global unit indexes. A line given several levels keeps the shallowest.
   Starts on units whose layout gives them a role (table-of-contents lines,
   callouts and captions: ``hichunk.document.roles``) are dropped too,
   whatever the model says: those lines sit inside a section and never end it.
4. Last window: keep everything. Two or more level-1 starts among the new
   lines: keep what lies up to the last one and restart there, without
   residual lines (the next window, which opens on that line, may give it
   another level; the reference code dropped it and relied on the next window
   to find it again). Otherwise keep everything, continue after the window and
   carry residual lines from the current level-1 segment (recurrent mode 2;
   mode 1 carries none).
5. After the last window, a start keeps its title flag only on a line shaped
   like a title (whole, short, not running text), a start on an HTML comment goes onto the heading
   above it or goes (``hichunk.engine.comments``), a start on the description
   under a standalone code-signature line (an API reference's ``def json()``)
   moves onto the signature (``hichunk.engine.signatures``), a start on the first
   item of a tight list moves onto the title line above it and one on a later item is dropped
   (``hichunk.engine.lists``), starts on three or more definition terms in a row (each line over its
   one-item definition) are dropped (``hichunk.engine.terms``),
   the title line above a reST ``.. module::`` directive starts a section
   (``hichunk.engine.rest``),
   standalone lines of a capitalised or underlined heading style the model mostly
   found as titles of one level become titles of that level too
   (``hichunk.engine.peers``), starts inside a fenced code block are dropped
   (``hichunk.engine.fences``), and so are starts on plain lines glued to the lines
   around them where the document's starts mostly stand apart (``hichunk.engine.apart``), a model that reads whole outlines (an
   ``OutlineReader``, such as an encoder with an outline head) sets the levels of
   the titled starts from the document's outline, and the levels of titled
   starts are made consistent over the whole document by heading style
   (``hichunk.engine.outline``), so a heading's level does not depend on where
   its window began; front and back matter (a preface, the indexes) go on the
   document's top level (``hichunk.engine.matter``), and a manual page's sections (NAME, SYNOPSIS ...)
   are titled starts of one level (``hichunk.engine.manpage``).

Choices where the reference code is buggy or silent, made explicit here:
an empty answer means "no starts" (``ParseError`` only when the model is set
to be strict about it); every level is validated, not only level 1; the
residual limit is in tokens; a start on the document's first line keeps its
level; a window always takes at least one new line, so the loop always ends.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection, Sequence
from dataclasses import asdict, dataclass, field

from hichunk.engine.apart import starts_set_apart
from hichunk.engine.cache import PredictionCache, window_key
from hichunk.engine.comments import starts_off_comments
from hichunk.engine.contents import starts_on_contents_titles
from hichunk.engine.fences import starts_outside_fences
from hichunk.engine.lists import starts_on_titles_above_lists
from hichunk.engine.manpage import man_sections_as_starts
from hichunk.engine.matter import front_and_back_matter_as_chapters
from hichunk.engine.midline import starts_at_line_starts
from hichunk.engine.numbered import missed_outline_numbers, numbered_outline_only
from hichunk.engine.outline import consistent_levels, title_shaped
from hichunk.engine.peers import styled_peers_as_titles, type_peers_as_titles
from hichunk.engine.project import starts_on_project_name
from hichunk.engine.releases import release_categories, release_lines, releases_as_sections
from hichunk.engine.residual import RESIDUAL_STEPS, residual_units
from hichunk.engine.rest import starts_on_module_titles
from hichunk.engine.signatures import starts_on_signatures_above
from hichunk.engine.terms import starts_off_definition_terms
from hichunk.engine.windows import LineCounter, fill_window
from hichunk.errors import HichunkError
from hichunk.protocol import ChunkStart, LineLayout, OutlineReader, ParseError, SplitPointModel, Window, check_starts

OK, PARSE_ERROR, INVALID = "ok", "parse_error", "invalid"
RESTART, CONTINUE, LAST = "restart", "continue", "last"


@dataclass(frozen=True)
class EngineSettings:
    """Knobs of the iterative algorithm."""

    window_tokens: int | None = None  # window size L in model tokens (None: the model's own default)
    recurrent: int = 2  # 2: carry residual lines into the next window; 1: never
    residual_steps: tuple[tuple[int, int, int], ...] = RESIDUAL_STEPS  # (first clips, last clips, lines per clip)
    document_levels: bool = True  # make heading levels consistent over the document by style (step 5)

    def __post_init__(self) -> None:
        if self.recurrent not in (1, 2):
            raise HichunkError(f"recurrent mode must be 1 or 2 (got {self.recurrent})")
        if self.window_tokens is not None and self.window_tokens < 1:
            raise HichunkError(f"window must be a positive number of tokens (got {self.window_tokens})")
        if any(min(step) < 1 for step in self.residual_steps):
            raise HichunkError("residual steps must be positive (first clips, last clips, lines per clip)")


@dataclass
class WindowRecord:
    """What happened in one window (one line of a ``--trace`` file)."""

    window: int
    first: int  # global index of the first new unit
    new_lines: int
    residual_lines: int
    tokens: int  # input size: model overhead + numbered lines
    status: str  # ok | parse_error | invalid (the last two fell back to one level-1 start)
    error: str | None
    starts: int  # starts kept from this window
    action: str  # restart | continue | last
    next: int  # first new unit of the next window
    seconds: float  # model time (0 on a cache hit)
    cache: str  # hit | miss | off
    overflow: bool  # one line alone exceeded the window and was taken anyway
    answer: str | None  # the model's raw answer, when it has one

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass
class EngineResult:
    """Chunk starts by global unit index, plus the per-window record."""

    points: dict[int, tuple[int, bool]]  # unit -> (level, title)
    windows: list[WindowRecord] = field(default_factory=list)
    fallbacks: set[int] = field(default_factory=set)  # units whose start is a fallback, not a prediction

    @property
    def errors(self) -> int:
        return sum(w.status != OK for w in self.windows)

    @property
    def cache_hits(self) -> int:
        return sum(w.cache == "hit" for w in self.windows)


@dataclass
class _Outcome:
    starts: list[ChunkStart]
    raw: str | None
    error: str | None
    seconds: float
    cache: str


def _predict(model: SplitPointModel, window: Window, cache: PredictionCache | None) -> _Outcome:
    """The model's answer for one window, from the cache when it was seen before."""
    key = window_key(model.name, window) if cache is not None and cache.enabled else None
    if key is not None:
        hit = cache.get(key)
        if hit is not None:
            starts = [ChunkStart(int(a), int(b), bool(c)) for a, b, c in hit.get("starts", [])]
            return _Outcome(starts, hit.get("raw"), hit.get("error"), 0.0, "hit")
    t0 = time.perf_counter()
    try:
        pred = model.predict(window)
        outcome = _Outcome(list(pred.starts), pred.raw, None, 0.0, "miss" if key else "off")
    except ParseError as exc:
        outcome = _Outcome([], exc.raw, str(exc) or "unreadable answer", 0.0, "miss" if key else "off")
    outcome.seconds = time.perf_counter() - t0
    if key is not None:
        cache.put(key, {"starts": [[s.line, s.level, s.title] for s in outcome.starts], "raw": outcome.raw, "error": outcome.error})
    return outcome


def _map_starts(starts: Sequence[ChunkStart], n_residual: int, first: int,
                layout: Sequence[LineLayout] | None) -> dict[int, tuple[int, bool]]:
    """Global unit -> (level, title) for starts on new lines that may start a chunk; a line given several
    levels keeps the shallowest."""
    out: dict[int, tuple[int, bool]] = {}
    for s in starts:
        if s.line < n_residual:
            continue
        unit = first + s.line - n_residual
        if layout is not None and layout[unit].role:
            continue
        if unit not in out or s.level < out[unit][0]:
            out[unit] = (s.level, s.title)
    return out


def infer_points(
    texts: Sequence[str],
    model: SplitPointModel,
    settings: EngineSettings | None = None,
    cache: PredictionCache | None = None,
    on_window: Callable[[WindowRecord], None] | None = None,
    progress: bool = False,
    layout: Sequence[LineLayout] | None = None,
    contents: Collection[str] = (),
) -> EngineResult:
    """Chunk starts over ``texts`` (one model line per unit) by iterative windowed inference.

    ``layout``, one ``LineLayout`` per text, is passed on to the model with each window;
    ``contents``, the titles the document's table of contents lists (``contents_titles``).
    """
    settings = settings or EngineSettings()
    window_tokens = settings.window_tokens or model.window_tokens
    overhead = model.overhead_tokens()
    budget = window_tokens - overhead
    if budget <= 0:
        raise HichunkError(f"a window of {window_tokens} tokens leaves no room for lines: "
                           f"the instruction and template alone take {overhead}")
    if layout is not None and len(layout) != len(texts):
        raise HichunkError(f"layout for {len(layout)} lines given with {len(texts)} lines")
    counter = LineCounter(model.count_tokens, texts)
    result = EngineResult({})
    points = result.points
    start, residual, n = 0, [], len(texts)

    from tqdm import tqdm

    with tqdm(total=n, desc="windows", unit="line", disable=not progress or n == 0, leave=False, delay=2) as bar:
        while start < n:
            filled = fill_window(start, n, residual, budget, counter)
            r = len(filled.residual)
            is_last = start + filled.n_new == n
            lines = tuple(texts[u] for u in filled.residual) + tuple(texts[start : start + filled.n_new])
            shape = () if layout is None else tuple(layout[u] for u in filled.residual) + tuple(layout[start : start + filled.n_new])
            outcome = _predict(model, Window(lines, r, is_last, shape), cache)

            status, error = OK, outcome.error
            if error is not None:
                status = PARSE_ERROR
            else:
                error = check_starts(outcome.starts, len(lines))
                status = OK if error is None else INVALID
            mapped = {start: (1, False)} if status != OK else _map_starts(outcome.starts, r, start, layout)

            level1 = sorted(u for u, (level, _) in mapped.items() if level == 1)
            if is_last:
                action, nxt, keep = LAST, n, mapped
            elif len(level1) >= 2:
                action, nxt = RESTART, level1[-1]
                keep = {u: v for u, v in mapped.items() if u <= nxt}
            else:
                action, nxt, keep = CONTINUE, start + filled.n_new, mapped
            points.update(keep)
            if status != OK:
                result.fallbacks.add(start)
            residual = []
            if action == CONTINUE and settings.recurrent == 2:
                residual = residual_units(points, nxt, (budget - 1) // 2, counter.lines, settings.residual_steps)

            record = WindowRecord(
                window=len(result.windows), first=start, new_lines=filled.n_new, residual_lines=r,
                tokens=overhead + filled.line_tokens, status=status, error=error, starts=len(keep),
                action=action, next=nxt, seconds=round(outcome.seconds, 6), cache=outcome.cache,
                overflow=filled.overflow, answer=outcome.raw,
            )
            result.windows.append(record)
            if on_window is not None:
                on_window(record)
            bar.update(nxt - start)
            start = nxt
    for u, (level, title) in points.items():
        if title and not title_shaped(texts[u], layout[u] if layout else None):
            points[u] = (level, False)
    points = starts_off_comments(points, texts, layout)
    points = starts_at_line_starts(starts_on_signatures_above(points, texts, layout), texts, layout, result.fallbacks)
    points = starts_off_definition_terms(starts_on_titles_above_lists(points, texts, layout), texts, layout)
    points = starts_on_module_titles(points, texts, layout)
    points = styled_peers_as_titles(points, texts, layout)
    points = starts_set_apart(starts_outside_fences(points, texts), layout)
    points = starts_on_contents_titles(points, texts, layout, contents)
    points = result.points = starts_on_project_name(points, texts, layout)
    if settings.document_levels and isinstance(model, OutlineReader):
        points = result.points = model.outline_levels(points, texts, layout)
    if settings.document_levels:
        points = type_peers_as_titles(consistent_levels(points, texts, layout), texts, layout)
        points = man_sections_as_starts(front_and_back_matter_as_chapters(points, texts), texts, layout)
        releases = release_lines(texts)  # a changelog's versions are no outline numbers
        if releases:
            result.points = release_categories(releases_as_sections(points, releases), texts, releases, layout)
        else:
            result.points = missed_outline_numbers(numbered_outline_only(points, texts, layout), texts, layout)
    return result
