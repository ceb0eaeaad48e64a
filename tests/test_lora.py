"""The generative chunker's fine-tuning: SFT windows in the engine's format, JSONL export, a tiny LoRA run end to end."""

from __future__ import annotations

import json
import re

import pytest
from engine_doubles import ScriptedModel, oracle

from hichunk.engine import infer_points
from hichunk.errors import HichunkError
from hichunk.models.prompt import INSTRUCTION, build_prompt, parse_answer
from hichunk.models.train.corpus.corpus import CorpusDoc
from hichunk.models.train.samples import LabelledDoc
from hichunk.models.train.sft import examples_of, select_examples, write_jsonl
from hichunk.protocol import check_starts

torch = pytest.importorskip("torch")
pytest.importorskip("peft")

ANSWER_LINE = re.compile(r"^\d+, Level (One|Two|Three|Four|Five|Six|Seven|Eight|Nine|Ten), True$")


def _long_doc() -> LabelledDoc:
    """Three level-1 parts of level-2 sections, every line unique (the oracle knows headings by their text)."""
    texts, levels = [], []
    for part in range(3):
        texts.append(f"Part {part}")
        levels.append(1)
        for sec in range(3):
            texts.append(f"Section {part}.{sec}")
            levels.append(2)
            for k in range(4):
                texts.append(f"Body sentence {part} {sec} {k} with a few more words here")
                levels.append(0)
    return LabelledDoc("long", "tiny", "en", tuple(texts), tuple(levels))


def _words(text: str) -> int:
    return len(text.split())


def test_sft_windows_are_the_windows_the_engine_shows():
    doc = _long_doc()
    heading_levels = {t: lv for t, lv in zip(doc.texts, doc.levels) if lv}
    model = ScriptedModel(oracle(heading_levels), window_tokens=110, overhead=10)
    result = infer_points(list(doc.texts), model)
    examples = examples_of(doc, 110 - 10, _words)
    # same windows, same lines, same residual lines, when the model answers the true starts
    assert [(w.lines, w.n_residual) for w in model.seen] == [(e.lines, e.n_residual) for e in examples]
    assert len(examples) > 3 and any(e.n_residual for e in examples)
    assert sorted(result.points) == [i for i, lv in enumerate(doc.levels) if lv]
    for window, ex in zip(model.seen, examples):
        assert ex.answer == oracle(heading_levels)(window)


def test_answers_are_in_the_hichunk_format_and_name_residual_headings():
    doc = _long_doc()
    examples = examples_of(doc, 100, _words)
    for ex in examples:
        lines = ex.answer.split("\n") if ex.answer else []
        assert all(ANSWER_LINE.match(line) for line in lines), ex.answer
        starts = parse_answer(ex.answer)
        assert check_starts(starts, len(ex.lines)) is None
        for s in starts:
            assert doc.levels[doc.texts.index(ex.lines[s.line])] == s.level
    continued = [ex for ex in examples if ex.n_residual]
    # residual lines start at the current level-1 heading, and the answer names it
    assert continued and all(ex.lines[0].startswith("Part ") and ex.answer.startswith("0, Level One, True")
                             for ex in continued)


def _cdoc(i: int, corpus: str, zh: bool = False) -> CorpusDoc:
    if zh:
        body = f"这是第{i}篇文档正文的一句话，用来说明这个部分的内容。"
        md = f"# 文档{i}\n\n{body}\n\n## 第一章 总则\n\n{body * 2}\n\n## 第二章 使用\n\n{body}\n"
    else:
        body = f"Paragraph of document {i} explains the section. It has a second sentence too."
        md = f"# Document {i}\n\n{body}\n\n## 1. Install\n\n{body}\n\n### 1.1 Requirements\n\n{body}\n\n## 2. Usage\n\n{body}\n"
    return CorpusDoc(id=f"{corpus}/{i}", corpus=corpus, lang="zh" if zh else "en", title=f"d{i}", source=f"{i}.md",
                     markdown=md, n_words=len(md.split()), n_chars=len(md), n_headings=4, max_depth=3, format="markdown")


def _docs(ids) -> list[CorpusDoc]:
    return [_cdoc(i, "zh-docs" if i % 2 else "en-docs", zh=bool(i % 2)) for i in ids]


