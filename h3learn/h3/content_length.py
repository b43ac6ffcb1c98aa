"""RFC 9114 §4.1.2: the DATA frames of a message add up to its Content-Length.

HTTP/3 frames a message itself: its content is the payload of its DATA frames, and it ends
with the stream (RFC 9114 §4.1). A Content-Length field (RFC 9110 §8.6) is then a claim the
receiver checks, not how it finds the end: if the DATA payloads add up to another number,
the message is malformed (RFC 9114 §4.1.2), so that a proxy translating to HTTP/1.1 never
passes the lie on. Responses that can never have content (RFC 9110 §6.4.1: 1xx, 204, 304,
and any response to HEAD) are not held to a Content-Length they carry (RFC 9114 §4.1.2; for
HEAD and 304 it is the size the content would have had, and in 1xx and 204 a server must
not send one, RFC 9110 §8.6), and they must not carry any DATA at all; the DATA of a CONNECT
tunnel (RFC 9114 §4.4) is no content.

`parse_content_length` reads the field from a header section; `ContentLengthTracker`
follows the DATA frames of one message, and `no_content_reason` says which responses have
none.

Readings this module chose where the RFCs leave room (each is marked where it is coded):

- A Content-Length that repeats one number ("42, 42", or two field lines of 42) is accepted
  as that number; RFC 9110 §8.6 allows either that or rejecting it.
- DATA in a response that can never have content makes it malformed (H3_MESSAGE_ERROR):
  RFC 9110 §6.4.1 says such a response has none, and RFC 9114 names no error for the case.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Sequence

from h3learn.h3.messages import (
    CONNECT,
    HEAD,
    Header,
    MalformedMessage,
    RequestHead,
    ResponseHead,
    show,
)

CONTENT_LENGTH = b"content-length"
#: The most a QUIC stream can carry (RFC 9000 §19.8); a larger Content-Length cannot match.
MAX_STREAM_LENGTH = 2**62 - 1
# RFC 9110 §8.6:  Content-Length = 1*DIGIT
DIGITS = re.compile(rb"[0-9]+")
#: With the 1xx codes, the statuses whose responses never have content (RFC 9110 §6.4.1).
NO_CONTENT = 204
NOT_MODIFIED = 304
RESPONSE_TO_HEAD = "a response to HEAD"

# -- the Content-Length field (RFC 9110 §8.6) ---------------------------------------------


def parse_content_length(regular: Sequence[Header]) -> int | None:
    """RFC 9110 §8.6: Content-Length is digits; repeats must all give the same number.

    Reading: RFC 9110 §8.6 lets a recipient either reject "42, 42" or take it as 42. This
    module takes it as 42, the same as two field lines of 42 (RFC 9110 §5.3 says those mean
    "42, 42"). Any list of different numbers, or anything but digits, is malformed.
    """
    numbers: set[int] = set()
    for name, value in regular:
        if name != CONTENT_LENGTH:
            continue
        for element in value.split(b","):
            digits = element.strip(b" \t")
            if not DIGITS.fullmatch(digits):
                raise MalformedMessage(
                    f"content-length {show(value)} is not a non-negative integer", "9110#8.6"
                )
            significant = digits.lstrip(b"0") or b"0"
            # Length first: int() refuses strings of thousands of digits (a Python limit).
            if len(significant) > len(str(MAX_STREAM_LENGTH)) or (
                int(significant) > MAX_STREAM_LENGTH
            ):
                raise MalformedMessage(
                    f"content-length {show(value)} is more than a QUIC stream can carry "
                    "(RFC 9000 §19.8)",
                    "9110#8.6",
                )
            numbers.add(int(significant))
    if len(numbers) > 1:
        listed = ", ".join(str(n) for n in sorted(numbers))
        raise MalformedMessage(f"content-length values disagree: {listed}", "9110#8.6")
    return numbers.pop() if numbers else None


# -- responses without content (RFC 9110 §6.4.1) ------------------------------------------


def no_content_reason(status: int, request_method: bytes) -> str | None:
    """RFC 9110 §6.4.1: why a response can never have content, or None if it can.

    A Content-Length they carry (for HEAD and 304, the size the content would have had;
    1xx and 204 must not carry one, RFC 9110 §8.6) is not held against them (RFC 9114
    §4.1.2).
    """
    if 100 <= status < 200:
        return "an interim (1xx) response"
    if status == NO_CONTENT:
        return "a 204 (No Content) response"
    if status == NOT_MODIFIED:
        return "a 304 (Not Modified) response"
    if request_method == HEAD:
        return RESPONSE_TO_HEAD
    return None


# -- the DATA frames (RFC 9114 §4.1.2) ----------------------------------------------------


class ContentLengthTracker:
    """RFC 9114 §4.1.2: the DATA frames of a message add up to its Content-Length.

    Call `add` with each DATA frame's payload length and `finish` at the end of the stream.
    ``content_length`` None means there is nothing to compare with. ``no_content_reason``
    set means the message can never have content, whatever Content-Length says, so any
    DATA at all is malformed.
    """

    def __init__(self, content_length: int | None, *, no_content_reason: str | None = None) -> None:
        self.content_length = content_length
        self.no_content_reason = no_content_reason
        #: The sum of the DATA payload lengths so far.
        self.received = 0

    @classmethod
    def for_request(cls, head: RequestHead) -> ContentLengthTracker:
        """The tracker for a request's content.

        The DATA of a CONNECT stream is tunnelled bytes, not content (RFC 9114 §4.4), so no
        Content-Length applies to it.
        """
        return cls(None if head.method == CONNECT else head.content_length)

    @classmethod
    def for_response(cls, head: ResponseHead, *, request_method: bytes) -> ContentLengthTracker:
        """The tracker for the content of a response to a ``request_method`` request.

        A 2xx response to CONNECT opens the tunnel: its DATA is tunnelled bytes, and RFC 9110
        §9.3.6 tells the client to ignore a Content-Length on it.
        """
        if request_method == CONNECT and 200 <= head.status < 300:
            return cls(None)
        reason = no_content_reason(head.status, request_method)
        return cls(head.content_length, no_content_reason=reason)

    def as_response_to_head(self) -> ContentLengthTracker:
        """This tracker, for a response found to answer HEAD only after it began (a push
        stream read before its PUSH_PROMISE, RFC 9114 §4.6): no content may come, and what
        already came is malformed (RFC 9110 §6.4.1)."""
        reason = self.no_content_reason or RESPONSE_TO_HEAD
        tracker = ContentLengthTracker(self.content_length, no_content_reason=reason)
        tracker.add(self.received)
        return tracker

    def add(self, length: int) -> None:
        """One DATA frame with a payload of ``length`` bytes arrived."""
        if length < 0:
            raise ValueError(f"a DATA payload length cannot be negative: {length}")
        self.received += length
        if self.no_content_reason is not None and self.received:
            raise MalformedMessage(
                f"{self.received} bytes of DATA in {self.no_content_reason}, which has no content",
                "9110#6.4.1",
            )
        if self.content_length is not None and self.received > self.content_length:
            raise MalformedMessage(
                f"{self.received} bytes of DATA, more than content-length {self.content_length}",
                "9114#4.1.2",
            )

    def check_sending(self, length: int, *, ending: bool) -> None:
        """A sender's check before it sends: would ``length`` more bytes of DATA (and then,
        ``ending``, the end of the stream) keep the message well-formed? Counts nothing."""
        probe = copy.copy(self)
        probe.add(length)
        if ending:
            probe.finish()

    def finish(self) -> None:
        """The stream ended: the DATA must have been exactly content-length bytes."""
        if self.no_content_reason is not None or self.content_length is None:
            return
        if self.received != self.content_length:
            raise MalformedMessage(
                f"stream ended after {self.received} bytes of DATA, but content-length is "
                f"{self.content_length}",
                "9114#4.1.2",
            )
