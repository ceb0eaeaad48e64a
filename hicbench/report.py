"""Report files: ``report.md`` (header + tables), ``results.json`` (per-item results), PNG plots."""

from __future__ import annotations

import json
import math
import os
from collections.abc import Sequence

from hichunk.bench.stats import Estimate
from hichunk.errors import HichunkError


def ensure_out(out_dir: str) -> None:
    try:
        os.makedirs(out_dir, exist_ok=True)
    except OSError as exc:
        raise HichunkError(f"{out_dir}: cannot create the output folder ({exc.strerror})") from None


def fmt_estimate(est: Estimate, scale: float = 100.0, digits: int = 2) -> str:
    """``value [low, high]`` (scaled, e.g. to percent)."""
    if est.n == 0 or math.isnan(est.value):
        return "n/a"
    return f"{est.value * scale:.{digits}f} [{est.low * scale:.{digits}f}, {est.high * scale:.{digits}f}]"


def fmt_diff(est: Estimate, scale: float = 100.0, digits: int = 2) -> str:
    """A signed difference with its interval; marked * when the interval excludes 0."""
    if est.n == 0 or math.isnan(est.value):
        return "n/a"
    mark = "*" if est.low > 0 or est.high < 0 else ""
    return f"{est.value * scale:+.{digits}f} [{est.low * scale:+.{digits}f}, {est.high * scale:+.{digits}f}]{mark}"


def table(columns: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """A Markdown table."""
    def cell(v: object) -> str:
        return str(v).replace("|", "\\|").replace("\n", " ")

    lines = ["| " + " | ".join(cell(c) for c in columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


def header(title: str, info: dict) -> str:
    """Report title and the run's provenance."""
    models = "; ".join(f"{k}: {v}" for k, v in info.get("models", {}).items()) or "none"
    packages = ", ".join(f"{k} {v}" for k, v in info.get("packages", {}).items())
    lines = [
        f"# {title}",
        "",
        f"- dataset: `{info['dataset']}` at `{info['data_root']}`",
        f"- data version (SHA-256 of documents + questions): `{info['data_version']}`",
    ]
    if info.get("manifest_source"):
        lines.append(f"- built from: `{json.dumps(info['manifest_source'], ensure_ascii=False)}`")
    lines += [
        f"- models: {models}",
        f"- packages: {packages} (Python {info.get('python', '?')})",
        f"- date (UTC): {info['date']}",
        f"- command: `{info['command']}`",
        "",
    ]
    return "\n".join(lines)


def write_report(out_dir: str, text: str, results: dict) -> tuple[str, str]:
    """Write ``report.md`` and ``results.json``; returns their paths."""
    ensure_out(out_dir)
    md = os.path.join(out_dir, "report.md")
    js = os.path.join(out_dir, "results.json")
    with open(md, "w", encoding="utf-8") as fh:
        fh.write(text.rstrip() + "\n")
    with open(js + ".tmp", "w", encoding="utf-8") as fh:
        json.dump(results, fh, ensure_ascii=False, indent=1)
        fh.write("\n")
    os.replace(js + ".tmp", js)
    return md, js


def line_plot(path: str, x: Sequence[float], series: dict[str, Sequence[Estimate]], xlabel: str, ylabel: str,
              title: str, scale: float = 100.0, categorical: bool = False) -> str:
    """One line per series with its 95% band; ``categorical`` puts x labels at equal spacing."""
    from hichunk.extras import require_extra

    require_extra("bench", "matplotlib", what="benchmark plots")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.5), dpi=120)
    xs = list(range(len(x))) if categorical else list(x)
    for name, ests in series.items():
        vals = [e.value * scale for e in ests]
        ax.plot(xs, vals, marker="o", label=name)
        ax.fill_between(xs, [e.low * scale for e in ests], [e.high * scale for e in ests], alpha=0.15)
    if categorical:
        ax.set_xticks(xs, [str(v) for v in x])
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path
