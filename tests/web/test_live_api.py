"""The captures API and the ``/live`` Socket.IO namespace, with Flask's and Flask-SocketIO's
test clients (docs/web-api.md, "Live capture").

Live captures are made without a network: a `MemoryPair` (two h3learn endpoints over ideal
streams) records into a `CaptureRecording` made by the app's hub, exactly what the
recording endpoint's connections record into, so the capture is journalled, summarised and
announced the same way.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient
from web_helpers import XSS_PROBE, make_app

from h3learn.capture.hub import CaptureRecording
from h3learn.scenarios.examples import respond
from h3learn.trace.captures import CLOSED, LIVE
from h3learn.transport.memory import MemoryPair
from h3learn.transport.udp_shared import DEFAULT_SETTINGS
from h3learn.web import captures as captures_module
from h3learn.web import socketio
from h3learn.web.captures import KEEP_FINISHED, LiveService
from h3learn.web.library import TraceLibrary


@pytest.fixture
def app(tmp_path: Path) -> Iterator[Flask]:
    app = make_app(tmp_path, LIVE_BATCH_SECONDS=0.02)
    yield app
    service(app).close()


def service(app: Flask) -> LiveService:
    live: LiveService = app.extensions["h3learn_live"]
    return live


class FakeConnection:
    """A capture fed by two in-memory h3learn endpoints (see the module docstring)."""

    def __init__(self, app: Flask, *, agent: str = "test-agent/1.0") -> None:
        make = service(app).hub.recording_factory()
        recording = make("test", {"peer_address": "127.0.0.1:9", "capture": "h3learn h3-server"})
        assert isinstance(recording, CaptureRecording)
        self.recording = recording
        self.id = recording.capture.id
        self.agent = agent
        self.pair = MemoryPair.create(
            client_settings=DEFAULT_SETTINGS, server_settings=DEFAULT_SETTINGS, log=recording.log
        )
        self.pair.pump()

    def get(self, path: str = "/") -> None:
        headers = [
            (b":method", b"GET"),
            (b":scheme", b"https"),
            (b":authority", b"localhost"),
            (b":path", path.encode()),
            (b"user-agent", self.agent.encode()),
        ]
        stream_id = self.pair.client.send_request(headers, end_stream=True)
        self.pair.pump()
        respond(self.pair, stream_id, b"ok\n")
        self.pair.pump()

    def close(self) -> None:
        self.pair.client.close()
        self.pair.pump()
        self.recording.finish()


def wait_for(received: list[dict[str, Any]], test: Any, client: Any, timeout: float = 5) -> Any:
    """Collect the test client's messages until one passes ``test``; return it."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        received.extend(client.get_received("/live"))
        for message in received:
            if test(message):
                return message
        time.sleep(0.01)
    raise AssertionError(f"no such message among {[m['name'] for m in received]}")


def test_the_live_page_without_an_endpoint_says_it_is_off(app: Flask) -> None:
    page = app.test_client().get("/live")
    assert page.status_code == 200
    text = page.get_data(as_text=True)
    assert 'id="endpoint-off"' in text and 'id="fetch-form"' in text
    assert app.test_client().get("/api/captures").get_json() == {
        "endpoint": None,
        "captures": [],
        "refused": 0,
    }


def test_connections_refused_at_the_limit_are_counted_in_the_api_and_sent_live(
    app: Flask,
) -> None:
    """A refused connection has no capture: the list says how many there were."""
    flask_client: FlaskClient = app.test_client()
    sio = socketio.test_client(app, namespace="/live", flask_test_client=flask_client)
    try:
        answer = sio.emit("watch_list", {}, namespace="/live", callback=True)
        assert answer == {"captures": [], "refused": 0}
        hub = service(app).hub
        hub.connection_refused()
        hub.connection_refused()
        received: list[dict[str, Any]] = []
        wait_for(
            received,
            lambda m: m["name"] == "captures" and m["args"][0]["refused"] == 2,
            sio,
        )
    finally:
        sio.disconnect(namespace="/live")
    assert flask_client.get("/api/captures").get_json()["refused"] == 2


