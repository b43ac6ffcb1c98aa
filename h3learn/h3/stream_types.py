"""RFC 9114 §6: the QUIC streams HTTP/3 uses, and the type that opens a unidirectional one.

QUIC stream IDs (RFC 9000 §2.1) carry two facts in their two lowest bits:

    bit 0x01  who opened the stream: 0 = the client, 1 = the server
    bit 0x02  which way data flows:  0 = both ways (bidirectional), 1 = one way (unidirectional)

    stream ID  low bits  stream
    0, 4, 8    0b00      client-initiated bidirectional: HTTP/3 request streams (RFC 9114 §6.1)
    1, 5, 9    0b01      server-initiated bidirectional: unused by HTTP/3 (RFC 9114 §6.1)
    2, 6, 10   0b10      client-initiated unidirectional (RFC 9114 §6.2)
    3, 7, 11   0b11      server-initiated unidirectional (RFC 9114 §6.2)

A unidirectional stream starts with a Stream Type, a variable-length integer, that says what
the rest of the stream carries (RFC 9114 §6.2). A push stream adds the Push ID of the promise
it fulfils (RFC 9114 §6.2.2):

    Unidirectional Stream Header { Stream Type (i), }
    Push Stream Header           { Stream Type (i) = 0x01, Push ID (i), }

Types of the form ``0x1f * N + 0x21`` are reserved (RFC 9114 §6.2.3): a sender may open such a
stream as padding, and a receiver reads nothing into it. A receiver that does not know a type
stops reading or discards the stream, and never treats it as a connection error (§6.2).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum, StrEnum
from typing import Any

from h3learn.h3.errors import ErrorCode, H3ConnectionError, is_reserved
from h3learn.h3.registry import Registry
from h3learn.h3.varint_fields import (
    VarintLengths,
    encoded_size,
    lengths_as_received,
    lengths_to_write,
    peek_varint,
    read_varint,
    write_varint,
)
from h3learn.wire.spans import SpanReader, SpanWriter


class StreamType(IntEnum):
    """RFC 9114 §11.2.4 and RFC 9204 §8.2: the "HTTP/3 Stream Types" registry."""

    CONTROL = 0x00
    PUSH = 0x01
    QPACK_ENCODER = 0x02
    QPACK_DECODER = 0x03


class StreamKind(StrEnum):
    """The three kinds of stream that carry HTTP/3 frames (the columns of RFC 9114 §7's Table 1).

    QPACK's encoder and decoder streams carry QPACK instructions, not frames (RFC 9204 §4.2).
    """

    CONTROL = "control"
    REQUEST = "request"
    PUSH = "push"


# -- QUIC stream IDs (RFC 9000 §2.1) ------------------------------------------------------

#: Set in the ID of a stream the server opened; clear if the client opened it.
INITIATOR_BIT = 0x01
#: Set in the ID of a unidirectional stream; clear for a bidirectional one.
DIRECTION_BIT = 0x02

#: The two low bits of a stream ID, one value per kind of stream (the table above).
CLIENT_BIDI, SERVER_BIDI, CLIENT_UNI, SERVER_UNI = 0, 1, 2, 3
#: The next stream of the same kind has the ID 4 higher.
STREAM_ID_STEP = 4


def initiator(stream_id: int) -> str:
    """ "client" or "server": the endpoint that opened the stream (RFC 9000 §2.1)."""
    return "server" if stream_id & INITIATOR_BIT else "client"


def is_unidirectional(stream_id: int) -> bool:
    return bool(stream_id & DIRECTION_BIT)


def is_bidirectional(stream_id: int) -> bool:
    return not stream_id & DIRECTION_BIT


def is_request_stream(stream_id: int) -> bool:
    """Whether HTTP/3 uses this stream for a request: the client opened it, both ways (§6.1)."""
    return initiator(stream_id) == "client" and is_bidirectional(stream_id)


def describe_stream_id(stream_id: int) -> str:
    """e.g. "stream 4 (client-initiated, bidirectional)"."""
    direction = "unidirectional" if is_unidirectional(stream_id) else "bidirectional"
    return f"stream {stream_id} ({initiator(stream_id)}-initiated, {direction})"


# -- stream types ---------------------------------------------------------------------------

#: What each stream type carries, and where it is defined.
STREAM_TYPE_INFO: dict[StreamType, tuple[str, str]] = {
    StreamType.CONTROL: ("HTTP/3 frames that manage the whole connection", "9114#6.2.1"),
    StreamType.PUSH: ("the response to a server push, as HTTP/3 frames", "9114#6.2.2"),
    StreamType.QPACK_ENCODER: ("QPACK encoder instructions", "9204#4.2"),
    StreamType.QPACK_DECODER: ("QPACK decoder instructions", "9204#4.2"),
}

#: The qlog names of stream types (http3 ``stream_type_set``).
QLOG_STREAM_TYPE: dict[StreamType, str] = {
    StreamType.CONTROL: "control",
    StreamType.PUSH: "push",
    StreamType.QPACK_ENCODER: "qpack_encode",
    StreamType.QPACK_DECODER: "qpack_decode",
}

#: Which endpoint may open each type: the "Sender" column of RFC 9114 §11.2.4 / RFC 9204 §8.2.
OPENED_BY: dict[StreamType, frozenset[str]] = {
    StreamType.CONTROL: frozenset({"client", "server"}),
    StreamType.PUSH: frozenset({"server"}),
    StreamType.QPACK_ENCODER: frozenset({"client", "server"}),
    StreamType.QPACK_DECODER: frozenset({"client", "server"}),
}


def is_reserved_stream_type(stream_type: int) -> bool:
    """RFC 9114 §6.2.3: ``0x1f * N + 0x21`` types are reserved and carry nothing."""
    return is_reserved(stream_type)


STREAM_TYPES = Registry(StreamType, "stream type")
known_stream_type = STREAM_TYPES.known


def stream_type_section(stream_type: int) -> str:
    """The section governing a Stream Type value: §6.2.3 for a reserved one, else §6.2."""
    return "9114#6.2.3" if is_reserved_stream_type(stream_type) else "9114#6.2"


def stream_type_name(stream_type: int) -> str:
    """e.g. "CONTROL", "reserved stream type 0x21", "unknown stream type 0x54"."""
    return STREAM_TYPES.name(stream_type)


def explain_stream_type(stream_type: int) -> str:
    known = known_stream_type(stream_type)
    if known is not None:
        carries, _ = STREAM_TYPE_INFO[known]
        return f"Stream type {stream_type:#04x} ({known.name}): the stream carries {carries}."
    if is_reserved_stream_type(stream_type):
        return (
            f"Stream type {stream_type:#x} is reserved (RFC 9114 §6.2.3): the stream has no "
            "meaning and the receiver ignores what follows."
        )
    return (
        f"Stream type {stream_type:#x} is not one this endpoint knows: it stops reading or "
        "discards the stream, and must not close the connection for it (RFC 9114 §6.2)."
    )


def check_stream_opener(stream_type: int, opened_by: str) -> None:
    """Raise if ``opened_by`` ("client"/"server") may not open a stream of this type.

    RFC 9114 §6.2.2: only a server pushes; a client-initiated push stream is a connection
    error of type H3_STREAM_CREATION_ERROR. Unknown and reserved types are not checked.
    """
    known = known_stream_type(stream_type)
    if known is not None and opened_by not in OPENED_BY[known]:
        raise H3ConnectionError(
            ErrorCode.H3_STREAM_CREATION_ERROR,
            f"the {opened_by} opened a {known.name} stream, which only the "
            f"{' or '.join(sorted(OPENED_BY[known]))} may open",
            "9114#6.2.2",
        )


EXPLAIN_PUSH_ID = (
    "The push ID of the promise this stream fulfils; each push ID opens at most one push stream."
)


@dataclass(frozen=True, slots=True)
class StreamHeader:
    """RFC 9114 §6.2: the first bytes of a unidirectional stream.

    ``push_id`` is present exactly when ``stream_type`` is PUSH (§6.2.2). ``varint_lengths``
    records (Stream Type, Push ID) encodings longer than the shortest form, if any.
    """

    stream_type: int
    push_id: int | None = None
    varint_lengths: VarintLengths = None

    def __post_init__(self) -> None:
        if (self.stream_type == StreamType.PUSH) != (self.push_id is not None):
            raise ValueError("a push stream header, and only that, carries a Push ID")

    def serialize(self, writer: SpanWriter) -> None:
        count = 1 if self.push_id is None else 2
        lengths = lengths_to_write(self.varint_lengths, count)
        write_varint(
            writer,
            self.stream_type,
            "Stream Type",
            explain_stream_type(self.stream_type),
            stream_type_section(self.stream_type),
            lengths[0],
        )
        if self.push_id is not None:
            write_varint(writer, self.push_id, "Push ID", EXPLAIN_PUSH_ID, "9114#6.2.2", lengths[1])

    def size(self) -> int:
        """How many bytes the header takes on the wire."""
        lengths = lengths_to_write(self.varint_lengths, 1 if self.push_id is None else 2)
        size = encoded_size(self.stream_type, lengths[0])
        if self.push_id is not None:
            size += encoded_size(self.push_id, lengths[1])
        return size

    def describe(self) -> str:
        name = stream_type_name(self.stream_type)
        if self.push_id is not None:
            return f"{name} stream (push ID {self.push_id})"
        known = known_stream_type(self.stream_type)
        return f"{name} stream" if known is not None else name

    def qlog(self, stream_id: int) -> dict[str, Any]:
        """The data of a qlog http3 ``stream_type_set`` event for this stream."""
        known = known_stream_type(self.stream_type)
        data: dict[str, Any] = {"stream_id": stream_id}
        if known is not None:
            data["stream_type"] = QLOG_STREAM_TYPE[known]
        elif is_reserved_stream_type(self.stream_type):
            data["stream_type"] = "reserved"
        else:
            data["stream_type"] = "unknown"
            data["stream_type_bytes"] = self.stream_type
        if self.push_id is not None:
            data["associated_push_id"] = self.push_id
        return data


def parse_stream_header(reader: SpanReader) -> StreamHeader:
    """Read the header of a unidirectional stream (RFC 9114 §6.2, §6.2.2).

    Raises `NeedMoreData` until the whole header is there: the Stream Type, and for a push
    stream the Push ID as well.
    """
    upcoming_type, _ = peek_varint(reader)
    stream_type, type_length = read_varint(
        reader,
        "Stream Type",
        explain_stream_type(upcoming_type),
        stream_type_section(upcoming_type),
    )
    if stream_type != StreamType.PUSH:
        return StreamHeader(stream_type, None, lengths_as_received([stream_type], [type_length]))
    push_id, push_id_length = read_varint(reader, "Push ID", EXPLAIN_PUSH_ID, "9114#6.2.2")
    return StreamHeader(
        stream_type,
        push_id,
        lengths_as_received([stream_type, push_id], [type_length, push_id_length]),
    )
