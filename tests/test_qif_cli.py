"""``h3learn qif encode`` and ``walkthrough --qif`` read only .qif files.

A .qif file (the QPACK interop corpus format) is UTF-8 text: header blocks of
``name<TAB>value`` lines separated by empty lines, with ``#`` comments. A JSON trace, random
bytes or an empty file is refused in one line naming the file (and the line), exit status 1,
and nothing is written.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from h3learn.cli import main

VECTORS = Path(__file__).parent / "vectors" / "qif-inputs"
TABLE = ["--table-capacity", "4096", "--blocked-streams", "100"]
NOT_QIF = {
    "trace.json": (b'{"title": "a trace",\n "events": []}\n', ":1: no tab in this line"),
    "second-line.qif": (b":method\tGET\n:path /\n", ":2: no tab in this line"),
    "random.bin": (b"\x00\x9f\xff\tz\x80\n", ":1: not UTF-8 text"),
    "empty.qif": (b"", ": no header block"),
    "comments-only.qif": (b"# nothing but a comment\n\n", ": no header block"),
}


def _one_error_line(capsys: pytest.CaptureFixture[str], command: str) -> str:
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.count("\n") == 1 and captured.err.startswith(f"h3learn {command}: ")
    return captured.err


@pytest.mark.parametrize("name", NOT_QIF)
def test_qif_encode_refuses_what_is_not_a_qif_file(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, name: str
) -> None:
    content, problem = NOT_QIF[name]
    source, output = tmp_path / name, tmp_path / "out"
    source.write_bytes(content)
    assert main(["qif", "encode", str(source), str(output), *TABLE]) == 1
    assert f"{source}{problem}" in _one_error_line(capsys, "qif")
    assert not output.exists()


@pytest.mark.parametrize("name", NOT_QIF)
def test_walkthrough_refuses_what_is_not_a_qif_file(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, name: str
) -> None:
    content, problem = NOT_QIF[name]
    source = tmp_path / name
    source.write_bytes(content)
    assert main(["walkthrough", "--qif", str(source), "--no-bytes"]) == 1
    assert f"{source}{problem}" in _one_error_line(capsys, "walkthrough")


@pytest.mark.parametrize("name", sorted(p.name for p in VECTORS.glob("*.qif")))
def test_every_corpus_qif_file_is_still_read(tmp_path: Path, name: str) -> None:
    output = tmp_path / "out"
    assert main(["qif", "encode", str(VECTORS / name), str(output), *TABLE]) == 0
    assert output.stat().st_size > 0
