"""Hostile input to the web UI: a clear error naming the rule, and nothing else lost.

JSON beyond the parser's limits in an upload, a request body or a file of the data
directory; uploads whose ``data`` has the wrong shape; qlog times no date can hold; the
name an upload's warnings give; the what-if form given settings it does not offer;
Socket.IO messages with no payload; step numbers that are no step. The server keeps
serving: the lists and pages still answer.
"""

from __future__ import annotations

import html
import io
import json
from pathlib import Path
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient

from h3learn.scenarios.examples import dynamic_table
from h3learn.trace.qlog import to_qlog, to_qlog_03
from h3learn.trace.store import JOURNAL_FORMAT, Trace, trace_document
from h3learn.web import socketio

NESTED = "[" * 100_000 + "]" * 100_000
DIGITS = "9" * 5000
LESSON = "02-a-first-get"
VARIANTS_LESSON = "16-what-if-lab"


@pytest.fixture(scope="module")
def document() -> dict[str, Any]:
    return trace_document("dynamic table", dynamic_table(), {}, "2026-01-01T00:00:00")


def upload(client: FlaskClient, data: str | bytes, name: str = "trace.json") -> Any:
    body = data.encode() if isinstance(data, str) else data
    return client.post(
        "/api/traces",
        data={"file": (io.BytesIO(body), name)},
        content_type="multipart/form-data",
    )


def journal(document: dict[str, Any], last_line: str) -> str:
    header = {key: document[key] for key in ("title", "created", "meta")}
    header |= {"format": JOURNAL_FORMAT, "version": 1}
    return "\n".join([json.dumps(header), json.dumps(document["events"][0]), last_line])


# -- 1. JSON beyond the parser's limits ----------------------------------------------------


@pytest.mark.parametrize(
    ("form", "words"),
    [
        ("native one line", "JSON nested too deeply"),
        ("native lines", "JSON nested too deeply"),
        ("deep meta", "'meta': JSON nested too deeply"),
        ("journal line", "line 3: JSON nested too deeply"),
        ("json-seq", "record 1: JSON nested too deeply"),
        ("draft qlog", "JSON nested too deeply"),
        ("digits", "a number with too many digits"),
    ],
)
def test_an_upload_beyond_the_json_parsers_limits_is_400_naming_the_rule(
    client: FlaskClient, document: dict[str, Any], form: str, words: str
) -> None:
    deep = "[" * 900 + "]" * 900
    texts = {
        "native one line": NESTED,
        "native lines": NESTED + "\n\n",
        "deep meta": json.dumps(document).replace('"meta": {}', f'"meta": {{"a": {deep}}}'),
        "journal line": journal(document, NESTED + "\n"),
        "json-seq": '\x1e{"file_schema": "urn:ietf:params:qlog:file:sequential"}\n\x1e' + NESTED,
        "draft qlog": '{"file_schema": "urn:ietf:params:qlog:file:contained", "x": ' + NESTED + "}",
        "digits": json.dumps(document).replace('"seq": 1,', f'"seq": {DIGITS},'),
    }
    response = upload(client, texts[form], "mine.json")
    assert response.status_code == 400, response.get_data(as_text=True)[:300]
    error = response.get_json()["error"]
    assert error.startswith("mine.json") and words in error, error
    assert client.get("/api/traces").status_code == 200


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("post", "/api/rooms"),
        ("post", f"/api/lessons/{LESSON}/what-if"),
        ("post", f"/api/lessons/{LESSON}/checkpoints/prefix"),
        ("patch", "/api/captures/cap-20260102T030405Z-1a2b3c4d"),
        ("post", "/api/captures/fetch"),
    ],
)
@pytest.mark.parametrize(
    ("body", "words"),
    [
        ('{"a": ' + NESTED + "}", "the request body: JSON nested too deeply"),
        ('{"a": ' + "[" * 200 + "]" * 200 + "}", "the request body: JSON nested too deeply"),
        ('{"a": ' + DIGITS + "}", "the request body: a number with too many digits"),
    ],
)
def test_a_json_body_beyond_the_parsers_limits_is_400_naming_the_rule(
    client: FlaskClient, method: str, path: str, body: str, words: str
) -> None:
    send = getattr(client, method)
    response = send(path, data=body, content_type="application/json")
    assert response.status_code == 400
    assert words in response.get_json()["error"]


def saved(tmp_path: Path, name: str, text: str) -> None:
    folder = tmp_path / "traces"
    folder.mkdir(exist_ok=True)
    (folder / name).write_text(text)


