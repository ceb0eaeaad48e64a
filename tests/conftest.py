"""Shared fixtures: offline mode for every test, a tokenizer, small documents."""

from __future__ import annotations

import os

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("HAYSTACK_TELEMETRY_ENABLED", "False")  # Haystack pipelines would report usage over the network


@pytest.fixture(scope="session")
def tokenizer():
    from hichunk.tokens import load_tokenizer

    return load_tokenizer()


GUIDE_MD = """# Guide

Intro text for the guide. It explains things at length.

## Install

Run the installer. Then check that it works.

```
# install deps
pip install x
```

## Use
### Basics

Basic usage is simple. Type a command and press enter.

# Appendix
"""


@pytest.fixture
def guide_md() -> str:
    return GUIDE_MD
