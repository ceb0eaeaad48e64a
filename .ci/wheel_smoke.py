"""Smoke test of a built wheel, run by .ci/run inside a fresh virtual environment, outside the checkout.

Checks what a user of ``pip install hichunk`` gets: one top-level package, shipped weights, the LoRA
adapter and the metric modules inside it; chunk, index and query work; each metric module loads.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import zipfile


def check(condition: bool, message: str) -> None:
    if not condition:
        sys.exit(f"wheel smoke test failed: {message}")
    print(f"ok: {message}")


def run_cli(*args: str) -> str:
    proc = subprocess.run(["hichunk", *args], capture_output=True, text=True)
    check(proc.returncode == 0, f"`hichunk {' '.join(args)}` exits 0 (stderr: {proc.stderr.strip()[-500:]})")
    return proc.stdout


def main(wheel: str) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    tops = {n.split("/")[0] for n in names if not n.split("/")[0].endswith(".dist-info")}
    check(tops == {"hichunk"}, f"the wheel holds only hichunk at its top level (has {sorted(tops)})")
    for needed in ("hichunk/models/encoder/weights/weights.safetensors", "hichunk/models/gen/adapter_model.safetensors",
                   "hichunk/bench/metrics/evaluate_modules/split_point_f1/split_point_f1.py", "hichunk/py.typed"):
        check(needed in names, f"the wheel ships {needed}")
    for generic in ("models", "retrieval", "hicbench"):
        check(importlib.util.find_spec(generic) is None, f"`import {generic}` finds nothing")

    import hichunk

    check(os.path.dirname(hichunk.__file__).startswith(sys.prefix), "hichunk is imported from the environment, not a checkout")
    tree = hichunk.chunk("# Title\n\nSome text here. More text.\n\n## Part\n\nBody of the part.\n", format="markdown")
    check(tree.meta["method"] == "hichunk" and "".join(tree.raw_text(n) for n in tree.leaves()).startswith("# Title"),
          "hichunk.chunk() runs the shipped model")

    work = tempfile.mkdtemp()
    sample = os.path.join(os.path.dirname(hichunk.__file__), "samples", "solar_guide.md")
    idx = os.path.join(work, "idx")
    check("L1" in run_cli("chunk", sample), "hichunk chunk prints a tree")
    run_cli("-q", "index", "build", sample, "--index", idx)
    answer = json.loads(run_cli("query", "--index", idx, "--budget", "500", "--json", "How large should the battery be?"))
    check(bool(answer["passages"]), "hichunk index build + hichunk query return passages")
    with open(sample, encoding="utf-8") as fh:
        raw = fh.read()
    check(all(p["text"] == raw[p["start"] : p["end"]] for p in answer["passages"]), "every passage is raw[start:end]")
    if importlib.util.find_spec("fastapi") is None:
        proc = subprocess.run(["hichunk", "serve", "--index", idx], capture_output=True, text=True)
        check(proc.returncode == 2 and proc.stderr.strip().endswith('pip install "hichunk[serve]"')
              and "Traceback" not in proc.stderr, "hichunk serve without the serve extra names it in one line")

    import evaluate

    from hichunk.bench.metrics import evaluate_module_path

    doc = "# A\n\nText.\n\n## B\n\nMore.\n"
    sp = evaluate.load(evaluate_module_path("split_point_f1"))
    got = sp.compute(predictions=[[{"text": "# A\n\nText.\n\n", "level": 1}, {"text": "## B\n\nMore.\n", "level": 2}]],
                     references=[doc])
    check(abs(got["no_level_f1"] - 1.0) < 1e-9, "split_point_f1 loads and computes")
    er = evaluate.load(evaluate_module_path("evidence_recall"))
    got = er.compute(predictions=["the cat sat"], references=[["The cat sat."]])
    check(abs(got["evidence_recall"] - 1.0) < 1e-9, "evidence_recall loads and computes")
    rl = evaluate.load(evaluate_module_path("hicbench_rouge_l"))
    check(rl.compute(predictions=["blue sky"], references=[["blue sky"]])["rouge_l"] > 0.99, "hicbench_rouge_l loads and computes")


if __name__ == "__main__":
    main(sys.argv[1])
