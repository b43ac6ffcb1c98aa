"""RFC 9114 §6: what a connection keeps about each stream it reads.

A request stream (RFC 9114 §6.1) carries one message each way; `RequestStream` holds the
frames waiting to be read, the exchange's state (message_exchange.py) and what this
endpoint has sent on it. A client reads a push stream (RFC 9114 §6.2.2) the same way, as
a response, so the same record serves. `IncomingUniStream` is a unidirectional stream the
peer opened (RFC 9114 §6.2), until its Stream Type says what it is.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from h3learn.h3.content_length import ContentLengthTracker
from h3learn.h3.frame_parser import FrameParser, ParsedFrame
from h3learn.h3.message_exchange import MessageExchange
from h3learn.h3.stream_types import StreamHeader


@dataclass
class RequestStream:
    """A request stream (or, on a client, a push stream): what has been received on it."""

    stream_id: int
    exchange: MessageExchange
    parser: FrameParser
    push_id: int | None = None
    #: Frames that arrived while a HEADERS or PUSH_PROMISE waited for QPACK inserts.
    waiting: deque[ParsedFrame] = field(default_factory=deque)
    #: The frame whose field section the QPACK decoder is holding (RFC 9204 §2.2.1).
    blocked_on: ParsedFrame | None = None
    end_received: bool = False
    #: A HeadersReceived or DataReceived already said ``stream_ended``: no StreamEnded follows.
    end_reported: bool = False
    content: ContentLengthTracker | None = None
    #: What this endpoint has sent on the stream.
    headers_sent: bool = False
    trailers_sent: bool = False
    end_sent: bool = False
    #: The error code of the peer's STOP_SENDING, when it stopped this endpoint's sending.
    stopped_by_peer: int | None = None
    #: The content-length this endpoint's own message announced, against its DATA so far
    #: (RFC 9114 §4.1.2 holds a sender to it too); None when nothing is checked.
    content_sent: ContentLengthTracker | None = None
    #: Set after a stream error or reset: everything still arriving is ignored.
    abandoned: bool = False
    request_method: bytes | None = None
    #: A CONNECT tunnel (RFC 9114 §4.4): from now on only DATA and unknown frame types.
    tunnel: bool = False


@dataclass
class IncomingUniStream:
    """A unidirectional stream the peer opened (RFC 9114 §6.2)."""

    stream_id: int
    buffer: bytearray = field(default_factory=bytearray)
    header: StreamHeader | None = None
    parser: FrameParser | None = None
    request: RequestStream | None = None  # push streams read like a response
    #: The peer reset it (recorded once, for streams of reserved or unknown types).
    reset: bool = False
