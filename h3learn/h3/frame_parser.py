"""RFC 9114 §7.1: cutting one stream's bytes into frames, however they arrive (sans-IO).

A stream is a sequence of frames, each ``Type (i), Length (i), Frame Payload (..)``; QUIC may
hand the bytes over in any pieces, one byte at a time included. `FrameParser` keeps what it
was given until a whole frame is there, then parses it (each frame type's payload layout is
in `h3learn.h3.frames`, PRIORITY_UPDATE's in `h3learn.h3.priority_update`) into a
`ParsedFrame`: the frame, its exact bytes and a label for every byte.

Checks that need only the Type and Length are made as soon as those two fields are complete,
before the payload is buffered:

- an HTTP/2-only frame type is H3_FRAME_UNEXPECTED (RFC 9114 §7.2.8);
- a Length the frame's fields could not fill, or that bursts a fixed-size payload, is
  H3_FRAME_ERROR (RFC 9114 §7.1);
- a Length larger than this endpoint is willing to buffer is H3_EXCESSIVE_LOAD
  (RFC 9114 §10.5, `FrameLimits`), except for a frame of a reserved or unknown type: that
  one is ignored anyway (RFC 9114 §9), so its payload is discarded as it arrives and the
  frame is reported with its Type and Length only.

A stream that ends inside a frame is H3_FRAME_ERROR (RFC 9114 §7.1).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from h3learn.events import FieldSpan
from h3learn.h3.errors import ErrorCode, H3ConnectionError
from h3learn.h3.frame_layout import (
    EXPLAIN_LENGTH,
    FrameReader,
    FrameType,
    count_bytes,
    explain_frame_type,
    frame_type_name,
    known_frame_type,
)
from h3learn.h3.frame_placement import check_frame_type_receivable
from h3learn.h3.frames import FRAME_CLASSES, Frame, UnknownFrame
from h3learn.wire.errors import NeedMoreData
from h3learn.wire.varint import parse_varint

# -- parsing (RFC 9114 §7.1) -----------------------------------------------------------------

#: The default largest payload accepted for every frame type except DATA: 1 MiB.
DEFAULT_MAX_PAYLOAD_LENGTH = 1 << 20


@dataclass(frozen=True, slots=True)
class FrameLimits:
    """How large a payload this endpoint is willing to buffer (RFC 9114 §10.5).

    RFC 9114 sets no largest frame size; §10.5 lets an endpoint treat a peer that makes it
    commit too much memory as a connection error of type H3_EXCESSIVE_LOAD. ``None`` means
    no limit. DATA frames are exempt by default: their size is the content's business, and
    QUIC flow control paces how fast they arrive. An endpoint facing untrusted peers may set
    ``max_data_length`` as well, since this parser buffers every frame whole.
    """

    max_payload_length: int | None = DEFAULT_MAX_PAYLOAD_LENGTH
    max_data_length: int | None = None


#: The payload sizes a frame with a fixed layout can have: (fewest, most) bytes, and what the
#: payload holds. One variable-length integer takes 1 to 8 bytes (RFC 9000 §16).
PAYLOAD_BOUNDS: dict[FrameType, tuple[int, int | None, str]] = {
    FrameType.CANCEL_PUSH: (1, 8, "one variable-length integer, the Push ID"),
    FrameType.GOAWAY: (1, 8, "one variable-length integer, the Stream ID/Push ID"),
    FrameType.MAX_PUSH_ID: (1, 8, "one variable-length integer, the Push ID"),
    FrameType.PUSH_PROMISE: (1, None, "a Push ID, then the field section"),
    FrameType.PRIORITY_UPDATE_REQUEST: (1, None, "a Prioritized Element ID, then the priority"),
    FrameType.PRIORITY_UPDATE_PUSH: (1, None, "a Prioritized Element ID, then the priority"),
}


def check_payload_length(frame_type: int, length: int, limits: FrameLimits) -> None:
    """Checks that need only the Type and Length, so a bad frame is refused before buffering.

    A length its fields cannot fill is H3_FRAME_ERROR (RFC 9114 §7.1); a length above the
    endpoint's limit is H3_EXCESSIVE_LOAD (RFC 9114 §10.5).
    """
    known = known_frame_type(frame_type)
    if known in PAYLOAD_BOUNDS:
        fewest, most, holds = PAYLOAD_BOUNDS[known]
        if length < fewest or (most is not None and length > most):
            raise H3ConnectionError(
                ErrorCode.H3_FRAME_ERROR,
                f"a {frame_type_name(frame_type)} payload holds {holds}, which cannot take"
                f" {length} bytes",
                "9114#7.1",
            )
    if exceeds_limit(frame_type, length, limits) and known is not None:
        raise H3ConnectionError(
            ErrorCode.H3_EXCESSIVE_LOAD,
            f"a {frame_type_name(frame_type)} frame declares a {length}-byte payload, more than"
            f" the {limit_of(frame_type, limits)} bytes this endpoint is willing to buffer",
            "9114#10.5",
        )


def limit_of(frame_type: int, limits: FrameLimits) -> int | None:
    """The largest payload of this type the endpoint buffers (None: no limit)."""
    if known_frame_type(frame_type) is FrameType.DATA:
        return limits.max_data_length
    return limits.max_payload_length


def exceeds_limit(frame_type: int, length: int, limits: FrameLimits) -> bool:
    limit = limit_of(frame_type, limits)
    return limit is not None and length > limit


def discarded_frame(header: bytes, record: bool) -> ParsedFrame:
    """A reserved or unknown frame whose payload was discarded: its Type and Length only."""
    fields = FrameReader(header, record)
    frame_type = fields.varint("Type", explain_frame_type, "9114#7.1")
    fields.frame_type = frame_type
    fields.type_read = True
    length = fields.varint("Length", EXPLAIN_LENGTH, "9114#7.1")
    frame = UnknownFrame(frame_type, b"", fields.varint_lengths(), discarded=length)
    return ParsedFrame(frame, header, fields.reader.field_spans())


@dataclass(frozen=True, slots=True)
class ParsedFrame:
    """A frame read from a stream, with its exact bytes and a label for each of them."""

    frame: Frame
    #: The frame's bytes as received: Type, Length and payload.
    raw: bytes
    #: Labels for every byte of ``raw``, offsets counted from the frame's first byte.
    spans: tuple[FieldSpan, ...]


def parse_frame(
    raw: bytes, limits: FrameLimits = FrameLimits(), record: bool = True
) -> ParsedFrame:
    """Parse ``raw``, which must hold exactly one whole frame (e.g. an event's raw bytes).

    Raises H3ConnectionError on a broken rule; ValueError if ``raw`` goes on past the frame.
    """
    fields = FrameReader(raw, record)
    frame_type = fields.varint("Type", explain_frame_type, "9114#7.1")
    check_frame_type_receivable(frame_type)
    fields.frame_type = frame_type
    fields.type_read = True
    length = fields.varint("Length", EXPLAIN_LENGTH, "9114#7.1")
    check_payload_length(frame_type, length, limits)
    received = len(raw) - fields.reader.position
    if received < length:
        raise H3ConnectionError(
            ErrorCode.H3_FRAME_ERROR,
            f"the {fields.part} ends {count_bytes(received)} into its {length}-byte payload",
            "9114#7.1",
        )
    if received > length:
        raise ValueError(f"{received - length} bytes follow the frame")
    fields.in_payload = True
    known = known_frame_type(frame_type)
    frame_class = UnknownFrame if known is None else FRAME_CLASSES[known]
    frame = frame_class.parse_payload(fields)
    return ParsedFrame(frame, raw, fields.reader.field_spans())


class ParserState(Enum):
    """Where `FrameParser` is inside the current frame."""

    TYPE = "waiting for a frame's Type field"
    LENGTH = "waiting for the Length field"
    PAYLOAD = "waiting for the rest of the payload"
    DISCARDING = "dropping the payload of a reserved or unknown frame too large to keep"


class FrameParser:
    """Cuts the bytes of one stream into frames, however the bytes arrive (sans-IO).

    ``feed(data)`` returns the frames completed by ``data``; ``eof()`` says the stream ended
    cleanly. Every frame is buffered until its last byte is there, DATA included (a reserved
    or unknown frame over the limit is the exception: see the module docstring): each frame
    then becomes one event whose ``raw`` is exactly its bytes, and the frames (and errors) a
    stream yields do not depend on how QUIC happened to split it into packets. Buffering whole
    DATA frames is a deliberate simplification for a teaching tool; `FrameLimits` caps it.

    Checks that need only the Type and Length (an HTTP/2-only type, an impossible or excessive
    length) are made as soon as those fields are complete, before the payload is buffered.
    After an error the parser is spent: every later call raises the same error. The frames
    completed by the same ``feed`` call before the error are kept in ``frames_before_error``,
    so that a trace can still show what arrived before the broken frame.
    """

    def __init__(self, limits: FrameLimits = FrameLimits(), record: bool = True) -> None:
        self.limits = limits
        self.record = record
        self.state = ParserState.TYPE
        self._buffer = bytearray()
        self._frame_type = 0
        self._payload_start = 0
        self._payload_length = 0
        #: While DISCARDING: the frame's Type and Length bytes, and payload bytes still to drop.
        self._discarded_header = b""
        self._discard_left = 0
        self._error: H3ConnectionError | None = None
        self.frames_before_error: list[ParsedFrame] = []

    @property
    def error(self) -> H3ConnectionError | None:
        """The error of the broken frame the parser stopped at, if it has."""
        return self._error

    @property
    def buffered(self) -> int:
        """Bytes received that belong to a frame not yet complete."""
        return len(self._buffer)

    def feed(self, data: bytes) -> list[ParsedFrame]:
        if self._error is not None:
            raise self._error
        self._buffer += data
        frames: list[ParsedFrame] = []
        try:
            while (parsed := self._next_frame()) is not None:
                frames.append(parsed)
        except H3ConnectionError as error:
            self._error = error
            self.frames_before_error = frames
            raise
        return frames

    def feed_then_error(self, data: bytes) -> tuple[list[ParsedFrame], H3ConnectionError | None]:
        """`feed`, but a broken frame's error comes back after the frames before it, unraised.

        Those frames arrived first, so the caller handles them first (one of them may end
        the stream's reading with a stream error of its own), and raises the error only
        then. What a stream yields then does not depend on whether the broken frame came in
        the same packet as the frames before it.
        """
        if self._error is not None:
            return [], self._error  # the frames before it were returned the first time
        try:
            return self.feed(data), None
        except H3ConnectionError as error:
            return self.frames_before_error, error

    def eof(self) -> None:
        """The stream ended cleanly: RFC 9114 §7.1 makes a truncated last frame H3_FRAME_ERROR."""
        if self._error is not None:
            raise self._error
        if self.state is ParserState.TYPE and not self._buffer:
            return
        name = frame_type_name(self._frame_type)
        if self.state is ParserState.TYPE:
            rule = "the stream ended inside the Type field of a frame"
        elif self.state is ParserState.LENGTH:
            rule = f"the stream ended inside the Length field of a {name} frame"
        else:
            if self.state is ParserState.DISCARDING:
                received = self._payload_length - self._discard_left
            else:
                received = len(self._buffer) - self._payload_start
            rule = (
                f"the stream ended {count_bytes(received)} into the {self._payload_length}-byte "
                f"payload of a {name} frame"
            )
        self._error = H3ConnectionError(ErrorCode.H3_FRAME_ERROR, rule, "9114#7.1")
        raise self._error

    def _next_frame(self) -> ParsedFrame | None:
        """Advance through TYPE -> LENGTH -> PAYLOAD as far as the buffer allows."""
        if self.state is ParserState.TYPE:
            try:
                self._frame_type, type_length = parse_varint(self._buffer, 0)
            except NeedMoreData:
                return None
            check_frame_type_receivable(self._frame_type)
            self._payload_start = type_length
            self.state = ParserState.LENGTH
        if self.state is ParserState.LENGTH:
            try:
                self._payload_length, length_length = parse_varint(
                    self._buffer, self._payload_start
                )
            except NeedMoreData:
                return None
            check_payload_length(self._frame_type, self._payload_length, self.limits)
            self._payload_start += length_length
            self.state = ParserState.PAYLOAD
            if exceeds_limit(self._frame_type, self._payload_length, self.limits):
                # Reserved or unknown (a known type would have been refused): drop it.
                self._discarded_header = bytes(self._buffer[: self._payload_start])
                del self._buffer[: self._payload_start]
                self._payload_start = 0
                self._discard_left = self._payload_length
                self.state = ParserState.DISCARDING
        if self.state is ParserState.DISCARDING:
            dropped = min(len(self._buffer), self._discard_left)
            del self._buffer[:dropped]
            self._discard_left -= dropped
            if self._discard_left:
                return None
            self.state = ParserState.TYPE
            return discarded_frame(self._discarded_header, self.record)
        frame_end = self._payload_start + self._payload_length
        if len(self._buffer) < frame_end:
            return None
        raw = bytes(self._buffer[:frame_end])
        del self._buffer[:frame_end]
        self.state = ParserState.TYPE
        return parse_frame(raw, self.limits, self.record)


def parse_frames(data: bytes, limits: FrameLimits = FrameLimits()) -> list[ParsedFrame]:
    """All the frames of a whole stream's bytes; raises if the last one is cut short."""
    parser = FrameParser(limits)
    frames = parser.feed(data)
    parser.eof()
    return frames
