"""RFC 9114 §4: what the HTTP/3 connection tells the application it received.

`H3Connection.receive_stream_data` and its siblings return a list of these. They are the
HTTP meaning of the frames (a request's headers, a piece of content, a promise), not the
frames themselves; the frames, instructions and table changes go to the trace as `Event`s.
"""

from __future__ import annotations

from dataclasses import dataclass, field

Header = tuple[bytes, bytes]


@dataclass(frozen=True, slots=True, kw_only=True)
class HeadersReceived:
    """A header section (request, interim or final response) or a trailer section."""

    #: The request stream, or the push stream of a pushed response.
    stream_id: int
    headers: list[Header]
    #: True for a 1xx response (RFC 9114 §4.1); more HEADERS will follow.
    interim: bool = False
    #: True when these are trailers (RFC 9114 §4.1: the HEADERS frame after the content).
    trailers: bool = False
    #: The push ID, when the stream is a push stream (RFC 9114 §4.6).
    push_id: int | None = None
    #: The stream ended with this frame.
    stream_ended: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class DataReceived:
    """Some content of a message (RFC 9114 §7.2.1)."""

    stream_id: int
    data: bytes
    push_id: int | None = None
    stream_ended: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class StreamEnded:
    """The peer closed the stream cleanly after its message (no frame came with the end)."""

    stream_id: int
    push_id: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class PushPromiseReceived:
    """The server promised a response to ``headers`` (RFC 9114 §4.6, §7.2.5)."""

    stream_id: int
    push_id: int
    headers: list[Header]


@dataclass(frozen=True, slots=True, kw_only=True)
class PushCancelled:
    """The peer sent CANCEL_PUSH for ``push_id`` (RFC 9114 §7.2.3).

    On a server whose push stream for it was still open, that stream has been reset
    (H3_REQUEST_CANCELLED): nothing more can be sent on it.
    """

    push_id: int


@dataclass(frozen=True, slots=True, kw_only=True)
class StreamReset:
    """The peer reset a stream, or this endpoint reset it after a stream error."""

    stream_id: int
    error_code: int
    #: True when the peer's GOAWAY or H3_REQUEST_REJECTED says the request was never
    #: processed and may be retried elsewhere (RFC 9114 §4.1.1, §5.2).
    retry_safe: bool = False
    #: Whose doing: the peer's (its RESET_STREAM, its GOAWAY, its refusal of 0-RTT), or
    #: this endpoint's after the peer broke a rule on the stream (RFC 9114 §8). ``rule`` and
    #: ``rfc`` say what happened: the rule broken, or what the peer did. (Explanations:
    #: two resets of the same stream with the same code compare equal without them.)
    by_peer: bool = field(default=True, compare=False)
    rule: str = field(default="", compare=False)
    rfc: str = field(default="", compare=False)


@dataclass(frozen=True, slots=True, kw_only=True)
class GoawayReceived:
    """The peer is shutting down (RFC 9114 §5.2); ``id`` is a stream ID or a push ID."""

    id: int


@dataclass(frozen=True, slots=True, kw_only=True)
class SettingsReceived:
    """The peer's SETTINGS frame arrived (RFC 9114 §7.2.4)."""

    settings: dict[int, int]


@dataclass(frozen=True, slots=True, kw_only=True)
class ConnectionTerminated:
    """The connection was closed with ``error_code`` (by the peer or by this endpoint)."""

    error_code: int
    reason: str
    by_peer: bool


H3Event = (
    HeadersReceived
    | DataReceived
    | StreamEnded
    | PushPromiseReceived
    | PushCancelled
    | StreamReset
    | GoawayReceived
    | SettingsReceived
    | ConnectionTerminated
)
