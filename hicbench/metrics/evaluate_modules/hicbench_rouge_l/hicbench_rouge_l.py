"""Rouge-L F as HiCBench computes it (``rouge==1.0.1`` summary level), as an ``evaluate`` metric.

predictions: answers; references: each question's reference answers (best one counts).
"""

import datasets
import evaluate

from hichunk.bench.metrics.rouge import best_rouge_l

_DESCRIPTION = __doc__
_CITATION = "HiChunk (arXiv 2509.11552), answer Rouge-L"
_KWARGS = """
Args:
    predictions: list of answer strings.
    references: list of lists of reference answers.
    cjk_chars: treat every CJK character as a word (for Chinese answers).
"""


class HicbenchRougeL(evaluate.Metric):
    def _info(self):
        return evaluate.MetricInfo(
            description=_DESCRIPTION, citation=_CITATION, inputs_description=_KWARGS,
            features=datasets.Features({"predictions": datasets.Value("string"),
                                        "references": datasets.Sequence(datasets.Value("string"))}),
        )

    def _compute(self, predictions, references, cjk_chars=False):
        scores = [best_rouge_l(p, refs, cjk_chars) for p, refs in zip(predictions, references)]
        return {"rouge_l": sum(scores) / len(scores) if scores else 0.0, "n": len(scores)}
