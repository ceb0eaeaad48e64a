"""Errors a user can act on. The CLI prints them as one line, never a traceback."""


class HichunkError(Exception):
    """Base class: a clear, one-line message for the user."""


class InputError(HichunkError):
    """The input document cannot be read as text (binary, bad encoding, unknown format)."""


class IndexChanged(HichunkError):
    """Another process committed to the index and removed files this reader's view still named; reopen."""


class IndexBusy(HichunkError):
    """Another process holds the index's writer lock."""
