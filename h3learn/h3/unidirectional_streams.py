"""RFC 9114 §6.2: unidirectional streams, the control stream (§6.2.1) and the QPACK encoder
and decoder streams (RFC 9204 §4.2).

Each endpoint opens its unidirectional streams itself, and the first bytes of each say
what it carries (the Stream Type, stream_types.py):

    type 0x00  control stream    SETTINGS first, then GOAWAY, MAX_PUSH_ID, CANCEL_PUSH...
    type 0x01  push stream       a pushed response (server only, push.py)
    type 0x02  QPACK encoder     inserts into the peer's copy of the dynamic table
    type 0x03  QPACK decoder     acknowledgments for the encoder
    other      reserved or unknown: read and ignored (§6.2.3, §9; extensions.py)

The control stream and the two QPACK streams are *critical*: each side opens one control
stream and at most one QPACK encoder and one decoder stream, kept for the whole connection
(RFC 9204 §4.2 lets an endpoint leave out a QPACK stream it will not use; h3learn always
opens both). A second one is H3_STREAM_CREATION_ERROR; closing or
resetting one is H3_CLOSED_CRITICAL_STREAM (RFC 9114 §6.2.1, RFC 9204 §4.2). The first frame
on a control stream must be SETTINGS (H3_MISSING_SETTINGS otherwise), and there is only one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from h3learn.h3 import closure, error_handling, message_receiving, push, zero_rtt
from h3learn.h3.actions import SendStreamData
from h3learn.h3.errors import ErrorCode, H3ConnectionError
from h3learn.h3.frame_parser import ParsedFrame
from h3learn.h3.frame_placement import check_frame_allowed
from h3learn.h3.frames import CancelPushFrame, GoawayFrame, MaxPushIdFrame, SettingsFrame
from h3learn.h3.http_events import SettingsReceived
from h3learn.h3.priority_update import PriorityUpdateFrame
from h3learn.h3.recording import settings_json, stream_type_sections
from h3learn.h3.settings import Settings
from h3learn.h3.stream_state import IncomingUniStream
from h3learn.h3.stream_types import (
    CLIENT_BIDI,
    CLIENT_UNI,
    SERVER_UNI,
    STREAM_ID_STEP,
    StreamHeader,
    StreamKind,
    StreamType,
    parse_stream_header,
    stream_type_section,
)
from h3learn.wire.errors import NeedMoreData
from h3learn.wire.spans import SpanReader, SpanWriter
from h3learn.wire.varint import parse_varint

if TYPE_CHECKING:
    from h3learn.h3.connection import H3Connection


def initiate(conn: H3Connection) -> None:
    """Open the control stream with SETTINGS, and the two QPACK streams."""
    conn.control_stream_id = open_uni_stream(conn, StreamHeader(StreamType.CONTROL))
    conn._send_frame(conn.control_stream_id, SettingsFrame(conn.local_settings.pairs()))
    conn.encoder.encoder_stream_id = open_uni_stream(conn, StreamHeader(StreamType.QPACK_ENCODER))
    conn.decoder.decoder_stream_id = open_uni_stream(conn, StreamHeader(StreamType.QPACK_DECODER))


def open_uni_stream(conn: H3Connection, header: StreamHeader) -> int:
    """Open this endpoint's next unidirectional stream and send its header (§6.2)."""
    stream_id = conn._next_uni_stream_id
    conn._next_uni_stream_id += STREAM_ID_STEP
    writer = SpanWriter(record=conn.recorder.enabled)
    header.serialize(writer)
    conn._actions.append(SendStreamData(stream_id, writer.unit()))
    conn.trace.record(
        "stream_type_set",
        stream_id,
        header.qlog(stream_id) | {"owner": "local"},
        raw=writer.unit(),
        fields=writer.field_spans(),
        rfc=stream_type_sections(header.stream_type),
        summary=f"{conn.trace.me} opens stream {stream_id}: {header.describe()}",
    )
    return stream_id


def receive_unidirectional(
    conn: H3Connection, stream_id: int, data: bytes, end_stream: bool
) -> None:
    """Bytes on a stream the peer opened: first its Stream Type, then what that type carries."""
    if stream_id & 0x3 == (CLIENT_UNI if conn.is_client else SERVER_UNI):
        raise H3ConnectionError(
            ErrorCode.H3_STREAM_CREATION_ERROR,
            f"data received on this endpoint's own unidirectional stream {stream_id}, which"
            " only this endpoint may send on (QUIC refuses such data first, with"
            " STREAM_STATE_ERROR; over ideal streams HTTP/3 reports it)",
            "9000#19.8",
        )
    stream = conn._incoming_uni.get(stream_id)
    if stream is None:
        stream = conn._incoming_uni[stream_id] = IncomingUniStream(stream_id)
    if stream.header is None:
        stream.buffer += data
        # A copy: the buffer is cleared below, and the event keeps the header's bytes.
        reader = SpanReader(bytes(stream.buffer), record=conn.recorder.enabled)
        try:
            header = parse_stream_header(reader)
        except NeedMoreData:
            stream_type_alone(conn, stream)
            return  # RFC 9114 §6.2: a stream may even end before its type arrives
        data = bytes(stream.buffer[reader.position :])
        stream.buffer.clear()
        stream_type_received(conn, stream, header, reader)
    uni_stream_data(conn, stream, data, end_stream)