@pytest.mark.parametrize(
    ("text", "words"),
    [
        (NESTED, "JSON nested too deeply"),
        ('{"format": "h3learn-trace", "seq": ' + DIGITS + "}", "a number with too many digits"),
    ],
)
def test_a_saved_file_beyond_the_parsers_limits_is_listed_with_its_problem(
    tmp_path: Path, client: FlaskClient, text: str, words: str
) -> None:
    saved(tmp_path, "deep.json", text)
    listed = {row["id"]: row for row in client.get("/api/traces").get_json()["traces"]}
    assert words in listed["deep"]["problem"]
    assert client.get("/").status_code == 200
    for path in ("/api/traces/deep", "/api/traces/deep/steps/0", "/trace/deep/step/0"):
        response = client.get(path)
        assert response.status_code == 422 and words in response.get_data(as_text=True), path
    assert client.get("/api/traces/first-get/steps/0").status_code == 200


def test_a_capture_with_a_number_too_long_is_unreadable_and_live_still_answers(
    tmp_path: Path, client: FlaskClient, document: dict[str, Any]
) -> None:
    folder = tmp_path / "captures"
    folder.mkdir(exist_ok=True)
    capture = "cap-20260102T030405Z-1a2b3c4d"
    (folder / f"{capture}.json").write_text(
        json.dumps(document).replace('"seq": 1,', f'"seq": {DIGITS},')
    )
    (folder / f"{capture}.info.json").write_text('{"state": ' + "[" * 5000 + "]" * 5000 + "}")
    rows = client.get("/api/captures").get_json()["captures"]
    assert rows[0]["state"] == "unreadable" and "too many digits" in rows[0]["error"]
    assert client.get("/live").status_code == 200


# -- 2. data of the wrong shape --------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "change", "key"),
    [
        ("parameters_set", {"settings": None}, "settings"),
        ("parameters_set", {"settings": [{"id": 1}]}, "settings[0]"),
        (
            "frame_created",
            {"frame": {"frame_type": "settings", "settings": True}},
            "frame.settings",
        ),
        ("headers_encoded", {"field_lines": 7}, "field_lines"),
        ("headers_encoded", {"prefix": "x"}, "prefix"),
        ("headers_decoded", {"field_lines": [{"type": {}}]}, "field_lines[0].type"),
        ("dynamic_table_updated", {"entries": {}}, "entries"),
        ("stream_type_set", {"stream_type": []}, "stream_type"),
    ],
)
def test_an_upload_whose_data_has_the_wrong_shape_is_400_naming_event_and_key(
    client: FlaskClient, document: dict[str, Any], name: str, change: dict[str, Any], key: str
) -> None:
    changed = json.loads(json.dumps(document))
    seq = next(e["seq"] for e in changed["events"] if e["name"] == name)
    changed["events"][seq]["data"].update(change)
    response = upload(client, json.dumps(changed))
    assert response.status_code == 400
    error = response.get_json()["error"]
    assert f"event {seq} (" in error and f"data {key!r}" in error, error


@pytest.mark.parametrize("value", [None, 5])
def test_a_qlog_upload_whose_frame_settings_are_not_a_list_is_400(
    client: FlaskClient, value: Any
) -> None:
    trace = Trace("dynamic table", {}, dynamic_table(), "2026-01-01T00:00:00")
    for document in (to_qlog(trace), to_qlog_03(trace)):
        for event in document["traces"][0]["events"]:
            frame = event.get("data", {}).get("frame", {})
            if frame.get("frame_type") == "settings":
                frame["settings"] = value
        response = upload(client, json.dumps(document), "x.qlog")
        assert response.status_code == 400 and "'frame.settings'" in response.get_json()["error"]


# -- 3. qlog times ------------------------------------------------------------------------


@pytest.mark.parametrize("value", [1e300, 2**70])
def test_a_qlog_03_time_no_date_can_hold_is_400(client: FlaskClient, value: float) -> None:
    trace = Trace("dynamic table", {}, dynamic_table(), "2026-01-01T00:00:00")
    document = to_qlog_03(trace)
    document["traces"][0]["events"][0]["time"] = value
    response = upload(client, json.dumps(document), "x.qlog")
    assert response.status_code == 400
    error = response.get_json()["error"]
    assert error.startswith("x.qlog: trace 0: event 0: time ") and "not a usable time" in error


