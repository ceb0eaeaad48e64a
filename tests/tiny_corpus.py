"""A tiny built corpus (three splits of small English and Chinese Markdown documents) for training runs in tests."""

from __future__ import annotations

from pathlib import Path

from hichunk.models.train.corpus.corpus import CorpusDoc


def doc_markdown(i: int, zh: bool = False) -> str:
    if zh:
        body = "这是正文的一句话，用来说明这个部分的内容。" * 3
        return (f"# 文档{i}\n\n{body}\n\n## 第一章 总则\n\n{body}\n\n### （一）范围\n\n{body}\n\n"
                f"## 第二章 使用\n\n{body}\n\n{body}\n")
    body = "This paragraph explains the section in some detail. It has a second sentence too."
    return (f"# Document {i}\n\n{body}\n\n## 1. Install\n\n{body}\n\n### 1.1 Requirements\n\n{body}\n\n"
            f"## 2. Usage\n\n{body}\n\n{body}\n")


def corpus_doc(i: int, zh: bool = False) -> CorpusDoc:
    md = doc_markdown(i, zh)
    return CorpusDoc(id=f"tiny/{i}", corpus="tiny", lang="zh" if zh else "en", title=f"d{i}", source=f"{i}.md",
                     markdown=md, n_words=len(md.split()), n_chars=len(md), n_headings=4, max_depth=3, format="markdown")


def write_tiny_corpus(root: Path) -> str:
    """Six training, two dev and one test document (every other one Chinese) under ``root``."""
    root.mkdir(parents=True, exist_ok=True)
    for split, ids in (("train", range(6)), ("dev", range(6, 8)), ("test", range(8, 9))):
        with open(root / f"{split}.jsonl", "w", encoding="utf-8") as fh:
            for i in ids:
                fh.write(corpus_doc(i, zh=i % 2 == 1).to_json() + "\n")
    return str(root)
