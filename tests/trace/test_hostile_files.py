"""Hostile trace and qlog files: each is one `TraceFormatError` that names the rule it broke.

JSON beyond the parser's limits (nesting, digits: trace/json_text.py), ``data`` of the
wrong shape for its event (trace/event_data.py, docs/events.md), stream IDs beyond QUIC's
62 bits (RFC 9000 §2.1), categories and RFC sections not written as documented, and qlog
times no date can hold.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from h3learn.scenarios.examples import dynamic_table
from h3learn.trace.event_data import DATA_SHAPES
from h3learn.trace.json_text import MAX_DEPTH
from h3learn.trace.load import load_trace
from h3learn.trace.qlog import to_qlog, to_qlog_03
from h3learn.trace.qlog_draft_import import RECORD_SEPARATOR
from h3learn.trace.store import JOURNAL_FORMAT, Trace, read_trace, trace_document
from h3learn.trace.stored_events import TraceFormatError

NESTED = "[" * 100_000 + "]" * 100_000
DIGITS = "9" * 5000


@pytest.fixture(scope="module")
def document() -> dict[str, Any]:
    return trace_document("dynamic table", dynamic_table(), {}, "2026-01-01T00:00:00")


def first(document: dict[str, Any], name: str, **data: Any) -> int:
    """The position of the first event called ``name`` whose data has ``data``'s keys."""
    return next(
        number
        for number, event in enumerate(document["events"])
        if event["name"] == name and all(key in event["data"] for key in data)
    )


def written(tmp_path: Path, text: str, name: str = "trace.json") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def journal(document: dict[str, Any], last_line: str) -> str:
    """A journal of three events and ``last_line`` (cut short: no newline after it)."""
    header = {key: document[key] for key in ("title", "created", "meta")}
    header |= {"format": JOURNAL_FORMAT, "version": 1}
    lines = [json.dumps(header), *(json.dumps(e) for e in document["events"][:3]), last_line]
    return "\n".join(lines)


@pytest.mark.parametrize("reader", [read_trace, load_trace])
@pytest.mark.parametrize(
    ("form", "message"),
    [
        ("one line", "trace.json: JSON nested too deeply"),
        ("two lines", "trace.json: JSON nested too deeply"),
        ("journal line", "trace.json: line 5: JSON nested too deeply"),
        ("digits", "trace.json: a number with too many digits"),
        ("journal digits", "trace.json: line 5: a number with too many digits"),
        ("deep meta", "trace.json: 'meta': JSON nested too deeply"),
        ("deep data", r"trace.json: event 0 \(http3 parameters_set\): data: JSON nested too deep"),
    ],
)
def test_json_beyond_the_parsers_limits_is_a_clear_error_not_a_crash(
    tmp_path: Path, document: dict[str, Any], reader: Any, form: str, message: str
) -> None:
    deep = "[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1)
    texts = {
        "one line": NESTED,
        "two lines": NESTED + "\n\n",
        "journal line": journal(document, NESTED + "\n"),
        "digits": json.dumps(document).replace('"seq": 1,', f'"seq": {DIGITS},'),
        "journal digits": journal(document, json.dumps({"seq": 3}).replace("3", DIGITS) + "\n"),
        "deep meta": json.dumps(document).replace('"meta": {}', f'"meta": {{"a": {deep}}}'),
        "deep data": json.dumps(document).replace('"data": {', f'"data": {{"deep": {deep}, ', 1),
    }
    with pytest.raises(TraceFormatError, match=message):
        reader(written(tmp_path, texts[form]))


def test_a_journal_whose_last_line_is_cut_still_drops_only_that_line(
    tmp_path: Path, document: dict[str, Any]
) -> None:
    trace = read_trace(written(tmp_path, journal(document, '{"seq": 3, "ti')))
    assert len(trace.events) == 3 and "dropped an unfinished event" in trace.warnings[-1]


