"""RFC 9218 §7.2: what a server's PRIORITY_UPDATE names must exist.

Chromium sends PRIORITY_UPDATE on its control stream (peers.md). A server shows the new
priority and does not act on it, but the element the frame names is checked: the request
variant (0xf0700) must name a request stream, a client-initiated bidirectional one, and the
push variant (0xf0701) a push the server has promised. Anything else is a connection error
of type H3_ID_ERROR. (Where it may be sent, and by whom, is test_frames_on_streams.py's.)
"""

from __future__ import annotations

import pytest
from h3_connection_helpers import REQUEST, Lone, assert_connection_error, assert_no_error

from h3learn.h3.errors import ErrorCode
from h3learn.h3.frames import MaxPushIdFrame
from h3learn.h3.priority_update import PriorityUpdateFrame


@pytest.mark.parametrize("stream_id", [0, 4, 400])
def test_a_priority_update_for_a_request_stream_is_accepted(stream_id: int) -> None:
    lone = Lone.server()
    lone.control(PriorityUpdateFrame(stream_id, b"u=1, i"))
    assert_no_error(lone)


@pytest.mark.parametrize(
    "stream_id", [1, 2, 3, 6], ids=["server-bidi", "client-uni", "server-uni", "client-uni-6"]
)
def test_a_priority_update_for_a_stream_that_is_not_a_request_is_h3_id_error(
    stream_id: int,
) -> None:
    lone = Lone.server()
    lone.control(PriorityUpdateFrame(stream_id, b"u=1"))
    event = assert_connection_error(lone, ErrorCode.H3_ID_ERROR, "9218#7.2")
    assert f"stream {stream_id}, which is not a request stream" in event.data["rule"]


def test_a_priority_update_for_a_push_never_promised_is_h3_id_error() -> None:
    lone = Lone.server()
    lone.control(MaxPushIdFrame(5), PriorityUpdateFrame(0, b"u=1", push=True))
    event = assert_connection_error(lone, ErrorCode.H3_ID_ERROR, "9218#7.2")
    assert (
        "push ID 0, which this server has not promised (it has promised none)"
        in (event.data["rule"])
    )


def test_a_priority_update_for_a_promised_push_is_accepted_and_one_past_it_is_not() -> None:
    lone = Lone.server()
    lone.control(MaxPushIdFrame(5))
    lone.feed(0, lone.headers(0, REQUEST), end_stream=True)
    assert lone.conn.send_push_promise(0, REQUEST) == 0
    lone.control(PriorityUpdateFrame(0, b"u=5", push=True))
    assert_no_error(lone)
    lone.control(PriorityUpdateFrame(1, b"u=5", push=True))
    event = assert_connection_error(lone, ErrorCode.H3_ID_ERROR, "9218#7.2")
    assert "(it has promised push 0)" in event.data["rule"]
