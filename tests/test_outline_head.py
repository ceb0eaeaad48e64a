"""The outline head: numpy equals torch, it sets levels only where it is sure, the engine asks for it, and a
tiny training run is deterministic, keeps the line model as it was and chunks losslessly."""

from __future__ import annotations

import numpy as np
import pytest

from hichunk.engine import EngineSettings, infer_points
from hichunk.models.encoder.outline_head import (
    MEANING_SPAN,
    N_FEATURES,
    N_MEANING,
    OutlineHead,
    OutlineHeadConfig,
    load_outline_head,
    meaning_features,
    outline_features,
    sentence_vectors,
)
from hichunk.protocol import ChunkStart, LineLayout, Prediction

torch = pytest.importorskip("torch")

TEXTS = ["Overview", "Some text about it.", "Features", "What it does well.", "Easy to use", "Short.", "Tracks money",
         "More text here.", "", "Getting help", "Ask on the list.", "How do I install it?", "Run the installer."]
HEADS = [0, 2, 4, 6, 9, 11]


def _vectors(k: int, width: int = 4) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    return rng.normal(size=(k, width)).astype(np.float32), rng.normal(size=(k, width)).astype(np.float32)


def test_numpy_head_equals_torch():
    from hichunk.models.train.outline_head import OutlineTraining, _net

    torch.manual_seed(0)
    settings = OutlineTraining(hidden=8, layers=2)
    layouts = [LineLayout(blank_before=True, blank_after=i % 2 == 0) for i in range(len(TEXTS))]
    x = outline_features(HEADS, TEXTS, layouts, *_vectors(len(HEADS)))
    assert x.shape == (len(HEADS), N_FEATURES + 8) and np.isfinite(x).all()
    net = _net(x.shape[1], settings, 6).eval()
    with torch.inference_mode():
        expected = torch.softmax(net(torch.from_numpy(x)[None], [len(HEADS)])[0], -1).numpy()
    head = OutlineHead(OutlineHeadConfig(n_features=x.shape[1], hidden=8, layers=2),
                       {k: v.numpy() for k, v in net.state_dict().items()})
    np.testing.assert_allclose(head.probabilities(x), expected, atol=1e-5)


def test_a_head_without_vectors_reads_their_similarities_only():
    ngrams, sem = _vectors(len(HEADS))
    full = outline_features(HEADS, TEXTS, None, ngrams, sem)
    bare = outline_features(HEADS, TEXTS, None, ngrams, sem, vectors=False)
    assert bare.shape == (len(HEADS), N_FEATURES)
    np.testing.assert_array_equal(bare, full[:, :N_FEATURES])
    # scaled vectors have the same cosines: a head without vectors sees the same input, one with them does not
    np.testing.assert_allclose(outline_features(HEADS, TEXTS, None, 3 * ngrams, 3 * sem, vectors=False), bare, atol=1e-5)
    assert not np.array_equal(outline_features(HEADS, TEXTS, None, 3 * ngrams, 3 * sem), full)
    assert OutlineHeadConfig(**{"n_features": N_FEATURES + 8}).vectors  # heads stored before the option read them


def test_a_head_without_vectors_sets_levels_from_its_own_inputs():
    head = _sure_head(3, 0.5, vectors=False)
    points = {0: (1, True), 2: (2, True), 4: (2, True)}
    assert head.levels(points, TEXTS, None, lambda texts: _vectors(len(texts))) == {u: (3, True) for u in points}


