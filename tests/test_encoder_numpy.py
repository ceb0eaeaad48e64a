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


def _net(features: int) -> LineLabeller:
    from hichunk.models.encoder.features import N_CUES

    torch.manual_seed(0)
    if features == 4:
        cfg = NetConfig(buckets=1 << 10, n_cues=N_CUES + N_EXTRA_CUES, hidden=16, features=4, piece_vocab=vocab_size(),
                        piece_dim=8, sem_dim=4, rel_classes=3)
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


@pytest.mark.parametrize("features", [3, 4])
def test_numpy_forward_equals_torch(features):
    net = _net(features)
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
