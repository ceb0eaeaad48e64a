"""The encoder split-point model: features, samples, a tiny training run, the shipped weights, edge documents."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest
from tiny_corpus import doc_markdown, write_tiny_corpus

from hichunk.models.encoder.features import N_CUES, N_TEXT_CUES, featurize, hash_ngrams, numbering_key, outline_depth
from hichunk.models.train.samples import (
    IGNORE,
    LabelledDoc,
    delete_content,
    denumber,
    model_lines,
    residual_indices,
    shuffle_sections,
    windows,
)
from hichunk.protocol import SplitPointModel, Window

torch = pytest.importorskip("torch")


@pytest.fixture(scope="module")
def tiny_corpus(tmp_path_factory):
    return write_tiny_corpus(tmp_path_factory.mktemp("corpus"))


# -- features -----------------------------------------------------------------------

def test_ngram_hashing_is_deterministic_and_per_line():
    lines = ["Install", "第一章 总则", "", "A longer English sentence with words."]
    ids, offsets = hash_ngrams(lines, 1 << 12)
    ids2, offsets2 = hash_ngrams(list(lines), 1 << 12)
    assert np.array_equal(ids, ids2) and np.array_equal(offsets, offsets2)
    assert offsets[0] == 0 and list(offsets) == sorted(offsets)
    assert ids.min() >= 0 and ids.max() < 1 << 12
    # a line's bag depends only on that line
    alone, _ = hash_ngrams(["第一章 总则"], 1 << 12)
    assert np.array_equal(np.sort(alone), np.sort(ids[offsets[1] : offsets[2]]))


def test_cues_mark_residual_lines_and_numbering():
    f = featurize(["1.2 Setup", "Body text that goes on.", "（一）范围"], 1, 1 << 10)
    assert f.cues.shape == (3, N_CUES)
    residual, first_new, layout_known = N_TEXT_CUES, N_TEXT_CUES + 1, N_TEXT_CUES + 4
    assert f.cues[0, residual] == 1 and f.cues[1, residual] == 0 and f.cues[1, first_new] == 1
    assert not np.array_equal(f.cues[0], f.cues[2])
    assert not f.cues[:, layout_known].any()  # no layout given
    from hichunk.protocol import LineLayout

    shaped = featurize(["1.2 Setup", "Body text that goes on."], 0, 1 << 10,
                       [LineLayout(blank_before=True, blank_after=True), LineLayout(starts_line=False)])
    assert shaped.cues[:, layout_known].all() and not np.array_equal(shaped.cues[0], shaped.cues[1])


def test_outline_numbers_and_numbering_keys():
    assert [outline_depth(t) for t in ["3 Scope", "3.2 Terms", "J.3.1. Annex", "2024 was a year", "Intro"]] == [1, 2, 3, 0, 0]
    assert numbering_key("1.2 Setup") == "outline-2"
    assert numbering_key("1.2 This line ends like a sentence.") is None
    assert numbering_key("Plain heading") is None


# -- samples ------------------------------------------------------------------------

def test_model_lines_hide_markers_and_label_levels():
    from hichunk.document import parse_document

    texts, levels = model_lines(parse_document(doc_markdown(0), "markdown"))
    assert texts[0] == "Document 0" and levels[0] == 1
    assert "## 1. Install" not in texts and "1. Install" in texts
    assert levels[texts.index("1.1 Requirements")] == 3
    assert not any(t.startswith("#") for t in texts)


def _toy(levels):
    return LabelledDoc("x", "c", "en", tuple(f"line {i}" for i in range(len(levels))), tuple(levels))


def test_augmentations_keep_lines_and_labels_together():
    doc = _toy([1, 0, 2, 0, 0, 3, 0, 2, 0, 2, 0, 0])
    rng = random.Random(0)
    for aug in (shuffle_sections(doc, rng), delete_content(doc, rng, 1, 1)):
        assert all(doc.levels[int(t.split()[1])] == lv for t, lv in zip(aug.texts, aug.levels))
    shuffled = shuffle_sections(doc, random.Random(3))
    assert sorted(shuffled.texts) == sorted(doc.texts) and shuffled.texts[:2] == doc.texts[:2]
    short = delete_content(doc, random.Random(0), 1, 1)
    assert [lv for lv in short.levels if lv] == [lv for lv in doc.levels if lv]
    numbered = LabelledDoc("x", "c", "zh", ("第一章 总则", "正文。"), (2, 0))
    assert denumber(numbered).texts == ("总则", "正文。")


def test_windows_follow_the_engine_rules():
    levels = [1] + ([2] + [0] * 9) * 10  # 101 lines: one level-1 segment with ten level-2 clips
    doc = _toy(levels)
    ws = windows(doc, 60)
    covered = [w.first + k for w in ws for k in range(len(w.texts) - w.n_residual)]
    assert covered == list(range(len(levels)))
    assert ws[0].n_residual == 0
    later = ws[1]
    assert later.n_residual > 0 and all(lb == IGNORE for lb in later.labels[: later.n_residual])
    # 7 clips, (2, 3, 20) takes 40 lines >= 30: the smaller plan keeps the level-1 clip and the last two
    assert later.texts[: later.n_residual] == tuple(f"line {i}" for i in [0, *range(41, 60)])
    assert len(later.texts) <= 60
    # two level-1 starts among new lines: restart at the last one, without residual lines
    doc2 = _toy([1, 0, 0, 1, 0, 0, 0, 0, 0, 0])
    ws2 = windows(doc2, 6)
    assert ws2[1].first == 3 and ws2[1].n_residual == 0


def test_residual_clips_first_two_and_last_three():
    levels = tuple([1] + ([2] + [0] * 4) * 8)  # clips: [0,1) then eight 5-line clips
    got = residual_indices(levels, len(levels), 1000)
    clips_kept = [0] + list(range(1, 6)) + list(range(26, 41))
    assert got == clips_kept


# -- training, loading, predicting ------------------------------------------------------

@pytest.mark.slow
@pytest.mark.parametrize("attention", [{}, {"attn_heads": 2, "attn_span": 4}], ids=["gru", "gru+attention"])
def test_tiny_training_run_end_to_end(tiny_corpus, tmp_path, attention):
    from hichunk.models.encoder.model import load_encoder
    from hichunk.models.train.encoder import TrainSettings, train_encoder

    settings = TrainSettings(epochs=2, max_steps=4, windows=(16,), batch_lines=64, window_lines=32,
                             net={"buckets": 1 << 10, "embed_dim": 8, "cue_dim": 8, "hidden": 16, "layers": 1, **attention})
    cfg = train_encoder(tiny_corpus, str(tmp_path / "m"), settings, progress=False)
    assert cfg.info["steps"] == 4 and cfg.info["train_docs"] == 6
    saved = json.loads((tmp_path / "m" / "config.json").read_text())
    assert saved["decode"]["threshold"] == cfg.decode.threshold
    model = load_encoder(str(tmp_path / "m"))
    assert isinstance(model, SplitPointModel)
    window = Window(("Install", "Run the installer and check the output.", "Usage", "Type a command."), 1, True)
    a, b = model.predict(window), model.predict(window)
    assert a.starts == b.starts and all(s.line >= 1 for s in a.starts)
    # the same run again gives the same weights
    cfg2 = train_encoder(tiny_corpus, str(tmp_path / "m2"), settings, progress=False)
    assert cfg2.decode == cfg.decode
    assert (tmp_path / "m" / "weights.safetensors").read_bytes() == (tmp_path / "m2" / "weights.safetensors").read_bytes()


def test_missing_model_folder_is_a_clear_error(tmp_path):
    from hichunk.errors import HichunkError
    from hichunk.models.encoder.model import load_encoder

    with pytest.raises(HichunkError, match="no encoder model"):
        load_encoder(str(tmp_path))


# -- the shipped model -------------------------------------------------------------------

@pytest.fixture(scope="module")
def shipped():
    from hichunk.models.encoder import load_encoder

    return load_encoder()


def _chunk(model, text: str, fmt: str = "markdown"):
    from hichunk.chunkers import ChunkOptions, get_chunker
    from hichunk.document import parse_document

    doc = parse_document(text, fmt)
    tree = get_chunker("hichunk", ChunkOptions(hints="ignore", merge_over_chunk=False), model=model).chunk(doc)
    assert "".join(t for t, _ in tree.split_texts()) == text
    assert "".join(tree.raw_text(leaf) for leaf in tree.leaves()) == text
    return tree


def test_shipped_model_loads_offline_and_finds_structure(shipped):
    assert shipped.name == "hichunk-encoder" and shipped.window_tokens >= 256
    md = doc_markdown(0) + "\n" + doc_markdown(1, zh=True)
    tree = _chunk(shipped, md)
    assert len(tree.splits) >= 3
    again = _chunk(shipped, md)
    assert [(s.start, s.level) for s in tree.splits] == [(s.start, s.level) for s in again.splits]


def test_edge_documents_stay_lossless(shipped):
    only_headings = "# A\n## B\n## C\n### D\n"
    _chunk(shipped, only_headings)
    flat = "just words without any structure at all " * 50
    _chunk(shipped, flat, "text")
    _chunk(shipped, "", "text")


@pytest.mark.slow
def test_a_150k_word_document_goes_window_by_window(shipped):
    para = "This is a sentence of ordinary prose that keeps going for a while. " * 6
    sections = [f"## 1.{i} Topic number {i}\n\n" + (para + "\n\n") * 5 for i in range(1, 401)]
    text = "# 1 Big\n\n" + "".join(sections)  # one level-1 segment: later windows carry its level-2 starts
    assert len(text.split()) > 150_000
    calls = []

    class Counting:
        name, window_tokens = shipped.name, shipped.window_tokens
        count_tokens, overhead_tokens = shipped.count_tokens, shipped.overhead_tokens

        def predict(self, window):
            calls.append(window.n_residual)
            return shipped.predict(window)

    _chunk(Counting(), text)
    assert len(calls) > 5 and any(calls[1:])  # several windows, later ones with residual lines


@pytest.mark.slow
def test_train_command_line_runs_a_tiny_job(tiny_corpus, tmp_path, capsys):
    from hichunk.cli import build_parser, main

    args = build_parser().parse_args(["train", "--corpus", tiny_corpus, "--out", str(tmp_path / "cli"), "--max-steps", "1", "-q"])
    assert args.handler(args) == 0
    assert (tmp_path / "cli" / "weights.safetensors").exists()
    outline = json.loads((tmp_path / "cli" / "config.json").read_text())["outline"]  # the default recipe (v7): two heads
    assert outline["vectors"] and [m["vectors"] for m in outline["members"]] == [False]
    assert main(["train", "--corpus", tiny_corpus, "--out", str(tmp_path / "v8"), "--max-steps", "1", "--recipe", "v8", "-q"]) == 0
    outline = json.loads((tmp_path / "v8" / "config.json").read_text())["outline"]  # v8: four heads
    assert [(m["vectors"], m["threshold"] >= outline["threshold"]) for m in outline["members"]] == [(False, True)] * 2 + [(True, True)]
    assert main(["train", "--corpus", tiny_corpus, "--out", str(tmp_path / "v6"), "--max-steps", "1", "--recipe", "v6", "-q"]) == 0
    assert "members" not in json.loads((tmp_path / "v6" / "config.json").read_text())["outline"]  # v6: one head
    assert main(["train", "--corpus", tiny_corpus, "--out", str(tmp_path / "v5"), "--max-steps", "1", "--recipe", "v5", "-q"]) == 0
    assert "outline" not in json.loads((tmp_path / "v5" / "config.json").read_text())
    assert main(["train", "--corpus", str(tmp_path / "nowhere"), "--out", str(tmp_path / "x"), "-q"]) == 2
    assert "error" in capsys.readouterr().err


def test_split_speed_benchmark_runs_on_a_tiny_corpus(tiny_corpus, capsys):
    import json

    from hichunk.bench.perf.split_speed import main as split_speed

    assert split_speed(["--corpus", tiny_corpus, "--words", "20", "--repeats", "1"]) == 0
    report = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert report["chunks"] >= 2 and report["words"] >= 20
    assert report["in_process_s_median"] > 0 and report["process_s_median"] > 0


def test_split_speed_breakdown_times_the_forward_passes_apart(tiny_corpus, capsys):
    import json

    from hichunk.bench.perf.split_speed import main as split_speed
    from hichunk.models.encoder.numpy_net import NumpyLabeller

    window_logits = NumpyLabeller.window_logits
    assert split_speed(["--corpus", tiny_corpus, "--words", "20", "--repeats", "1", "--breakdown"]) == 0
    report = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    warm = report["warm"]
    assert warm["n"] == 1 and warm["cpu_s_median"] > 0
    assert 0 < warm["outside_forward_share_median"] < 1  # the forward passes were timed, and were not everything
    assert NumpyLabeller.window_logits is window_logits  # the clock is taken off again
