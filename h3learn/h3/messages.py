"""RFC 9114 §4.1-§4.4: when a request, response or trailer section is malformed.

QPACK hands HTTP/3 a list of field lines. Before anything looks at their meaning, the
receiver must check the list against the framing layer's rules: which pseudo-header fields
exist and where they may stand (RFC 9114 §4.3), what a field name and value may contain
(§4.2, RFC 9110 §5), which HTTP/1.1 fields have no place in HTTP/3 (§4.2), and what CONNECT
looks like (§4.4). A list that breaks any of them is *malformed*, and RFC 9114 §4.1.2 makes
that a stream error of type H3_MESSAGE_ERROR. The RFC is strict on purpose: loose readings
of exactly these rules are what request smuggling and header injection attacks exploit.
Two neighbours live here too: the 101 status HTTP/3 does without (§4.5) and the requests a
server may push (§4.6).

Theory of operation. Each `validate_*` function reads the field lines once, in order:

1. every field line: the name (not empty, lowercase, token characters) and the value (no
   control characters, no whitespace at either end);
2. pseudo-header fields: defined for this kind of section, before every regular field,
   each at most once;
3. regular fields: no connection-specific fields, TE only as "trailers" in a request;
4. the rules of the kind: what a request, CONNECT, extended CONNECT or response needs.

The first broken rule raises `MalformedMessage`, whose text names the rule and the section.
What survives comes back as a `RequestHead` or `ResponseHead`, the regular fields in their
original order. `ContentLengthTracker` then follows the DATA frames (§4.1.2).

Readings this module chose where the RFCs leave room (each is marked where it is coded):

- Field values are checked against the full RFC 9110 §5.5 grammar: every control character
  except HTAB is refused, not only NUL, CR and LF.
- A Content-Length that repeats one number ("42, 42", or two field lines of 42) is accepted
  as that number; RFC 9110 §8.6 allows either that or rejecting it.
- TE: "trailers" is compared without regard to case, as ABNF string literals are.
- A Content-Length in a trailer section is refused (RFC 9110 §6.5.1 forbids sending one).
- Extended CONNECT follows RFC 9220 §3 (via RFC 8441 §4): :scheme and :path are required
  and :authority follows the ordinary request rules (for https, :authority or Host).
"""

from __future__ import annotations

import copy
import re
from collections.abc import Sequence
from dataclasses import dataclass

from h3learn.h3.errors import ErrorCode, H3StreamError
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


# -- the pseudo-header fields (RFC 9114 §4.3) --------------------------------------------

#: Each pseudo-header field, and the section that defines it.
REQUEST_PSEUDO_HEADERS: dict[bytes, str] = {
    b":method": "9114#4.3.1",
    b":scheme": "9114#4.3.1",
    b":authority": "9114#4.3.1",
    b":path": "9114#4.3.1",
}
#: Extended CONNECT's pseudo-header field; defined only once this endpoint has sent
#: SETTINGS_ENABLE_CONNECT_PROTOCOL = 1 (RFC 9220 §3).
PROTOCOL_PSEUDO_HEADER: dict[bytes, str] = {b":protocol": "9220#3"}
RESPONSE_PSEUDO_HEADERS: dict[bytes, str] = {b":status": "9114#4.3.2"}

CONNECT = b"CONNECT"
OPTIONS = b"OPTIONS"
#: The :path of an OPTIONS request for the server as a whole (RFC 9110 §7.1, asterisk-form).
ASTERISK = b"*"
#: Schemes whose URIs must have an authority (RFC 9110 §4.2); §4.3.1 then needs one too.
SCHEMES_WITH_AUTHORITY = frozenset({b"http", b"https"})
#: Methods that are both safe (RFC 9110 §9.2.1) and cacheable (RFC 9110 §9.2.3): the
#: only requests a server may push (RFC 9114 §4.6).
PUSHABLE_METHODS = frozenset({b"GET", b"HEAD"})

# -- regular fields HTTP/3 treats specially (RFC 9114 §4.2) ------------------------------

#: RFC 9110 §7.6.1: fields that describe one hop's connection. HTTP/3 has other means for
#: all of them (Transfer-Encoding: RFC 9114 §4.1; Upgrade: §4.5), so each is malformed.
CONNECTION_SPECIFIC_FIELDS = frozenset(
    {b"connection", b"keep-alive", b"proxy-connection", b"transfer-encoding", b"upgrade"}
)
TE = b"te"
#: The one TE value HTTP/3 allows, and only in a request's header section (RFC 9114 §4.2).
TRAILERS = b"trailers"
HOST = b"host"
CONTENT_LENGTH = b"content-length"