def stream_type_alone(conn: H3Connection, stream: IncomingUniStream) -> None:
    """The Stream Type has arrived but not the rest of the header (a push stream's Push ID):
    what the type alone forbids is an error now, not once the Push ID arrives (§6.2.2)."""
    try:
        stream_type, _ = parse_varint(stream.buffer)
    except NeedMoreData:
        return
    if stream_type == StreamType.PUSH:
        push.check_push_stream_opener(conn, stream.stream_id)


def stream_type_received(
    conn: H3Connection, stream: IncomingUniStream, header: StreamHeader, reader: SpanReader
) -> None:
    """The Stream Type has arrived: note a critical stream, or start reading a push stream."""
    stream.header = header
    conn.trace.record(
        "stream_type_set",
        stream.stream_id,
        header.qlog(stream.stream_id) | {"owner": "remote"},
        raw=reader.unit(),
        fields=reader.field_spans(),
        rfc=stream_type_sections(header.stream_type),
        summary=(
            f"{conn.trace.me} sees the {conn.trace.peer} open stream {stream.stream_id}:"
            f" {header.describe()}"
        ),
    )
    kind = header.stream_type
    if kind == StreamType.CONTROL:
        claim_critical(conn, "peer_control_stream_id", stream.stream_id, "control", "9114#6.2.1")
    elif kind == StreamType.QPACK_ENCODER:
        claim_critical(
            conn, "peer_encoder_stream_id", stream.stream_id, "QPACK encoder", "9204#4.2"
        )
        conn.decoder.encoder_stream_id = stream.stream_id
    elif kind == StreamType.QPACK_DECODER:
        claim_critical(
            conn, "peer_decoder_stream_id", stream.stream_id, "QPACK decoder", "9204#4.2"
        )
        conn.encoder.decoder_stream_id = stream.stream_id
    elif kind == StreamType.PUSH:
        push.push_stream_opened(conn, stream, header)
    else:
        # RFC 9114 §6.2, §6.2.3: unknown and reserved types are ignored; asking the peer
        # to stop sending spares it the effort.
        error_handling.send_stop_sending(
            conn,
            stream.stream_id,
            ErrorCode.H3_STREAM_CREATION_ERROR,
            f"stream {stream.stream_id} is of a type this endpoint ignores ({header.describe()})",
            rfc=stream_type_section(kind),
        )


def claim_critical(conn: H3Connection, attribute: str, stream_id: int, name: str, rfc: str) -> None:
    """Note the peer's one stream of a critical type; a second is H3_STREAM_CREATION_ERROR."""
    if getattr(conn, attribute) is not None:
        raise H3ConnectionError(
            ErrorCode.H3_STREAM_CREATION_ERROR,
            f"second {name} stream ({stream_id}); the first was {getattr(conn, attribute)}",
            rfc,
        )
    setattr(conn, attribute, stream_id)


def uni_stream_data(
    conn: H3Connection, stream: IncomingUniStream, data: bytes, end_stream: bool
) -> None:
    """Hand what followed the Stream Type to whatever reads that type."""
    assert stream.header is not None
    kind = stream.header.stream_type
    if kind == StreamType.CONTROL:
        receive_control(conn, data)
    elif kind == StreamType.QPACK_ENCODER:
        if data:
            message_receiving.unblocked(conn, conn.decoder.feed_encoder(data))
    elif kind == StreamType.QPACK_DECODER:
        if data:
            conn.encoder.feed_decoder(data)
    elif kind == StreamType.PUSH:
        assert stream.request is not None
        if not stream.request.abandoned:
            message_receiving.receive_bytes(conn, stream.request, data, end_stream)
        return
    if end_stream:
        check_critical_closed(conn, stream.stream_id, "closed")


