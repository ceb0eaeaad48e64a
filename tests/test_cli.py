"""The ``hichunk`` command: formats, exit codes and bad input (never a traceback)."""

import io
import json
import subprocess
import sys
from contextlib import redirect_stderr, redirect_stdout
from types import SimpleNamespace

import pytest

from hichunk.cli import main
from hichunk.tree import from_dict


def run_cli(*args, stdin=None):
    """Run the command in this process (a fresh interpreter per call costs seconds of imports)."""
    out, err = io.StringIO(), io.StringIO()
    old_stdin = sys.stdin
    sys.stdin = io.TextIOWrapper(io.BytesIO((stdin or "").encode("utf-8")), encoding="utf-8")
    try:
        with redirect_stdout(out), redirect_stderr(err):
            try:
                code = main(list(args))
            except SystemExit as exc:  # argparse usage errors
                code = exc.code
    finally:
        sys.stdin = old_stdin
    return SimpleNamespace(returncode=code, stdout=out.getvalue(), stderr=err.getvalue())


@pytest.fixture
def docs(tmp_path, guide_md):
    (tmp_path / "guide.md").write_text(guide_md, encoding="utf-8")
    (tmp_path / "page.html").write_text("<h1>Top</h1><p>Para one.</p><h2>Sub</h2><p>Para &amp; two.</p>", encoding="utf-8")
    (tmp_path / "notes.txt").write_text("Just some plain notes.\nSecond line.\n", encoding="utf-8")
    return tmp_path


