"""The web UI's JSON API (docs/web-api.md), through Flask's test client.

Every endpoint, its errors, ids that try to leave the data directory, the upload limit,
and the XSS probe (a header value that is HTML) coming back as plain data.
"""

from __future__ import annotations

import dataclasses
import io
import json
from pathlib import Path
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient
from web_helpers import UPLOAD_LIMIT, XSS_PROBE, make_app, probe_step, save_probe_trace

from h3learn.events import Event
from h3learn.scenarios.examples import EXAMPLES
from h3learn.trace.qlog import to_qlog, to_qlog_03
from h3learn.trace.store import Trace, read_trace, trace_document, write_trace
from h3learn.web import socketio
from h3learn.web.api import limit_in_words
from h3learn.web.present import direction_of


def upload(client: FlaskClient, data: bytes, name: str = "trace.json") -> tuple[int, dict]:  # type: ignore[type-arg]
    response = client.post(
        "/api/traces",
        data={"file": (io.BytesIO(data), name)},
        content_type="multipart/form-data",
    )
    return response.status_code, response.get_json()


# -- listing and reading ----------------------------------------------------------------


def test_the_list_offers_every_built_in_example_at_once(client: FlaskClient) -> None:
    traces = client.get("/api/traces").get_json()["traces"]
    assert [t["id"] for t in traces] == [e.id for e in EXAMPLES]
    assert {t["title"] for t in traces} >= {"A first GET", "POST with trailers"}
    assert all(t["kind"] == "example" and t["events"] > 0 for t in traces)


def test_saved_traces_are_listed_after_the_examples(app: Flask, tmp_path: Path) -> None:
    save_probe_trace(tmp_path)
    traces = app.test_client().get("/api/traces").get_json()["traces"]
    assert traces[-1]["id"] == "xss-probe"
    assert traces[-1]["kind"] == "saved"


