"""Errors a user can act on. The CLI prints them as one line, never a traceback."""


class HichunkError(Exception):
    """Base class: a clear, one-line message for the user."""


class InputError(HichunkError):
    """The input document cannot be read as text (binary, bad encoding, unknown format)."""