def test_a_running_capture_is_listed_live_and_opens_in_the_step_view(app: Flask) -> None:
    connection = FakeConnection(app, agent=XSS_PROBE)
    connection.get()
    client = app.test_client()
    (row,) = client.get("/api/captures").get_json()["captures"]
    assert row["id"] == connection.id and row["state"] == LIVE
    assert row["user_agent"] == XSS_PROBE and row["requests"] == 1
    count = len(connection.recording.capture.events)
    assert row["events"] == count
    page = client.get(f"/trace/{connection.id}/step/0")
    assert page.status_code == 200 and b'data-capture="true"' in page.data
    assert client.get(f"/api/traces/{connection.id}").get_json()["count"] == count
    connection.get("/second")
    grown = client.get(f"/api/traces/{connection.id}/steps/{count}").get_json()
    assert grown["count"] == len(connection.recording.capture.events) > count
    connection.close()
    (row,) = client.get("/api/captures").get_json()["captures"]
    assert row["state"] == CLOSED and row["requests"] == 2


def test_rename_delete_and_export_a_capture(app: Flask) -> None:
    connection = FakeConnection(app)
    connection.get()
    client = app.test_client()
    url = f"/api/captures/{connection.id}"
    assert client.delete(url).status_code == 409, "a live capture cannot be deleted"
    renamed = client.patch(url, json={"title": "Chromium, first visit"}).get_json()
    assert renamed["title"] == "Chromium, first visit" and renamed["renamed"]
    for invisible in ("  ", "\u200b\u200b", "\u00ad", "\u0000"):  # spaces, zero-width, soft hyphen
        answer = client.patch(url, json={"title": invisible})
        assert answer.status_code == 400 and "visible character" in answer.get_json()["error"]
    assert client.patch(url, json={}).get_json()["error"] == 'send {"title": "..."} as JSON'
    connection.close()
    step = client.get(f"/api/traces/{connection.id}/steps/0").get_json()
    assert step["title"] == "Chromium, first visit"
    for fmt, key in (("native", "events"), ("qlog", "traces"), ("qlog-0.3", "traces")):
        download = client.get(f"/api/traces/{connection.id}/download?format={fmt}")
        assert download.status_code == 200 and key in download.get_json()
    assert client.delete(url).status_code == 204
    assert client.get(url).status_code == 404
    assert client.delete(url).status_code == 404
    assert client.get("/api/captures/cap-../../x").status_code == 404


def test_a_capture_damaged_on_disk_is_a_422_and_listed_as_unreadable(app: Flask) -> None:
    """Nothing is lost and nothing crashes: a closed capture's file cut short (a disk that
    failed, a hand edit) answers with the reason, and the list says what happened."""
    damaged, sound = FakeConnection(app), FakeConnection(app, agent="other/2")
    for connection in (damaged, sound):
        connection.get()
        connection.close()
    client = app.test_client()
    assert client.get("/api/captures").status_code == 200  # summarised while sound
    path = service(app).hub.store.path_of(damaged.id)
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    for url in (
        f"/api/captures/{damaged.id}",
        f"/api/captures/compare?ids={sound.id},{damaged.id}",
        f"/compare?ids={sound.id},{damaged.id}",
    ):
        answer = client.get(url)
        assert answer.status_code == 422, url
        assert b"cannot be shown" in answer.data and b"not JSON" in answer.data, url
    rows = {row["id"]: row for row in client.get("/api/captures").get_json()["captures"]}
    assert rows[damaged.id]["state"] == "unreadable" and "not JSON" in rows[damaged.id]["error"]
    assert rows[sound.id]["state"] == CLOSED
    assert client.get(f"/api/captures/{sound.id}").status_code == 200


