"""Per-command help: each sub-command documents exactly the options it accepts, and the general
options (-q, -v) work after the command as well as before it."""

from __future__ import annotations

import argparse
import re

import pytest

from hichunk.cli import build_parser, main, sub_commands

# An option word: "--name" or "-x", not inside a word ("HC<N>-oracle", "non-empty").
OPTION = re.compile(r"(?<![\w<>-])--?[a-zA-Z][\w-]*")
# Another command's option: "hichunk query --json", "python -m hichunk.bench.split_eval --lofo", "pip install -e".
OTHER_COMMAND = re.compile(r"(?:hichunk(?: [a-z][\w-]*)+|python -m [\w.]+|pip install) --?[a-zA-Z][\w-]*")


def commands() -> list[tuple[str, argparse.ArgumentParser]]:
    parser = build_parser()
    return [("hichunk", parser)] + [(sub.prog, sub) for sub in sub_commands(parser)]


def help_texts(parser: argparse.ArgumentParser) -> list[str]:
    texts = [parser.description or "", parser.epilog or ""]
    texts += [a.help for a in parser._actions if a.help and a.help != argparse.SUPPRESS]
    texts += [g.title or "" for g in parser._action_groups]
    return texts


@pytest.mark.parametrize("prog,parser", commands(), ids=lambda v: v if isinstance(v, str) else "")
def test_help_names_only_options_the_command_accepts(prog, parser):
    accepted = {o for a in parser._actions for o in a.option_strings} | {"-vv"}
    named = {m for text in help_texts(parser) for m in OPTION.findall(OTHER_COMMAND.sub("", text))}
    assert named - accepted == set(), f"{prog} --help names options it rejects"


def test_index_build_help_does_not_offer_the_model_options(capsys):
    with pytest.raises(SystemExit):
        main(["index", "build", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert "--model" not in OTHER_COMMAND.sub("", out) and "--endpoint" not in out  # only "hichunk chunk --model"
    assert "--method" in out and "-q, --quiet" in out and "-v, --verbose" in out
    with pytest.raises(SystemExit):
        main(["chunk", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert "--model NAME" in out and "unless --model/--endpoint is given" in out


def test_every_sub_command_lists_the_general_options():
    for sub in sub_commands(build_parser()):
        text = sub.format_help()
        assert "-q, --quiet" in text and "-v, --verbose" in text, sub.prog


@pytest.mark.parametrize("argv,quiet,verbose", [
    (["index", "build", "docs", "--index", "idx"], False, 0),
    (["-q", "index", "build", "docs", "--index", "idx"], True, 0),
    (["index", "build", "docs", "--index", "idx", "-q"], True, 0),
    (["index", "build", "-q", "docs", "--index", "idx"], True, 0),
    (["-v", "chunk", "doc.md", "-v"], False, 2),
    (["chunk", "doc.md", "-vv"], False, 2),
    (["-q", "train", "--corpus", "c", "--out", "o"], True, 0),  # train's own -q used to reset it
    (["sft", "data", "--corpus", "c", "--out", "o", "-q"], True, 0),
])
def test_general_options_work_before_and_after_the_command(monkeypatch, argv, quiet, verbose):
    seen = {}

    def record(args):
        seen.update(quiet=args.quiet, verbose=args.verbose)
        return 0

    parser = build_parser()
    for sub in sub_commands(parser):
        sub.set_defaults(handler=record)
    monkeypatch.setattr("hichunk.cli.build_parser", lambda: parser)
    assert main(argv) == 0
    assert seen == {"quiet": quiet, "verbose": verbose}
