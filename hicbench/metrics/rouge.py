"""Rouge-L F as the HiCBench evaluation computes it: the PyPI ``rouge`` package (1.0.1), summary level.

The package's own behaviour is kept on purpose (no lower-casing or stemming,
sentences cut at every ``.``, distinct-word counts); an error inside it (an
empty text) scores 0.0, as the reference's catch-all did. The reference keeps
the best score over the ground-truth answers. Chinese answers have no spaces,
so ``cjk_chars=True`` makes every CJK character a word of its own (our choice;
the reference used jieba for its Chinese datasets).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

_CJK = re.compile(r"([\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff])")


@lru_cache(maxsize=1)
def _scorer():
    from hichunk.extras import require_extra

    require_extra("bench", "rouge", what="Rouge-L scoring")
    from rouge import Rouge

    return Rouge(metrics=["rouge-l"])


def rouge_l(prediction: str, reference: str, cjk_chars: bool = False) -> float:
    """Summary-level Rouge-L F of one prediction against one reference answer."""
    if cjk_chars:
        prediction, reference = _CJK.sub(r" \1 ", prediction), _CJK.sub(r" \1 ", reference)
    try:
        return float(_scorer().get_scores([prediction], [reference], avg=True)["rouge-l"]["f"])
    except Exception:  # noqa: BLE001 - the reference's catch-all: a text the package cannot score scores 0
        return 0.0


def best_rouge_l(prediction: str, answers: Sequence[str], cjk_chars: bool = False) -> float:
    """The reference's per-question score: the best Rouge-L over the ground-truth answers."""
    prediction = prediction.replace("Answer: ", "")
    return max((rouge_l(prediction, a, cjk_chars) for a in answers), default=0.0)