def test_a_saved_trace_larger_than_an_upload_still_opens(tmp_path: Path) -> None:
    """Uploads are limited; traces written in the data directory (captures) may be larger."""
    save_probe_trace(tmp_path)
    size = (tmp_path / "traces" / "xss-probe.json").stat().st_size
    app = make_app(tmp_path, UPLOAD_MAX_BYTES=size // 2)
    client = app.test_client()
    assert client.get("/api/traces/xss-probe/steps/3").status_code == 200
    assert client.get("/trace/xss-probe/step/3").status_code == 200


def test_a_saved_trace_that_cannot_be_read_says_why(tmp_path: Path) -> None:
    save_probe_trace(tmp_path)
    size = (tmp_path / "traces" / "xss-probe.json").stat().st_size
    client = make_app(tmp_path, TRACE_MAX_BYTES=size // 2, UPLOAD_MAX_BYTES=1024).test_client()
    answer = client.get("/api/traces/xss-probe")
    assert answer.status_code == 422
    assert "trace 'xss-probe' cannot be shown" in answer.get_json()["error"]
    assert "limit" in answer.get_json()["error"]
    page = client.get("/trace/xss-probe/step/0")
    assert page.status_code == 422 and b"cannot be shown" in page.data
    listed = client.get("/api/traces").get_json()["traces"][-1]
    assert listed["id"] == "xss-probe" and "cannot be shown" in listed["problem"]
    assert b"cannot be shown" in client.get("/").data
    (tmp_path / "traces" / "broken.json").write_text('{"format": "h3learn-trace"')
    error = client.get("/api/traces/broken").get_json()["error"]
    assert error.startswith("trace 'broken' cannot be shown: broken.json: not JSON")


def test_trace_meta_gives_the_count_and_a_page_of_summaries(client: FlaskClient) -> None:
    answer = client.get("/api/traces/dynamic-table?limit=10&offset=5").get_json()
    assert answer["title"] == "The dynamic table fills"
    assert answer["count"] == answer["page"]["total"] > 10
    rows = answer["page"]["events"]
    assert [row["seq"] for row in rows] == list(range(5, 15))
    settings = next(r for r in rows if r["name"] == "frame_created")
    assert settings["direction"] == "sent" and settings["stream_type"] == "control"


def test_an_unfiltered_page_is_the_same_slice_of_rows_as_a_filtered_one_would_give(
    client: FlaskClient,
) -> None:
    """Without filters only the page's rows are made; they, the total and `located` are
    what the filtered path gives for a filter every row passes."""
    base = "/api/traces/dynamic-table/events"
    every = "category=http3,qpack,transport"
    for query in (
        "offset=5&limit=10",
        "offset=40&limit=30&until=50",
        "limit=3&locate=9",
        "limit=3&until=8&locate=9",
        "offset=100000&limit=5",
    ):
        plain = client.get(f"{base}?{query}").get_json()
        filtered = client.get(f"{base}?{query}&{every}").get_json()
        assert plain == filtered and plain["total"] > 0, query
    assert client.get(f"{base}?limit=3&until=8&locate=9").get_json()["located"] is None
    assert client.get(f"{base}?limit=3&locate=9").get_json()["located"] == 9


def test_events_filter_by_category_direction_and_search(client: FlaskClient) -> None:
    base = "/api/traces/dynamic-table/events"
    qpack = client.get(f"{base}?category=qpack").get_json()
    assert qpack["total"] > 0 and {r["category"] for r in qpack["events"]} == {"qpack"}
    received = client.get(f"{base}?direction=received").get_json()["events"]
    assert {r["direction"] for r in received} == {"received"}
    assert {r["name"] for r in received} <= {
        "frame_parsed",
        "instruction_parsed",
        "stream_type_set",
    }
    found = client.get(f"{base}?q=REFERER").get_json()["events"]
    assert found and all(
        "referer" in r["summary"].lower() or r["name"].startswith("headers") for r in found
    )
    assert client.get(f"{base}?category=none").get_json()["total"] == 0


def test_a_stream_type_is_drawn_by_who_opened_the_stream_and_unknown_draws_no_arrow() -> None:
    """present.direction_of: a stream type's direction comes from its data's owner; a file
    that gives none (its keys are optional) gets no arrow rather than a guessed one."""
    opened = [e for e in EXAMPLES[0].record() if e.name == "stream_type_set" and e.raw]
    owners = {e.data["owner"]: direction_of(e) for e in opened}
    assert owners == {"local": "sent", "remote": "received"}
    assert direction_of(dataclasses.replace(opened[0], data={"bogus": 1})) == "local"


def test_events_filter_by_stream(client: FlaskClient) -> None:
    base = "/api/traces/dynamic-table/events"
    four = client.get(f"{base}?stream=4&limit=2000").get_json()
    assert four["total"] > 0 and {r["stream_id"] for r in four["events"]} == {4}
    both = client.get(f"{base}?stream=0,4&limit=2000").get_json()
    assert {r["stream_id"] for r in both["events"]} == {0, 4}
    none = client.get(f"{base}?stream=none&limit=2000").get_json()
    assert none["total"] > 0 and {r["stream_id"] for r in none["events"]} == {None}
    qpack_on_four = client.get(f"{base}?stream=4&category=qpack").get_json()
    assert 0 < qpack_on_four["total"] < four["total"]


def stream_ids(events: list[Event]) -> list[int]:
    return sorted({e.stream_id for e in events if e.stream_id is not None})


def test_a_stream_filter_the_trace_cannot_match_is_400_naming_its_streams(
    client: FlaskClient,
) -> None:
    """The page shows the message as it is: it says what was wrong, and what there is."""
    base = "/api/traces/dynamic-table/events"
    streams = stream_ids(EXAMPLES[1].record())
    listed = ", ".join(str(s) for s in streams[:-1]) + f" and {streams[-1]}"
    for query, wrong in [
        ("99", "this trace has no stream 99"),
        ("4,99,98", "this trace has no streams 98 and 99"),
        ("4,x", "'x' is not a stream ID: type stream numbers separated by commas, or none"),
        ("-1", "'-1' is not a stream ID"),
    ]:
        response = client.get(f"{base}?stream={query}")
        assert response.status_code == 400, query
        answer = response.get_json()
        assert answer["error"].startswith(wrong), answer
        assert answer["error"].endswith(f"; the trace's streams are {listed}")
        assert answer["argument"] == "stream" and answer["streams"] == streams
    assert client.get(f"{base}?stream=4,,0").get_json()["total"] > 0  # an empty part is skipped


def test_a_stream_filter_names_no_stream_past_the_steps_shown(client: FlaskClient) -> None:
    """A lesson's page lists no step past a question: the message names no stream there."""
    base = "/api/traces/dynamic-table/events"
    events = EXAMPLES[1].record()
    until = next(e.seq for e in events if e.stream_id == 4)
    before = stream_ids(events[:until])
    answer = client.get(f"{base}?stream=99&until={until}").get_json()
    assert answer["streams"] == before and 4 not in before
    assert f"the trace's streams before step {until} are " in answer["error"]
    # A stream that comes later is not wrong: it matches no row yet.
    assert client.get(f"{base}?stream=4&until={until}").get_json()["total"] == 0


def test_events_locate_a_step_among_the_filtered_rows(client: FlaskClient) -> None:
    base = "/api/traces/dynamic-table/events?category=http3"
    rows = client.get(f"{base}&limit=2000").get_json()["events"]
    target = rows[7]["seq"]
    assert client.get(f"{base}&limit=1&locate={target}").get_json()["located"] == 7
    qpack_step = client.get("/api/traces/dynamic-table/events?category=qpack").get_json()
    missing = qpack_step["events"][0]["seq"]
    assert client.get(f"{base}&locate={missing}").get_json()["located"] is None


def test_a_step_carries_the_event_bytes_fields_rfc_links_and_state(client: FlaskClient) -> None:
    rows = client.get("/api/traces/dynamic-table/events?q=headers_encoded&limit=2000")
    step = next(
        r["seq"] for r in rows.get_json()["events"] if "Required Insert Count 3" in r["summary"]
    )
    answer = client.get(f"/api/traces/dynamic-table/steps/{step}").get_json()
    event = answer["event"]
    assert answer["step"] == step and answer["count"] > step
    assert event["raw"] and len(event["bytes"]) == event["length"] == len(event["raw"]) // 2
    first = event["fields"][0]
    assert first["name"].startswith("Required Insert Count")
    assert first["rfc_link"]["url"] == "https://www.rfc-editor.org/rfc/rfc9204#section-4.5.1.1"
    assert first["rfc_link"]["title"] == "Required Insert Count"
    split = [b for b in event["bytes"] if b["bit_fields"] is not None]
    assert split and all(len(b["bit_fields"]) == 8 for b in split)
    assert event["rfc"][0]["label"].startswith("RFC 9204 §")
    table = answer["state"]["client"]["qpack"]["local_table"]
    assert table["insert_count"] == 3
    assert "client.qpack.unacknowledged_sections" in answer["changed"]


def test_rfc_9114_sections_link_to_the_official_text(client: FlaskClient) -> None:
    settings = client.get("/api/traces/first-get/events?q=SETTINGS&direction=sent").get_json()
    step = settings["events"][0]["seq"]
    answer = client.get(f"/api/traces/first-get/steps/{step}").get_json()["event"]["rfc"]
    links = [{key: link[key] for key in ("section", "label", "title", "url")} for link in answer]
    assert {
        "section": "9114#7.2.4",
        "label": "RFC 9114 §7.2.4",
        "title": "SETTINGS",
        "url": "https://www.rfc-editor.org/rfc/rfc9114#section-7.2.4",
    } in links


def test_the_blocked_stream_example_shows_a_blocked_stream(client: FlaskClient) -> None:
    rows = client.get("/api/traces/blocked-stream/events?q=blocked&category=qpack").get_json()
    blocked = next(r["seq"] for r in rows["events"] if " blocked" in r["summary"])
    state = client.get(f"/api/traces/blocked-stream/steps/{blocked}").get_json()["state"]
    assert state["server"]["qpack"]["blocked_streams"] == [4]


# -- errors -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "path",
    [
        "/api/traces/no-such-trace",
        "/api/traces/first-get/steps/100000",
        "/api/traces/..%2f..%2fetc%2fpasswd",
        "/api/traces/%2e%2e",
        "/api/traces/a.b",
        "/api/traces/" + "x" * 65,
        "/api/traces/..%5c..%5cwin",
        "/api/nothing-here",
    ],
)
def test_unknown_or_invalid_ids_are_404_json(client: FlaskClient, path: str) -> None:
    response = client.get(path)
    assert response.status_code == 404
    assert "error" in response.get_json()


def test_a_traversal_id_never_reads_a_file_outside_the_traces_folder(
    client: FlaskClient, tmp_path: Path
) -> None:
    secret = tmp_path / "secret.json"
    secret.write_text(json.dumps(trace_document("secret", [])))
    for trace_id in ("..%2fsecret", "../secret", "%2E%2E%2Fsecret"):
        assert client.get(f"/api/traces/{trace_id}").status_code == 404
        assert client.get(f"/trace/{trace_id}/step/0").status_code == 404


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ("limit=0", "'limit' must be between"),
        ("limit=abc", "'limit' must be an integer"),
        ("offset=-1", "'offset' must be between"),
        ("category=html", "unknown ['html']"),
        ("direction=up", "unknown ['up']"),
    ],
)
def test_bad_query_arguments_are_400_with_the_reason(
    client: FlaskClient, query: str, message: str
) -> None:
    response = client.get(f"/api/traces/first-get/events?{query}")
    assert response.status_code == 400
    assert message in response.get_json()["error"]


