"""``hichunk bench update-cost``: recompute ratio R per method and edit kind (REFERENCE.md §6).

Every document gets the same seeded edits for every method. For each method
the old version and each edited version are chunked, their encoder inputs
built (by default with ``hichunk.retrieval.inputs.encoder_inputs``), and R measured
against a cache of the old version's inputs. The null edit is the control: any
R above 0 there is reported as a failed control.
"""

from __future__ import annotations

import os
import random
import sys
from dataclasses import dataclass

from tqdm import tqdm

from hichunk.bench.data.hicbench_format import Dataset
from hichunk.bench.report import fmt_diff, fmt_estimate, header, line_plot, table, write_report
from hichunk.bench.runinfo import run_info
from hichunk.bench.runners.chunk import TreeCache, chunk_one
from hichunk.bench.runners.methods import MethodSpec
from hichunk.bench.stats import mean_ci, paired_diff_ci
from hichunk.bench.updatecost.cost import Cost, EncoderInputs, default_encoder_inputs, leaf_inputs, recompute_cost
from hichunk.bench.updatecost.edits import EDIT_KINDS, Edit, body_sentences, make_edit
from hichunk.document.markdown import parse_markdown
from hichunk.errors import HichunkError
from hichunk.sentences import is_chinese
from hichunk.tokens import Tokenizer

POSITIONS = ("insert-top", "insert-start", "insert-middle", "insert-end")


@dataclass
class EditResult:
    method: str
    doc_id: str
    kind: str
    cost: Cost | None
    edit_chars: int
    error: str | None = None

    @property
    def ratio(self) -> float:
        """R; a failed item counts as a full recompute."""
        return self.cost.ratio if self.cost is not None else 1.0


@dataclass
class UpdateCostRun:
    specs: list[MethodSpec]
    kinds: list[str]
    doc_ids: list[str]
    items: list[EditResult]
    not_applicable: dict[str, list[str]]  # kind -> documents that cannot take it
    meta: dict
    encoder_inputs: str


