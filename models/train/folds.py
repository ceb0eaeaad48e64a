"""Folds over document families: which families each leave-family-out model never sees.

Models are judged on families they were not trained on (``families``). The families of a
corpus and its renderings are dealt into ``k`` folds, largest first, each to the fold
that holds the fewest documents so far, so folds are about the same size and the plan
depends only on the families and their sizes. Fold ``i``'s model trains on every other
fold; a family's documents are scored by the model of its own fold.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from dataclasses import dataclass

from hichunk.errors import HichunkError
from hichunk.models.train.corpus.families import family_of

PLAN_FILE = "folds.json"


@dataclass(frozen=True)
class FoldPlan:
    """Families dealt into ``k`` folds, with the document counts the deal was made from."""

    k: int
    fold: dict[str, int]  # family -> fold index
    sizes: dict[str, int]  # family -> documents

    def held_out(self, index: int) -> tuple[str, ...]:
        """The families fold ``index`` leaves out (its model never sees them)."""
        return tuple(sorted(f for f, i in self.fold.items() if i == index))

    def fold_of(self, family: str) -> int:
        if family not in self.fold:
            raise HichunkError(f"family {family!r} is not in the fold plan (families: {', '.join(sorted(self.fold))})")
        return self.fold[family]

    def to_dict(self) -> dict:
        return {"k": self.k, "fold": dict(sorted(self.fold.items())), "sizes": dict(sorted(self.sizes.items()))}

    @classmethod
    def from_dict(cls, data: dict) -> FoldPlan:
        return cls(int(data["k"]), {str(f): int(i) for f, i in data["fold"].items()},
                   {str(f): int(n) for f, n in data.get("sizes", {}).items()})


def plan_folds(sizes: dict[str, int], k: int) -> FoldPlan:
    """Deal families into ``k`` folds of about equal document counts (largest family first)."""
    if k < 2:
        raise HichunkError(f"leave-family-out needs at least 2 folds (got {k})")
    if len(sizes) < k:
        raise HichunkError(f"{len(sizes)} families cannot fill {k} folds")
    totals = [0] * k
    fold: dict[str, int] = {}
    for family, n in sorted(sizes.items(), key=lambda item: (-item[1], item[0])):
        best = min(range(k), key=lambda i: (totals[i], i))
        fold[family] = best
        totals[best] += n
    return FoldPlan(k, fold, dict(sizes))


def family_sizes(corpus: str | None, labels: str | None = None) -> Counter:
    """Documents per family over every split of a corpus and of its labelled renderings."""
    from hichunk.models.train.corpus.corpus import SPLITS, load_split

    sizes: Counter = Counter()
    if corpus:
        for split in SPLITS:
            sizes.update(family_of(d.corpus) for d in load_split(corpus, split))
    if labels:
        from hichunk.models.train.corpus.render import load_labels

        sizes.update(family_of(r["corpus"]) for r in load_labels(labels))
    return sizes


def save_plan(plan: FoldPlan, directory: str) -> None:
    os.makedirs(directory, exist_ok=True)
    with open(os.path.join(directory, PLAN_FILE), "w", encoding="utf-8") as fh:
        json.dump(plan.to_dict(), fh, indent=1, sort_keys=True)
        fh.write("\n")


def load_plan(directory: str) -> FoldPlan:
    """The plan of a folder of fold models (``hichunk train --folds``)."""
    path = os.path.join(directory, PLAN_FILE)
    try:
        with open(path, encoding="utf-8") as fh:
            return FoldPlan.from_dict(json.load(fh))
    except FileNotFoundError:
        raise HichunkError(f"{directory}: no {PLAN_FILE} (not a folder of fold models)") from None
    except (ValueError, KeyError, TypeError) as exc:
        raise HichunkError(f"{path}: not a fold plan ({exc})") from None


def is_fold_dir(directory: str) -> bool:
    return os.path.isfile(os.path.join(directory, PLAN_FILE))


def fold_dir(directory: str, index: int) -> str:
    """Where fold ``index``'s model lives inside a folder of fold models."""
    return os.path.join(directory, f"fold-{index:02d}")


def trained_folds(directory: str) -> set[int]:
    """The folds of a folder of fold models whose model is there (a run may stop before its last fold)."""
    from hichunk.models.encoder.model import weights_path

    plan = load_plan(directory)
    return {i for i in range(plan.k) if weights_path(fold_dir(directory, i)) is not None}