def test_examples_are_reproducible_and_alternate_sub_corpora():
    docs = _docs(range(8))
    a = select_examples(docs, 6, 40, _words, seed=3, windows_per_doc=1)
    b = select_examples(docs, 6, 40, _words, seed=3, windows_per_doc=1)
    assert a == b and len(a) == 6
    assert [e.corpus for e in a] == ["en-docs", "zh-docs"] * 3
    assert select_examples(docs, 6, 40, _words, seed=4, windows_per_doc=1) != a


def test_jsonl_export_is_instruction_output_records(tmp_path):
    examples = select_examples(_docs(range(4)), 5, 40, _words)
    path = tmp_path / "sft.jsonl"
    write_jsonl(examples, str(path))
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    assert len(records) == len(examples)
    for rec, ex in zip(records, examples):
        assert set(rec) == {"instruction", "output", "meta"}
        assert rec["instruction"] == build_prompt(ex.lines) and rec["instruction"].startswith(INSTRUCTION)
        assert rec["output"] == ex.answer and rec["meta"]["doc"] == ex.doc
        assert rec["meta"]["n_residual"] == ex.n_residual
    assert any("文档" in r["instruction"] for r in records)  # Chinese kept as text, not escapes


# -- a tiny base model built here: byte-level BPE tokenizer with a chat template, random Llama ------------

CHAT_TEMPLATE = ("{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
                 "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}")


@pytest.fixture(scope="module")
def tiny_base(tmp_path_factory) -> str:
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    folder = tmp_path_factory.mktemp("tiny-base")
    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=400, special_tokens=["<|endoftext|>", "<|im_start|>", "<|im_end|>"],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    corpus = [INSTRUCTION, "0, Level One, True\n1, Level Two, True\n", "Document Install Usage Requirements 文档 总则"]
    bpe.train_from_iterator(corpus, trainer)
    tok = PreTrainedTokenizerFast(tokenizer_object=bpe, eos_token="<|im_end|>", pad_token="<|endoftext|>",
                                  bos_token="<|im_start|>")
    tok.chat_template = CHAT_TEMPLATE
    tok.save_pretrained(folder)
    config = LlamaConfig(vocab_size=len(tok), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=4096,
                         eos_token_id=tok.eos_token_id, bos_token_id=tok.bos_token_id, pad_token_id=tok.pad_token_id)
    torch.manual_seed(0)
    LlamaForCausalLM(config).save_pretrained(folder)
    return str(folder)


@pytest.fixture(scope="module")
def tiny_corpus(tmp_path_factory) -> str:
    root = tmp_path_factory.mktemp("corpus")
    for split, ids in (("train", range(6)), ("dev", range(6, 8)), ("test", range(8, 9))):
        with open(root / f"{split}.jsonl", "w", encoding="utf-8") as fh:
            for d in _docs(ids):
                fh.write(d.to_json() + "\n")
    return str(root)


def _recipe(base: str, **kw):
    from hichunk.models.train.lora import recipe_from

    fields = dict(base=base, window_tokens=1024, train_windows=6, dev_windows=2, grad_accum=2, rank=4, alpha=8,
                  dtype="fp32", device="cpu", threads=1, max_new_tokens=24, max_steps=2)
    fields.update(kw)
    return recipe_from("cpu", **fields)


def test_the_loss_is_on_the_answer_and_its_end_token_only(tiny_base):
    from transformers import AutoTokenizer

    from hichunk.models.generative import HFPrompt
    from hichunk.models.train.lora import encode

    prompt = HFPrompt(AutoTokenizer.from_pretrained(tiny_base))
    ex = examples_of(_long_doc(), 100, _words)[1]
    enc = encode(ex, prompt)
    prompt_ids = prompt.ids(prompt.text(ex.lines))
    assert enc.ids[: enc.n_prompt] == prompt_ids and prompt.templated
    assert enc.ids[enc.n_prompt :] == prompt.tokenizer(ex.answer, add_special_tokens=False)["input_ids"] + [prompt.tokenizer.eos_token_id]
    # what inference sends is exactly the prompt part
    assert prompt.text(ex.lines).endswith("<|im_start|>assistant\n") and build_prompt(ex.lines) in prompt.text(ex.lines)


