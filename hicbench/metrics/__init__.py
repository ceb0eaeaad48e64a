"""Benchmark metrics: split points, evidence recall, Rouge-L, Fact-Cov (also as ``evaluate`` modules)."""

import os

EVALUATE_MODULES = os.path.join(os.path.dirname(__file__), "evaluate_modules")


def evaluate_module_path(name: str) -> str:
    """Local path of a metric module for ``evaluate.load(path)``: split_point_f1, evidence_recall, hicbench_rouge_l."""
    from hichunk.extras import require_extra

    require_extra("bench", "evaluate", what="the evaluate metric modules")
    path = os.path.join(EVALUATE_MODULES, name)
    if not os.path.isfile(os.path.join(path, f"{name}.py")):
        raise ValueError(f"no evaluate module {name!r} (have: {', '.join(sorted(os.listdir(EVALUATE_MODULES)))})")
    return path
