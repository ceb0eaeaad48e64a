import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hichunk.document import parse_document
from hichunk.document.model import Document, Line, OffsetMap
from hichunk.sentences import (
    Sentence,
    SentenceSpans,
    glue_short,
    is_chinese,
    sentence_spans,
    split_line,
    split_sentences,
    truncate_for_model,
)


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


def test_punkt_splits_as_nltks_own_punkt_does():
    """The dependency-free Punkt we run gives NLTK's spans (NLTK itself is only the oracle here)."""
    import glob
    import os
    from collections import defaultdict

    nltk_punkt = pytest.importorskip("nltk.tokenize.punkt")
    from punkt.data import english

    from hichunk.sentences import punkt_tokenizer

    params = nltk_punkt.PunktParameters()
    params.abbrev_types = set(english.ABBREV_TYPES)
    params.collocations = set(english.COLLOCATIONS)
    params.sent_starters = set(english.SENT_STARTERS)
    params.ortho_context = defaultdict(int, english.ORTHO_CONTEXT)
    reference = nltk_punkt.PunktSentenceTokenizer(params)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    files = glob.glob(os.path.join(root, "hichunk", "samples", "*.md")) + glob.glob(os.path.join(root, "docs", "**", "*.md"),
                                                                                      recursive=True)
    paragraphs = [p for f in files for p in open(f, encoding="utf-8").read().split("\n") if len(p) > 40]
    paragraphs += ["Dr. Smith went to Washington D.C. on Jan. 5. He arrived at 3 p.m. and left.",
                   "See Fig. 3 and Sec. 2.1 for details, e.g. the U.S. case. Then stop."]
    assert len(paragraphs) > 100
    for p in paragraphs:
        assert list(punkt_tokenizer().span_tokenize(p)) == list(reference.span_tokenize(p)), p


def test_splitting_sentences_never_imports_nltk():
    import subprocess
    import sys

    code = ("import sys\nfrom hichunk.sentences import split_line\n"
            "assert len(split_line('Dr. Smith went home. He was tired. It was late.')) == 3\n"
            "assert 'nltk' not in sys.modules\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def reference_sentences(doc):
    """``split_sentences`` as it was written first: every line through ``split_line``."""
    out = []
    for i, line in enumerate(doc.lines):
        if line.heading is not None:
            spans = [(0, len(line.text))] if line.text.strip() else []
        else:
            spans = split_line(line.text)
            if len(spans) > 1:
                spans = glue_short(spans, line.text)
        out.extend(Sentence(line.clean_start + a, line.clean_start + b, i) for a, b in spans)
    return out


# Sentence ends, closing quotes, CJK, every kind of space (a NUL too: lines are searched joined by NULs).
PIECES = ["Mr.", "Smith", "went", "home.", "Is it?", "Yes!", "e.g.", "(see", "this.)", '"Done."', "end.\u201d", "3.2",
          "a" * 30, "\u4e2d\u6587", "\u53e5\u5b50\u3002", "\u8fd9\u662f\u4e00\u4e2a\u5f88\u957f\u7684\u4e2d\u6587\u53e5\u5b50\u3002",
          "\u6d4b\u8bd5\uff01", "\u3053\u3093", "\ud55c", "\u2026",
          "x.", "#", "# Title.", ".", "!", "?", "\x00", "\r"]
SPACES = [" ", "  ", "\t", "\x0b", "\x0c", "\x1c", "\x85", "\xa0", "\u2028", "\u3000", ""]
line_text = st.lists(st.tuples(st.sampled_from(PIECES), st.sampled_from(SPACES)), max_size=40).map(
    lambda parts: "".join(p + s for p, s in parts))


@settings(max_examples=200, deadline=None)
@given(st.lists(line_text, max_size=12), st.sampled_from(["markdown", "text", "html", "rst"]))
def test_sentences_equal_the_line_by_line_reference(lines, fmt):
    doc = parse_document("\n".join(lines), fmt)
    assert split_sentences(doc) == reference_sentences(doc)
    assert sentence_spans(doc) == SentenceSpans.of(reference_sentences(doc))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(line_text | st.text(max_size=60), st.sampled_from([None, 1, 3])), max_size=12))
