"""``--help``: the usage lines of a subcommand's description stay on lines of their own, and
every option says what it does."""

from __future__ import annotations

import argparse
from collections.abc import Iterator

import pytest

from h3learn.cli import build_parser, main


@pytest.mark.parametrize("command", ["lessons", "rfc"])
def test_help_keeps_the_usage_lines_apart(capsys: pytest.CaptureFixture[str], command: str) -> None:
    with pytest.raises(SystemExit) as stopped:
        main([command, "--help"])
    assert stopped.value.code == 0
    text = capsys.readouterr().out
    for usage in (
        "\n    h3learn lessons check [DIR]",
        "\n    h3learn lessons record ID -o trace.json",
        "\n    h3learn rfc coverage [--lessons-dir DIR] [--goal]\n",
    ):
        assert usage in text, text
    assert "``" not in text


def every_parser(parser: argparse.ArgumentParser) -> Iterator[tuple[str, argparse.ArgumentParser]]:
    """``parser`` and every subcommand's parser under it, each with its command line."""
    yield parser.prog, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                yield from every_parser(sub)


def test_every_option_of_every_command_says_what_it_does() -> None:
    parsers = list(every_parser(build_parser()))
    assert len(parsers) > 10
    for prog, parser in parsers:
        for action in parser._actions:
            if action.option_strings and not isinstance(action, argparse._HelpAction):
                assert action.help, f"{prog} {'/'.join(action.option_strings)} has no help text"
