"""RFC 9114 §4.6, §5.2, §5.3: the step API and the handout show the connection-wide state.

GOAWAY sent and received, MAX_PUSH_ID, the push IDs promised and cancelled and a clean close
are in each endpoint's ``connection`` (docs/events.md, "Replay state"), named in
``changed`` at the step that changes them and written out in the handout.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from connection_trace import GOAWAY_ID, TRACE_ID, save_connection_trace, step_of
from flask.testing import FlaskClient
from web_helpers import make_app

from h3learn.events import Event


@pytest.fixture
def events(tmp_path: Path) -> list[Event]:
    return save_connection_trace(tmp_path)


@pytest.fixture
def client(tmp_path: Path, events: list[Event]) -> FlaskClient:
    return make_app(tmp_path).test_client()


def step_json(client: FlaskClient, step: int) -> dict:  # type: ignore[type-arg]
    response = client.get(f"/api/traces/{TRACE_ID}/steps/{step}")
    assert response.status_code == 200
    body: dict = response.get_json()  # type: ignore[type-arg]
    return body


def test_the_step_that_sends_goaway_shows_it_and_names_it_changed(
    client: FlaskClient, events: list[Event]
) -> None:
    sent = step_json(client, step_of(events, "server", "frame_created", "goaway"))
    assert sent["changed"] == ["server.connection.goaway.sent"]
    assert sent["state"]["server"]["connection"]["goaway"] == {"sent": GOAWAY_ID, "received": None}
    read = step_json(client, step_of(events, "client", "frame_parsed", "goaway"))
    assert "client.connection.goaway.received" in read["changed"]
    assert read["state"]["client"]["connection"]["goaway"]["received"] == GOAWAY_ID


def test_push_ids_and_the_clean_close_are_in_the_state(
    client: FlaskClient, events: list[Event]
) -> None:
    final = step_json(client, len(events) - 1)["state"]
    client_side, server_side = final["client"]["connection"], final["server"]["connection"]
    assert client_side["max_push_id"] == {"sent": 3, "received": None}
    assert server_side["max_push_id"] == {"sent": None, "received": 3}
    assert server_side["pushes_promised"] == {"sent": [0, 1], "received": []}
    assert client_side["pushes_promised"] == {"sent": [], "received": [0, 1]}
    assert client_side["pushes_cancelled"] == {"sent": [1], "received": []}
    assert server_side["closed"]["clean"] is True
    assert server_side["closed"]["code_name"] == "H3_NO_ERROR"
    assert client_side["closed"]["direction"] == "received"
    # The server's own push stream: nothing to receive on it, complete from the start.
    pushed = [sid for sid, info in final["server"]["streams"].items() if info["type"] == "push"]
    assert [final["server"]["streams"][sid]["state"] for sid in pushed] == ["complete"]


def test_the_handout_writes_out_what_changed_in_the_connection(
    client: FlaskClient, events: list[Event]
) -> None:
    goaway = step_of(events, "server", "frame_created", "goaway")
    close = step_of(events, "client", "connection_closed")
    page = client.get(f"/trace/{TRACE_ID}/print?from={goaway}&to={close}").get_data(as_text=True)
    text = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", page))
    assert f"Connection changed GOAWAY sent: {GOAWAY_ID}" in text
    assert "connection: closed cleanly by this endpoint: H3_NO_ERROR (shutting down)" in text
    assert "closed cleanly by the peer: H3_NO_ERROR" in text
