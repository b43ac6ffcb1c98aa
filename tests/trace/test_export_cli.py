"""``h3learn export`` (h3learn/export_cli.py): every input kind, every format, clear errors."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from aioquic.quic.logger import QuicLogger
from aioquic_pair import run_get
from trace_helpers import walkthrough_log

from h3learn.cli import main
from h3learn.events import Event
from h3learn.trace.load import load_trace
from h3learn.trace.store import LiveTrace, read_trace, write_trace


@pytest.fixture
def events() -> list[Event]:
    return walkthrough_log().events


@pytest.fixture
def native(tmp_path: Path, events: list[Event]) -> Path:
    path = tmp_path / "walkthrough.json"
    write_trace(path, "walkthrough", events, {"lesson": "qpack"})
    return path


@pytest.fixture(scope="module")
def aioquic_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    logger = QuicLogger()
    run_get(logger, logger)
    path = tmp_path_factory.mktemp("aioquic") / "connection.qlog"
    path.write_text(json.dumps(logger.to_dict()))
    return path


def export(*args: str | Path) -> int:
    return main(["export", *(str(arg) for arg in args)])


def load(path: Path) -> Any:
    return json.loads(path.read_text())


@pytest.mark.parametrize(
    ("format_name", "top_level"),
    [
        ("native", {"format": "h3learn-trace"}),
        ("qlog", {"file_schema": "urn:ietf:params:qlog:file:contained"}),
        ("qlog-0.3", {"qlog_version": "0.3"}),
    ],
)
def test_a_native_trace_in_every_format(
    native: Path,
    tmp_path: Path,
    format_name: str,
    top_level: dict[str, str],
    capsys: pytest.CaptureFixture[str],
) -> None:
    out = tmp_path / "out.json"
    assert export(native, "--format", format_name, "-o", out) == 0
    document = load(out)
    assert top_level.items() <= document.items()
    assert f"as {format_name}" in capsys.readouterr().out


def test_native_to_native_keeps_every_event(
    native: Path, tmp_path: Path, events: list[Event]
) -> None:
    assert export(native, "--format", "native", "-o", tmp_path / "copy.json") == 0
    copy = read_trace(tmp_path / "copy.json")
    assert copy.events == events and copy.meta == {"lesson": "qpack"}


def test_a_crashed_capture_journal_with_a_warning(
    tmp_path: Path, events: list[Event], capsys: pytest.CaptureFixture[str]
) -> None:
    journal = tmp_path / "capture.jsonl"
    live = LiveTrace(journal, "capture")
    for event in events[:8]:
        live.append(event)
    journal.write_text(journal.read_text()[:-20])  # the capture died mid-event
    assert export(journal, "--format", "native", "-o", tmp_path / "saved.json") == 0
    assert read_trace(tmp_path / "saved.json").events == events[:7]
    assert "warning" in capsys.readouterr().err


def test_an_aioquic_qlog_is_detected_and_converted(aioquic_file: Path, tmp_path: Path) -> None:
    assert load_trace(aioquic_file)[0] == "aioquic-qlog"
    assert export(aioquic_file, "--format", "qlog-0.3", "-o", tmp_path / "qvis.qlog") == 0
    qvis = load(tmp_path / "qvis.qlog")
    names = {event["name"] for trace in qvis["traces"] for event in trace["events"]}
    assert {"http:frame_created", "http:frame_parsed", "transport:packet_sent"} <= names
    assert export(aioquic_file, "--format", "native", "-o", tmp_path / "native.json") == 0
    assert read_trace(tmp_path / "native.json").meta["files"] == ["connection.qlog"]


def test_standard_output(native: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert export(native, "--format", "qlog", "--no-bytes", "-o", "-") == 0
    document = json.loads(capsys.readouterr().out)
    assert len(document["traces"]) == 2 and '"data": "' not in json.dumps(document)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "cannot read .*missing.json: No such file or directory"),
        ("not json", "missing.json: not JSON"),
        ('{"hello": 1}', "neither an h3learn trace, a capture journal nor a qlog file"),
        ('{"file_schema": "urn:ietf:params:qlog:file:contained"}', "'traces' is not a list"),
        ('{"format": "h3learn-trace", "version": 9}', "version 9 is not supported"),
        ("[" * 100_000 + "]" * 100_000, "missing.json: JSON nested too deeply"),
        (
            '{"format": "h3learn-trace", "version": 1, "title": "t", "created": "2026-01-01",'
            ' "meta": {"a": ' + "[" * 200 + "]" * 200 + '}, "events": []}',
            "missing.json: 'meta': JSON nested too deeply",
        ),
        ('{"seq": ' + "9" * 5000 + "}", "missing.json: a number with too many digits"),
    ],
)
def test_bad_input_is_one_clear_line_and_a_non_zero_exit(
    tmp_path: Path, content: str | None, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "missing.json"
    if content is not None:
        source.write_text(content)
    out = tmp_path / "out.json"
    out.write_text("untouched")
    assert export(source, "--format", "qlog", "-o", out) == 1
    error = capsys.readouterr().err
    assert error.startswith("h3learn export: ") and error.count("\n") == 1
    assert re.search(message, error), error
    assert out.read_text() == "untouched"


def test_an_unwritable_output(
    native: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert export(native, "--format", "qlog", "-o", tmp_path / "no" / "such" / "dir.json") == 1
    assert "cannot write" in capsys.readouterr().err


def test_a_size_limit(native: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert export(native, "--format", "qlog", "--max-bytes", "100", "-o", tmp_path / "x") == 1
    assert "more than the limit of 100" in capsys.readouterr().err


def test_an_unknown_format_is_a_usage_error(native: Path, tmp_path: Path) -> None:
    with pytest.raises(SystemExit) as exit_status:
        export(native, "--format", "pcap", "-o", tmp_path / "x")
    assert exit_status.value.code == 2


def test_a_folder_accepts_what_a_single_file_does(
    native: Path, aioquic_file: Path, tmp_path: Path
) -> None:
    """A current-draft qlog file works alone and in a folder; so do aioquic's 0.3 files."""
    draft = tmp_path / "draft" / "exported.qlog"
    draft.parent.mkdir()
    assert export(native, "--format", "qlog", "-o", draft) == 0
    single = load_trace(draft)
    in_folder = load_trace(draft.parent)
    assert in_folder[0] == single[0] == "qlog"
    assert len(in_folder[1].events) == len(single[1].events) > 0
    assert export(draft.parent, "--format", "native", "-o", tmp_path / "from-folder.json") == 0

    aioquic_folder = tmp_path / "aioquic"
    aioquic_folder.mkdir()
    (aioquic_folder / "connection.qlog").write_text(aioquic_file.read_text())
    assert load_trace(aioquic_folder)[0] == "aioquic-qlog"


