"""RFC 9114 §4.1.2: a malformed message, and what a well-formed one's header section holds.

QPACK hands HTTP/3 a list of field lines. Before anything looks at their meaning, the
receiver must check the list against the framing layer's rules: which pseudo-header fields
exist and where they may stand (RFC 9114 §4.3), what a field name and value may contain
(§4.2, RFC 9110 §5), which HTTP/1.1 fields have no place in HTTP/3 (§4.2), and what CONNECT
looks like (§4.4). A list that breaks any of them is *malformed*, and RFC 9114 §4.1.2 makes
that a stream error of type H3_MESSAGE_ERROR. So is a message whose DATA frames do not add
up to its Content-Length. The RFC is strict on purpose: loose readings of exactly these
rules are what request smuggling and header injection attacks exploit.

The rules live by section, each module citing the one it implements:

- `h3learn.h3.http_fields`: field names and values, connection-specific fields, TE (§4.2);
- `h3learn.h3.pseudo_headers`: the pseudo-header fields of requests and responses, CONNECT
  and extended CONNECT, the 101 status and pushable requests (§4.3-§4.6, RFC 9220 §3), and
  the `validate_*` functions that apply every rule to a header or trailer section;
- `h3learn.h3.content_length`: Content-Length against the DATA frames (§4.1.2).

This module holds what they share: `MalformedMessage`, which each of them raises with the
rule and the section it broke; the `RequestHead` and `ResponseHead` a section that passed
comes back as; and the size SETTINGS_MAX_FIELD_SECTION_SIZE limits (§4.2.2).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from h3learn.h3.errors import ErrorCode, H3StreamError, H3UsageError
from h3learn.qpack.errors import cite

Header = tuple[bytes, bytes]


class MalformedMessage(Exception):
    """A malformed request, response or trailer section (RFC 9114 §4.1.2).

    ``rule`` says what broke, ``rfc`` names the section (``9114#4.3.1``). The receiver
    resets the stream with ``code`` (H3_MESSAGE_ERROR); `as_stream_error` builds that error
    once the caller knows which stream the section came from.
    """

    code = ErrorCode.H3_MESSAGE_ERROR

    def __init__(self, rule: str, rfc: str) -> None:
        super().__init__(f"{self.code.name} ({cite(rfc)}): {rule}")
        self.rule = rule
        self.rfc = rfc

    def as_stream_error(self, stream_id: int) -> H3StreamError:
        """The stream error RFC 9114 §4.1.2 asks for, on stream ``stream_id``."""
        return H3StreamError(self.code, self.rule, self.rfc, stream_id=stream_id)


class UnpushableRequest(MalformedMessage):
    """A well-formed request that a server may not push (RFC 9114 §4.6).

    Deliberate simplification of RFC 9114 §4.6: the RFC does not call such a promise
    malformed; it asks the client to refuse it with CANCEL_PUSH and never use the response.
    It is a subclass so that code which only asks "can I use this promise?" catches one
    exception, while a client that follows the RFC closely catches this one first.
    """


#: The method of a request for a tunnel (RFC 9114 §4.4): no :scheme or :path, and DATA
#: that is the tunnel's bytes rather than content.
CONNECT = b"CONNECT"
#: RFC 9110 §9.3.2: a response to HEAD never has content (RFC 9110 §6.4.1).
HEAD = b"HEAD"

#: RFC 9114 §4.2.2: each field line counts its name, its value and 32 bytes more.
FIELD_LINE_OVERHEAD = 32


def show(octets: bytes, limit: int = 40) -> str:
    """Octets as quoted printable ASCII for an error message; anything else as ``\\xNN``."""
    text = "".join(chr(b) if 0x20 <= b < 0x7F else f"\\x{b:02x}" for b in octets[:limit])
    return f"'{text}...'" if len(octets) > limit else f"'{text}'"


# -- the heads ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class RequestHead:
    """A request's header section that passed every rule of RFC 9114 §4.2-§4.4."""

    #: :method, e.g. b"GET" (RFC 9110 §9: case-sensitive).
    method: bytes
    #: :scheme; None only for CONNECT (RFC 9114 §4.4).
    scheme: bytes | None
    #: :authority, or None when the request left it out (it may carry Host instead).
    authority: bytes | None
    #: :path; None only for CONNECT.
    path: bytes | None
    #: :protocol of an extended CONNECT (RFC 9220 §3), e.g. b"websocket"; else None.
    protocol: bytes | None
    #: The regular fields, in the order they arrived.
    headers: tuple[Header, ...]
    #: The Content-Length value, or None when there is none.
    content_length: int | None


@dataclass(frozen=True, slots=True, kw_only=True)
class ResponseHead:
    """A response's header section that passed every rule of RFC 9114 §4.2-§4.3."""

    #: :status, e.g. 200.
    status: int
    #: The regular fields, in the order they arrived.
    headers: tuple[Header, ...]
    #: The Content-Length value, or None when there is none.
    content_length: int | None

    @property
    def informational(self) -> bool:
        """A 1xx interim response (RFC 9110 §15.2): a final response will follow."""
        return 100 <= self.status < 200


# -- the size of a field section (RFC 9114 §4.2.2) ----------------------------------------


def field_section_size(field_lines: Sequence[Header]) -> int:
    """RFC 9114 §4.2.2: the size SETTINGS_MAX_FIELD_SECTION_SIZE limits.

    Each field line counts the length of its name and value, uncompressed, plus 32.
    """
    return sum(len(name) + len(value) + FIELD_LINE_OVERHEAD for name, value in field_lines)


def check_sending_size(field_lines: Sequence[Header], limit: int | None, what: str) -> None:
    """RFC 9114 §4.2.2: refuse to send a field section larger than the peer's
    SETTINGS_MAX_FIELD_SECTION_SIZE (``limit``, None: no limit announced). ``what`` names
    the frame, e.g. "field section", "PUSH_PROMISE field section"."""
    if limit is None:
        return
    size = field_section_size(field_lines)
    if size > limit:
        raise H3UsageError(
            f"{what} of {size} bytes exceeds the peer's SETTINGS_MAX_FIELD_SECTION_SIZE"
            f" {limit} (RFC 9114 §4.2.2)"
        )
