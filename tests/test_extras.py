"""Missing optional packages are named up front: one line, the extra to install, exit code 2, no work done."""

from __future__ import annotations

import configparser
import subprocess
import sys
from pathlib import Path

import pytest

import hichunk.cli as cli
from hichunk.extras import EXTRAS, MissingExtra, available, require_extra

ROOT = Path(__file__).resolve().parent.parent


def block(monkeypatch, *modules: str) -> None:
    """Make ``modules`` unimportable, as if they were not installed."""
    for name in modules:
        for loaded in [m for m in sys.modules if m == name or m.startswith(name + ".")]:
            monkeypatch.delitem(sys.modules, loaded)
        monkeypatch.setitem(sys.modules, name, None)


def test_every_extra_matches_setup_cfg():
    cfg = configparser.ConfigParser()
    cfg.read(ROOT / "setup.cfg")
    declared = {name: cfg["options.extras_require"][name] for name in cfg["options.extras_require"]}
    for extra, modules in EXTRAS.items():
        assert extra in declared, extra
        for dist in modules.values():
            assert dist in declared[extra], (extra, dist)


def test_require_extra_names_the_extra(monkeypatch):
    block(monkeypatch, "matplotlib")
    assert not available("matplotlib")
    with pytest.raises(MissingExtra) as err:
        require_extra("bench", "matplotlib", what="plots")
    assert str(err.value) == 'plots needs matplotlib: pip install "hichunk[bench]"'
    assert err.value.extra == "bench" and err.value.missing == ["matplotlib"]
    require_extra("bench", "rouge")  # installed: no error


def test_dotted_modules_and_missing_parents(monkeypatch):
    block(monkeypatch, "llama_index")
    with pytest.raises(MissingExtra, match=r'pip install "hichunk\[llama-index\]"'):
        require_extra("llama-index")
    assert not available("no_such_package_xyz.sub")


def test_bench_rag_names_matplotlib_before_any_work(monkeypatch, tmp_path, capsys):
    block(monkeypatch, "matplotlib")
    code = cli.main(["-q", "bench", "rag", "--data", str(tmp_path / "missing"), "--out", str(tmp_path / "out"),
                     "--budgets", "1000,2000"])
    err = capsys.readouterr().err.strip()
    assert code == 2
    assert err == 'hichunk: error: hichunk bench rag with several budgets needs matplotlib: pip install "hichunk[bench]"'
    assert not (tmp_path / "out").exists()
    # one budget draws no plot: the run goes on to the data (which is missing here)
    assert cli.main(["-q", "bench", "rag", "--data", str(tmp_path / "missing"), "--out", str(tmp_path / "out"),
                     "--budgets", "1000"]) == 2
    assert "matplotlib" not in capsys.readouterr().err


def test_update_cost_names_matplotlib(monkeypatch, tmp_path, capsys):
    block(monkeypatch, "matplotlib")
    assert cli.main(["-q", "bench", "update-cost", "--data", str(tmp_path), "--out", str(tmp_path / "o")]) == 2
    assert 'pip install "hichunk[bench]"' in capsys.readouterr().err


def test_adapter_model_names_peft(monkeypatch):
    from hichunk.models.adapter import SHIPPED_DIR, is_adapter_dir, load_adapter_model
    from hichunk.models.registry import ModelSettings

    if not is_adapter_dir(SHIPPED_DIR):
        pytest.skip("the shipped adapter is not installed")
    block(monkeypatch, "peft")
    with pytest.raises(MissingExtra, match=r'pip install "hichunk\[gen\]"'):
        load_adapter_model(SHIPPED_DIR, ModelSettings())


def test_bge_embedder_names_the_extra(monkeypatch):
    from hichunk.retrieval.embedders.backends import import_flagembedding

    block(monkeypatch, "FlagEmbedding")
    with pytest.raises(MissingExtra, match=r'pip install "hichunk\[bge\]"'):
        import_flagembedding()


def test_serve_and_integrations_name_their_extras(monkeypatch, tmp_path, capsys):
    block(monkeypatch, "fastapi")
    assert cli.main(["-q", "serve", "--index", str(tmp_path)]) == 2
    assert capsys.readouterr().err.strip() == ('hichunk: error: hichunk serve needs fastapi: '
                                               'pip install "hichunk[serve]"')
    for module, extra, blocked in (("hichunk.integrations.langchain", "langchain", "langchain_core"),
                                   ("hichunk.integrations.llama_index", "llama-index", "llama_index"),
                                   ("hichunk.integrations.haystack", "haystack", "haystack")):
        block(monkeypatch, blocked)
        monkeypatch.delitem(sys.modules, module, raising=False)
        with pytest.raises(MissingExtra, match=rf'pip install "hichunk\[{extra}\]"'):
            __import__(module)


def test_no_traceback_from_a_missing_extra(tmp_path):
    """The real command line, in a child process where matplotlib cannot be imported."""
    code = ("import sys; sys.modules['matplotlib'] = None; import hichunk.cli as c; "
            f"sys.exit(c.main(['-q', 'bench', 'rag', '--data', {str(tmp_path)!r}, '--out', {str(tmp_path / 'o')!r}]))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        'hichunk: error: hichunk bench rag with several budgets needs matplotlib: pip install "hichunk[bench]"']


def test_docx_inputs_name_the_extra_before_any_work(monkeypatch, tmp_path, capsys):
    (tmp_path / "a.md").write_text("# A\n\ntext\n", encoding="utf-8")
    (tmp_path / "b.docx").write_bytes(b"PK\x03\x04")
    block(monkeypatch, "docx")
    for args in (["chunk", str(tmp_path)], ["index", "build", str(tmp_path), "--index", str(tmp_path / "idx")]):
        assert cli.main(["-q", *args]) == 2
        assert capsys.readouterr().err.strip() == ('hichunk: error: reading .docx files needs python-docx: '
                                                   'pip install "hichunk[docx]"')
    assert not (tmp_path / "idx").exists()