def _sure_head(level: int, threshold: float, vectors: bool = True) -> OutlineHead:
    """A head that answers ``level`` for every heading with probability ~1."""
    n_in, hidden = N_FEATURES + (8 if vectors else 0), 4
    a = {"proj.weight": np.zeros((hidden, n_in)), "proj.bias": np.zeros(hidden),
         "out.weight": np.zeros((6, 2 * hidden)), "out.bias": np.full(6, -20.0)}
    a["out.bias"][level - 1] = 20.0
    for d in ("fwd", "bwd"):
        a |= {f"rnn.{d}.0.weight_ih_l0": np.zeros((3 * hidden, hidden)), f"rnn.{d}.0.weight_hh_l0": np.zeros((3 * hidden, hidden)),
              f"rnn.{d}.0.bias_ih_l0": np.zeros(3 * hidden), f"rnn.{d}.0.bias_hh_l0": np.zeros(3 * hidden)}
    return OutlineHead(OutlineHeadConfig(n_features=n_in, hidden=hidden, layers=1, threshold=threshold, vectors=vectors), a)


def test_the_head_sets_titled_levels_only_where_it_is_sure():
    points = {0: (1, True), 2: (2, True), 4: (3, True), 7: (2, False), 9: (2, True)}
    out = _sure_head(2, 0.9).levels(points, TEXTS, None, lambda texts: _vectors(len(texts)))
    assert out == {0: (2, True), 2: (2, True), 4: (2, True), 7: (2, False), 9: (2, True)}  # untitled starts keep theirs
    assert _sure_head(2, 1.01).levels(points, TEXTS, None, lambda texts: _vectors(len(texts))) == points
    one = {0: (1, True), 7: (2, False)}
    assert _sure_head(2, 0.5).levels(one, TEXTS, None, lambda texts: _vectors(len(texts))) == one  # no outline to read


def _arrays(head: OutlineHead, prefix: str) -> dict[str, np.ndarray]:
    return {prefix + k: v for k, v in head.a.items()}


def test_members_average_their_level_distributions_each_from_its_own_columns():
    with_vectors, without = _sure_head(2, 0.5), _sure_head(3, 0.5, vectors=False)
    x = outline_features(HEADS, TEXTS, None, *_vectors(len(HEADS)))
    expected = (with_vectors.probabilities(x) + without.probabilities(x[:, :N_FEATURES])) / 2
    both = OutlineHead(with_vectors.cfg, with_vectors.a, [without])
    np.testing.assert_allclose(both.probabilities(x), expected)
    assert both.vectors and not without.vectors
    points = {0: (1, True), 2: (1, True)}
    assert both.levels(points, TEXTS, None, lambda texts: _vectors(len(texts))) == {0: (2, True), 2: (2, True)}


def test_a_models_outline_spec_loads_the_head_and_its_members_from_their_own_arrays():
    first, member = _sure_head(2, 0.4), _sure_head(3, 0.6, vectors=False)
    arrays = {"net.weight": np.zeros(2), **_arrays(first, "outline."), **_arrays(member, "outline1.")}
    spec = {**first.cfg.to_dict(), "members": [member.cfg.to_dict()]}
    head = load_outline_head(spec, arrays)
    assert list(arrays) == ["net.weight"]  # the line model keeps its own arrays only
    assert head.cfg == first.cfg and [m.cfg for m in head.members] == [member.cfg]
    assert set(head.members[0].a) == set(member.a) and not load_outline_head(first.cfg.to_dict(), {}).members


def test_meaning_features_compare_each_heading_with_its_neighbours():
    a, b = np.array([1.0, 0.0]), np.array([0.0, 1.0])
    m = meaning_features(np.stack([a, b, 2 * a, b, a]).astype(np.float32))  # two alternating kinds of heading
    assert m.shape == (5, N_MEANING)
    np.testing.assert_allclose(m[2], [0, 0, 1, 1, 1, 2 / MEANING_SPAN], atol=1e-5)  # like the one two back, unlike the next
    np.testing.assert_allclose(m[0], [0, 0, 0, 1, 0, 0], atol=1e-5)  # nothing before the first heading
    np.testing.assert_allclose(m[4, [0, 1, 2, 3]], [0, 0, 1, 0], atol=1e-5)  # nothing after the last
    np.testing.assert_array_equal(meaning_features(np.ones((1, 3), np.float32)), np.zeros((1, N_MEANING)))