def test_compare_needs_two_to_eight_captures_and_shows_each_profile(app: Flask) -> None:
    first, second = FakeConnection(app), FakeConnection(app, agent="other/2")
    for connection in (first, second):
        connection.get()
        connection.get("/again")
        connection.close()
    client = app.test_client()
    answer = client.get(f"/api/captures/compare?ids={first.id},{second.id}").get_json()
    assert [p["capture"]["id"] for p in answer["profiles"]] == [first.id, second.id]
    assert "QPACK_MAX_TABLE_CAPACITY" in answer["setting_names"]
    # The recorded endpoint is the client (its events come first): it decoded two responses.
    assert all(p["profile"]["field_sections"]["count"] == 2 for p in answer["profiles"])
    page = client.get(f"/compare?ids={first.id},{second.id}")
    assert page.status_code == 200 and b"other/2" in page.data
    assert b"view \xc2\xb7 2 requests<" in page.data
    assert client.get(f"/api/captures/compare?ids={first.id}").status_code == 400
    twice = client.get(f"/api/captures/compare?ids={first.id},{first.id}")
    assert twice.status_code == 400 and "two different captures" in twice.get_json()["error"]
    assert client.get("/compare?ids=x").status_code == 400
    ids = ",".join([first.id] * 9)
    assert client.get(f"/api/captures/compare?ids={ids},{second.id}").status_code == 200
    assert (
        client.get(
            "/api/captures/compare?ids=" + ",".join(f"{first.id[:-1]}{n}" for n in range(9))
        ).status_code
        == 400
    )


def test_compare_without_a_good_selection_lists_the_captures_to_choose_from(app: Flask) -> None:
    client = app.test_client()
    empty = client.get("/compare")
    assert empty.status_code == 200 and b'id="compare-none"' in empty.data
    assert b"/live" in empty.data
    first, second = FakeConnection(app), FakeConnection(app, agent="other/2")
    for connection in (first, second):
        connection.get()
        connection.close()
    page = client.get("/compare")
    assert page.status_code == 200 and b'id="compare-error"' not in page.data
    for connection in (first, second):
        assert f'name="ids" value="{connection.id}">'.encode() in page.data
    assert b"other/2" in page.data
    # One box ticked is a selection that breaks the rule: the rule, and the box still ticked.
    one = client.get(f"/compare?ids={first.id}")
    assert one.status_code == 400 and b"choose at least two captures" in one.data
    assert f'value="{first.id}" checked>'.encode() in one.data
    assert f'value="{second.id}">'.encode() in one.data
    # The chooser's form sends one ids= per box; that compares like ids=A,B.
    both = client.get(f"/compare?ids={first.id}&ids={second.id}")
    assert both.status_code == 200 and b'id="compare-table"' in both.data
    unknown = client.get(f"/compare?ids={first.id},cap-19990101-000000-0000")
    assert unknown.status_code == 404 and b'id="compare-choose"' not in unknown.data


def test_compare_with_a_capture_whose_spans_are_bad_says_so_rather_than_offer_a_choice(
    app: Flask,
) -> None:
    """Only a selection that breaks the rule brings the chooser back; a capture whose field
    spans are broken (found only when its steps are built) keeps its own error page."""
    bad, sound = FakeConnection(app), FakeConnection(app, agent="other/2")
    for connection in (bad, sound):
        connection.get()
        connection.close()
    path = service(app).hub.store.path_of(bad.id)
    document = json.loads(path.read_text())
    event = next(e for e in document["events"] if e["fields"])
    event["fields"][0]["offset"] = 10**6
    path.write_text(json.dumps(document))
    page = app.test_client().get(f"/compare?ids={sound.id},{bad.id}")
    assert page.status_code == 400 and b'id="compare-error"' in page.data
    assert b'id="compare-choose"' not in page.data


def test_the_fetch_form_checks_the_url_first(app: Flask) -> None:
    client = app.test_client()
    for url, words in (
        ("http://localhost:4433/", "needs an https URL"),
        ("https://user:pw@localhost/", "user information"),
        ("localhost:4433", "https"),
        ("https://", "no host"),
    ):
        answer = client.post("/api/captures/fetch", json={"url": url})
        assert answer.status_code == 400, url
        assert words in answer.get_json()["error"], (url, answer.get_json())
    assert client.post("/api/captures/fetch", data="x").status_code == 400
    assert client.get("/api/captures/fetch/12345").status_code == 404


