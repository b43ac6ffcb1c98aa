"""The native trace file and the capture journal (h3learn/trace/store.py)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from trace_helpers import events_strategy, walkthrough_log

from h3learn.events import Event, EventLog
from h3learn.trace.store import LiveTrace, read_trace, write_trace
from h3learn.trace.stored_events import TraceFormatError

#: The suite's Hypothesis profile (tests/conftest.py) suppresses the clock-based health check;
#: a test that lists its own suppressions replaces that list, so it names it again.
NOT_TIMED = settings.get_profile("h3learn").suppress_health_check


@pytest.fixture
def events() -> list[Event]:
    return walkthrough_log(sections_first=True).events


def stored(tmp_path: Path, events: list[Event]) -> dict[str, Any]:
    path = tmp_path / "trace.json"
    write_trace(path, "walkthrough", events, {"lesson": "first GET"})
    document: dict[str, Any] = json.loads(path.read_text())
    return document


def rewrite(tmp_path: Path, document: dict[str, Any]) -> Path:
    path = tmp_path / "trace.json"
    path.write_text(json.dumps(document))
    return path


# -- round trips -------------------------------------------------------------------------


def test_write_then_read_gives_equal_events(tmp_path: Path, events: list[Event]) -> None:
    path = tmp_path / "trace.json"
    write_trace(
        path, "walkthrough", events, {"lesson": "first GET"}, created="2026-01-02T03:04:05+00:00"
    )
    trace = read_trace(path)
    assert trace.events == events
    assert (trace.title, trace.meta, trace.created) == (
        "walkthrough",
        {"lesson": "first GET"},
        "2026-01-02T03:04:05+00:00",
    )
    assert trace.warnings == []


def test_the_file_has_the_documented_top_level(tmp_path: Path, events: list[Event]) -> None:
    document = stored(tmp_path, events)
    assert list(document) == ["format", "version", "title", "created", "meta", "events"]
    assert (document["format"], document["version"]) == ("h3learn-trace", 1)
    assert document["events"][3] == events[3].to_json()


@settings(max_examples=60, suppress_health_check=[*NOT_TIMED, HealthCheck.function_scoped_fixture])
@given(events=events_strategy())
def test_random_events_round_trip(tmp_path: Path, events: list[Event]) -> None:
    path = tmp_path / "random.json"
    write_trace(path, "random", events)
    assert read_trace(path).events == events


@settings(max_examples=30, suppress_health_check=[*NOT_TIMED, HealthCheck.function_scoped_fixture])
@given(events=events_strategy())
def test_random_events_round_trip_through_a_journal(tmp_path: Path, events: list[Event]) -> None:
    path = tmp_path / "random.jsonl"
    path.unlink(missing_ok=True)
    live = LiveTrace(path, "random")
    for event in events:
        live.append(event)
    assert read_trace(path).events == events
    live.close()
    assert read_trace(path).events == events


# -- atomic writing ----------------------------------------------------------------------


def test_a_failing_write_leaves_the_old_file_intact(tmp_path: Path, events: list[Event]) -> None:
    path = tmp_path / "trace.json"
    write_trace(path, "old", events)
    before = path.read_bytes()
    unwritable = Event(
        seq=0,
        time=0,
        endpoint="client",
        category="qpack",
        name="x",
        stream_id=None,
        data={"not json": {1, 2}},
    )
    with pytest.raises(TypeError):
        write_trace(path, "new", [unwritable])
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["trace.json"]


def test_a_crash_before_the_rename_leaves_the_old_file_and_no_temporary(
    tmp_path: Path, events: list[Event], monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "trace.json"
    write_trace(path, "old", events)
    before = path.read_bytes()

    def crash(source: str, target: str) -> None:
        raise OSError("disk unplugged")

    monkeypatch.setattr(os, "replace", crash)
    with pytest.raises(OSError, match="disk unplugged"):
        write_trace(path, "new", events[:3])
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["trace.json"]


def test_the_temporary_file_is_written_in_the_target_directory(
    tmp_path: Path, events: list[Event], monkeypatch: pytest.MonkeyPatch
) -> None:
    """os.replace is only atomic within one file system, so the temporary is a sibling."""
    seen: list[tuple[str, str]] = []
    real_replace = os.replace

    def spy(source: str, target: str) -> None:
        seen.append((source, target))
        real_replace(source, target)

    monkeypatch.setattr(os, "replace", spy)
    write_trace(tmp_path / "trace.json", "t", events)
    ((source, target),) = seen
    assert Path(source).parent == tmp_path and Path(target) == tmp_path / "trace.json"


def test_write_refuses_events_the_reader_would_refuse(tmp_path: Path, events: list[Event]) -> None:
    with pytest.raises(TraceFormatError, match="event 0: 'seq' is 1, expected 0"):
        write_trace(tmp_path / "trace.json", "t", events[1:])
    assert not (tmp_path / "trace.json").exists()


# -- the journal -------------------------------------------------------------------------


def test_live_trace_listens_to_an_event_log_and_closes_into_a_native_trace(
    tmp_path: Path, events: list[Event]
) -> None:
    path = tmp_path / "capture.json"
    log = EventLog()
    live = LiveTrace(path, "capture", {"client": "curl"})
    log.listeners.append(live.append)
    for event in events:
        log.append(event)
    lines = path.read_text().splitlines()
    assert json.loads(lines[0])["format"] == "h3learn-trace-journal"
    assert len(lines) == 1 + len(events)
    live.close()
    document = json.loads(path.read_text())
    assert document["format"] == "h3learn-trace"
    trace = read_trace(path)
    assert trace.events == events and trace.meta == {"client": "curl"}
    assert trace.warnings == []


def test_close_to_another_path_removes_the_journal(tmp_path: Path, events: list[Event]) -> None:
    with LiveTrace(tmp_path / "capture.jsonl", "capture") as live:
        for event in events[:5]:
            live.append(event)
        final = live.close(tmp_path / "capture.json")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["capture.json"]
    assert read_trace(final).events == events[:5]


def test_every_event_is_on_disk_as_soon_as_append_returns(
    tmp_path: Path, events: list[Event]
) -> None:
    live = LiveTrace(tmp_path / "capture.jsonl", "capture")
    for count, event in enumerate(events[:4], start=1):
        live.append(event)
        assert read_trace(tmp_path / "capture.jsonl").events == events[:count]


@pytest.mark.parametrize("cut", [1, 7, -2])
def test_a_journal_torn_mid_line_keeps_every_finished_event(
    tmp_path: Path, events: list[Event], cut: int
) -> None:
    path = tmp_path / "capture.jsonl"
    live = LiveTrace(path, "crashed")
    for event in events[:6]:
        live.append(event)
    text = path.read_text()
    last_line_start = text.rstrip("\n").rfind("\n") + 1
    torn = text[: last_line_start + cut] if cut > 0 else text[:cut]
    path.write_text(torn)  # the process died while writing event 5
    trace = read_trace(path)
    assert trace.events == events[:5]
    assert trace.title == "crashed"
    assert any("dropped an unfinished event" in warning for warning in trace.warnings)


def test_a_journal_says_the_capture_did_not_finish(tmp_path: Path, events: list[Event]) -> None:
    live = LiveTrace(tmp_path / "capture.jsonl", "running")
    live.append(events[0])
    (warning,) = read_trace(tmp_path / "capture.jsonl").warnings
    assert "not finished" in warning


def test_a_broken_line_in_the_middle_of_a_journal_is_an_error(
    tmp_path: Path, events: list[Event]
) -> None:
    path = tmp_path / "capture.jsonl"
    live = LiveTrace(path, "capture")
    for event in events[:3]:
        live.append(event)
    lines = path.read_text().split("\n")
    lines[2] = lines[2][:10]
    path.write_text("\n".join(lines))
    with pytest.raises(TraceFormatError, match=r"capture.jsonl: line 3: not JSON"):
        read_trace(path)


def test_a_live_trace_never_overwrites_an_earlier_capture(tmp_path: Path) -> None:
    (tmp_path / "capture.jsonl").write_text("precious")
    with pytest.raises(FileExistsError):
        LiveTrace(tmp_path / "capture.jsonl", "again")
    assert (tmp_path / "capture.jsonl").read_text() == "precious"


def test_a_live_trace_refuses_events_out_of_order(tmp_path: Path, events: list[Event]) -> None:
    live = LiveTrace(tmp_path / "capture.jsonl", "capture")
    with pytest.raises(TraceFormatError, match="'seq' is 1, expected 0"):
        live.append(events[1])
    live.close()
    with pytest.raises(ValueError, match="append after close"):
        live.append(events[0])


# -- strict reading ----------------------------------------------------------------------


def broken(document: dict[str, Any], change: str) -> dict[str, Any]:
    """The document with one thing wrong (``change`` names it)."""
    event = document["events"][12]
    match change:
        case "raw not hex":
            event["raw"] = "zz"
        case "raw odd length":
            event["raw"] = "abc"
        case "raw with spaces":
            event["raw"] = "ab cd"
        case "seq skips":
            event["seq"] = 14
        case "seq is a string":
            event["seq"] = "12"
        case "endpoint":
            event["endpoint"] = "proxy"
        case "time is NaN-like":
            event["time"] = "soon"
        case "boolean stream id":
            event["stream_id"] = True
        case "missing key":
            del event["summary"]
        case "unknown key":
            event["stream"] = 4
        case "span outside raw":
            event["fields"][0]["offset"] = len(event["raw"]) // 2
        case "span zero length":
            event["fields"][0]["length"] = 0
        case "span bits beyond the byte":
            event["fields"][0]["bit_offset"], event["fields"][0]["bit_length"] = 6, 4
        case "span half a bit range":
            del event["fields"][0]["bit_length"]
        case "data is a list":
            event["data"] = []
        case "rfc is a string":
            event["rfc"] = "9204#4.5"
    return document


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ("raw not hex", "trace.json: event 12: 'raw' is not hex"),
        ("raw odd length", "trace.json: event 12: 'raw' is not hex"),
        ("raw with spaces", "trace.json: event 12: 'raw' is not hex"),
        ("seq skips", "trace.json: event 12: 'seq' is 14, expected 12"),
        ("seq is a string", "trace.json: event 12: 'seq' is a string, not an integer"),
        ("endpoint", "trace.json: event 12: 'endpoint' is 'proxy'"),
        ("time is NaN-like", "trace.json: event 12: 'time' is a string"),
        ("boolean stream id", "trace.json: event 12: 'stream_id' is a boolean"),
        ("missing key", "trace.json: event 12: 'summary' missing"),
        ("unknown key", "trace.json: event 12: unknown 'stream'"),
        ("span outside raw", "trace.json: event 12: field 0 .* lie outside raw"),
        ("span zero length", "trace.json: event 12: field 0 .* length >= 1"),
        ("span bits beyond the byte", "trace.json: event 12: field 0 .* not inside a byte"),
        ("span half a bit range", "trace.json: event 12: field 0 .* come together"),
        ("data is a list", "trace.json: event 12: 'data' is a list, not an object"),
        ("rfc is a string", "trace.json: event 12: 'rfc' is not a list of sections"),
    ],
)
def test_read_names_the_event_and_the_rule_it_breaks(
    tmp_path: Path, events: list[Event], change: str, message: str
) -> None:
    assert events[12].raw and events[12].fields  # the event the changes break
    path = rewrite(tmp_path, broken(stored(tmp_path, events), change))
    with pytest.raises(TraceFormatError, match=message):
        read_trace(path)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"format": "pcap"}, "'format' is 'pcap', not 'h3learn-trace'"),
        ({"version": 2}, "version 2 is not supported"),
        ({"version": True}, "version True is not supported"),
        ({"title": None}, "'title' is null, not a string"),
        ({"meta": []}, "'meta' is a list, not an object"),
        ({"created": "yesterday"}, "'created' is not an ISO 8601 time"),
        ({"events": {}}, "'events' is an object, not a list"),
        ({"extra": 1}, "unknown 'extra'"),
    ],
)
def test_read_checks_the_top_level(
    tmp_path: Path, events: list[Event], change: dict[str, Any], message: str
) -> None:
    document = stored(tmp_path, events[:2]) | change
    with pytest.raises(TraceFormatError, match=message):
        read_trace(rewrite(tmp_path, document))


def test_read_explains_what_is_not_a_trace(tmp_path: Path) -> None:
    path = tmp_path / "trace.json"
    path.write_text("[1, 2]")
    with pytest.raises(TraceFormatError, match="the top level is a list, not an object"):
        read_trace(path)
    path.write_text('{"qlog_version": "0.3", "traces": []}')
    with pytest.raises(TraceFormatError, match="this is a qlog file"):
        read_trace(path)
    path.write_text('{"format": "h3learn-trace", ')
    with pytest.raises(TraceFormatError, match=r"trace.json: not JSON: .* line 1"):
        read_trace(path)
    path.write_text('{"title": "cut short')  # json's own message ends with "at" here
    with pytest.raises(TraceFormatError) as cut:
        read_trace(path)
    assert str(cut.value) == (
        "trace.json: not JSON: Unterminated string starting at line 1 column 11"
    )
    path.write_bytes(b'{"title": "\xff"}')
    with pytest.raises(TraceFormatError, match="not UTF-8"):
        read_trace(path)


def test_read_refuses_files_over_the_size_limit(tmp_path: Path, events: list[Event]) -> None:
    path = tmp_path / "trace.json"
    write_trace(path, "big", events)
    size = path.stat().st_size
    with pytest.raises(TraceFormatError, match=f"{size} bytes, more than the limit of 1000"):
        read_trace(path, max_bytes=1000)
    assert read_trace(path, max_bytes=size).events == events
