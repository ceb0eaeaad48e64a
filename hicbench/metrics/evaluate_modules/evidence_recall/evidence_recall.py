"""Evidence recall of HiCBench as an ``evaluate`` metric (load with ``evaluate.load(<this folder>)``).

predictions: retrieved contexts; references: each question's evidence sentences.
Returns the mean character-weighted recall over questions and how many questions
have all their evidence in the context.
"""

import datasets
import evaluate

from hichunk.bench.metrics.evidence import EvidenceScorer

_DESCRIPTION = __doc__
_CITATION = "HiChunk (arXiv 2509.11552), evidence recall (ERec)"
_KWARGS = """
Args:
    predictions: list of context strings.
    references: list of lists of evidence sentences.
    punctuation: "ascii" (HiCBench) or "unicode".
"""


class EvidenceRecall(evaluate.Metric):
    def _info(self):
        return evaluate.MetricInfo(
            description=_DESCRIPTION, citation=_CITATION, inputs_description=_KWARGS,
            features=datasets.Features({"predictions": datasets.Value("string"),
                                        "references": datasets.Sequence(datasets.Value("string"))}),
        )

    def _compute(self, predictions, references, punctuation="ascii"):
        results = [EvidenceScorer(ev, punctuation).score(ctx) for ctx, ev in zip(predictions, references)]
        n = len(results)
        return {"evidence_recall": sum(r.recall for r in results) / n if n else 0.0,
                "all_found": sum(r.all_found for r in results), "n": n}