@pytest.mark.parametrize(
    ("second", "message"),
    [
        ("draft", r"2 current-draft qlog files .*cannot merge them.*export each file on its own"),
        ("0.3", r"holds both current-draft qlog \(a\.qlog\) and qlog 0\.3 files"),
    ],
)
def test_a_folder_that_cannot_be_merged_says_why(
    native: Path,
    aioquic_file: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    second: str,
    message: str,
) -> None:
    folder = tmp_path / "mixed"
    folder.mkdir()
    assert export(native, "--format", "qlog", "-o", folder / "a.qlog") == 0
    if second == "draft":
        assert export(native, "--format", "qlog", "-o", folder / "b.qlog") == 0
    else:
        (folder / "b.qlog").write_text(aioquic_file.read_text())
    capsys.readouterr()
    assert export(folder, "--format", "native", "-o", tmp_path / "out.json") == 1
    error = capsys.readouterr().err
    assert re.fullmatch(rf"h3learn export: mixed: {message}[^\n]*\n", error), error


def test_export_help_names_every_accepted_input(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["export", "--help"])
    text = capsys.readouterr().out
    for accepted in ("native h3learn trace", "journal", "qlog 0.3", "current draft", "folder"):
        assert accepted in text
    assert "\n  - a folder:" in text, "the list keeps its lines"