def check_critical_closed(conn: H3Connection, stream_id: int, how: str) -> None:
    """RFC 9114 §6.2.1, RFC 9204 §4.2: closing a critical stream closes the connection."""
    names = {
        conn.peer_control_stream_id: "control",
        conn.peer_encoder_stream_id: "QPACK encoder",
        conn.peer_decoder_stream_id: "QPACK decoder",
    }
    name = names.get(stream_id)
    if name is not None:
        raise H3ConnectionError(
            ErrorCode.H3_CLOSED_CRITICAL_STREAM,
            f"peer {how} its {name} stream {stream_id}",
            "9114#6.2.1" if name == "control" else "9204#4.2",
        )


def receive_control(conn: H3Connection, data: bytes) -> None:
    """Frames on the peer's control stream (§6.2.1): SETTINGS first, then the rest.

    The frames before a broken one are handled first, so the error a peer gets is the first
    rule broken on the stream however its bytes were split into packets.
    """
    frames, error = conn._peer_control_parser.feed_then_error(data)
    for parsed in frames:
        control_frame_received(conn, parsed)
    if error is not None:
        raise error


def control_frame_received(conn: H3Connection, parsed: ParsedFrame) -> None:
    conn.trace.frame_parsed(conn.peer_control_stream_id, parsed)
    frame = parsed.frame
    first = conn._peer_control_frames == 0
    conn._peer_control_frames += 1
    if first and not isinstance(frame, SettingsFrame):
        raise H3ConnectionError(
            ErrorCode.H3_MISSING_SETTINGS,
            f"first frame on the control stream is {frame.describe()}, not SETTINGS",
            "9114#6.2.1",
        )
    check_frame_allowed(frame.frame_type, StreamKind.CONTROL, sender=conn.trace.peer)
    if isinstance(frame, SettingsFrame):
        if not first:
            raise H3ConnectionError(
                ErrorCode.H3_FRAME_UNEXPECTED,
                "second SETTINGS frame on the control stream",
                "9114#7.2.4",
            )
        settings_received(conn, frame)
    elif isinstance(frame, GoawayFrame):
        closure.goaway_received(conn, frame.id)
    elif isinstance(frame, MaxPushIdFrame):
        push.max_push_id_received(conn, frame.push_id)
    elif isinstance(frame, CancelPushFrame):
        push.cancel_push_received(conn, frame.push_id)
    elif isinstance(frame, PriorityUpdateFrame):
        priority_update_received(conn, frame)


def priority_update_received(conn: H3Connection, frame: PriorityUpdateFrame) -> None:
    """RFC 9218 §7.2: a server checks what a PRIORITY_UPDATE names, then only shows it.

    The new priority is a hint for scheduling, which h3learn does not act on. But the
    element it names must be one that can exist: a request stream (client-initiated and
    bidirectional) for type 0xf0700, a push this server has promised for type 0xf0701.
    (That the stream ID is within QUIC's stream limit is only a SHOULD, and the limit lives
    in QUIC, below this layer; it is not checked.)
    """
    if frame.push and frame.element_id >= conn._next_push_id:
        promised = {0: "none", 1: "push 0"}.get(
            conn._next_push_id, f"pushes 0 to {conn._next_push_id - 1}"
        )
        raise H3ConnectionError(
            ErrorCode.H3_ID_ERROR,
            f"PRIORITY_UPDATE for push ID {frame.element_id}, which this server has not"
            f" promised (it has promised {promised})",
            "9218#7.2",
        )
    if not frame.push and frame.element_id & 0x3 != CLIENT_BIDI:
        raise H3ConnectionError(
            ErrorCode.H3_ID_ERROR,
            f"PRIORITY_UPDATE for stream {frame.element_id}, which is not a request stream"
            " (requests use client-initiated bidirectional streams: 0, 4, 8, ...)",
            "9218#7.2",
        )


def settings_received(conn: H3Connection, frame: SettingsFrame) -> None:
    """The peer's SETTINGS (§7.2.4): in force from now on, QPACK's included."""
    settings = Settings.from_frame(frame)
    remembered = conn.remembered_settings
    if remembered is not None and conn.early_data_accepted is not False:
        # RFC 9114 §7.2.4.2: a server that took 0-RTT data keeps what it relied on.
        problem = zero_rtt.incompatibility(
            remembered, settings, {identifier for identifier, _ in frame.settings}
        )
        if problem is not None:
            raise H3ConnectionError(
                problem.code, f"the server accepted 0-RTT, but {problem.rule}", problem.rfc
            )
    conn.peer_settings = settings
    conn.peer_settings_received = True
    conn.trace.record(
        "parameters_set",
        None,
        {"owner": "remote", "settings": settings_json(settings)},
        rfc=("9114#7.2.4",),
        summary=f"{conn.trace.me} applies the peer's SETTINGS: {settings.describe()}",
    )
    conn.encoder.apply_settings(settings.qpack_max_table_capacity, settings.qpack_blocked_streams)
    conn._events.append(SettingsReceived(settings=dict(frame.settings)))