# -- 4. the what-if form ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("form", "words"),
    [
        ({"server.qpack_max_table_capacity": "4294967296"}, "server.qpack_max_table_capacity"),
        ({"client.qpack_max_table_capacity": DIGITS}, "choose one of 0, 256, 4096"),
        ({"server.max_field_section_size": "0"}, "server.max_field_section_size: the what-if"),
        ({"server.quic_max_data": "0"}, "server.quic_max_data: the what-if form offers"),
        ({"proxy.huffman": "false"}, "maps 'client' or 'server'"),
        ({"huffman": "false"}, "unknown field 'huffman'"),
    ],
)
def test_the_what_if_form_takes_only_what_it_offers(
    tmp_path: Path, client: FlaskClient, form: dict[str, str], words: str
) -> None:
    response = client.post(f"/lesson/{LESSON}/what-if", data=form)
    assert response.status_code == 400
    page = html.unescape(response.get_data(as_text=True))
    assert 'id="error-message"' in page and words in page
    assert not list((tmp_path / "traces").glob("whatif-*.json"))


def test_the_what_if_form_still_records_an_offered_choice(client: FlaskClient) -> None:
    form = {"server.qpack_max_table_capacity": "0", "client.huffman": "false"}
    response = client.post(f"/lesson/{LESSON}/what-if", data=form)
    assert response.status_code == 303 and "/trace/whatif-02-" in response.headers["Location"]


# -- 5. Socket.IO messages with no payload -------------------------------------------------


@pytest.mark.parametrize(
    ("namespace", "event"),
    [("/live", "watch"), ("/live", "watch_list"), ("/classroom", "join"), ("/classroom", "end")],
)
def test_a_socket_message_with_no_payload_is_answered(
    app: Flask, client: FlaskClient, namespace: str, event: str
) -> None:
    sio = socketio.test_client(app, namespace=namespace, flask_test_client=client)
    try:
        answer = sio.emit(event, namespace=namespace, callback=True)
        if event != "watch_list":
            assert "the message must be a JSON object, not nothing" in answer["error"]
        sio.emit("unwatch", namespace=namespace)
        answer = sio.emit(event, {"capture": 1}, "extra", namespace=namespace, callback=True)
        assert answer is not None
    finally:
        sio.disconnect(namespace=namespace)


# -- 6. the uploaded name, never the staging file's -----------------------------------------


def test_warnings_and_files_name_the_uploaded_file(
    client: FlaskClient, document: dict[str, Any]
) -> None:
    response = upload(client, journal(document, '{"seq": 1, "ti'), "capture.jsonl")
    assert response.status_code == 201
    assert not any(".upload" in warning for warning in response.get_json()["warnings"])
    assert "capture.jsonl: line 3: dropped" in response.get_json()["warnings"][-1]
    trace = Trace("dynamic table", {}, dynamic_table(), "2026-01-01T00:00:00")
    response = upload(client, json.dumps(to_qlog_03(trace)), "mine.qlog")
    meta = client.get(f"/api/traces/{response.get_json()['id']}").get_json()["meta"]
    assert meta["files"] == ["mine.qlog"] and meta["uploaded_as"] == "mine.qlog"


# -- 8. steps that are no step ----------------------------------------------------------------


@pytest.mark.parametrize("text", [",", " , ", "²"])
def test_a_stream_filter_naming_no_stream_is_400(client: FlaskClient, text: str) -> None:
    response = client.get("/api/traces/first-get/events", query_string={"stream": text})
    assert response.status_code == 400 and response.get_json()["argument"] == "stream"


@pytest.mark.parametrize(
    ("path", "words"),
    [
        ("/api/traces/first-get/steps/-1", "trace 'first-get' has steps 0 to"),
        ("/api/traces/first-get/steps/abc", "trace 'first-get' has steps 0 to"),
        ("/trace/first-get/step/-1", "has steps 0 to"),
        ("/trace/first-get/step/abc", "not 'abc'"),
        (f"/lesson/{LESSON}/step/-1", f"lesson '{LESSON}' has steps 0 to"),
        (f"/lesson/{VARIANTS_LESSON}/variants/-1", "has variants 0 to"),
        (f"/lesson/{VARIANTS_LESSON}/variants/x", "has variants 0 to"),
    ],
)
def test_a_step_that_is_no_number_or_negative_is_404_saying_which_steps_there_are(
    client: FlaskClient, path: str, words: str
) -> None:
    response = client.get(path)
    text = html.unescape(response.get_data(as_text=True))
    assert response.status_code == 404 and words in text
    tail = path.rsplit("/", 1)[1]
    assert f"not {tail}" in text or f"not {tail!r}" in text
