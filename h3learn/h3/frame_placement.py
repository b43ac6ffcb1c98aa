"""RFC 9114 §7 (Table 1) and RFC 9218 §7.2: which frames may appear on which stream.

Table 1 of RFC 9114 §7 says where each frame type is allowed: DATA and HEADERS on request
and push streams, PUSH_PROMISE on request streams only, and CANCEL_PUSH, SETTINGS, GOAWAY and
MAX_PUSH_ID on the control stream only. RFC 9218 §7.2 puts PRIORITY_UPDATE on the control
stream too. Some frames belong to one endpoint: only a server sends PUSH_PROMISE (RFC 9114
§7.2.5), only a client MAX_PUSH_ID (RFC 9114 §7.2.7) and PRIORITY_UPDATE (RFC 9218 §7.2).
A frame out of place is a connection error of type H3_FRAME_UNEXPECTED, and so is any frame
type HTTP/2 had and HTTP/3 dropped, wherever it arrives (RFC 9114 §7.2.8). Reserved and
unknown types may appear on any stream.
"""

from __future__ import annotations

from h3learn.h3.errors import ErrorCode, H3ConnectionError
from h3learn.h3.frame_layout import (
    FRAME_INFO,
    HTTP2_ONLY_FRAME_TYPES,
    FrameType,
    frame_type_name,
    known_frame_type,
)
from h3learn.h3.frames import Frame
from h3learn.h3.stream_types import StreamKind

_REQUEST_OR_PUSH = frozenset({StreamKind.REQUEST, StreamKind.PUSH})
_CONTROL = frozenset({StreamKind.CONTROL})

#: The stream kinds each frame type may be received on. SETTINGS is allowed on the control
#: stream only as its first frame (RFC 9114 §6.2.1), which the connection checks. Reserved
#: and unknown types may appear on any stream; HTTP/2-only types on none.
ALLOWED_ON: dict[FrameType, frozenset[StreamKind]] = {
    FrameType.DATA: _REQUEST_OR_PUSH,
    FrameType.HEADERS: _REQUEST_OR_PUSH,
    FrameType.CANCEL_PUSH: _CONTROL,
    FrameType.SETTINGS: _CONTROL,
    FrameType.PUSH_PROMISE: frozenset({StreamKind.REQUEST}),
    FrameType.GOAWAY: _CONTROL,
    FrameType.MAX_PUSH_ID: _CONTROL,
    FrameType.PRIORITY_UPDATE_REQUEST: _CONTROL,
    FrameType.PRIORITY_UPDATE_PUSH: _CONTROL,
}

#: Frames only one endpoint may send; every other frame type either may send.
SENT_ONLY_BY: dict[FrameType, tuple[str, str]] = {
    FrameType.PUSH_PROMISE: ("server", "9114#7.2.5"),
    FrameType.MAX_PUSH_ID: ("client", "9114#7.2.7"),
    FrameType.PRIORITY_UPDATE_REQUEST: ("client", "9218#7.2"),
    FrameType.PRIORITY_UPDATE_PUSH: ("client", "9218#7.2"),
}

_STREAM_PHRASE = {
    StreamKind.CONTROL: "the control stream",
    StreamKind.REQUEST: "a request stream",
    StreamKind.PUSH: "a push stream",
}


def check_frame_type_receivable(frame_type: int) -> None:
    """RFC 9114 §7.2.8: raise H3_FRAME_UNEXPECTED for a type HTTP/3 reserved from HTTP/2."""
    if frame_type in HTTP2_ONLY_FRAME_TYPES:
        raise H3ConnectionError(
            ErrorCode.H3_FRAME_UNEXPECTED,
            f"frame type {frame_type:#04x} is HTTP/2's {HTTP2_ONLY_FRAME_TYPES[frame_type]}, "
            "which HTTP/3 reserves and no endpoint may send",
            "9114#7.2.8",
        )


def check_frame_allowed(frame: Frame | int, stream_kind: str, sender: str | None = None) -> None:
    """Raise H3_FRAME_UNEXPECTED if this frame (or frame type) may not arrive on this stream.

    ``stream_kind`` is "control", "request" or "push" (a `StreamKind`). ``sender`` ("client"
    or "server"), when given, also checks the frames only one side may send (PUSH_PROMISE,
    MAX_PUSH_ID, PRIORITY_UPDATE). These are all connection errors (RFC 9114 §7.2.1-§7.2.7,
    and §4.1 for frames out of place on a request or push stream).
    """
    frame_type = frame if isinstance(frame, int) else frame.frame_type
    kind = StreamKind(stream_kind)
    check_frame_type_receivable(frame_type)
    known = known_frame_type(frame_type)
    if known is None:
        return
    allowed = ALLOWED_ON[known]
    if kind in allowed and (sender is None or known not in SENT_ONLY_BY):
        return  # the usual case, decided without building any message text
    name = frame_type_name(frame_type)
    if kind not in allowed:
        where = " or ".join(_STREAM_PHRASE[other] for other in StreamKind if other in allowed)
        raise H3ConnectionError(
            ErrorCode.H3_FRAME_UNEXPECTED,
            f"{name} frame on {_STREAM_PHRASE[kind]}; it may appear only on {where}",
            FRAME_INFO[known][1],
        )
    if sender is not None and known in SENT_ONLY_BY:
        only, section = SENT_ONLY_BY[known]
        if sender != only:
            raise H3ConnectionError(
                ErrorCode.H3_FRAME_UNEXPECTED,
                f"{name} frame sent by the {sender}; only the {only} sends it",
                section,
            )