def test_the_fetch_form_checks_its_header_lines_before_fetching(app: Flask) -> None:
    """RFC 9114 §4.2, §4.3.1: a field line the server would find malformed is refused with
    its rule, and no fetch starts."""
    client = app.test_client()
    url = "https://127.0.0.1:9/"
    for headers, words in (
        (["Transfer-Encoding: chunked"], "connection-specific field 'transfer-encoding'"),
        (["x-ok: 1", "no colon"], "bad header 'no colon': write it as 'NAME: VALUE'"),
        ([":method: POST"], "pseudo-header fields come from the URL and the method"),
        (["host: elsewhere.example"], "Host 'elsewhere.example' disagree (RFC 9114 §4.3.1)"),
        ("x: 1", '"headers" is a list of at most 20 "name: value" strings'),
        (["x: 1"] * 21, '21 header lines: "headers" is a list of at most 20'),
        ([1], '"headers" is a list'),
        ("", '"headers" is a list'),
        (["x: " + "v" * 8190], 'header line 1 has 8,193 characters: "headers" is a list'),
        (["x: 1", "y" * 70_000], "header line 2 has 70,000 characters"),
        (["content-length: 5"], "content-length is 5 (RFC 9114 §4.1.2)"),
        (["x: \ud800"], "which has no UTF-8 form"),
    ):
        answer = client.post("/api/captures/fetch", json={"url": url, "headers": headers})
        assert answer.status_code == 400, headers
        assert words in answer.get_json()["error"], (headers, answer.get_json())
    for times in (0, 6, "2", 1.5, True):
        answer = client.post("/api/captures/fetch", json={"url": url, "times": times})
        assert answer.status_code == 400, times
        assert answer.get_json()["error"] == '"times" is how many requests to send: 1 to 5'
    assert service(app).fetcher._jobs == {}


def test_a_fetch_that_cannot_connect_fails_with_a_reason_and_in_bounded_time(
    app: Flask,
) -> None:
    service(app).fetcher.timeout = 2
    client = app.test_client()
    job = client.post("/api/captures/fetch", json={"url": "https://127.0.0.1:9/"}).get_json()
    deadline = time.monotonic() + 10
    while job["state"] == "running" and time.monotonic() < deadline:
        time.sleep(0.05)
        job = client.get(f"/api/captures/fetch/{job['id']}").get_json()
    assert job["state"] == "failed"
    assert "refused" in job["error"] or "no answer" in job["error"]


def test_socketio_list_watchers_get_batched_rows_and_removals(app: Flask) -> None:
    flask_client: FlaskClient = app.test_client()
    sio = socketio.test_client(app, namespace="/live", flask_test_client=flask_client)
    try:
        answer = sio.emit("watch_list", {}, namespace="/live", callback=True)
        assert answer == {"captures": [], "refused": 0}
        connection = FakeConnection(app)
        received: list[dict[str, Any]] = []
        first = wait_for(
            received,
            lambda m: m["name"] == "captures" and m["args"][0]["captures"],
            sio,
        )
        assert first["args"][0]["captures"][0]["id"] == connection.id
        for n in range(20):
            connection.get(f"/{n}")
        row = wait_for(
            received,
            lambda m: (
                m["name"] == "captures"
                and any(r["requests"] == 20 for r in m["args"][0]["captures"])
            ),
            sio,
        )
        assert row["args"][0]["captures"][0]["state"] == LIVE
        batches = [m for m in received if m["name"] == "captures"]
        assert len(batches) < 20, "twenty requests arrived in fewer batches than requests"
        connection.close()
        wait_for(
            received,
            lambda m: (
                m["name"] == "captures"
                and any(r["state"] == CLOSED for r in m["args"][0]["captures"])
            ),
            sio,
        )
        assert flask_client.delete(f"/api/captures/{connection.id}").status_code == 204
        wait_for(
            received,
            lambda m: m["name"] == "captures" and m["args"][0]["removed"] == [connection.id],
            sio,
        )
    finally:
        sio.disconnect(namespace="/live")