def test_splits_format_is_the_reference_contract(docs, capsys):
    files = [str(docs / n) for n in ("guide.md", "page.html", "notes.txt")]
    assert main(["-q", "chunk", *files, "--format", "splits", "--no-merge-over-chunk"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert list(out) == files
    for path in files:
        original = open(path, encoding="utf-8", newline="").read()
        assert "".join(text for text, _ in out[path]["splits"]) == original
    assert [level for _, level in out[files[0]]["splits"]] == [1, 2, 2, 3, 1]


def test_json_format_loads_back_and_directories_are_walked(docs, tmp_path):
    out_file = tmp_path / "trees.jsonl"
    assert main(["-q", "chunk", str(docs), "--format", "json", "-o", str(out_file)]) == 0
    trees = [from_dict(json.loads(line)) for line in out_file.read_text(encoding="utf-8").splitlines()]
    assert sorted(t.name.rsplit("/", 1)[-1] for t in trees) == ["guide.md", "notes.txt", "page.html"]


def test_tree_and_markdown_formats(docs, capsys):
    assert main(["chunk", str(docs / "guide.md"), "--no-merge-over-chunk"]) == 0
    out = capsys.readouterr().out
    assert "L3 Basics" in out and "leaves" in out
    assert main(["chunk", str(docs / "notes.txt"), "--method", "fixed", "--leaf-tokens", "8", "--format", "markdown"]) == 0
    assert "<!-- chunk level 1 -->" in capsys.readouterr().out


def test_methods_and_options_from_the_command_line(docs, capsys):
    for method in ("fixed", "recursive", "cdc", "structure"):
        assert main(["-q", "chunk", str(docs / "guide.md"), "--method", method, "--format", "splits", "--leaf-tokens", "16"]) == 0
    assert main(["-q", "chunk", str(docs / "guide.md"), "--max-level", "1", "--format", "splits"]) == 0
    out = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert [lv for _, lv in next(iter(out.values()))["splits"]] == [1, 1]


def test_empty_and_whitespace_files_are_valid(tmp_path):
    for name, content in (("empty.txt", b""), ("blank.md", b"  \n\t\n\r\n")):
        path = tmp_path / name
        path.write_bytes(content)
        proc = run_cli("chunk", str(path), "--format", "splits")
        assert proc.returncode == 0
        assert "".join(t for t, _ in json.loads(proc.stdout)[str(path)]["splits"]) == content.decode()


def test_the_installed_command_prints_one_line_not_a_traceback(tmp_path):
    path = tmp_path / "blob.txt"
    path.write_bytes(b"\x00\x01\x02\x03" * 64)
    proc = subprocess.run([sys.executable, "-m", "hichunk", "chunk", str(path)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert [line for line in proc.stderr.splitlines() if line.startswith("hichunk: error:")] == proc.stderr.splitlines()


def test_binary_file_is_a_clear_error(tmp_path):
    path = tmp_path / "image.png"
    path.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)))
    proc = run_cli("chunk", str(path))
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines()[-1] == f"hichunk: error: {path}: looks like a binary file, not text"


def test_invalid_utf8_needs_an_explicit_choice(tmp_path):
    path = tmp_path / "latin1.txt"
    path.write_bytes("Caf\xe9 au lait. Une phrase normale ici.\n".encode("latin-1"))
    proc = run_cli("chunk", str(path))
    assert proc.returncode == 2 and "not valid utf-8 at byte 3" in proc.stderr and "--encoding-errors replace" in proc.stderr
    proc = run_cli("chunk", str(path), "--encoding-errors", "replace", "--format", "splits")
    assert proc.returncode == 0 and "Caf\ufffd" in proc.stdout
    assert run_cli("chunk", str(path), "--encoding", "latin-1", "--format", "splits").returncode == 0


def test_one_failing_file_does_not_stop_the_others(docs, tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"\x00\x01\x02binary")
    proc = run_cli("chunk", str(docs / "guide.md"), str(bad), "--format", "splits")
    assert proc.returncode == 1
    assert str(docs / "guide.md") in json.loads(proc.stdout)
    assert "binary" in proc.stderr


def test_missing_file_and_bad_options(tmp_path):
    assert run_cli("chunk", str(tmp_path / "nope.md")).returncode == 2
    proc = run_cli("chunk", str(tmp_path), "--leaf-tokens", "2")
    assert proc.returncode == 2 and "at least 8" in proc.stderr
    assert run_cli("chunk", str(tmp_path), "--method", "magic").returncode == 2
    assert run_cli().returncode == 2  # no command: help and a usage exit


def test_standard_input(guide_md):
    proc = run_cli("chunk", "-", "--input-format", "markdown", "--format", "splits", stdin=guide_md)
    assert proc.returncode == 0 and "".join(t for t, _ in json.loads(proc.stdout)["-"]["splits"]) == guide_md


@pytest.mark.parametrize("content", [
    "x" * 1_000_000,  # one 1 MB line, no punctuation, no spaces
    "# A\n## B\n### C\n#### D\n",  # only headings
    "# A\n\n## B\n\n## C\nbody\n",  # headings without body
    "中文标题\n这是中文句子。Mixed English sentence here. 还有更多中文！\r\nWindows line\r\n\ttabbed\tline\r\n",
])
def test_hard_inputs_stay_lossless(tmp_path, content):
    path = tmp_path / "hard.md"
    path.write_text(content, encoding="utf-8", newline="")
    for method in ("structure", "fixed", "recursive", "cdc"):
        assert main(["-q", "chunk", str(path), "--method", method, "--format", "json", "-o", str(tmp_path / "o.jsonl")]) == 0
        tree = from_dict(json.loads((tmp_path / "o.jsonl").read_text(encoding="utf-8")))
        assert "".join(tree.raw_text(x) for x in tree.leaves()) == content
        assert all(x.tokens <= 200 for x in tree.leaves())


def test_demo_runs():
    proc = run_cli("demo")
    assert proc.returncode == 0 and "Home Battery Storage" in proc.stdout


def test_chunk_with_the_shipped_model_starts_light(tmp_path):
    """Start-up is what a CLI call pays every time: chunking with the shipped model must load neither
    torch nor nltk nor the retrieval index (each costs a large share of the 0.5 s start-up budget)."""
    doc = tmp_path / "doc.md"
    doc.write_text("# Title\n\nSome text. More text.\n\n## Part\n\nBody text here.\n", encoding="utf-8")
    code = ("import sys\nfrom hichunk.cli import main\n"
            f"assert main(['chunk', {str(doc)!r}, '-q']) == 0\n"
            "heavy = [m for m in ('torch', 'nltk', 'transformers', 'hichunk.retrieval.index') if m in sys.modules]\n"
            "assert not heavy, heavy\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