# -- upload -------------------------------------------------------------------------------


def test_a_native_trace_uploads_and_opens(client: FlaskClient, tmp_path: Path) -> None:
    events = EXAMPLES[0].record()
    status, answer = upload(client, json.dumps(trace_document("mine", events)).encode())
    assert status == 201, answer
    assert answer["kind"] == "saved" and answer["source_kind"] == "native"
    assert answer["title"] == "mine" and answer["events"] == len(events)
    assert read_trace(tmp_path / "traces" / f"{answer['id']}.json").events == events
    assert client.get(f"/api/traces/{answer['id']}/steps/3").get_json()["observed"] == [
        "client",
        "server",
    ]


def test_a_trace_of_one_side_says_only_that_side_is_observed(client: FlaskClient) -> None:
    """A capture records the server only (RFC 9114 §3.3: its side of one connection)."""
    server_events = [event for event in EXAMPLES[0].record() if event.endpoint == "server"]
    server_side = [dataclasses.replace(event, seq=n) for n, event in enumerate(server_events)]
    _, answer = upload(client, json.dumps(trace_document("server", server_side)).encode())
    assert client.get(f"/api/traces/{answer['id']}/steps/0").get_json()["observed"] == ["server"]


def test_an_aioquic_qlog_uploads(client: FlaskClient) -> None:
    trace = Trace(title="q", meta={}, events=EXAMPLES[0].record(), created="2026-01-01")
    qlog = to_qlog_03(trace)
    status, answer = upload(client, json.dumps(qlog).encode(), "client.qlog")
    assert status == 201, answer
    assert answer["source_kind"] == "aioquic-qlog" and answer["events"] > 0


