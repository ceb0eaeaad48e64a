"""Split-point precision/recall/F1 of HiCBench as an ``evaluate`` metric (load with ``evaluate.load(<this folder>)``).

predictions: one list of chunks per document, each chunk ``{"text": ..., "level": ...}``.
references: the original document texts ('#' lines are the ground truth).
Returns micro P/R/F1 per level ("L1_f1", ...) and without level ("no_level_f1", ...).
"""

import datasets
import evaluate

from hichunk.bench.metrics.splits import split_point_scores

_DESCRIPTION = __doc__
_CITATION = "HiChunk (arXiv 2509.11552), split-point accuracy on HiCBench"
_KWARGS = """
Args:
    predictions: list of documents, each a list of {"text": str, "level": int} chunks.
    references: list of original document texts.
    levels: levels to report (default: every level in ground truth or predictions).
"""


def _chunk_list():
    chunk = {"text": datasets.Value("string"), "level": datasets.Value("int32")}
    # datasets >= 4 has List (a list of structs); older versions only Sequence (a struct of lists)
    return datasets.List(chunk) if hasattr(datasets, "List") else datasets.Sequence(chunk)


class SplitPointF1(evaluate.Metric):
    def _info(self):
        return evaluate.MetricInfo(
            description=_DESCRIPTION, citation=_CITATION, inputs_description=_KWARGS,
            features=datasets.Features({
                "predictions": _chunk_list(),
                "references": datasets.Value("string"),
            }),
        )

    def _compute(self, predictions, references, levels=None):
        splits = [[(t, lv) for t, lv in zip(p["text"], p["level"])] if isinstance(p, dict) else [(c["text"], c["level"]) for c in p]
                  for p in predictions]
        out = {}
        for key, prf in split_point_scores(references, splits, levels).items():
            for name, value in prf.items():
                out[f"{key}_{name}"] = value
        return out