@pytest.mark.slow
def test_tiny_lora_run_trains_saves_reloads_and_chunks(tiny_base, tiny_corpus, tmp_path, capsys):
    from safetensors.torch import load_file

    from hichunk.chunkers import ChunkOptions, get_chunker
    from hichunk.cli import build_parser
    from hichunk.document import parse_document
    from hichunk.models.adapter import AdapterMeta
    from hichunk.models.registry import ModelSettings, load_model
    from hichunk.models.train.lora import recipe_from, train_lora

    out = tmp_path / "adapter"
    args = build_parser().parse_args(["sft", "train", "--corpus", tiny_corpus, "--base", tiny_base, "--out", str(out),
                              "--max-tokens", "1024", "--windows", "6", "--max-steps", "2", "--dtype", "fp32", "-q"])
    assert args.handler(args) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["steps"] == 2 and set(report["dev"]) == {"adapter", "base"}
    assert {"adapter_config.json", "adapter_model.safetensors", "hichunk_adapter.json"} <= {p.name for p in out.iterdir()}
    meta = AdapterMeta.load(str(out))
    assert meta.base == tiny_base and meta.window_tokens == 1024 and meta.info["train_windows"] == 6

    # seeded: the same recipe gives the same adapter weights
    train_lora(tiny_corpus, str(tmp_path / "again"),
               recipe_from("cpu", base=tiny_base, window_tokens=1024, train_windows=6, max_steps=2, dtype="fp32"), progress=False)
    w1, w2 = load_file(out / "adapter_model.safetensors"), load_file(tmp_path / "again" / "adapter_model.safetensors")
    assert w1.keys() == w2.keys() and all(torch.equal(w1[k], w2[k]) for k in w1)

    model = load_model(str(out), ModelSettings(max_new_tokens=24))
    assert model.window_tokens == 1024 and model.max_new_tokens == 24 and str(out) in model.name
    text = "# Guide\n\nRun the installer. Then check it.\n\n## Use\n\nType a command. Press enter.\n"
    tree = get_chunker("hichunk", ChunkOptions(hints="ignore"), model=model).chunk(parse_document(text, "markdown"))
    assert "".join(t for t, _ in tree.split_texts()) == text  # lossless whatever the random model answers
    assert tree.meta["windows"] >= 1


def test_sft_data_command_writes_jsonl(tiny_base, tiny_corpus, tmp_path, capsys):
    from hichunk.cli import build_parser

    path = tmp_path / "train.jsonl"
    args = build_parser().parse_args(["sft", "data", "--corpus", tiny_corpus, "--base", tiny_base, "--out", str(path),
                              "--windows", "4", "--max-tokens", "900", "-q"])
    assert args.handler(args) == 0
    assert json.loads(capsys.readouterr().out)["windows"] == 4
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    assert len(records) == 4 and all(r["instruction"].startswith(INSTRUCTION) for r in records)


def test_bad_adapter_folders_are_clear_errors(tmp_path, tiny_base):
    from hichunk.models.adapter import AdapterMeta
    from hichunk.models.registry import load_model
    from hichunk.models.train.lora import recipe_from

    with pytest.raises(HichunkError, match="not a hichunk adapter"):
        AdapterMeta.load(str(tmp_path))
    (tmp_path / "hichunk_adapter.json").write_text("{broken", encoding="utf-8")
    with pytest.raises(HichunkError, match="unreadable adapter description"):
        load_model(str(tmp_path))
    AdapterMeta(tiny_base, 512, 16, "0" * 64).save(str(tmp_path))
    with pytest.raises(HichunkError, match="cannot load the LoRA adapter"):
        load_model(str(tmp_path))  # description present, peft files missing
    with pytest.raises(HichunkError, match="unknown recipe"):
        recipe_from("tpu")
    with pytest.raises(HichunkError, match="no room for lines"):
        from transformers import AutoTokenizer

        from hichunk.models.generative import HFPrompt
        from hichunk.models.train.lora import recipe_examples

        recipe_examples(str(tmp_path), "train", _recipe(tiny_base, window_tokens=20), HFPrompt(AutoTokenizer.from_pretrained(tiny_base)))

