"""The integration guide's examples run as written (slow tier: they load the offline default models).

Every Python block of ``docs/guides/integrations.md`` (LangChain, LlamaIndex, Haystack) runs in order, in one namespace (as a reader goes
through them), in a folder holding ``guide.md`` and an index ``./idx`` of it."""

from __future__ import annotations

import os
import re

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PAGE = os.path.join(ROOT, "docs", "guides", "integrations.md")
GUIDE = ("# Guide\n\nThis guide explains the tool.\n\n## Install\n\nRun the installer, then check that it works.\n\n"
         "## Use\n\nType a command and press enter. Pipes combine commands.\n")


def integration_blocks() -> list[str]:
    with open(PAGE, encoding="utf-8") as fh:
        return re.findall(r"```python\n(.*?)```", fh.read(), flags=re.S)


def test_the_section_has_examples_for_every_framework():
    blocks = integration_blocks()
    assert all(any(name in b for b in blocks) for name in ("langchain", "llama_index", "haystack"))
    assert not any("langchain_community" in b for b in blocks)  # the [langchain] extra must be enough


@pytest.mark.slow
def test_integration_guide_blocks_run(tmp_path, monkeypatch):
    pytest.importorskip("langchain_qdrant")
    pytest.importorskip("llama_index.core")
    pytest.importorskip("haystack")
    import hichunk

    monkeypatch.chdir(tmp_path)
    (tmp_path / "guide.md").write_text(GUIDE, encoding="utf-8")
    hichunk.Index.create("idx").add_paths(["guide.md"])
    namespace: dict = {}
    for block in integration_blocks():
        exec(compile(block, PAGE, "exec"), namespace)
    assert namespace["leaves"] and namespace["context_docs"] and namespace["found"] and namespace["answer"]["documents"]
    assert "install" in namespace["answer"]["context"].lower()
    assert "install" in " ".join(d.page_content for d in namespace["context_docs"]).lower()
