import numpy as np

from hichunk.tokens import cut_after_space, load_tokenizer


def test_default_tokenizer_counts_english_and_chinese(tokenizer):
    assert tokenizer.name == "blingfire:xlm_roberta_base"
    assert tokenizer.count("") == 0
    assert tokenizer.count("   \n\n") == 0
    assert tokenizer.count("Hello world") == 2
    assert 0 < tokenizer.count("这是一个中文句子。") <= 9


def test_encode_starts_are_sorted_char_offsets(tokenizer):
    text = "Héllo wörld, 这是中文。 And more."
    ids, starts = tokenizer.encode(text)
    assert len(ids) == len(starts) == tokenizer.count(text)
    assert np.all(np.diff(starts) > 0)
    assert starts[0] == 0 and starts[-1] < len(text)


def test_long_text_is_counted_in_pieces_consistently(tokenizer):
    line = "word " * 50 + "\n"
    text = line * 2000  # ~500k chars, several internal pieces
    assert tokenizer.count(text) == 2000 * tokenizer.count(line)
    assert len(tokenizer.starts(text)) == tokenizer.count(text)


def test_one_giant_line_without_spaces(tokenizer):
    text = "x" * 300_000
    n = tokenizer.count(text)
    assert n > 0 and len(tokenizer.starts(text)) == n


def test_cut_after_space():
    assert cut_after_space("ab  cd", 2) == 4
    assert cut_after_space("ab  ", 2) == 4
    assert cut_after_space("ab  cd", 2, limit=3) == 3


def test_load_tokenizer_is_cached():
    assert load_tokenizer() is load_tokenizer(None)