def test_a_current_draft_qlog_uploads_with_its_bytes(client: FlaskClient) -> None:
    events = EXAMPLES[0].record()
    trace = Trace(title="draft", meta={}, events=events, created="2026-01-01")
    status, answer = upload(client, json.dumps(to_qlog(trace)).encode(), "both.qlog")
    assert status == 201, answer
    assert answer["source_kind"] == "qlog" and answer["events"] == len(events)
    assert answer["warnings"] and "same time" in answer["warnings"][0]
    steps = [client.get(f"/api/traces/{answer['id']}/steps/{n}").get_json() for n in range(5)]
    frame = next(step for step in steps if step["event"]["name"] == "frame_created")
    assert [field["name"] for field in frame["event"]["fields"]] == ["Type", "Length"]


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"not json at all", "trace.json: not JSON"),
        (b'{"format": "h3learn-trace", "version": 1}', "trace.json"),
        (b'{"hello": 1}', "neither an h3learn trace"),
        (b"\xff\xfe", "not UTF-8"),
        (b"", "empty"),
        (
            b'{"format": "h3learn-trace", "version": 1, "title": "t",'
            b' "created": "2026-12-03T00:00:00+00:00", "meta": {}, "events": []}',
            "trace.json: no events to step through",
        ),
    ],
)
def test_an_invalid_upload_is_400_with_a_clear_error(
    client: FlaskClient, tmp_path: Path, data: bytes, message: str
) -> None:
    status, answer = upload(client, data)
    assert status == 400
    assert message in answer["error"]
    assert ".upload" not in answer["error"]  # the staging file's name is never shown
    assert list((tmp_path / "traces").iterdir()) == []