def spread_sample(ids: list[str], k: int | None) -> list[str]:
    """``k`` ids evenly spaced over the sorted list (all when ``k`` is None or large), so every source is sampled."""
    if not k or k >= len(ids):
        return ids
    return [ids[(i * len(ids)) // k] for i in range(k)]


def dataset_edits(dataset: Dataset, doc_ids: list[str], kinds: list[str], seed: int) -> dict[tuple[str, str], Edit | None]:
    """The same edits for every method: (doc id, kind) -> edit (None when it does not apply)."""
    out: dict[tuple[str, str], Edit | None] = {}
    for i, doc_id in enumerate(doc_ids):
        text = dataset.docs[doc_id].text
        other_id = doc_ids[(i + 1) % len(doc_ids)]
        others = body_sentences(parse_markdown(dataset.docs[other_id].text))
        zh = dataset.lang == "zh" if dataset.lang else is_chinese(text)
        for kind in kinds:
            out[(doc_id, kind)] = make_edit(kind, text, random.Random(f"{seed}\0{doc_id}\0{kind}"), others, zh)
    return out


def run_update_cost(dataset: Dataset, specs: list[MethodSpec], tokenizer: Tokenizer, kinds: list[str] | None = None,
                    seed: int = 0, max_docs: int | None = None, on_error: str = "fail", progress: bool = True,
                    encoder_inputs: EncoderInputs | None = None, cache: TreeCache | None = None) -> UpdateCostRun:
    kinds = list(kinds or EDIT_KINDS)
    encoder_inputs = encoder_inputs or default_encoder_inputs()
    doc_ids = spread_sample(sorted(dataset.docs), max_docs)
    if not doc_ids:
        raise HichunkError(f"{dataset.name}: no documents")
    edits = dataset_edits(dataset, doc_ids, kinds, seed)
    items: list[EditResult] = []
    meta: dict = {}
    for spec in specs:
        chunker = spec.chunker_for(tokenizer)
        for doc_id in tqdm(doc_ids, desc=f"update cost {spec.label}", unit="doc", disable=not progress, file=sys.stderr):
            try:
                old_tree, _ = chunk_one(chunker, spec, tokenizer, parse_markdown(dataset.docs[doc_id].text, doc_id), cache)
                old_inputs = [t for t, _ in leaf_inputs(old_tree, encoder_inputs)]
                meta.setdefault(spec.label, {k: v for k, v in old_tree.meta.items() if isinstance(v, (str, int, float, bool))})
            except HichunkError as exc:
                if on_error == "fail":
                    raise HichunkError(f"{spec.label} failed on {doc_id}: {exc}") from None
                items += [EditResult(spec.label, doc_id, k, None, 0, str(exc)) for k in kinds if edits[(doc_id, k)]]
                continue
            for kind in kinds:
                edit = edits[(doc_id, kind)]
                if edit is None:
                    continue
                try:
                    # the null edit re-chunks for real: it is the determinism control
                    new_tree, _ = chunk_one(chunker, spec, tokenizer, parse_markdown(edit.new, doc_id),
                                            None if kind == "null" else cache)
                    cost = recompute_cost(old_inputs, leaf_inputs(new_tree, encoder_inputs), edit.changed, tokenizer)
                except HichunkError as exc:
                    if on_error == "fail":
                        raise HichunkError(f"{spec.label} failed on {doc_id} ({kind}): {exc}") from None
                    items.append(EditResult(spec.label, doc_id, kind, None, edit.changed_chars, str(exc)))
                    continue
                items.append(EditResult(spec.label, doc_id, kind, cost, edit.changed_chars))
    not_applicable = {k: [d for d in doc_ids if edits[(d, k)] is None] for k in kinds}
    name = f"{getattr(encoder_inputs, '__module__', '?')}.{getattr(encoder_inputs, '__qualname__', repr(encoder_inputs))}"
    return UpdateCostRun(specs, kinds, doc_ids, items, not_applicable, meta, name)


def _cell(run: UpdateCostRun, method: str, kind: str) -> list[EditResult]:
    return sorted((i for i in run.items if i.method == method and i.kind == kind), key=lambda i: i.doc_id)


def summarise(run: UpdateCostRun) -> dict:
    """Per method and edit kind: n, pooled R, mean R with CI, unchanged share, failures."""
    out: dict = {}
    for spec in run.specs:
        for kind in run.kinds:
            cell = _cell(run, spec.label, kind)
            ok = [i.cost for i in cell if i.cost is not None]
            unique = sum(c.unique_tokens for c in ok)
            recomputed = sum(c.recomputed_tokens for c in ok)
            unchanged = sum(c.recomputed_unchanged_tokens for c in ok)
            out.setdefault(spec.label, {})[kind] = {
                "n": len(cell), "failures": sum(i.cost is None for i in cell),
                "R_pooled": recomputed / unique if unique else float("nan"),
                "R_mean": mean_ci([i.ratio for i in cell]).to_dict(),
                "unchanged_share_pooled": unchanged / recomputed if recomputed else float("nan"),
            }
    return out


def update_cost_report(dataset: Dataset, run: UpdateCostRun, out_dir: str, argv: list[str] | None = None) -> tuple[str, ...]:
    info = run_info(dataset, {**{k: v for k, v in run.meta.items()}, "encoder inputs": run.encoder_inputs}, argv)
    summary = summarise(run)
    labels = [s.label for s in run.specs]
    text = header("Update cost: share of encoder inputs recomputed after an edit", info)
    text += (f"\n{len(run.doc_ids)} documents; each edit is the same for every method. R = tokens of unique "
             "new-version encoder inputs not byte-identical to an input of the previous version / tokens of all "
             "unique new-version inputs (percent). 'R pooled' sums tokens over documents; 'R mean' averages per-document "
             "R with a 95% bootstrap interval. 'unchanged' = share of the recomputed tokens that are unchanged old "
             "text (measured on leaf spans). A failed item counts as R = 100%.\n\n")
    null_bad = [m for m in labels if "null" in summary[m] and summary[m]["null"]["R_pooled"] not in (0.0,)
                and summary[m]["null"]["n"] > 0]
    if "null" in run.kinds:
        text += ("**Null-edit control: R = 0 for every method.**\n\n" if not null_bad else
                 f"**Null-edit control FAILED for: {', '.join(null_bad)}** (same text chunked twice gave R > 0: "
                 "the method is not deterministic).\n\n")
    rows = []
    for kind in run.kinds:
        n_app = len(run.doc_ids) - len(run.not_applicable[kind])
        for m in labels:
            s = summary[m][kind]
            est = mean_ci([i.ratio for i in _cell(run, m, kind)])
            rows.append([kind, m, s["n"], f"{100 * s['R_pooled']:.1f}", fmt_estimate(est, digits=1),
                         f"{100 * s['unchanged_share_pooled']:.1f}" if s["unchanged_share_pooled"] == s["unchanged_share_pooled"] else "n/a",
                         s["failures"]])
        if n_app < len(run.doc_ids):
            rows.append([kind, f"({len(run.not_applicable[kind])} documents cannot take this edit)", "", "", "", "", ""])
    text += table(["edit", "method", "n", "R pooled %", "R mean % [95% CI]", "unchanged % of recomputed", "failures"], rows) + "\n"
    if len(labels) > 1:
        base = labels[0]
        diff_rows = []
        for kind in run.kinds:
            b = [i.ratio for i in _cell(run, base, kind)]
            for m in labels[1:]:
                diff_rows.append([kind, f"{m} - {base}", fmt_diff(paired_diff_ci([i.ratio for i in _cell(run, m, kind)], b), digits=1)])
        text += ("\n## Paired differences in per-document R (percentage points; * = interval excludes 0)\n\n"
                 + table(["edit", "comparison", "R difference [95% CI]"], diff_rows) + "\n")
    paths = []
    positions = [k for k in POSITIONS if k in run.kinds]
    if positions:
        os.makedirs(out_dir, exist_ok=True)
        series = {m: [mean_ci([i.ratio for i in _cell(run, m, k)]) for k in positions] for m in labels}
        plot = line_plot(os.path.join(out_dir, "recompute_by_position.png"), [k.split("-")[1] for k in positions],
                         series, "position of a 1% insertion", "R (% of input tokens recomputed)",
                         f"Recompute ratio by edit position ({dataset.name})", categorical=True)
        text += f"\n![recompute ratio by edit position]({os.path.basename(plot)})\n"
        paths.append(plot)
    items = [{"method": i.method, "doc_id": i.doc_id, "edit": i.kind, "edit_chars": i.edit_chars, "error": i.error,
              **(i.cost.to_dict() if i.cost else {})} for i in run.items]
    results = {"kind": "update-cost", "run": info, "edits": run.kinds, "documents": run.doc_ids,
               "not_applicable": run.not_applicable, "summary": summary, "items": items}
    return (*write_report(out_dir, text, results), *paths)



