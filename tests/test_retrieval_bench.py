"""The retrieval benchmark commands run end to end on small inputs (numbers are for the docs, not for tests)."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

from hichunk.bench.perf import retrieval_bench


def test_mixture_model_samples_unit_vectors_near_the_real_ones():
    rng = np.random.default_rng(0)
    centres = rng.standard_normal((5, 32)).astype(np.float32)
    real = centres[rng.integers(0, 5, 400)] + 0.3 * rng.standard_normal((400, 32)).astype(np.float32)
    real /= np.linalg.norm(real, axis=1, keepdims=True)
    model = retrieval_bench.MixtureModel.fit(real, clusters=5, components=8)
    fake = model.sample(1000, seed=1)
    assert fake.shape == (1000, 32) and np.allclose(np.linalg.norm(fake, axis=1), 1, atol=1e-5)
    assert np.array_equal(fake, model.sample(1000, seed=1))
    # synthetic vectors sit as close to the real ones as real ones sit to each other
    near_fake = np.sort(fake @ real.T, axis=1)[:, -5].mean()
    near_real = np.sort(real @ real.T, axis=1)[:, -6].mean()  # the 6th, skipping the vector itself
    assert abs(near_fake - near_real) < 0.15


def saved_vectors(tmp_path) -> str:
    """600 random unit vectors in a .npy file, the ``--vectors`` of the ann command."""
    rng = np.random.default_rng(0)
    real = rng.standard_normal((600, 32)).astype(np.float32)
    real /= np.linalg.norm(real, axis=1, keepdims=True)
    np.save(tmp_path / "v.npy", real)
    return str(tmp_path / "v.npy")


def test_ann_command_compares_backends(tmp_path, capsys):
    pytest.importorskip("usearch")
    assert retrieval_bench.main(["ann", "--vectors", saved_vectors(tmp_path), "--sizes", "500,1500", "--queries", "20",
                                 "--backends", "exact,usearch-i8", "--k", "16", "--expansions", "2,4"]) == 0
    out = capsys.readouterr().out
    assert "500 leaves (real)" in out and "1500 leaves (synthetic" in out
    assert out.count("recall@16") == 8 and "update of 1%" in out and "exact               n=500: recall@16 1.0000" in out
    assert "usearch-i8 x2" in out


def test_ann_command_times_the_product_lists(tmp_path, capsys):
    pytest.importorskip("faiss")
    assert retrieval_bench.main(["ann", "--vectors", saved_vectors(tmp_path), "--sizes", "3000", "--queries", "20",
                                 "--backends", "ivf", "--k", "16", "--expansions", "8,800"]) == 0
    out = capsys.readouterr().out
    assert "ivf x8" in out and "ivf x800" in out and "recall@16 afterwards" in out and "(x800)" in out


def test_ann_command_names_missing_vectors_and_creates_nothing(tmp_path):
    missing = tmp_path / "nope" / "embeddings.sqlite"
    with pytest.raises(SystemExit, match="no vectors at"):
        retrieval_bench.main(["ann", "--vectors", str(missing), "--sizes", "100", "--backends", "exact"])
    assert not (tmp_path / "nope").exists()


def test_rag_diff_pairs_questions(tmp_path, capsys):
    def run(folder, recalls):
        os.makedirs(tmp_path / folder)
        items = [{"method": "M", "qid": f"q{i}", "recall": {"100": r}} for i, r in enumerate(recalls)]
        with open(tmp_path / folder / "results.json", "w") as fh:
            json.dump({"run": {"models": {"retrieval": {"search": folder}}}, "budgets": [100], "items": items}, fh)

    run("a", [0.5, 0.5, 1.0])
    run("b", [0.5, 0.8, 1.0])
    assert retrieval_bench.main(["rag-diff", str(tmp_path / "a"), str(tmp_path / "b")]) == 0
    out = capsys.readouterr().out
    assert "B-A +10.00" in out and "1 questions changed" in out
