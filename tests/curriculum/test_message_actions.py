"""The actions that shape messages and use extension points: `fields`, `interim`, `extension`.

Each test records a small lesson and checks what the trace shows (docs/lessons.md): a
header section sent exactly as written, an interim response on its own, reserved frames
and streams the peer ignores; and that a mistake in using them is an error at its line.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from h3learn.curriculum.lesson import RecordedLesson, load_lesson, record_lesson
from h3learn.curriculum.source import SourceError

HEAD = """\
title = "Actions"
summary = "x"
goals = ["x"]
introduction = "x"
"""


def record(tmp_path: Path, actions: str) -> RecordedLesson:
    path = tmp_path / "01-actions.toml"
    path.write_text(HEAD + actions)
    return record_lesson(load_lesson(path, path.name))


def error_of(tmp_path: Path, actions: str) -> SourceError:
    with pytest.raises(SourceError) as caught:
        record(tmp_path, actions)
    return caught.value


def names(recorded: RecordedLesson, endpoint: str, name: str) -> list[dict[str, Any]]:
    return [e.data for e in recorded.events if e.endpoint == endpoint and e.name == name]


CONNECT = """
[[action]]
do = "request"
label = "tunnel"
fields = [[":method", "CONNECT"], [":authority", "mail.example.org:993"]]
end = false

[[action]]
do = "respond"
to = "tunnel"
end = false

[[action]]
do = "data"
from = "client"
on = "tunnel"
body = "a1 NOOP\\r\\n"
end = true
"""


def test_fields_send_the_header_section_exactly_as_written(tmp_path: Path) -> None:
    """A CONNECT request (RFC 9114 §4.4) has only :method and :authority."""
    recorded = record(tmp_path, CONNECT)
    (decoded,) = [
        e for e in recorded.events if e.endpoint == "server" and e.name == "headers_decoded"
    ]
    assert [(h["name"], h["value"]) for h in decoded.data["headers"]] == [
        (":method", "CONNECT"),
        (":authority", "mail.example.org:993"),
    ]
    assert names(recorded, "server", "stream_error") == []
    # After the 200 the stream is a tunnel: the client's DATA is carried, not checked.
    data = [
        d for d in names(recorded, "server", "frame_parsed") if d["frame"]["frame_type"] == "data"
    ]
    assert [d["length"] for d in data] == [9]  # the payload (RFC 9114 §7.1 Length)


def test_fields_replace_the_pseudo_header_keys(tmp_path: Path) -> None:
    text = CONNECT.replace('label = "tunnel"\n', 'label = "tunnel"\nmethod = "GET"\n')
    error = error_of(tmp_path, text)
    assert "'fields' is the whole header section: leave out 'method'" in str(error)


def test_unchecked_fields_can_leave_out_a_pseudo_header(tmp_path: Path) -> None:
    recorded = record(
        tmp_path,
        """
[[action]]
do = "request"
label = "bad"
fields = [[":method", "GET"], [":scheme", "https"], [":authority", "example.org"]]
unchecked = true
""",
    )
    (error,) = names(recorded, "server", "stream_error")
    assert error["code_name"] == "H3_MESSAGE_ERROR" and error["rfc"] == "9114#4.3.1"


def test_an_interim_response_comes_alone_and_the_final_one_later(tmp_path: Path) -> None:
    """RFC 9114 §4.1: 1xx responses precede the final response on the same stream."""
    recorded = record(
        tmp_path,
        """
[[action]]
do = "request"
label = "upload"
method = "PUT"
headers = [["expect", "100-continue"], ["content-length", "2"]]
end = false

[[action]]
do = "interim"
to = "upload"
status = 100

[[action]]
do = "data"
from = "client"
on = "upload"
body = "hi"
end = true

[[action]]
do = "respond"
to = "upload"
status = 204
""",
    )
    moves = [
        (m["old"], m["new"], m["trigger"])
        for m in names(recorded, "client", "stream_state_updated")
    ]
    assert moves == [
        ("expecting_headers", "expecting_headers", "interim_headers"),
        ("expecting_headers", "receiving_content", "headers"),
        ("receiving_content", "complete", "end_of_stream"),
    ]
    # The client's DATA left only after the 100 arrived.
    order = [(e.endpoint, e.name) for e in recorded.events]
    assert order.index(("client", "headers_decoded")) < order.index(("client", "frame_created"), 30)


def test_an_interim_response_needs_a_1xx_status(tmp_path: Path) -> None:
    error = error_of(
        tmp_path,
        '\n[[action]]\ndo = "request"\nlabel = "p"\nend = false\n'
        '\n[[action]]\ndo = "interim"\nto = "p"\nstatus = 200\n',
    )
    assert "an interim response has a 1xx status, not 200" in str(error)


def test_extension_frames_and_streams_are_ignored_by_the_peer(tmp_path: Path) -> None:
    """RFC 9114 §7.2.8, §6.2.3: reserved types mean nothing; a reserved stream is stopped."""
    recorded = record(
        tmp_path,
        """
[[action]]
do = "extension"
from = "client"
frame_type = 0x21
on = "client control stream"
payload = "pad"

[[action]]
do = "extension"
from = "server"
stream_type = 0x40
payload = "anything"
""",
    )
    frames = [d["frame"] for d in names(recorded, "server", "frame_parsed")]
    assert {k: v for k, v in frames[-1].items() if k != "raw"} == {
        "frame_type": "reserved",
        "frame_type_bytes": 0x21,
    }
    (stop,) = names(recorded, "client", "stop_sending")
    assert stop["rfc"] == "9114#6.2.3" and stop["direction"] == "sent"
    (reset,) = names(recorded, "server", "reset_stream")
    assert reset["code"] == 0x40
    assert not [e for e in recorded.events if e.name == "connection_error"]


@pytest.mark.parametrize(
    ("keys", "message"),
    [
        ('frame_type = 0x21\nstream_type = 0x21\non = "client control stream"', "exactly one"),
        ("frame_type = 0x21", "'on' is missing"),
        ('stream_type = 0x21\non = "client control stream"', "leave out 'on'"),
        ('frame_type = 0x04\non = "client control stream"', "not a reserved or unknown frame"),
        ("stream_type = 0x00", "is registered"),
    ],
)
def test_a_misused_extension_action_says_what_is_wrong(
    tmp_path: Path, keys: str, message: str
) -> None:
    error = error_of(tmp_path, f'\n[[action]]\ndo = "extension"\nfrom = "client"\n{keys}\n')
    assert message in str(error)
    # The line of the [[action]] table, or of the key at fault inside it.
    first = HEAD.count("\n") + 2
    assert first <= error.line <= first + 3 + keys.count("\n")
