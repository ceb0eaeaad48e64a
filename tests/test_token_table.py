"""TokenTable: every span's count equals the tokenizer's own count of that span, from one tokenisation."""

from __future__ import annotations

from unittest.mock import patch

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hichunk import token_table
from hichunk.token_table import TokenTable, visible_starts
from hichunk.tokens import BlingFireTokenizer, load_tokenizer

# Plain text, Chinese, NFKC spaces, and characters a tokenizer may normalise into whitespace or nothing.
ALPHABET = list("ab cd\n\t\r.,x-y 中文。我们！") + [chr(c) for c in (
    0xA0, 0x3000, 0x2009, 0x202F, 0x200B, 0x200D, 0x2060, 0xFEFF, 0x180E, 0x85, 0x1C, 0x1F, 0x0B, 0x0C, 0x0,
    0x7F, 0xAD, 0x2028, 0x1680, 0x115F, 0x3164, 0xFFA0, 0xFE0F, 0x301, 0xE9, 0xFB01, 0x2163, 0x1F600, 0x5D0, 0xE31)]


class CountingTokenizer:
    """The default tokenizer, counting how often it is called."""

    def __init__(self):
        self.inner = load_tokenizer()
        self.name, self.whitespace_split = self.inner.name, True
        self.calls = 0

    def count(self, text):
        self.calls += 1
        return self.inner.count(text)

    def encode(self, text):
        self.calls += 1
        return self.inner.encode(text)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=st.text(alphabet=st.sampled_from(ALPHABET), min_size=1, max_size=60), data=st.data())
def test_counts_equal_the_tokenizers_count_on_any_span(text, data):
    tokenizer = load_tokenizer()
    table = TokenTable(text, tokenizer)
    spans = []
    for _ in range(4):
        a = data.draw(st.integers(0, len(text) - 1))
        b = data.draw(st.integers(a, len(text)))
        assert table.count(a, b) == tokenizer.count(text[a:b]), (text, a, b)
        spans.append((a, b))
    assert table.span_counts(spans) == [tokenizer.count(text[a:b]) for a, b in spans]


def test_counts_on_real_text_need_no_new_tokenisation():
    text = ("# Installing\n\nRun the installer, then restart.  Settings live in ~/.config/app.\n\n"
            "中文段落，没有空格。第二句话！ Mixed 中文 and English.\n") * 40
    tokenizer = CountingTokenizer()
    table = TokenTable(text, tokenizer)
    assert len(table) == tokenizer.inner.count(text)
    calls = tokenizer.calls
    rng = np.random.default_rng(0)
    word_starts = [0] + [i + 1 for i, c in enumerate(text) if c in " \n"]
    spans = []
    for _ in range(300):  # spans between word starts (as sentences and leaves are) are derived, not counted
        a, b = sorted(rng.choice(word_starts, 2, replace=False))
        assert table.count(a, b) == tokenizer.inner.count(text[a:b])
        spans.append((int(a), int(b)))
    calls = tokenizer.calls
    assert table.span_counts(spans) == [tokenizer.inner.count(text[a:b]) for a, b in spans]
    assert tokenizer.calls - calls < 300 * 0.5
    assert tokenizer.calls - calls < 300 * 0.5  # partial words (Chinese runs) are counted on their own
    for _ in range(200):  # any span
        a, b = sorted(rng.integers(0, len(text) + 1, 2))
        assert table.count(a, b) == tokenizer.inner.count(text[a:b])


def test_starts_are_visible_token_starts():
    text = "Hello  world,\n\n  again 中文。"
    table = TokenTable(text, load_tokenizer())
    starts = table.starts(0, len(text)).tolist()
    assert starts == sorted(starts) and len(starts) == load_tokenizer().count(text)
    assert all(not text[s].isspace() for s in starts)
    assert table.starts(7, 13).tolist() == [s for s in starts if 7 <= s < 13]


def test_a_tokenizer_without_whitespace_split_is_asked_directly():
    class Words:
        name = "words"

        def count(self, text):
            return len(text.split())

    table = TokenTable("one two three four", Words())
    assert table.count(0, 7) == 2 and table.count(4, 18) == 3


def test_ids_only_when_kept():
    tokenizer = load_tokenizer()
    assert np.array_equal(TokenTable("a b c", tokenizer, keep_ids=True).ids, tokenizer.encode("a b c")[0])
    with pytest.raises(ValueError):
        _ = TokenTable("a b c", tokenizer).ids