def test_an_upload_without_a_file_field_is_400(client: FlaskClient) -> None:
    response = client.post("/api/traces", data={}, content_type="multipart/form-data")
    assert response.status_code == 400
    assert "multipart field 'file'" in response.get_json()["error"]


@pytest.mark.parametrize("extra", [1, 200 * 1024])
def test_an_upload_over_the_limit_is_413(client: FlaskClient, tmp_path: Path, extra: int) -> None:
    status, answer = upload(client, b" " * (UPLOAD_LIMIT + extra))
    assert status == 413
    # Just over (read, then refused) or far over (refused by the request's size): the
    # message states the one limit the user can act on, the file's, the same way.
    assert "more than the limit of" in answer["error"] or "larger than the limit" in answer["error"]
    assert answer["error"].endswith(f"the limit of {UPLOAD_LIMIT} bytes")
    assert list((tmp_path / "traces").iterdir()) == []


def test_a_trace_with_no_events_says_so_rather_than_naming_steps_0_to_minus_1(
    client: FlaskClient, tmp_path: Path
) -> None:
    """A capture whose server was killed before its first event is kept with its title."""
    write_trace(tmp_path / "traces" / "empty.json", "stopped at once", [])
    for url in ("/trace/empty/step/0", "/api/traces/empty/steps/0"):
        answer = client.get(url)
        assert answer.status_code == 404, url
        assert b"has no steps: no event was recorded" in answer.data, url
        assert b"0 to -1" not in answer.data


def test_the_default_limit_is_said_in_bytes_and_mebibytes() -> None:
    assert limit_in_words(16 * 2**20) == "16777216 bytes (16 MiB)"
    assert limit_in_words(UPLOAD_LIMIT) == f"{UPLOAD_LIMIT} bytes"


def test_the_uploaded_file_name_is_never_used_as_a_path(
    client: FlaskClient, tmp_path: Path
) -> None:
    data = json.dumps(trace_document("t", EXAMPLES[0].record())).encode()
    status, answer = upload(client, data, "../../evil.json")
    assert status == 201
    assert answer["id"].startswith("upload-")
    assert not (tmp_path.parent / "evil.json").exists()
    files = [p.name for p in (tmp_path / "traces").iterdir()]
    assert files == [f"{answer['id']}.json"]


# -- download ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fmt", "ending", "key"),
    [
        ("native", ".json", "format"),
        ("qlog", ".qlog", "file_schema"),
        ("qlog-0.3", "-0.3.qlog", "qlog_version"),
    ],
)
def test_download_in_each_format(client: FlaskClient, fmt: str, ending: str, key: str) -> None:
    response = client.get(f"/api/traces/first-get/download?format={fmt}")
    assert response.status_code == 200
    disposition = response.headers["Content-Disposition"]
    assert disposition == f'attachment; filename="first-get{ending}"'
    assert key in json.loads(response.data)


