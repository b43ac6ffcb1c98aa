"""``--help`` keeps the usage lines of a subcommand's description on lines of their own."""

from __future__ import annotations

import pytest

from h3learn.cli import main


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