def test_a_long_text_tokenised_in_parts_gives_the_whole_texts_tokens():
    # many parts cut after newlines, a line longer than a part, a Chinese run with no space or newline
    text = ("Setting up the mirror list, then the keys.\n" * 600 + "word " * 9000 + "\n"
            + "中文段落没有空格也没有换行" * 1500 + "\nend of text\n")
    tokenizer = load_tokenizer()
    ids, starts = tokenizer.encode(text)
    table = TokenTable(text, tokenizer, keep_ids=True)
    assert np.array_equal(table.ids, ids)
    assert table.all_starts.tolist() == TokenTable(text, tokenizer).all_starts.tolist()
    assert len(table) == tokenizer.count(text)
    assert table.count(0, len(text)) == tokenizer.count(text)


def tokens_part_by_part(text, tokenizer):
    """Ids and visible starts of ``text`` with every part tokenised as it stands (no word cache)."""
    ids, starts = [np.zeros(0, dtype=np.int64)], [np.zeros(0, dtype=np.int64)]
    for a, b in token_table._parts(text):
        part_ids, part_starts = tokenizer.encode(text[a:b])
        ids.append(part_ids)
        starts.append(visible_starts(text[a:b], np.asarray(part_starts)) + a)
    return np.concatenate(ids), np.concatenate(starts)


# One tokenizer for every example, so later examples meet words cached by earlier ones in new places;
# it takes at most 48 characters in one piece, so long parts are cut as giant lines are (inside a word too).
SHORT_PIECES = BlingFireTokenizer()
SHORT_PIECES.piece_chars = 48
WORDS = ["the", "cache", "wörd", "中文段落", "我们", "x", "a.b", "é", "ﬁle", "Ⅳ", "😀", "שלום"]
SAFE = [c for c in ALPHABET if not token_table._unsafe(c)]
ODD = [c for c in ALPHABET if token_table._unsafe(c)] + ["\ud800", "\udfff", "中文" * 30, "y" * 70]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(chunks=st.lists(st.one_of(st.sampled_from(WORDS), st.sampled_from(SAFE), st.text(st.sampled_from(SAFE), max_size=12)),
                       max_size=40),
       odd=st.lists(st.tuples(st.integers(0, 40), st.sampled_from(ODD)), max_size=2),
       part_chars=st.sampled_from([8, 32, 1 << 13]), tokenizer=st.sampled_from([SHORT_PIECES, load_tokenizer()]))
def test_tokens_built_from_cached_words_equal_the_tokenisation_of_each_part(chunks, odd, part_chars, tokenizer):
    for at, chunk in odd:  # unsafe characters, lone surrogates, words longer than a piece
        chunks.insert(at, chunk)
    text = "".join(chunks)
    with patch.object(token_table, "_PART_CHARS", part_chars):
        want_ids, want_starts = tokens_part_by_part(text, tokenizer)
        table = TokenTable(text, tokenizer, keep_ids=True)
        assert table.all_starts.tolist() == want_starts.tolist(), text
        assert table.ids.tolist() == want_ids.tolist(), text
        assert table._unsafe_positions() == [i for i, c in enumerate(text) if token_table._unsafe(c)]


def test_a_full_word_cache_is_cleared_and_refilled():
    tokenizer = BlingFireTokenizer()
    texts = [" ".join(f"{kind}{i} 中{i}文" for i in range(200)) + "\n" for kind in ("w", "v", "w")]
    with patch.object(token_table, "_MAX_CACHED_WORDS", 50):
        for text in texts:
            table = TokenTable(text, tokenizer, keep_ids=True)
            ids, starts = tokens_part_by_part(text, tokenizer)
            assert np.array_equal(table.ids, ids) and np.array_equal(table.all_starts, starts)
            assert len(token_table._word_cache(tokenizer).slots) == 400  # this text's words only


def previous_unsafe_at(codes):
    """``_unsafe_at`` as it was: each distinct odd code point asked of ``_unsafe``."""
    odd = np.unique(codes[codes - 0x20 >= 0x5F]).tolist()
    bad = [c for c in odd if token_table._unsafe(chr(c))]
    return np.flatnonzero(np.isin(codes, bad)) if bad else np.zeros(0, dtype=np.int64)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(codec="utf-8") | st.sampled_from(list("\x00\x1c\x85\xa0\u200b\u2028\u3000\u3164\ufe0f\U000e0001 a\u4e2d")),
               max_size=80))
def test_unsafe_positions_equal_the_previous_functions(text):
    codes = token_table._code_points(text)
    got, want = token_table._unsafe_at(codes), previous_unsafe_at(codes)
    assert got.dtype == want.dtype and got.tolist() == want.tolist()
