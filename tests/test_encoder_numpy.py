"""The encoder's numpy forward pass equals torch's, weights round-trip, and inference never imports torch."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from hichunk.models.encoder.features import featurize  # noqa: E402
from hichunk.models.encoder.features_v4 import N_EXTRA_CUES, featurize4  # noqa: E402
from hichunk.models.encoder.model import DecodeConfig, EncoderConfig, EncoderModel, load_encoder, save_encoder  # noqa: E402
from hichunk.models.encoder.net import LineLabeller, NetConfig  # noqa: E402
from hichunk.models.encoder.pieces import vocab_size  # noqa: E402
from hichunk.protocol import LineLayout  # noqa: E402

LINES = ["1 Introduction", "Debian is a free operating system. It is made by volunteers.", "TIP Selecting a mirror",
         "第\u00a01\u00a0章 GNU/Linux 教程", "本章介绍系统的安装。", "Figure 9.5. The Synaptic window", "How do I install it?",
         "You run the installer.", "", "2.1 Setup"]
LAYOUT = [LineLayout(blank_before=i % 3 == 0, blank_after=i % 2 == 0, size=1.2 if i == 0 else 1.0) for i in range(len(LINES))]


def _net(features: int, attn_heads: int = 0) -> LineLabeller:
    from hichunk.models.encoder.features import N_CUES

    torch.manual_seed(0)
    if features == 4:
        cfg = NetConfig(buckets=1 << 10, n_cues=N_CUES + N_EXTRA_CUES, hidden=16, features=4, piece_vocab=vocab_size(),
                        piece_dim=8, sem_dim=4, rel_classes=3, attn_heads=attn_heads, attn_span=3)
    else:
        cfg = NetConfig(buckets=1 << 10, n_cues=N_CUES, hidden=16)
    net = LineLabeller(cfg)
    if features == 4:
        with torch.no_grad():
            net.pieces.weight.normal_()
    return net.eval()


def _torch_probs(net: LineLabeller, n_residual: int) -> np.ndarray:
    cfg = net.cfg
    with torch.inference_mode():
        if cfg.features == 4:
            f = featurize4(LINES, n_residual, cfg.buckets, LAYOUT)
            logits = net(torch.from_numpy(f.ngram_ids), torch.from_numpy(f.ngram_offsets), torch.from_numpy(f.cues),
                         [len(LINES)], torch.from_numpy(f.piece_ids), torch.from_numpy(f.piece_offsets))[0]
        else:
            f = featurize(LINES, n_residual, cfg.buckets, LAYOUT)
            logits = net(torch.from_numpy(f.ngram_ids), torch.from_numpy(f.ngram_offsets), torch.from_numpy(f.cues),
                         [len(LINES)])[0]
        head = cfg.max_level + 1
        parts = [torch.softmax(logits[:, :head], -1)] + ([torch.softmax(logits[:, head:], -1)] if cfg.rel_classes else [])
        return torch.cat(parts, -1).numpy()


@pytest.mark.parametrize("features,attn_heads", [(3, 0), (4, 0), (4, 2)])
def test_numpy_forward_equals_torch(features, attn_heads):
    """The attention variant's band (3 lines each side) is narrower than the 10-line window, so the mask matters."""
    net = _net(features, attn_heads)
    model = EncoderModel(EncoderConfig(window_lines=64, net=net.cfg.to_dict()), net.state_dict())
    for n_residual in (0, 3):
        ours = model.probabilities(LINES, n_residual, LAYOUT)
        assert np.abs(ours - _torch_probs(net, n_residual)).max() < 2e-3  # tables are stored in float16


def test_saved_weights_load_to_the_same_predictions(tmp_path):
    net = _net(4)
    config = EncoderConfig(window_lines=64, net=net.cfg.to_dict(), decode=DecodeConfig(threshold=0.3))
    before = EncoderModel(config, net.state_dict()).probabilities(LINES, 0, LAYOUT)
    save_encoder(str(tmp_path), config, net.state_dict())
    assert not (tmp_path / "weights.pt").exists()
    after = load_encoder(str(tmp_path)).probabilities(LINES, 0, LAYOUT)
    np.testing.assert_allclose(before, after, atol=1e-6)


def test_the_shipped_model_predicts_without_importing_torch():
    code = ("import sys\nfrom hichunk.models.encoder import load_encoder\n"
            "m = load_encoder()\np = m.probabilities(['1 Introduction', 'Some text here.'])\n"
            "assert p.shape[0] == 2\nassert 'torch' not in sys.modules, 'torch was imported'\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_version_4_cues_read_folded_text_shapes_overlap_and_roles():
    from hichunk.models.encoder.features_v4 import N_SHAPE_CUES, extra_cues, normalise_line

    assert normalise_line("第\u00a01\u3000章  ＧＮＵ") == normalise_line("第 1 章 GNU") == "第 1 章 GNU"
    f = featurize4(["第\u00a01\u00a0章 教程"], 0, 1 << 10)
    g = featurize4(["第 1 章 教程"], 0, 1 << 10)
    assert np.array_equal(f.cues, g.cues) and np.array_equal(f.ngram_ids, g.ngram_ids)
    lines = ["Figure 9.5. The window", "TIP Selecting a mirror", "How do I install it?", "Installing packages",
             "You install packages with apt from a mirror."]
    layout = [LineLayout(role="aside"), LineLayout(role="aside"), LineLayout(), LineLayout(), LineLayout()]
    cues = extra_cues([normalise_line(t) for t in lines], layout)
    caption, caps_label, callout_word, question_mark = 0, 1, 2, 3
    assert cues[0, caption] == 1 and cues[1, caps_label] == 1 and cues[1, callout_word] == 1
    assert cues[2, question_mark] == 1 and cues[3, :N_SHAPE_CUES].sum() == 0
    assert cues[3, N_SHAPE_CUES] > 0  # "packages" is used again in the next line
    assert list(cues[:, N_SHAPE_CUES + 2]) == [0, 0, 0, 0, 0] and list(cues[:, N_SHAPE_CUES + 3]) == [1, 1, 0, 0, 0]


def test_lines_seen_before_give_the_same_probabilities_from_the_cache():
    net = _net(4)
    model = EncoderModel(EncoderConfig(window_lines=64, net=net.cfg.to_dict()), net.state_dict())
    first = model.probabilities(LINES, 2, LAYOUT)
    assert len(model._cache) == len(set(LINES))
    again = model.probabilities(LINES, 2, LAYOUT)
    shifted = model.probabilities(LINES[3:], 0, LAYOUT[3:])  # the same lines in another window
    fresh = EncoderModel(EncoderConfig(window_lines=64, net=net.cfg.to_dict()), net.state_dict())
    assert np.array_equal(first, again)
    assert np.array_equal(shifted, fresh.probabilities(LINES[3:], 0, LAYOUT[3:]))
