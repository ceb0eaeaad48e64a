"""A changelog's release lines are its sections, all on one level.

Release notes (``NEWS``, ``CHANGELOG.md`` with its markers hidden, ``HISTORY`` as text) head each
release with a short line that is mostly a version: ``43.beta.1``, ``🌈 1.20.8 `2026-09-17```,
``Avahi 0.8, the 'Dobro Jutro' release``, ``2015.12.03 V0.2.0-alpha2``, ``Update 2026.07.04：发布
V2.3.3``. Read one at a time, "3.37.92" looks like an outline number of depth 3 and goes under
"43" as its subsection, or it is not taken for a heading at all; the tree then hangs every release
under the newest one. What tells a changelog from an outline is the order: outline numbers go up
("3.1" before "3.2"), releases are listed newest first, so their versions go down.

So when a document has at least ``MIN_RELEASES`` release-shaped lines with text between them (a run
of versions with nothing between is a list: "jQuery 2.1.0", "jQuery 2.0.2"), whose versions go down
between at least ``MIN_FALLING`` of neighbouring pairs, each is a titled start,
all on one level (level 1, or one below the section they are in: "Changelog"), and what the model
found inside a release goes below it. Inside the releases, the names a changelog files each release's
entries under (Keep a Changelog's "Added", "Changed", "Fixed" ...; "Features", "Bug Fixes" of the
changelog tools; "新增", "修复"), standing alone and bare (a "Fixes:" over its list, a bold "**Fixed**",
is a label in the text), are the releases' sections one level below them once
``MIN_CATEGORIES`` are there: a model reads a lone "Fixed" as a word of a list and finds some of them
only. Model-agnostic, like the other document-level passes: it reads unit texts (and, for the category
lines, whether a line stands alone).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Collection, Sequence

from hichunk.protocol import LineLayout
from hichunk.textnorm import fold

MIN_RELEASES = 3
MIN_FALLING = 0.7
_MAX_CHARS = 100
_MAX_WORDS_AROUND = 6

_PART = r"(?:\d+(?:a|b|rc)\d+|\d+|alpha|beta|rc|dev|post|pre|preview)\d*"  # PEP 440's "2.14.0b2" too
_VERSION = r"[vV]?\d+\." + _PART + r"(?:[.\-_]" + _PART + r")*"  # "1.20.8", "0.2.0-alpha2", not "2008-2010"
_RELEASE = re.compile(
    r"^(?![-+\u2022\u00b7\u2013]\s)(?P<lead>[^\w\s]{0,4})\s*"  # an emoji, a bracket, "*" (not a list's "-", "+", "•")
    r"(?P<before>(?:[^\W\d][\w'’-]*[\s:：]+){0,4}?)"  # "Avahi", "Update", "Changes in release"
    r"\[?(?P<version>" + _VERSION + r")(?![\w.])\]?"
    r"(?P<after>.*)$"
)
_NUMBER = re.compile(r"[-+]?\d+(?:[.,]\d+)*[\],;)]*")
_MONTH = r"(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)[a-z]*\.?"
_DATE_OR_CODE = re.compile(
    r"`[^`]*`|\(\s*[\d\-./ ]+\s*\)|\d{4}[\-./]\d{1,2}[\-./]\d{1,2}"
    r"|[\[(]?\s*(?:\d{1,2}\s+" + _MONTH + r"|" + _MONTH + r"\s+\d{1,2},?)\s+\d{4}\s*[\])]?")  # "(13 November 2022)"


def release_lines(texts: Sequence[str]) -> list[int]:
    """The units that head a changelog's releases (empty when the document is not a changelog).

    Release lines share one form: of the candidates, only those opening like most of them are kept (a
    Markdown changelog's "[0.11.1] - 2022-10-19" headings, not its "* Bump cmake from 3.5 to 3.13" items).
    """
    read = [(u, r) for u, text in enumerate(texts) if (r := _release_version(text)) is not None]
    leads = Counter(lead for _, (lead, _) in read)
    found = [(u, version) for u, (lead, version) in read if lead == max(leads, key=leads.__getitem__)]
    listed = set()  # lines of a list of versions ("jQuery 2.1.0" / "jQuery 2.0.2"): no text between them
    for (u, _), (w, _) in zip(found, found[1:]):
        if not any(texts[i].strip() for i in range(u + 1, w)):
            listed |= {u, w}
    found = [(u, version) for u, version in found if u not in listed]
    if len(found) < MIN_RELEASES:
        return []
    pairs = list(zip(found, found[1:]))
    if sum(1 for (_, a), (_, b) in pairs if b < a) < MIN_FALLING * len(pairs):
        return []
    return [u for u, _ in found]


def releases_as_sections(points: dict[int, tuple[int, bool]], releases: Collection[int]) -> dict[int, tuple[int, bool]]:
    """``points`` (unit -> (level, title)) with a titled start on every release line, all on one level, and
    the starts inside the releases below it.

    The level: the one the model gave most of the release lines when it found at least half of them
    (release notes inside a larger document, "If your file predates 6.4.0" in an FAQ), else one below the
    section they are in ("Changelog"), or level 1. The releases run until a titled start after the
    last one above their level, or on the level most titles before them have (the FAQ's next section),
    or on their own level when no release before the last holds a titled start (a README's news entries,
    "Update 2026.07.04：发布 V2.3.3", over its sections); only starts in that run move.
    """
    if not releases:
        return points
    releases = sorted(releases)
    found = [points[u][0] for u in releases if u in points and points[u][1]]
    missed = 2 * len(found) < len(releases)
    if not missed:
        level = max(set(found), key=lambda lv: (found.count(lv), -lv))
    else:
        parent = max((u for u, (_, title) in points.items() if u < releases[0] and title), default=None)
        level = 1 if parent is None else points[parent][0] + 1
    before = Counter(lv for u, (lv, title) in points.items() if u < releases[0] and title)
    bound = max(level - 1, max(before, key=lambda lv: (before[lv], -lv))) if before else level - 1
    after = [u for u, (lv, title) in points.items() if u > releases[-1] and title and lv <= bound]
    if not any(title for u, (_, title) in points.items() if releases[0] < u < releases[-1] and u not in releases):
        # bare release entries (a README's news): the next heading on their level ends them
        after += [u for u, (lv, title) in points.items() if u > releases[-1] and title and lv <= level]
    end = min(after, default=max(points, default=0) + 1)
    run = {u for u in points if releases[0] < u < end} - set(releases)
    below = _levels_below(Counter(points[u][0] for u in run), level, missed)
    out = {u: (below[lv] if u in run else lv, title) for u, (lv, title) in points.items()}
    return out | {u: (level, True) for u in releases}


CATEGORIES = frozenset({
    # Keep a Changelog's six, and the groups changelog tools write (release-please, towncrier, GitHub's
    # generated release notes)
    "added", "changed", "deprecated", "removed", "fixed", "security", "features", "new features", "bug fixes",
    "bugfixes", "fixes", "improvements", "enhancements", "breaking changes", "deprecations", "deprecations and removals",
    "documentation", "improved documentation", "performance", "performance improvements", "dependencies",
    "internal", "misc", "miscellaneous", "other", "other changes", "maintenance", "refactor", "chores",
    "what's changed", "new contributors", "changes", "packaging",
    "新增", "新功能", "新特性", "修复", "问题修复", "缺陷修复", "优化", "改进", "变更", "移除", "废弃", "安全", "其他",
})
MIN_CATEGORIES = 3
_LEAD = re.compile(r"^[^\w\s*_]{1,4}\s*")  # "🐛 Bug Fixes"
_BULLET = re.compile(r"^[-*+\u2022]\s")  # "- Fixed": an item of a list, not its heading


def release_categories(points: dict[int, tuple[int, bool]], texts: Sequence[str], releases: Sequence[int],
                       layout: Sequence[LineLayout] | None = None) -> dict[int, tuple[int, bool]]:
    """``points`` with every standalone category line of a release ("Added", "Fixed", "🐛 Bug Fixes", "修复")
    a titled start one level below the releases, once ``MIN_CATEGORIES`` stand inside them.

    A changelog groups each release's entries under the same few names; read alone, "Fixed" is one word
    in a list, and a model finds some and misses the rest of what is plainly one set of headings."""
    if not releases:
        return points
    level = points[releases[0]][0]  # the releases' own, as ``releases_as_sections`` left them
    # the releases run until a titled start on their level or above after the last one (the next section)
    end = min((u for u, (lv, title) in points.items() if u > releases[-1] and title and lv <= level), default=len(texts))
    found = [u for u in range(releases[0] + 1, end) if u not in releases and _category(texts[u])
             and (layout is None or (layout[u].blank_before and not layout[u].role))]
    if len(found) < MIN_CATEGORIES:
        return points
    return points | {u: (level + 1, True) for u in found}


def _category(text: str) -> bool:
    s = fold(text).strip()
    return not _BULLET.match(s) and _LEAD.sub("", s).casefold() in CATEGORIES


def _levels_below(inside: Counter, level: int, missed: bool) -> dict[int, int]:
    """New levels for the starts inside releases. When the model missed most release lines, the levels it
    gave inside them are not relative to them: the most common level and any shallower one (a window that
    missed its release line put "Features" high) go just below the releases, deeper ones keep their order
    below that. Otherwise only starts on or above the releases' level move, just below them."""
    if not inside:
        return {}
    if not missed:
        return {lv: max(lv, level + 1) for lv in inside}
    common = max(inside, key=lambda lv: (inside[lv], -lv))
    deeper = sorted(lv for lv in inside if lv > common)
    return {lv: level + 1 for lv in inside if lv <= common} | {lv: level + 2 + i for i, lv in enumerate(deeper)}


_VERSION_PART = re.compile(r"\d+(?:(?:a|b|rc)\d+)?")
_PRE = {"a": -3, "b": -2, "rc": -1}  # a pre-release comes before its release: "2.14.0b2" < "2.14.0"


def _version_key(part: str) -> tuple[int, int, int]:
    """How one dot-part of a version compares ("14" -> (14, 0, 0), "0b2" -> (0, -2, 2))."""
    m = re.fullmatch(r"(\d+)(a|b|rc)(\d+)", part)
    return (int(m[1]), _PRE[m[2]], int(m[3])) if m else (int(part), 0, 0)


def _release_version(text: str) -> tuple[str, tuple[int, ...]] | None:
    """How a release line opens and the version it names, as numbers to compare (None: not a release line)."""
    s = fold(text).strip()
    if not s or len(s) > _MAX_CHARS or text[:1].isspace():  # indented: code, or an item of a Debian changelog
        return None
    m = _RELEASE.match(s)
    if m is None:
        return None
    after = _DATE_OR_CODE.sub(" ", m["after"])
    words = after.split()
    if m["before"][:1].islower() and (len(m["before"].split()) > 1 or words):
        return None  # "the WCAG 2.0 guidelines": a wrapped sentence; "libpipeline 1.5.7 (13 November 2022)" is none
    if len(words) > _MAX_WORDS_AROUND or words and words[-1][-1] in ".。" and not _NUMBER.fullmatch(words[-1][:-1]):
        return None  # "1.005 fixed that.": a sentence ("... from 1.07 to 1.07.1." ends on a version)
    if sum(1 for w in words if _NUMBER.fullmatch(w)) >= 2:  # "0.8 -0.8 scale", a row of numbers
        return None
    numbers = tuple(x for part in _VERSION_PART.findall(m["version"]) for x in _version_key(part))
    if any(len(p) > 2 for p in re.findall(r"\d+", m["version"])[1:]) and numbers[0] < 1900:
        return None  # "192.168.212", "1.005": an address or a decimal, no version (a date's year aside)
    return m["lead"].strip("[(【"), numbers  # "[Update 2024.11.30]" opens like "Update 2026.07.04"