def test_sentence_vectors_depend_on_the_heading_alone():
    texts = ["Install", "body", "Usage", "配置  文件", "Api Reference"]
    heads = [0, 2, 3, 4]
    alone = np.concatenate([sentence_vectors(texts, [u]) for u in heads])
    cache: dict = {}
    together = sentence_vectors(texts, heads, cache)
    assert together.shape == (4, 512) and len(cache) == 4
    worst = min(float(x @ y / np.linalg.norm(x) / np.linalg.norm(y)) for x, y in zip(alone, together))
    assert worst >= 0.9999  # whatever else is in the batch
    np.testing.assert_array_equal(sentence_vectors(texts, heads, cache), together)  # read back from the cache
    assert float(sentence_vectors(["配置 文件"], [0])[0] @ together[2]) > 0.9999  # read as normalised text


def _random_head(n_in: int, seed: int, **cfg) -> OutlineHead:
    rng = np.random.default_rng(seed)
    hidden = 4
    a = {"proj.weight": rng.normal(size=(hidden, n_in)), "proj.bias": rng.normal(size=hidden),
         "out.weight": rng.normal(size=(6, 2 * hidden)), "out.bias": rng.normal(size=6)}
    for d in ("fwd", "bwd"):
        a |= {f"rnn.{d}.0.weight_ih_l0": rng.normal(size=(3 * hidden, hidden)),
              f"rnn.{d}.0.weight_hh_l0": rng.normal(size=(3 * hidden, hidden)),
              f"rnn.{d}.0.bias_ih_l0": rng.normal(size=3 * hidden), f"rnn.{d}.0.bias_hh_l0": rng.normal(size=3 * hidden)}
    return OutlineHead(OutlineHeadConfig(n_features=n_in, hidden=hidden, layers=1, **cfg), a)


def test_a_meaning_member_reads_the_meaning_features_after_the_columns_it_shares():
    first = _random_head(N_FEATURES + 8, 0, threshold=0.0)
    member = _random_head(N_FEATURES + N_MEANING, 1, vectors=False, meaning=True)
    x = outline_features(HEADS, TEXTS, None, *_vectors(len(HEADS)))
    meaning = meaning_features(np.random.default_rng(2).normal(size=(len(HEADS), 16)).astype(np.float32))
    both = OutlineHead(first.cfg, first.a, [member])
    expected = (first.probabilities(x) + member.probabilities(np.concatenate([x[:, :N_FEATURES], meaning], axis=1))) / 2
    np.testing.assert_allclose(both.probabilities(x, meaning), expected, rtol=1e-6)
    assert not np.allclose(both.probabilities(x, meaning), both.probabilities(x, meaning[::-1]))  # it reads them
    # in a model, the members' levels come from the headings' sentence vectors
    points = {u: (2, True) for u in HEADS}
    ngrams = lambda texts: _vectors(len(texts))  # noqa: E731
    got = both.levels(points, TEXTS, None, ngrams)
    probs = both.probabilities(outline_features(HEADS, TEXTS, None, *_vectors(len(HEADS))),
                               meaning_features(sentence_vectors(TEXTS, HEADS)))
    assert got == {u: (int(p.argmax()) + 1, True) for u, p in zip(HEADS, probs)}


class _OutlineModel:
    """A scripted window model that also reads outlines: it puts every titled start on level 1."""

    name, window_tokens = "outline-double", 1000

    def count_tokens(self, text: str) -> int:
        return 1

    def overhead_tokens(self) -> int:
        return 0

    def predict(self, window):
        return Prediction([ChunkStart(0, 1, True), ChunkStart(2, 2, True), ChunkStart(4, 2, True)])

    def outline_levels(self, points, texts, layout):
        return {u: (1 if title else lv, title) for u, (lv, title) in points.items()}


def test_the_engine_asks_a_model_that_reads_outlines():
    texts = ["Overview", "body text", "Features", "body text", "Usage", "body text"]
    got = infer_points(texts, _OutlineModel()).points
    assert [got[u][0] for u in (0, 2, 4)] == [1, 1, 1]  # the outline's levels, not the windows' (1, 2, 2)
    window_only = infer_points(texts, _OutlineModel(), EngineSettings(document_levels=False)).points
    assert [window_only[u][0] for u in (0, 2, 4)] == [1, 2, 2]  # --levels window: the windows' own levels


