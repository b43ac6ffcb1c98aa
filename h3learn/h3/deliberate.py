"""RFC 9114 §8 from the other side: a teaching and test facility that breaks rules on purpose.

A lesson about errors needs an endpoint that misbehaves. These functions skip the checks
the sending side normally makes, so that the *peer's* reaction can be watched: the
connection error or stream error it raises, with the rule it names. They are used by
h3learn/curriculum (lesson scenarios, violations.py builds the units) and by tests, never
by the server or the client:

- `send_deliberately`: any labelled unit on any of this endpoint's streams;
- `open_stream_deliberately`: a unidirectional stream of any type (a second control stream,
  a client's push stream);
- `send_request_unchecked` / `send_headers_unchecked`: a malformed message.

Every unit is recorded with the rule it breaks (``deliberate`` in the event's data).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from h3learn.events import FieldSpan
from h3learn.h3 import message_sending, unidirectional_streams
from h3learn.h3.actions import SendStreamData
from h3learn.h3.messages import Header
from h3learn.h3.stream_types import StreamHeader

if TYPE_CHECKING:
    from h3learn.h3.connection import H3Connection


@dataclass(frozen=True, slots=True)
class DeliberateUnit:
    """Teaching and test facility: a unit that breaks a rule on purpose, with its labels.

    ``category`` and ``name`` are the event it is recorded as (``http3`` ``frame_created``,
    ``qpack`` ``instruction_created``, or ``http3`` ``raw_bytes_sent`` for bytes with no
    structure), ``data`` that event's data (docs/events.md), ``fields`` the labels of
    ``raw``, and ``rule`` the rule it breaks in words, e.g. "RFC 9114 §7.2.4: a second
    SETTINGS frame". h3learn/curriculum/violations.py builds them.
    """

    category: str
    name: str
    raw: bytes
    fields: tuple[FieldSpan, ...]
    data: dict[str, Any]
    rfc: tuple[str, ...]
    describe: str
    rule: str


def send_deliberately(
    conn: H3Connection, stream_id: int, unit: DeliberateUnit, end_stream: bool = False
) -> None:
    """Teaching facility: put ``unit`` on stream ``stream_id`` as it is, unchecked."""
    conn._check_open()
    conn._actions.append(SendStreamData(stream_id, unit.raw, end_stream=end_stream))
    if conn.recorder.enabled:
        fin = " and ends the stream" if end_stream and unit.raw else ""
        conn.recorder.record(
            category=unit.category,
            name=unit.name,
            stream_id=stream_id,
            data=unit.data | {"deliberate": unit.rule},
            raw=unit.raw,
            fields=unit.fields,
            rfc=unit.rfc,
            summary=(
                f"{conn.trace.arrow}: {unit.describe} on stream {stream_id}{fin}, breaking"
                f" {unit.rule} on purpose"
            ),
        )


def open_stream_deliberately(conn: H3Connection, header: StreamHeader) -> int:
    """Teaching facility: open a unidirectional stream of any type (a second control stream)."""
    conn._check_open()
    return unidirectional_streams.open_uni_stream(conn, header)


def send_request_unchecked(
    conn: H3Connection, headers: Sequence[Header], end_stream: bool = False
) -> int:
    """Teaching facility: a request whose header section is sent as given, even malformed."""
    message_sending.check_can_request(conn)
    method = next((value for name, value in headers if name == b":method"), b"GET")
    return message_sending.open_request(conn, headers, method, end_stream)


def send_headers_unchecked(
    conn: H3Connection, stream_id: int, headers: Sequence[Header], end_stream: bool = False
) -> None:
    """Teaching facility: a response or trailer section sent as given, even malformed."""
    conn._check_open()
    stream = message_sending.sending_stream(conn, stream_id)
    message_sending.send_field_section(conn, stream_id, headers)
    stream.headers_sent = True
    if end_stream:
        message_sending.end_sending(conn, stream)