def test_socketio_capture_watchers_get_each_new_step_once_in_order(app: Flask) -> None:
    connection = FakeConnection(app)
    connection.get()
    sio = socketio.test_client(app, namespace="/live")
    other = socketio.test_client(app, namespace="/live")
    try:
        answer = sio.emit("watch", {"capture": connection.id}, namespace="/live", callback=True)
        have = len(connection.recording.capture.events)
        assert answer == {"capture": connection.id, "count": have, "state": LIVE}
        assert "error" in sio.emit("watch", {"capture": "nope"}, namespace="/live", callback=True)
        for n in range(5):
            connection.get(f"/{n}")
        total = len(connection.recording.capture.events)
        received: list[dict[str, Any]] = []
        wait_for(received, lambda m: m["name"] == "events" and m["args"][0]["count"] == total, sio)
        rows = [row for m in received if m["name"] == "events" for row in m["args"][0]["rows"]]
        assert [row["seq"] for row in rows] == list(range(have, total))
        batch = received[-1]["args"][0]
        assert batch["state"] == LIVE and set(rows[0]) >= {"seq", "summary", "direction"}
        connection.close()
        wait_for(received, lambda m: m["name"] == "events" and m["args"][0]["state"] == CLOSED, sio)
        assert not [m for m in other.get_received("/live") if m["name"] == "events"], (
            "a page that watches nothing gets no steps"
        )
    finally:
        sio.disconnect(namespace="/live")
        other.disconnect(namespace="/live")


def test_a_deleted_capture_is_dropped_from_every_cache(app: Flask) -> None:
    """Opened while live and after it ended (from its file), then deleted: nothing keeps it."""
    live = service(app)
    library: TraceLibrary = app.extensions["h3learn_library"]
    watched, unwatched = FakeConnection(app), FakeConnection(app)
    client = app.test_client()
    for connection in (watched, unwatched):
        connection.get()
    assert client.get(f"/api/traces/{watched.id}/steps/1").status_code == 200  # while live
    for connection in (watched, unwatched):
        connection.close()
    live.entries.forget(watched.id)  # as when more than KEEP_FINISHED were watched since
    for connection in (watched, unwatched):
        assert client.get(f"/api/traces/{connection.id}/steps/1").status_code == 200
        assert connection.id in library._saved  # read from its file and kept
        assert client.delete(f"/api/captures/{connection.id}").status_code == 204
        assert connection.id not in library._saved and connection.id not in library._listings
        assert connection.id not in live.entries._open
        assert client.get(f"/api/traces/{connection.id}/steps/1").status_code == 404


def test_captures_watched_live_do_not_stay_open_after_they_end(app: Flask) -> None:
    """However many captures were opened while live, once they end at most KEEP_FINISHED
    stay in memory, whichever capture is looked up next (one read from its file, too)."""
    live = service(app)
    connections = [FakeConnection(app) for _ in range(KEEP_FINISHED + 4)]
    never_watched = FakeConnection(app)
    client = app.test_client()
    for connection in connections:
        connection.get()
        assert client.get(f"/api/traces/{connection.id}").status_code == 200
    assert len(live.entries._open) == len(connections)  # live: all open
    for connection in [*connections, never_watched]:
        connection.close()
    assert client.get(f"/api/traces/{never_watched.id}/steps/0").status_code == 200
    assert list(live.entries._open) == [c.id for c in connections[-KEEP_FINISHED:]]


def test_captures_kept_open_after_they_end_are_bounded_by_their_events(
    app: Flask, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Finished captures stay open within KEEP_FINISHED_EVENTS events between them, the
    oldest dropped first and the one looked up last kept whatever its size; the others are
    read from their files again."""
    live = service(app)
    connections = [FakeConnection(app) for _ in range(4)]
    ids = [connection.id for connection in connections]
    client = app.test_client()
    for connection in connections:
        connection.get()
        assert client.get(f"/api/traces/{connection.id}").status_code == 200
    for connection in connections:
        connection.close()
    sizes = [len(live.entries._open[capture_id][0].events) for capture_id in ids]
    monkeypatch.setattr(captures_module, "KEEP_FINISHED_EVENTS", sizes[2] + sizes[3])
    assert client.get(f"/api/traces/{ids[3]}/steps/0").status_code == 200
    assert list(live.entries._open) == ids[2:]
    monkeypatch.setattr(captures_module, "KEEP_FINISHED_EVENTS", sizes[3] - 1)
    assert client.get(f"/api/traces/{ids[3]}/steps/1").status_code == 200
    assert list(live.entries._open) == ids[3:]  # alone, though over the limit
    assert client.get(f"/api/traces/{ids[0]}/steps/1").status_code == 200  # from its file
    assert list(live.entries._open) == ids[3:]
