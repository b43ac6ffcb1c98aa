"""RFC 9114 §4.3-§4.6: the pseudo-header fields of requests and responses, CONNECT included.

HTTP/3 carries a message's control data, which HTTP/1.1 wrote in its first line, as
pseudo-header fields: :method, :scheme, :authority and :path in a request (RFC 9114
§4.3.1), :status in a response (§4.3.2). They stand before every regular field, each at most
once, and a trailer section has none (§4.3). CONNECT (§4.4) names only the tunnel's far end
in :authority; extended CONNECT (RFC 9220 §3) adds :protocol and asks for a URI instead.
Two neighbours live here too: the 101 status HTTP/3 does without (§4.5) and the requests a
server may push (§4.6).

Theory of operation. Each `validate_*` function reads the field lines once, in order:

1. every field line: the name and value (RFC 9114 §4.2, in `h3learn.h3.http_fields`);
2. pseudo-header fields: defined for this kind of section, before every regular field,
   each at most once;
3. regular fields: no connection-specific fields, TE only as "trailers" in a request
   (`h3learn.h3.http_fields` again);
4. the rules of the kind: what a request, CONNECT, extended CONNECT or response needs.

The first broken rule raises `MalformedMessage`, whose text names the rule and the section.
What survives comes back as a `RequestHead` or `ResponseHead` (in `h3learn.h3.messages`),
the regular fields in their original order and the Content-Length read
(`h3learn.h3.content_length`).

Readings this module chose where the RFCs leave room (each is marked where it is coded):

- A Content-Length in a trailer section is refused (RFC 9110 §6.5.1 forbids sending one).
- A 101 (Switching Protocols) response is malformed: RFC 9114 §4.5 says HTTP/3 does not
  support it, and names no error for receiving one.
- Extended CONNECT follows RFC 9220 §3 (via RFC 8441 §4): :scheme and :path are required
  and :authority follows the ordinary request rules (for https, :authority or Host).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from h3learn.h3.content_length import CONTENT_LENGTH, parse_content_length
from h3learn.h3.http_fields import TOKEN, check_field_name, check_field_value, check_regular_field
from h3learn.h3.messages import (
    CONNECT,
    Header,
    MalformedMessage,
    RequestHead,
    ResponseHead,
    UnpushableRequest,
    show,
)

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

OPTIONS = b"OPTIONS"
#: The :path of an OPTIONS request for the server as a whole (RFC 9110 §7.1, asterisk-form).
ASTERISK = b"*"
#: Schemes whose URIs must have an authority (RFC 9110 §4.2); §4.3.1 then needs one too.
SCHEMES_WITH_AUTHORITY = frozenset({b"http", b"https"})
#: Methods that are both safe (RFC 9110 §9.2.1) and cacheable (RFC 9110 §9.2.3): the
#: only requests a server may push (RFC 9114 §4.6).
PUSHABLE_METHODS = frozenset({b"GET", b"HEAD"})

#: The regular field an http(s) request may name its server in, with or instead of
#: :authority (RFC 9114 §4.3.1).
HOST = b"host"

# -- grammar (RFC 3986, RFC 9110) ---------------------------------------------------------

# RFC 3986 §3.1:  scheme = ALPHA *( ALPHA / DIGIT / "+" / "-" / "." )
SCHEME = re.compile(rb"[A-Za-z][A-Za-z0-9+\-.]*")
# RFC 9110 §15:   the status code is three digits, 100 to 599.
STATUS_CODE = re.compile(rb"[0-9]{3}")
STATUS_RANGE = range(100, 600)
SWITCHING_PROTOCOLS = 101


# -- the order and the kinds of field lines (RFC 9114 §4.3) -----------------------------


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