def test_a_qlog_03_download_uploaded_again_keeps_its_title_and_order(client: FlaskClient) -> None:
    """The 0.3 reader imports frames, stream types and packets (docs/events.md, "qlog import")."""
    downloaded = client.get("/api/traces/dynamic-table/download?format=qlog-0.3").data
    status, answer = upload(client, downloaded, "dynamic-table-0.3.qlog")
    assert status == 201 and answer["source_kind"] == "aioquic-qlog"
    assert answer["title"] == "The dynamic table fills" and answer["warnings"] == []
    listed = {row["id"]: row["title"] for row in client.get("/api/traces").get_json()["traces"]}
    assert listed[answer["id"]] == "The dynamic table fills"

    def order(trace_id: str) -> list[tuple[str, str, int | None]]:
        url = f"/api/traces/{trace_id}/events?category=http3&limit=2000"
        rows = client.get(url).get_json()["events"]
        return [(r["endpoint"], r["name"], r["stream_id"]) for r in rows if "frame" in r["name"]]

    assert order(answer["id"]) == order("dynamic-table")


def test_a_qlog_03_import_says_what_it_left_out_and_why_it_has_no_bytes(
    client: FlaskClient,
) -> None:
    """The events the 0.3 reader does not import (QPACK's, SETTINGS decided, stream states)
    are counted on the step page, not silently dropped; a frame without bytes says why."""
    downloaded = client.get("/api/traces/dynamic-table/download?format=qlog-0.3").data
    _, answer = upload(client, downloaded, "dynamic-table-0.3.qlog")
    page = client.get(f"/trace/{answer['id']}/step/0").get_data(as_text=True)
    notes = page[page.index('id="trace-notes"') :][:2000]
    meta = client.get(f"/api/traces/{answer['id']}").get_json()["meta"]
    skipped = meta["skipped"]
    assert sum(skipped.values()) > 50
    assert "This trace was imported from h3learn qlog 0.3" in notes  # its own export
    assert f"{sum(skipped.values())} events of kinds the import does not read" in notes
    most = max(skipped, key=lambda kind: skipped[kind])
    assert f"{most} ({skipped[most]})" in notes
    assert "From the import: the qlog 0.3 reader keeps no bytes" in notes
    rows = client.get(f"/api/traces/{answer['id']}/events?limit=2000").get_json()["events"]
    frame = next(row["seq"] for row in rows if row["name"] == "frame_created")
    step = client.get(f"/api/traces/{answer['id']}/steps/{frame}").get_json()["event"]
    assert step["direction"] == "sent" and step["length"] == 0
    assert step["bytes_note"].startswith("This trace holds no bytes for this step: it was")
    assert "[the qlog 0.3 reader keeps no bytes]" in step["summary"]
    assert 'id="trace-notes"' not in client.get("/trace/dynamic-table/step/0").get_data(
        as_text=True
    )


def test_a_lessons_bare_end_of_stream_says_it_is_quics_fin_not_an_import(
    client: FlaskClient,
) -> None:
    """Lesson 13 ends a control stream with nothing before it (RFC 9114 §6.2.1): a step of
    h3learn's own with no bytes, which is neither a change inside one endpoint nor an import."""
    lesson = "13-connection-errors"
    rows = client.get(f"/api/traces/{lesson}/events?limit=2000").get_json()["events"]
    bare = [row["seq"] for row in rows if row["name"] == "raw_bytes_sent"]
    notes = [
        client.get(f"/api/traces/{lesson}/steps/{seq}").get_json()["event"].get("bytes_note")
        for seq in bare
    ]
    assert any(
        note and note.startswith("No bytes at this step: only the end of the stream")
        for note in notes
    ), notes


def test_download_of_an_unknown_format_is_400(client: FlaskClient) -> None:
    response = client.get("/api/traces/first-get/download?format=pcap")
    assert response.status_code == 400


