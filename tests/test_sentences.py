from hichunk.document import parse_document
from hichunk.sentences import glue_short, is_chinese, split_line, split_sentences, truncate_for_model


def pieces(text):
    return [text[a:b] for a, b in split_line(text)]


def test_english_uses_punkt_abbreviations():
    text = "Mr. Smith went to Washington on Jan. 5th. He bought apples there. Then he left."
    assert pieces(text) == ["Mr. Smith went to Washington on Jan. 5th. ", "He bought apples there. ", "Then he left."]


def test_chinese_rules_split_on_terminal_punctuation_and_keep_closing_quotes():
    text = "这是第一句。这是第二句！“引号里的句子。”还有问句吗？"
    assert pieces(text) == ["这是第一句。", "这是第二句！", "“引号里的句子。”", "还有问句吗？"]


def test_chinese_never_splits_on_spaces():
    assert pieces("中文 没有 句号 但是 有 空格") == ["中文 没有 句号 但是 有 空格"]


def test_mixed_line_gets_both_rules():
    text = "这是中文句子。Then an English sentence follows here. And one more."
    assert pieces(text) == ["这是中文句子。", "Then an English sentence follows here. ", "And one more."]


def test_spans_cover_the_line():
    for text in ["a. b. c.", "No punctuation here", "  leading space. Next one here.", "。。。", "Wow! Really? Yes."]:
        spans = split_line(text)
        if text.strip():
            assert spans[0][0] == 0 and spans[-1][1] == len(text)
            assert all(b1 == a2 for (_, b1), (a2, _) in zip(spans, spans[1:]))


def test_short_sentences_are_glued_to_the_next_as_in_the_reference():
    def glued(text):
        return [text[a:b] for a, b in glue_short(split_line(text), text)]

    assert glued("Yes. I think this is a long enough sentence. Ok.") == [
        "Yes. I think this is a long enough sentence. ", "Ok."]  # the last one is never glued
    assert glued("Hi. Ok. This is a long sentence. Yes.") == ["Hi. Ok. This is a long sentence. ", "Yes."]


def test_document_sentences_never_cross_lines_and_headings_are_whole():
    doc = parse_document("# A title. With a dot\nFirst sentence here. Second one is here.\n\nThird line.\n", "markdown")
    sents = split_sentences(doc)
    texts = [doc.clean[s.start : s.end] for s in sents]
    assert texts == ["# A title. With a dot", "First sentence here. ", "Second one is here.", "Third line."]
    assert [s.line for s in sents] == [0, 1, 1, 3]


def test_truncation_is_language_aware():
    assert truncate_for_model("a" * 1500) == "a" * 1000
    assert truncate_for_model("中" * 150) == "中" * 100
    assert truncate_for_model("中" * 150, max_chars_zh=20) == "中" * 20
    assert is_chinese("这是一个很长的中文句子 with English") is True
    assert is_chinese("English with 中文") is False
