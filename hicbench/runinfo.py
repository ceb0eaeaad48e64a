"""What every benchmark report states about its run: data version, models, packages, date, command."""

from __future__ import annotations

import datetime as _dt
import platform
import shlex
import sys
from importlib import metadata

PACKAGES = ("hichunk", "numpy", "torch", "transformers", "sentence-transformers", "FlagEmbedding", "model2vec",
            "nltk", "blingfire", "evaluate", "matplotlib")


def package_versions(names: tuple[str, ...] = PACKAGES) -> dict[str, str]:
    """Installed versions of the packages that can change results (missing ones are left out)."""
    out = {}
    for name in names:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return out


def command_line(argv: list[str] | None = None) -> str:
    argv = sys.argv if argv is None else argv
    return " ".join(shlex.quote(a) for a in argv)


def run_info(dataset, models: dict[str, object], argv: list[str] | None = None) -> dict:
    """The header record: dataset name, root and version (hash), manifest hash, models, packages, date, command."""
    manifest = dataset.manifest or {}
    return {
        "date": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "command": command_line(argv),
        "dataset": dataset.name,
        "data_root": dataset.root,
        "data_version": dataset.version,
        "manifest_source": manifest.get("source"),
        "models": models,
        "packages": package_versions(),
        "python": platform.python_version(),
    }