# -- untrusted text, headers, pages --------------------------------------------------------


def test_the_xss_probe_comes_back_as_plain_data(app: Flask, tmp_path: Path) -> None:
    events = save_probe_trace(tmp_path)
    client = app.test_client()
    response = client.get(f"/api/traces/xss-probe/steps/{probe_step(events)}")
    assert response.mimetype == "application/json"
    headers = response.get_json()["event"]["data"]["headers"]
    assert {"name": "x-probe", "value": XSS_PROBE} in headers
    page = client.get("/trace/xss-probe/step/0").get_data(as_text=True)
    assert XSS_PROBE not in page
    assert "title &lt;img src=x onerror=alert(1)&gt;" in page
    index = client.get("/").get_data(as_text=True)
    assert XSS_PROBE not in index


def test_every_response_has_a_csp_without_inline_script_or_style(client: FlaskClient) -> None:
    for path in ("/", "/trace/first-get/step/0", "/api/traces", "/static/js/step.js"):
        policy = client.get(path).headers["Content-Security-Policy"]
        assert "script-src 'self'" in policy and "style-src 'self'" in policy
        assert "unsafe-inline" not in policy and "unsafe-eval" not in policy


def test_pages_have_no_inline_script_or_style(client: FlaskClient) -> None:
    for path in ("/", "/trace/first-get/step/0"):
        page = client.get(path).get_data(as_text=True)
        assert "<style" not in page and " style=" not in page and " on" + "click=" not in page
        for chunk in page.split("<script")[1:]:
            assert " src=" in chunk.split(">")[0]


def test_a_step_page_preloads_its_step_and_a_lesson_page_does_not(client: FlaskClient) -> None:
    page = client.get("/trace/dynamic-table/step/7").data
    assert b'<link rel="preload" href="/api/traces/dynamic-table/steps/7" as="fetch"' in page
    lesson = client.get("/lesson/02-a-first-get/step/3")
    assert lesson.status_code == 200 and b'rel="preload"' not in lesson.data


def test_a_step_page_has_its_own_url(client: FlaskClient) -> None:
    page = client.get("/trace/first-get/step/14")
    assert page.status_code == 200
    assert 'data-step="14"' in page.get_data(as_text=True)
    assert client.get("/trace/first-get").headers["Location"].endswith("/trace/first-get/step/0")
    assert client.get("/trace/first-get/step/9999").status_code == 404


def test_the_socketio_client_is_served_locally(client: FlaskClient) -> None:
    response = client.get("/vendor/socket.io.min.js")
    assert response.status_code == 200
    assert response.mimetype == "text/javascript"
    assert b"io" in response.data


def test_a_missing_socketio_client_is_a_clear_503(tmp_path: Path) -> None:
    app = make_app(tmp_path, SOCKETIO_CLIENT=str(tmp_path / "missing.js"))
    response = app.test_client().get("/vendor/socket.io.min.js")
    assert response.status_code == 503
    assert b"npm ci" in response.data


def test_socketio_connects_in_threading_mode(app: Flask) -> None:
    assert socketio.async_mode == "threading"
    client = socketio.test_client(app, flask_test_client=app.test_client())
    assert client.is_connected()
    received = client.get_received()
    assert received[0]["name"] == "hello"
    client.disconnect()


def test_bytes_without_structure_are_drawn_as_sent() -> None:
    """A GREASE stream's payload or a lesson's deliberate bytes go on the wire (an arrow)."""
    from h3learn.events import Event
    from h3learn.web.present import direction_of

    common: dict[str, Any] = {"seq": 0, "time": 0.0, "endpoint": "client", "stream_id": 14}
    padding = Event(**common, category="http3", name="raw_bytes_sent", data={}, raw=b"pad")
    decoded = Event(**common, category="qpack", name="headers_decoded", data={})
    assert (direction_of(padding), direction_of(decoded)) == ("sent", "local")