@pytest.mark.parametrize(
    ("name", "change", "message"),
    [
        ("parameters_set", {"settings": None}, "data 'settings' is null, not a list"),
        ("parameters_set", {"settings": [{}]}, "data 'settings\\[0\\]' has no 'id'"),
        ("frame_created", {"frame": {"frame_type": "settings", "settings": 1.5}}, "frame.settings"),
        ("headers_encoded", {"field_lines": {}}, "data 'field_lines' is an object, not a list"),
        ("headers_encoded", {"prefix": []}, "data 'prefix' is a list, not an object"),
        ("headers_decoded", {"field_lines": [{"type": []}]}, "'field_lines\\[0\\].type' is a list"),
        ("dynamic_table_updated", {"entries": "x"}, "data 'entries' is a string, not a list"),
        ("stream_type_set", {"stream_type": {}}, "data 'stream_type' is an object, not a string"),
    ],
)
def test_data_of_the_wrong_shape_names_the_event_and_the_key(
    tmp_path: Path, document: dict[str, Any], name: str, change: dict[str, Any], message: str
) -> None:
    changed = json.loads(json.dumps(document))
    position = first(changed, name)
    changed["events"][position]["data"].update(change)
    with pytest.raises(TraceFormatError, match=rf"trace.json: event {position} \(.*{name}\).*"):
        read_trace(written(tmp_path, json.dumps(changed)))
    with pytest.raises(TraceFormatError, match=message):
        read_trace(written(tmp_path, json.dumps(changed)))


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("stream_id", 2**62, "'stream_id' is 4611686018427387904, not a stream ID .*RFC 9000 §2.1"),
        ("stream_id", 2**80, "'stream_id' is 1208925819614629174706176, not a stream ID"),
        ("category", "lesson", "'category' is 'lesson', not one of http3, qpack, transport"),
        ("rfc", ["9114#7.2.4", "<script>"], "'rfc' entry '<script>' is not a section"),
        ("rfc", ["9114#"], "'rfc' entry '9114#' is not a section"),
        ("time", 10**400, "'time' .* is not a usable time"),
    ],
)
def test_common_fields_outside_what_docs_events_md_allows_are_refused(
    tmp_path: Path, document: dict[str, Any], key: str, value: Any, message: str
) -> None:
    changed = json.loads(json.dumps(document))
    changed["events"][3][key] = value
    with pytest.raises(TraceFormatError, match=f"trace.json: event 3: {message}"):
        read_trace(written(tmp_path, json.dumps(changed)))


def test_an_event_name_of_a_newer_version_still_loads(
    tmp_path: Path, document: dict[str, Any]
) -> None:
    changed = json.loads(json.dumps(document))
    changed["events"][3] |= {"name": "future_event", "data": {"anything": [1, {"x": None}]}}
    changed["events"][4]["rfc"] = ["9114#A.2.4", "9000#2.1"]
    trace = read_trace(written(tmp_path, json.dumps(changed)))
    assert trace.events[3].name == "future_event"


# -- qlog ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def trace() -> Trace:
    return Trace("dynamic table", {}, dynamic_table(), "2026-01-01T00:00:00")


@pytest.mark.parametrize(
    ("place", "value", "message"),
    [
        ("event", 1e300, "x.qlog: trace 0: event 0: time 1e\\+300 is not a usable time"),
        ("event", 2**70, "x.qlog: trace 0: event 0: time 1180591620717411303424 is not a usable"),
        ("reference", 2**70, "x.qlog: trace 0: reference_time .* is not a usable time"),
    ],
)
def test_a_qlog_03_time_no_date_can_hold_is_a_clear_error(
    tmp_path: Path, trace: Trace, place: str, value: Any, message: str
) -> None:
    document = to_qlog_03(trace)
    qlog_trace = document["traces"][0]
    if place == "event":
        qlog_trace["events"][0]["time"] = value
    else:
        qlog_trace["common_fields"]["reference_time"] = value
    with pytest.raises(TraceFormatError, match=message):
        load_trace(written(tmp_path, json.dumps(document), "x.qlog"))


def sequential(document: dict[str, Any], change: Any) -> str:
    """The first trace of a contained draft qlog as JSON-SEQ, its events changed."""
    qlog_trace = dict(document["traces"][0])
    events = qlog_trace.pop("events")
    change(qlog_trace, events)
    header = {"file_schema": "urn:ietf:params:qlog:file:sequential", "trace": qlog_trace}
    records = [json.dumps(header), *(json.dumps(event) for event in events)]
    return "".join(f"{RECORD_SEPARATOR}{record}\n" for record in records)


def nan_time(qlog_trace: dict[str, Any], events: list[dict[str, Any]]) -> None:
    events[0]["time"] = float("nan")


def times_summing_to_infinity(qlog_trace: dict[str, Any], events: list[dict[str, Any]]) -> None:
    qlog_trace["common_fields"]["time_format"] = "relative_to_previous_event"
    events[0]["time"] = events[1]["time"] = 1.7e308


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (nan_time, "x.sqlog: trace 0: event 0: time nan is not a usable time"),
        (times_summing_to_infinity, "x.sqlog: trace 0: event [01]: time .* is not a usable time"),
    ],
)
def test_a_draft_qlog_time_error_names_the_file_and_the_trace(
    tmp_path: Path, trace: Trace, change: Any, message: str
) -> None:
    text = sequential(to_qlog(trace), change)
    with pytest.raises(TraceFormatError, match=message):
        load_trace(written(tmp_path, text, "x.sqlog"))


