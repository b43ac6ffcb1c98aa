"""RFC 9114 §8 under Hypothesis: whatever a peer sends, the connection answers with actions.

Random bytes, and random sequences of well-formed and broken frames, arrive on random
streams (requests, pushes, control, QPACK, reserved, the endpoint's own) of a server and a
client, cut into random pieces, mixed with resets, STOP_SENDINGs and the end of streams.
Every broken rule must become a CloseConnection or a ResetStream / StopSending: no
exception may escape `receive_*`. Along the way the trace must stay well formed: a
connection error closes the connection exactly once and says so in a `connection_error`
event, nothing is sent after the close, and every byte of every event's ``raw`` is labelled.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from h3_connection_helpers import REQUEST, RESPONSE, TRAILERS, Header, Lone, uncovered_bytes
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from h3learn.h3.actions import CloseConnection, ResetStream, SendStreamData, StopSending
from h3learn.h3.errors import ErrorCode, reserved_value
from h3learn.h3.frames import (
    CancelPushFrame,
    DataFrame,
    Frame,
    GoawayFrame,
    HeadersFrame,
    MaxPushIdFrame,
    PushPromiseFrame,
    SettingsFrame,
    UnknownFrame,
    serialize_frame,
)
from h3learn.h3.http_events import (
    ConnectionTerminated,
    DataReceived,
    GoawayReceived,
    HeadersReceived,
    PushCancelled,
    PushPromiseReceived,
    SettingsReceived,
    StreamEnded,
    StreamReset,
)
from h3learn.h3.priority_update import PriorityUpdateFrame
from h3learn.h3.settings import Settings
from h3learn.h3.stream_types import StreamHeader, StreamType
from h3learn.qpack.encoder import Encoder
from h3learn.wire.spans import SpanWriter

FUZZ = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])

H3_EVENTS = (
    ConnectionTerminated,
    DataReceived,
    GoawayReceived,
    HeadersReceived,
    PushCancelled,
    PushPromiseReceived,
    SettingsReceived,
    StreamEnded,
    StreamReset,
)
ACTIONS = (CloseConnection, ResetStream, SendStreamData, StopSending)

#: Every kind of stream ID: requests (0, 4, 8), server bidirectional (1, 5), both sides'
#: control and QPACK streams (2, 3, 6, 7, 10, 11) and later unidirectional ones.
STREAM_IDS = st.sampled_from([0, 1, 2, 3, 4, 5, 6, 7, 8, 10, 11, 14, 15, 18, 19, 23])
VARINTS = st.one_of(st.integers(0, 70), st.integers(0, 2**14), st.integers(0, 2**62 - 1))
CODES = st.one_of(st.sampled_from(list(ErrorCode)), VARINTS)
HEADER_LISTS: list[list[Header]] = [
    REQUEST,
    RESPONSE,
    TRAILERS,
    [(b":status", b"103")],
    [(b":status", b"204"), (b"content-length", b"3")],
    [*REQUEST, (b"content-length", b"2")],
    [(b":method", b"CONNECT"), (b":authority", b"example.com:443")],
    [*REQUEST, (b"Bad", b"x")],
    [],
]


def field_sections() -> st.SearchStrategy[bytes]:
    """Field sections a static-only encoder makes, or random bytes."""
    encoder = Encoder()
    encoded = [encoder.encode(0, headers)[1] for headers in HEADER_LISTS]
    return st.one_of(st.sampled_from(encoded), st.binary(max_size=12))


def frames() -> st.SearchStrategy[Frame]:
    sections = field_sections()
    return st.one_of(
        st.builds(DataFrame, st.binary(max_size=20)),
        st.builds(HeadersFrame, sections),
        st.builds(CancelPushFrame, VARINTS),
        st.builds(
            SettingsFrame,
            st.lists(
                st.tuples(st.sampled_from([0x01, 0x06, 0x07, 0x08, 0x33, 0x02, 0x21]), VARINTS),
                max_size=4,
            ).map(tuple),
        ),
        st.builds(PushPromiseFrame, st.integers(0, 6), sections),
        st.builds(GoawayFrame, VARINTS),
        st.builds(MaxPushIdFrame, st.integers(0, 10)),
        st.builds(PriorityUpdateFrame, st.integers(0, 12), st.binary(max_size=6), st.booleans()),
        st.builds(
            UnknownFrame,
            st.sampled_from([reserved_value(0), reserved_value(9), 0x0B, 0x2C, 0x02, 0x06]),
            st.binary(max_size=8),
        ),
    )


def control_frames() -> st.SearchStrategy[Frame]:
    """Frames that belong on a control stream, with plausible values."""
    return st.one_of(
        st.builds(GoawayFrame, st.integers(0, 12)),
        st.builds(MaxPushIdFrame, st.integers(0, 10)),
        st.builds(CancelPushFrame, st.integers(0, 6)),
        st.builds(PriorityUpdateFrame, st.integers(0, 12), st.just(b"u=2"), st.booleans()),
        st.builds(UnknownFrame, st.just(reserved_value(3)), st.binary(max_size=4)),
    )


def message_frames() -> st.SearchStrategy[Frame]:
    """Frames that belong on a request or push stream."""
    return st.one_of(
        st.builds(DataFrame, st.binary(max_size=8)),
        st.builds(HeadersFrame, field_sections()),
        st.builds(PushPromiseFrame, st.integers(0, 6), field_sections()),
        st.builds(UnknownFrame, st.just(reserved_value(3)), st.binary(max_size=4)),
    )


def stream_headers() -> st.SearchStrategy[bytes]:
    """The first bytes of a unidirectional stream: a type (and push ID), or nothing."""
    typed = st.sampled_from(
        [StreamType.CONTROL, StreamType.QPACK_ENCODER, StreamType.QPACK_DECODER, 0x21, 0x54]
    ).map(lambda kind: serialize_stream_header(StreamHeader(kind)))
    push = st.integers(0, 12).map(lambda i: serialize_stream_header(StreamHeader(1, i)))
    return st.one_of(typed, push, st.just(b""))


@dataclass(frozen=True)
class Deliver:
    stream_id: int
    data: bytes
    end_stream: bool


@dataclass(frozen=True)
class Reset:
    stream_id: int
    code: int


@dataclass(frozen=True)
class Stop:
    stream_id: int
    code: int


Step = Deliver | Reset | Stop


def interruptions(stream_ids: st.SearchStrategy[int]) -> st.SearchStrategy[Step]:
    """A RESET_STREAM or a STOP_SENDING from the peer, with any code."""
    return st.one_of(st.builds(Reset, stream_ids, CODES), st.builds(Stop, stream_ids, CODES))


def chunks(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({cut % (len(data) + 1) for cut in cuts} | {0, len(data)})
    return [data[a:b] for a, b in itertools.pairwise(points)] or [b""]


def peer_stream_ids(is_client: bool) -> st.SearchStrategy[int]:
    """Mostly streams the peer may use (its control, QPACK and new streams, requests), and
    now and then any stream at all."""
    usual = [0, 4, 3, 7, 11, 15, 19, 23] if is_client else [0, 4, 8, 2, 6, 10, 14, 18, 22]
    return st.one_of(st.sampled_from(usual), st.sampled_from(usual), STREAM_IDS)


@st.composite
def frame_stream_steps(draw: st.DrawFn, is_client: bool, peer_streams: bool) -> list[Step]:
    """Several streams, each a (stream header and) frame sequence, cut into pieces.

    Mostly what a peer would plausibly do, so that the frames reach deep states: a critical
    stream gets its own type if the peer has not opened it yet (the control stream usually
    SETTINGS first) and no header if it has; a new stream is usually reserved, unknown or
    (from a server) a push stream; now and then anything at all.
    """
    critical = (3, 7, 11) if is_client else (2, 6, 10)
    kinds = (StreamType.CONTROL, StreamType.QPACK_ENCODER, StreamType.QPACK_DECODER)
    steps: list[Step] = []
    for _ in range(draw(st.integers(1, 4))):
        stream_id = draw(peer_stream_ids(is_client))
        data = b""
        if stream_id in critical and not peer_streams:
            data = serialize_stream_header(StreamHeader(kinds[critical.index(stream_id)]))
            if stream_id == critical[0] and draw(st.integers(0, 3)):
                data += serialize_frame(SettingsFrame())[0]
        elif stream_id in critical:
            data = draw(st.one_of(st.just(b""), st.just(b""), stream_headers()))
        elif stream_id & 0x2:
            new_stream = st.sampled_from([reserved_value(0), 0x54]).map(
                lambda kind: serialize_stream_header(StreamHeader(kind))
            )
            if is_client:
                pushed = st.integers(0, 5).map(
                    lambda i: serialize_stream_header(StreamHeader(1, i))
                )
                new_stream = st.one_of(pushed, pushed, new_stream)
            data = draw(st.one_of(new_stream, new_stream, stream_headers()))
        if stream_id == critical[0]:
            likely = control_frames()
        elif stream_id & 0x2 == 0 or data.startswith(b"\x01"):
            likely = message_frames()
        else:
            likely = frames()
        for frame in draw(st.lists(st.one_of(likely, likely, frames()), max_size=5)):
            data += serialize_frame(frame)[0]
        pieces = chunks(data, draw(st.lists(st.integers(0, 200), max_size=3)))
        end = draw(st.booleans()) and (stream_id not in critical or draw(st.booleans()))
        for index, piece in enumerate(pieces):
            steps.append(Deliver(stream_id, piece, end and index == len(pieces) - 1))
        if draw(st.integers(0, 3)) == 0:
            target = draw(st.one_of(st.just(stream_id), STREAM_IDS))
            steps.append(draw(interruptions(st.just(target))))
    return steps


def serialize_stream_header(header: StreamHeader) -> bytes:
    writer = SpanWriter()
    header.serialize(writer)
    return writer.unit()


RANDOM_STEPS = st.lists(
    st.one_of(
        st.builds(Deliver, STREAM_IDS, st.binary(max_size=30), st.booleans()),
        st.builds(Reset, STREAM_IDS, CODES),
        st.builds(Stop, STREAM_IDS, CODES),
    ),
    max_size=12,
)


#: What a peer's messages may hold, by who reads them.
REQUEST_HEADERS: list[list[Header]] = [
    REQUEST,
    [(b":method", b"POST"), *REQUEST[1:], (b"content-length", b"4")],
    [(b":method", b"CONNECT"), (b":authority", b"example.com:443")],
    [*REQUEST, (b"x-session", b"abcdef")],
    [*REQUEST, (b"Upper", b"x")],
]
RESPONSE_HEADERS: list[list[Header]] = [
    RESPONSE,
    [(b":status", b"103")],
    [(b":status", b"200"), (b"content-length", b"4"), (b"x-session", b"abcdef")],
    [(b":status", b"204")],
    [(b":status", b"101")],
]


@st.composite
def message_steps(draw: st.DrawFn, is_client: bool, dynamic: bool) -> list[Step]:
    """Plausible messages from the peer, some of them bent out of shape.

    Each stream gets a header section, content and perhaps trailers (a response may start
    with an interim one, or be a push), QPACK-encoded by a peer encoder that may use the
    dynamic table; its encoder stream bytes go before or after the message, so sections
    may block. Then a frame may be dropped or a random one slipped in, the bytes are cut
    up, and the streams are interleaved.
    """
    peer, static = Encoder(), Encoder()
    if dynamic:
        peer.apply_settings(256, 2)
    encoder_stream_id = 3 + 4 if is_client else 2 + 4
    streams: list[list[bytes]] = []
    encoder_bytes: list[bytes] = []
    ids: list[int] = []
    for _ in range(draw(st.integers(1, 3))):
        push = is_client and draw(st.booleans())
        if push:
            stream_id = draw(st.sampled_from([15, 19]))
            prefix = serialize_stream_header(StreamHeader(1, draw(st.integers(0, 5))))
        else:
            stream_id = draw(st.sampled_from([0, 4] if is_client else [0, 4, 8]))
            prefix = b""
        choices = RESPONSE_HEADERS if is_client else REQUEST_HEADERS
        sections = [draw(st.sampled_from(choices))]
        if is_client and draw(st.booleans()):
            sections.insert(0, [(b":status", b"100")])
        message: list[Frame] = []
        for headers in sections:
            instructions, section = peer.encode(stream_id, headers)
            encoder_bytes.append(instructions)
            message.append(HeadersFrame(section))
        message += [DataFrame(d) for d in draw(st.lists(st.binary(max_size=4), max_size=3))]
        if draw(st.booleans()):
            instructions, section = peer.encode(stream_id, TRAILERS)
            encoder_bytes.append(instructions)
            message.append(HeadersFrame(section))
        if not push and is_client and draw(st.booleans()):
            promised = static.encode(stream_id, REQUEST)[1]
            promise = PushPromiseFrame(draw(st.integers(0, 5)), promised)
            message.insert(draw(st.integers(0, len(message))), promise)
        drop = draw(st.booleans())
        if drop and message:
            del message[draw(st.integers(0, len(message) - 1))]
        if draw(st.booleans()):
            message.insert(draw(st.integers(0, len(message))), draw(frames()))
        data = prefix + b"".join(serialize_frame(frame)[0] for frame in message)
        pieces = chunks(data, draw(st.lists(st.integers(0, 200), max_size=3)))
        streams.append(pieces)
        ids.append(stream_id)
    steps: list[Step] = []
    instructions = b"".join(encoder_bytes)
    early = draw(st.booleans())
    if instructions and early:
        steps.append(Deliver(encoder_stream_id, instructions, False))
    cursors = [0] * len(streams)
    while any(cursor < len(pieces) for cursor, pieces in zip(cursors, streams, strict=True)):
        open_streams = [i for i, pieces in enumerate(streams) if cursors[i] < len(pieces)]
        index = draw(st.sampled_from(open_streams))
        pieces = streams[index]
        last = cursors[index] == len(pieces) - 1
        steps.append(Deliver(ids[index], pieces[cursors[index]], last and draw(st.booleans())))
        cursors[index] += 1
        if draw(st.integers(0, 9)) == 0:
            steps.append(draw(interruptions(st.sampled_from(ids))))
    if instructions and not early:
        steps.append(Deliver(encoder_stream_id, instructions, False))
    return steps


def endpoint(is_client: bool, dynamic: bool, peer_streams: bool) -> Lone:
    local = Settings(qpack_max_table_capacity=256, qpack_blocked_streams=2) if dynamic else None
    lone = Lone(is_client=is_client, settings=local, open_peer_streams=peer_streams)
    if is_client:
        lone.conn.send_max_push_id(4)
        lone.request()
        lone.request([(b":method", b"CONNECT"), (b":authority", b"example.com:443")], False)
    return lone


def run(lone: Lone, steps: list[Step]) -> None:
    """Apply the steps; check after each that only actions and events came out."""
    closed_before = False
    for step in steps:
        sent_before = len(lone.sent)
        if isinstance(step, Deliver):
            events = lone.feed(step.stream_id, step.data, step.end_stream)
        elif isinstance(step, Reset):
            events = lone.reset(step.stream_id, step.code)
        else:
            events = lone.stop_sending(step.stream_id, step.code)
        assert all(isinstance(e, H3_EVENTS) for e in events), events
        new_actions = lone.sent[sent_before:]
        assert all(isinstance(a, ACTIONS) for a in new_actions), new_actions
        if closed_before:
            assert events == [] and new_actions == [], "a closed connection stays silent"
        closed_before = lone.conn.closed
    check_outcome(lone)


def check_outcome(lone: Lone) -> None:
    closes = [a for a in lone.sent if isinstance(a, CloseConnection)]
    assert len(closes) == (1 if lone.conn.closed else 0), closes
    if closes:
        assert lone.sent[-1] == closes[0], "nothing is sent after CONNECTION_CLOSE"
        errors = [e for e in lone.events("connection_error") if e.data["direction"] == "sent"]
        assert [e.data["code"] for e in errors] == [closes[0].error_code]
    stream_errors = [e for e in lone.events("stream_error") if e.data["direction"] == "sent"]
    reported = [e for e in lone.received if isinstance(e, StreamReset)]
    assert len(reported) >= len(stream_errors), "each stream error is told to the application"
    for event in lone.log.events:
        assert uncovered_bytes(event) == [], (event.name, event.summary)


@FUZZ
@given(
    is_client=st.booleans(),
    dynamic=st.booleans(),
    peer_streams=st.booleans(),
    steps=RANDOM_STEPS,
)
def test_random_bytes_on_random_streams_only_ever_become_actions_and_events(
    is_client: bool, dynamic: bool, peer_streams: bool, steps: list[Step]
) -> None:
    run(endpoint(is_client, dynamic, peer_streams), steps)


@FUZZ
@given(is_client=st.booleans(), dynamic=st.booleans(), peer_streams=st.booleans(), data=st.data())
def test_random_frame_sequences_on_random_streams_only_ever_become_actions_and_events(
    is_client: bool, dynamic: bool, peer_streams: bool, data: st.DataObject
) -> None:
    steps = data.draw(frame_stream_steps(is_client, peer_streams))
    run(endpoint(is_client, dynamic, peer_streams), steps)


@FUZZ
@given(is_client=st.booleans(), dynamic=st.booleans(), data=st.data())
def test_plausible_but_bent_messages_only_ever_become_actions_and_events(
    is_client: bool, dynamic: bool, data: st.DataObject
) -> None:
    run(endpoint(is_client, dynamic, True), data.draw(message_steps(is_client, dynamic)))