def test_sentences_equal_the_reference_on_any_lines(rows):
    """Lines as any loader may make them: odd characters, newlines inside, headings anywhere."""
    lines, pos = [], 0
    for text, heading in rows:
        lines.append(Line(pos, pos + len(text), text, heading))
        pos += len(text) + 1
    clean = "\n".join(text for text, _ in rows)
    doc = Document("t", "text", clean, clean, lines, OffsetMap.identity(len(clean)))
    assert split_sentences(doc) == reference_sentences(doc)


# Words around Punkt's candidates: abbreviations, initials, numbers, ellipses and dashes, closing quotes and
# brackets, sentence starters, and every kind of space Punkt's regexes treat apart.
PUNKT_PIECES = ["Dr.", "Mr.", "e.g.", "etc.", "U.S.", "J.", "No.", "5.", "3.2", "p.m.", "Fig.", "i.e.", "He", "The",
                "the", "went", "home.", "home", "Is", "it?", "Yes!", "Wow!!!", "?!", "...", ". . .", "--", "-", ".",
                "!", "?", '"', "'", ")", "]", "}", "(", '."', '?"', ".)", ".'", "\u201d", "\u2019", "\u00bb", "a.b",
                "x.", "end.\u201d", "(see", "this.)", "\u4e2d\u6587\u3002", "\u2026"]
PUNKT_SPACES = [" ", " ", "  ", "\t", "\n", "\r", "\x0b", "\x0c", "\x1c", "\x85", "\xa0", "\u2028", "\u3000", ""]


@settings(max_examples=600, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(PUNKT_PIECES), st.sampled_from(PUNKT_SPACES)), max_size=30))
def test_punkt_starts_equal_punkts_own_spans(parts):
    """``_punkt_starts`` runs Punkt's steps without its objects: the same sentence starts as ``span_tokenize``."""
    from hichunk.sentences import _punkt_starts, punkt_tokenizer

    text = "".join(p + s for p, s in parts)
    assert _punkt_starts(text) == [s for s, _ in punkt_tokenizer().span_tokenize(text)][1:], text


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.sampled_from(list(".!?\"')]}([-\u201d\u2019\u00ab\u00bb aAbZ1 \t\n\x0b\u3000\u4e2d\u3002")), max_size=60))
def test_punkt_starts_equal_punkts_own_spans_on_any_punctuation(text):
    from hichunk.sentences import _punkt_starts, punkt_tokenizer

    assert _punkt_starts(text) == [s for s, _ in punkt_tokenizer().span_tokenize(text)][1:], text


def test_punkt_starts_equal_punkts_own_spans_on_the_docs():
    import glob
    import os

    from hichunk.sentences import _punkt_starts, punkt_tokenizer

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    files = glob.glob(os.path.join(root, "hichunk", "samples", "*.md")) + glob.glob(os.path.join(root, "docs", "**", "*.md"),
                                                                                      recursive=True)
    paragraphs = [p for f in files for p in open(f, encoding="utf-8").read().split("\n") if p.strip()]
    assert len(paragraphs) > 1000
    for p in paragraphs:
        assert _punkt_starts(p) == [s for s, _ in punkt_tokenizer().span_tokenize(p)][1:], p


def test_punkt_starts_asks_punkt_itself_when_its_parts_are_not_the_ones_followed(monkeypatch):
    """A ``punkt`` release whose rules differ from the steps ``_punkt_starts`` follows is not an error: Punkt
    answers itself, with the same starts."""
    from hichunk import sentences

    text = "Dr. Smith went home. He said \"no.\" Then -- after a pause... he left! Why? Because."
    expected = [s for s, _ in sentences.punkt_tokenizer().span_tokenize(text)][1:]
    monkeypatch.setattr(sentences, "_punkt_parts", lambda: None)
    assert sentences._punkt_starts(text) == expected
    assert len(expected) >= 4