@pytest.mark.parametrize("value", [None, 7])
def test_a_qlog_frame_whose_settings_are_not_a_list_is_refused_on_import(
    tmp_path: Path, trace: Trace, value: Any
) -> None:
    for document, name in ((to_qlog(trace), "x.qlog"), (to_qlog_03(trace), "y.qlog")):
        for event in document["traces"][0]["events"]:
            frame = event.get("data", {}).get("frame", {})
            if frame.get("frame_type") == "settings":
                frame["settings"] = value
        with pytest.raises(TraceFormatError, match=f"{name}: event .* 'frame.settings' is"):
            load_trace(written(tmp_path, json.dumps(document), name))


@pytest.mark.parametrize("value", [[], {}])
def test_a_qlog_field_line_type_that_is_no_text_is_refused_on_import(
    tmp_path: Path, trace: Trace, value: Any
) -> None:
    document = to_qlog(trace)
    event = next(e for e in document["traces"][0]["events"] if "header_block" in e["data"])
    event["data"]["header_block"][0]["header_field_type"] = value
    with pytest.raises(TraceFormatError, match=r"x.qlog: event .* 'field_lines\[0\].type' is"):
        load_trace(written(tmp_path, json.dumps(document), "x.qlog"))


def test_the_name_given_replaces_the_files_own_in_warnings_and_meta(
    tmp_path: Path, document: dict[str, Any], trace: Trace
) -> None:
    cut = journal(document, '{"seq": 3, "ti')
    _, read = load_trace(written(tmp_path, cut, ".staging"), name="capture.jsonl")
    assert all(".staging" not in warning for warning in read.warnings)
    assert read.warnings[-1].startswith("capture.jsonl: line 5: dropped")
    _, imported = load_trace(
        written(tmp_path, json.dumps(to_qlog_03(trace)), ".staged"), name="mine.qlog"
    )
    assert imported.meta["files"] == ["mine.qlog"]
    _, draft = load_trace(written(tmp_path, json.dumps(to_qlog(trace)), ".s2"), name="d.qlog")
    assert draft.meta["files"] == ["d.qlog"]


def documented_event_names() -> set[tuple[str, str]]:
    """(category, name) of every row of docs/events.md's three category tables."""
    text = (Path(__file__).resolve().parents[2] / "docs" / "events.md").read_text()
    names: set[tuple[str, str]] = set()
    category = None
    for line in text.splitlines():
        heading = re.fullmatch(r"## Category `(\w+)`", line)
        if heading or line.startswith("## "):
            category = heading[1] if heading else None
        elif category is not None and line.startswith("| `"):
            first_cell = line.split("|")[1]
            names.update((category, name) for name in re.findall(r"`(\w+)`", first_cell))
    return names


def test_the_data_of_every_event_docs_events_md_lists_is_checked() -> None:
    """docs/events.md: "The `data` of every name listed here is checked"."""
    documented = documented_event_names()
    assert len(documented) > 30
    assert documented - DATA_SHAPES.keys() == set()


@pytest.mark.parametrize(
    ("category", "name", "data", "message"),
    [
        ("qpack", "insert_skipped", {"size": None}, "data 'size' is null, not an integer"),
        (
            "qpack",
            "insert_skipped",
            {"known_received_count": "x"},
            "data 'known_received_count' is a string, not an integer",
        ),
        ("transport", "handshake_completed", {"alpn": 5}, "data 'alpn' is the number 5"),
        ("transport", "send_limit_raised", {"maximum": "big"}, "data 'maximum' is a string"),
        (
            "transport",
            "datagram_sent",
            {"first_packet_header": []},
            "data .* is a list, not a string",
        ),
    ],
)
def test_a_transport_or_skipped_insert_event_of_the_wrong_shape_is_refused(
    tmp_path: Path,
    document: dict[str, Any],
    category: str,
    name: str,
    data: dict[str, Any],
    message: str,
) -> None:
    changed = json.loads(json.dumps(document))
    changed["events"][0] |= {"category": category, "name": name, "data": data}
    with pytest.raises(TraceFormatError, match=rf"event 0 \({category} {name}\): {message}"):
        read_trace(written(tmp_path, json.dumps(changed)))