@pytest.mark.slow
def test_tiny_outline_head_run_is_deterministic_and_keeps_the_line_model(tmp_path):
    import shutil

    from tiny_corpus import write_tiny_corpus

    from hichunk import chunk
    from hichunk.models.encoder.model import load_encoder
    from hichunk.models.train.encoder import TrainSettings, train_encoder
    from hichunk.models.train.outline_head import OutlineTraining, train_outline_heads
    from hichunk.tree.export import to_splits

    corpus = write_tiny_corpus(tmp_path / "corpus")
    settings = TrainSettings(epochs=1, max_steps=2, windows=(16,), batch_lines=64, window_lines=32,
                             net={"buckets": 1 << 10, "embed_dim": 8, "cue_dim": 8, "hidden": 16, "layers": 1})
    train_encoder(corpus, str(tmp_path / "m"), settings, progress=False)
    shutil.copytree(tmp_path / "m", tmp_path / "m2")
    lines = ["Install", "Run the installer and check the output.", "Usage", "Type a command."]
    before = load_encoder(str(tmp_path / "m")).probabilities(lines)
    outline = OutlineTraining(epochs=2, hidden=8, layers=1)
    cfg = train_outline_heads(corpus, str(tmp_path / "m"), settings, outline, progress=False)[0]
    train_outline_heads(corpus, str(tmp_path / "m2"), settings, outline, progress=False)
    assert (tmp_path / "m" / "weights.safetensors").read_bytes() == (tmp_path / "m2" / "weights.safetensors").read_bytes()
    model = load_encoder(str(tmp_path / "m"))
    assert model.outline is not None and model.outline.cfg == cfg
    np.testing.assert_array_equal(model.probabilities(lines), before)  # the line model is untouched
    joined = OutlineTraining(epochs=2, hidden=8, layers=1, vectors=False, join=True)
    member = train_outline_heads(corpus, str(tmp_path / "m"), settings, joined, progress=False)[0]
    model = load_encoder(str(tmp_path / "m"))
    assert [m.cfg for m in model.outline.members] == [member] and not member.vectors
    assert model.outline.cfg.threshold == min(cfg.threshold, member.threshold)
    np.testing.assert_array_equal(model.probabilities(lines), before)
    reading = OutlineTraining(epochs=1, hidden=8, layers=1, vectors=False, meaning=True, join=True)
    meaning = train_outline_heads(corpus, str(tmp_path / "m"), settings, reading, progress=False)[0]
    assert meaning.meaning and meaning.n_features == N_FEATURES + N_MEANING
    model = load_encoder(str(tmp_path / "m"))
    assert [m.cfg for m in model.outline.members] == [member, meaning]
    text = "# Guide\n\nIntro text.\n\n## Install\n\nRun it.\n\n### Linux\n\nUse apt.\n\n## Usage\n\nType.\n"
    splits = [to_splits(chunk(text=text, model=model, hints="ignore")) for _ in range(2)]
    assert "".join(part for part, _ in splits[0]) == text and splits[0] == splits[1]


def test_each_recipe_names_its_heads_in_order():
    from hichunk.models.train.outline_head import recipe_heads

    def heads(recipe: str, seed: int = 0) -> list[tuple[int, bool, bool]]:
        return [(h.seed, h.vectors, h.join) for h in recipe_heads(recipe, seed)]

    assert heads("v6") == [(0, True, False)]
    assert heads("v7") == [(0, True, False), (0, False, True)]
    assert heads("v8", 3) == [(3, True, False), (3, False, True), (4, False, True), (4, True, True)]
    assert [(h.vectors, h.meaning, h.join) for h in recipe_heads("v9")] == [(True, False, False), (False, True, True)]