#: RFC 9114 §4.2.2: each field line counts its name, its value and 32 bytes more.
FIELD_LINE_OVERHEAD = 32
#: The most a QUIC stream can carry (RFC 9000 §19.8); a larger Content-Length cannot match.
MAX_STREAM_LENGTH = 2**62 - 1

# -- grammar (RFC 9110, RFC 3986) ---------------------------------------------------------

# RFC 9110 §5.6.2:  token = 1*tchar
#                   tchar = "!" / "#" / "$" / "%" / "&" / "'" / "*" / "+" / "-" / "." /
#                           "^" / "_" / "`" / "|" / "~" / DIGIT / ALPHA
TOKEN = re.compile(rb"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
UPPERCASE = re.compile(rb"[A-Z]")
#: What almost every regular field name is: a lowercase token (checked first, in one step).
LOWERCASE_TOKEN = re.compile(rb"[!#$%&'*+\-.^_`|~0-9a-z]+")

# RFC 9110 §5.5:  field-value   = *field-content
#                 field-content = field-vchar [ 1*( SP / HTAB / field-vchar ) field-vchar ]
#                 field-vchar   = VCHAR / obs-text      (0x21-0x7e, 0x80-0xff)
# So a value holds SP, HTAB, VCHAR and obs-text only, and neither starts nor ends in SP/HTAB.
NOT_IN_FIELD_VALUE = re.compile(rb"[^\t\x20-\x7e\x80-\xff]")
WHITESPACE = (b" ", b"\t")
#: RFC 9110 §5.5 calls these three dangerous: implementations disagree on how to read them
#: (in HTTP/1.1, CR and LF end a field line, so a value holding them can smuggle another).
CONTROL_CHARACTER_NAMES = {0x00: "NUL", 0x0A: "LF", 0x0D: "CR"}

# RFC 3986 §3.1:  scheme = ALPHA *( ALPHA / DIGIT / "+" / "-" / "." )
SCHEME = re.compile(rb"[A-Za-z][A-Za-z0-9+\-.]*")
# RFC 9110 §8.6:  Content-Length = 1*DIGIT
DIGITS = re.compile(rb"[0-9]+")
# RFC 9110 §15:   the status code is three digits, 100 to 599.
STATUS_CODE = re.compile(rb"[0-9]{3}")
STATUS_RANGE = range(100, 600)
SWITCHING_PROTOCOLS = 101
NO_CONTENT = 204
NOT_MODIFIED = 304


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


# -- rules for every field line -----------------------------------------------------------


def check_header_types(headers: Sequence[Header]) -> None:
    """Field names and values are bytes (RFC 9114 §4.2 sends them as octets). A str, from
    an application that forgot to encode, is a TypeError that says so, raised before any
    rule is checked (deep in the checks it was a bare "cannot use a bytes pattern")."""
    for field_line in headers:
        if not (
            isinstance(field_line, tuple | list)
            and len(field_line) == 2
            and all(isinstance(part, bytes) for part in field_line)
        ):
            raise TypeError(
                f"a field line is a (name, value) pair of bytes, not {field_line!r}:"
                " encode names and values, e.g. (b'accept', b'text/html')"
            )


def check_field_name(name: bytes) -> None:
    """RFC 9114 §4.2, §4.1.2: a name is a lowercase token; pseudo-header names start with ':'."""
    if LOWERCASE_TOKEN.fullmatch(name):
        return
    if not name:
        raise MalformedMessage("empty field name (RFC 9110 §5.1: a name is a token)", "9114#4.1.2")
    if UPPERCASE.search(name):
        raise MalformedMessage(f"field name {show(name)} contains uppercase characters", "9114#4.2")
    # Pseudo-header names are checked against the defined ones instead (RFC 9114 §4.3).
    if not name.startswith(b":") and not TOKEN.fullmatch(name):
        bad = next(b for b in name if not TOKEN.fullmatch(bytes([b])))
        raise MalformedMessage(
            f"field name {show(name)} contains {bad:#04x}, which is not a token character "
            "(RFC 9110 §5.6.2)",
            "9114#4.1.2",
        )


def check_field_value(name: bytes, value: bytes) -> None:
    """RFC 9114 §4.1.2 with RFC 9110 §5.5: no control characters, no whitespace at the ends.

    RFC 9110 §5.5 lets a recipient keep control characters other than NUL, CR and LF "for
    robustness"; this module takes the strict reading RFC 9114 §4.1.2 asks for, and refuses
    every character outside the grammar.
    """
    bad = NOT_IN_FIELD_VALUE.search(value)
    if bad is not None:
        octet = value[bad.start()]
        label = CONTROL_CHARACTER_NAMES.get(octet, f"control character {octet:#04x}")
        raise MalformedMessage(
            f"value of {show(name)} contains {label} at offset {bad.start()}", "9114#4.1.2"
        )
    if value.startswith(WHITESPACE) or value.endswith(WHITESPACE):
        raise MalformedMessage(
            f"value of {show(name)} starts or ends with whitespace (RFC 9110 §5.5)", "9114#4.1.2"
        )


def check_regular_field(name: bytes, value: bytes, *, in_request_header: bool) -> None:
    """RFC 9114 §4.2: no connection-specific fields; TE only as "trailers" in a request."""
    if name in CONNECTION_SPECIFIC_FIELDS:
        raise MalformedMessage(f"connection-specific field {show(name)}", "9114#4.2")
    if name == TE and not in_request_header:
        raise MalformedMessage("TE outside a request's header section", "9114#4.2")
    # Reading: ABNF literals ignore case (RFC 5234 §2.3), so "Trailers" is "trailers".
    if name == TE and value.lower() != TRAILERS:
        raise MalformedMessage(f"TE with value {show(value)}, not 'trailers'", "9114#4.2")


def split_field_section(
    field_lines: Sequence[Header],
    defined: dict[bytes, str],
    section: str,
    *,
    in_request_header: bool = False,
) -> tuple[dict[bytes, bytes], list[Header]]:
    """RFC 9114 §4.3: check every field line; pseudo-header fields first, each at most once.

    ``defined`` maps the pseudo-header names this ``section`` ("a request", "a response",
    "a trailer section") may hold to the section defining them; ``in_request_header`` says
    whether TE may appear. Returns the pseudo-header fields by name and the regular fields
    in order.
    """
    pseudo: dict[bytes, bytes] = {}
    regular: list[Header] = []
    for name, value in field_lines:
        check_field_name(name)
        check_field_value(name, value)
        if not name.startswith(b":"):
            check_regular_field(name, value, in_request_header=in_request_header)
            regular.append((name, value))
            continue
        if regular:
            raise MalformedMessage(
                f"pseudo-header field {show(name)} after the regular field {show(regular[0][0])}",
                "9114#4.3",
            )
        if name in PROTOCOL_PSEUDO_HEADER and in_request_header and name not in defined:
            raise MalformedMessage(
                ":protocol in a request, but SETTINGS_ENABLE_CONNECT_PROTOCOL was not sent",
                "9220#3",
            )
        if name not in defined:
            raise MalformedMessage(f"{_kind_of(name)} {show(name)} in {section}", "9114#4.3")
        if name in pseudo:
            raise MalformedMessage(f"{show(name)} appears twice in {section}", defined[name])
        pseudo[name] = value
    return pseudo, regular


def _kind_of(name: bytes) -> str:
    if name in REQUEST_PSEUDO_HEADERS or name in PROTOCOL_PSEUDO_HEADER:
        return "request pseudo-header field"
    if name in RESPONSE_PSEUDO_HEADERS:
        return "response pseudo-header field"
    return "undefined pseudo-header field"


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


# -- requests (RFC 9114 §4.3.1, §4.4, RFC 9220 §3) ----------------------------------------


def validate_request(
    field_lines: Sequence[Header], *, enable_connect_protocol: bool = False
) -> RequestHead:
    """Check a request's header section (RFC 9114 §4.2-§4.4) and return its parts.

    ``enable_connect_protocol``: this endpoint sent SETTINGS_ENABLE_CONNECT_PROTOCOL = 1,
    which makes :protocol a defined pseudo-header field (RFC 9220 §3).
    """
    defined = dict(REQUEST_PSEUDO_HEADERS)
    if enable_connect_protocol:
        defined.update(PROTOCOL_PSEUDO_HEADER)
    pseudo, regular = split_field_section(field_lines, defined, "a request", in_request_header=True)
    method = pseudo.get(b":method")
    if method is None:
        raise MalformedMessage("request has no :method pseudo-header", "9114#4.3.1")
    if not TOKEN.fullmatch(method):
        raise MalformedMessage(
            f":method {show(method)} is not a token (RFC 9110 §9.1)", "9114#4.3.1"
        )
    protocol = pseudo.get(b":protocol")
    if method == CONNECT and protocol is None:
        check_connect(pseudo)
    else:
        if protocol is not None:
            check_extended_connect(method, protocol, pseudo)
        check_scheme_and_path(method, pseudo)
        check_authority(pseudo, regular)
    return RequestHead(
        method=method,
        scheme=pseudo.get(b":scheme"),
        authority=pseudo.get(b":authority"),
        path=pseudo.get(b":path"),
        protocol=protocol,
        headers=tuple(regular),
        content_length=parse_content_length(regular),
    )


def check_connect(pseudo: dict[bytes, bytes]) -> None:
    """RFC 9114 §4.4: CONNECT names only host:port in :authority; no :scheme, no :path."""
    for name in (b":scheme", b":path"):
        if name in pseudo:
            raise MalformedMessage(f"CONNECT request with {show(name)}", "9114#4.4")
    authority = pseudo.get(b":authority")
    if authority is None:
        raise MalformedMessage("CONNECT request has no :authority pseudo-header", "9114#4.4")
    # RFC 9110 §7.1, authority-form:  uri-host ":" port  (an IPv6 host is in brackets).
    host, colon, port = authority.rpartition(b":")
    if not (host and colon and port.isdigit()) or b"@" in host:
        raise MalformedMessage(
            f"CONNECT :authority {show(authority)} is not host:port (RFC 9110 §7.1)", "9114#4.4"
        )


def check_extended_connect(method: bytes, protocol: bytes, pseudo: dict[bytes, bytes]) -> None:
    """RFC 9220 §3 (RFC 8441 §4): :protocol turns CONNECT into a request for a URI.

    :scheme and :path become mandatory, and :authority names the server as in any request
    instead of a tunnel's far end, so the ordinary rules apply after this check.
    """
    if method != CONNECT:
        raise MalformedMessage(f":protocol in a {show(method)} request, not CONNECT", "9220#3")
    if not TOKEN.fullmatch(protocol):
        raise MalformedMessage(f":protocol {show(protocol)} is not an upgrade token", "9220#3")
    for name in (b":scheme", b":path"):
        if name not in pseudo:
            raise MalformedMessage(f"extended CONNECT request has no {show(name)}", "9220#3")


def check_scheme_and_path(method: bytes, pseudo: dict[bytes, bytes]) -> None:
    """RFC 9114 §4.3.1: one :scheme and one :path; for http(s), :path is '/...' or '*'."""
    scheme = pseudo.get(b":scheme")
    path = pseudo.get(b":path")
    if scheme is None:
        raise MalformedMessage("request has no :scheme pseudo-header", "9114#4.3.1")
    if path is None:
        raise MalformedMessage("request has no :path pseudo-header", "9114#4.3.1")
    if not SCHEME.fullmatch(scheme):
        raise MalformedMessage(
            f":scheme {show(scheme)} is not a URI scheme (RFC 3986 §3.1)", "9114#4.3.1"
        )
    # Simplification of RFC 9114 §4.3.1: paths of other schemes are whatever they say.
    if scheme.lower() not in SCHEMES_WITH_AUTHORITY:
        return
    if not path:
        raise MalformedMessage("empty :path in an http or https request", "9114#4.3.1")
    if path == ASTERISK and method != OPTIONS:
        raise MalformedMessage(f":path '*' in a {show(method)} request, not OPTIONS", "9114#4.3.1")
    if path != ASTERISK and not path.startswith(b"/"):
        raise MalformedMessage(f":path {show(path)} does not start with '/'", "9114#4.3.1")


def check_authority(pseudo: dict[bytes, bytes], regular: Sequence[Header]) -> None:
    """RFC 9114 §4.3.1: an http(s) request names its server in :authority, Host, or both.

    If it uses both they must be equal, byte for byte, and neither may be empty.
    Simplification of RFC 9114 §4.3.1: schemes other than http and https are not checked,
    as this module cannot know whether their URIs have an authority.
    """
    hosts = [value for name, value in regular if name == HOST]
    if len(hosts) > 1:
        raise MalformedMessage("request has more than one Host field", "9110#7.2")
    scheme = pseudo[b":scheme"].lower()
    if scheme not in SCHEMES_WITH_AUTHORITY:
        return
    authority = pseudo.get(b":authority")
    host = hosts[0] if hosts else None
    if authority is None and host is None:
        raise MalformedMessage(
            f"{show(scheme)} request has neither :authority nor Host", "9114#4.3.1"
        )
    if authority == b"" or host == b"":
        raise MalformedMessage("empty :authority or Host in an http or https request", "9114#4.3.1")
    if authority is not None and host is not None and authority != host:
        raise MalformedMessage(
            f":authority {show(authority)} and Host {show(host)} disagree", "9114#4.3.1"
        )
    if authority is not None and b"@" in authority:
        raise MalformedMessage(
            f":authority {show(authority)} includes userinfo ('...@')", "9114#4.3.1"
        )


def validate_push_promise_request(field_lines: Sequence[Header]) -> RequestHead:
    """RFC 9114 §4.6: a PUSH_PROMISE's request: valid, safe, cacheable, without content.

    Safe (RFC 9110 §9.2.1) and cacheable (RFC 9110 §9.2.3) together leave GET and HEAD.
    A request without content has no Content-Length above 0; a promise is a header section
    only, so there can be no DATA frames or trailers to look at. The server must also say
    which origin it pushes for, in :authority. A malformed request raises
    `MalformedMessage`; a well-formed one that breaks §4.6 raises `UnpushableRequest`.
    """
    head = validate_request(field_lines)
    if head.method not in PUSHABLE_METHODS:
        raise UnpushableRequest(
            f"promised request uses {show(head.method)}; only GET and HEAD can be pushed",
            "9114#4.6",
        )
    if head.content_length:
        raise UnpushableRequest(
            f"promised request has content (content-length {head.content_length})", "9114#4.6"
        )
    if head.authority is None:
        raise UnpushableRequest("promised request has no :authority pseudo-header", "9114#4.6")
    return head


# -- responses and trailers (RFC 9114 §4.3.2, §4.5, §4.3) ---------------------------------


def validate_response(field_lines: Sequence[Header]) -> ResponseHead:
    """Check a response's header section (RFC 9114 §4.2, §4.3.2) and return its parts."""
    pseudo, regular = split_field_section(field_lines, RESPONSE_PSEUDO_HEADERS, "a response")
    status = pseudo.get(b":status")
    if status is None:
        raise MalformedMessage("response has no :status pseudo-header", "9114#4.3.2")
    if not STATUS_CODE.fullmatch(status) or int(status) not in STATUS_RANGE:
        raise MalformedMessage(
            f":status {show(status)} is not a three-digit code from 100 to 599 (RFC 9110 §15)",
            "9114#4.3.2",
        )
    if int(status) == SWITCHING_PROTOCOLS:
        raise MalformedMessage("HTTP/3 has no 101 (Switching Protocols) response", "9114#4.5")
    return ResponseHead(
        status=int(status), headers=tuple(regular), content_length=parse_content_length(regular)
    )


def validate_trailers(field_lines: Sequence[Header]) -> None:
    """Check a trailer section (RFC 9114 §4.3): regular fields only, by the rules of §4.2.

    Reading: RFC 9110 §6.5.1 forbids senders to put a framing field in trailers, since it
    would arrive after the content it describes; this module refuses a Content-Length there
    (Transfer-Encoding is refused everywhere) rather than silently ignoring it.
    """
    _, regular = split_field_section(field_lines, {}, "a trailer section")
    if any(name == CONTENT_LENGTH for name, _ in regular):
        raise MalformedMessage("content-length in a trailer section", "9110#6.5.1")


# -- content length (RFC 9114 §4.1.2) -----------------------------------------------------


def no_content_reason(status: int, request_method: bytes) -> str | None:
    """RFC 9110 §6.4.1: why a response can never have content, or None if it can.

    These responses may still carry a Content-Length (for HEAD and 304 it is the size the
    content would have had); RFC 9114 §4.1.2 says it must not be held against them.
    """
    if 100 <= status < 200:
        return "an interim (1xx) response"
    if status == NO_CONTENT:
        return "a 204 (No Content) response"
    if status == NOT_MODIFIED:
        return "a 304 (Not Modified) response"
    if request_method == b"HEAD":
        return "a response to HEAD"
    return None


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


def field_section_size(field_lines: Sequence[Header]) -> int:
    """RFC 9114 §4.2.2: the size SETTINGS_MAX_FIELD_SECTION_SIZE limits.

    Each field line counts the length of its name and value, uncompressed, plus 32.
    """
    return sum(len(name) + len(value) + FIELD_LINE_OVERHEAD for name, value in field_lines)
