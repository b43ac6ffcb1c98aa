"""RFC 9114 §4.1, §4.2, §4.3.1: the header section h3learn's client sends with a request.

A request's header section starts with its pseudo-header fields (RFC 9114 §4.3), taken
from the method and the URL. h3learn's client then adds a user-agent and an accept field,
and after them the field lines the user asked for: ``h3learn get -H 'Name: value'``, or
the header lines of the live page's fetch form. Those are how a learner puts a field of
their own into QPACK's dynamic table and watches it be referred to by later requests.

A user's field line is read as HTTP/1.1 writes one, ``Name: value``, and made HTTP/3's:

- the name is sent in lowercase, which RFC 9114 §4.2 asks of every HTTP/3 sender;
- the spaces and tabs around the value are not part of it (RFC 9110 §5.5), and the value
  is sent as UTF-8 (a byte a terminal passed that is not UTF-8 is sent as it came);
- it must then pass the checks the receiving server makes (h3learn.h3.http_fields), so
  that a field HTTP/3 forbids, such as ``Connection``, is refused before anything is sent,
  with the rule it breaks, instead of being reset by the server as H3_MESSAGE_ERROR.

The whole request is checked as the server will check it (h3learn.h3.pseudo_headers): a
Host field that names another authority than the URL, for one, is malformed (§4.3.1), and
so is a content-length that differs from the content's size (§4.1.2).
Every refusal is a `FetchError` with a one-line reason.
"""

from __future__ import annotations

from collections.abc import Sequence
from importlib.metadata import version as package_version

from h3learn.h3.content_length import ContentLengthTracker
from h3learn.h3.http_fields import check_field_name, check_field_value, check_regular_field
from h3learn.h3.messages import Header, MalformedMessage
from h3learn.h3.pseudo_headers import validate_request
from h3learn.qpack.errors import cite
from h3learn.transport.fetch_errors import FetchError
from h3learn.transport.urls import Target, shorten_url

USER_AGENT = f"h3learn/{package_version('h3learn')}".encode()
#: The regular fields h3learn's client sends unless the user gives a field of that name.
DEFAULT_FIELDS: tuple[Header, ...] = ((b"user-agent", USER_AGENT), (b"accept", b"*/*"))


def request_header_section(
    target: Target, method: str, data: bytes | None, fields: Sequence[Header] = ()
) -> list[Header]:
    """The header section of a request for ``target`` (RFC 9114 §4.3.1, §4.1).

    The pseudo-header fields come first (§4.3), then h3learn's user-agent and accept, then
    ``fields``, the user's own field lines in their order; a name in ``fields`` replaces
    the default of that name. With content, a content-length says its size unless
    ``fields`` has one.
    """
    given = {name for name, _ in fields}
    headers: list[Header] = [
        (b":method", method.encode()),
        (b":scheme", b"https"),
        (b":authority", target.authority.encode()),
        (b":path", target.path.encode()),
    ]
    headers += [field_line for field_line in DEFAULT_FIELDS if field_line[0] not in given]
    headers += fields
    if data is not None and b"content-length" not in given:
        headers.append((b"content-length", str(len(data)).encode()))
    return headers


def parse_field_line(text: str) -> Header:
    """A user's ``Name: value`` as an HTTP/3 field line, checked (see the module docstring)."""
    pseudo_name, second_colon, _ = text[1:].partition(":")
    if text.startswith(":") and second_colon and pseudo_name:
        raise FetchError(
            f"bad header {text!r}: pseudo-header fields come from the URL and the method"
            " (RFC 9114 §4.3.1)"
        )
    name_text, colon, value_text = text.partition(":")
    if not colon:
        raise FetchError(f"bad header {text!r}: write it as 'NAME: VALUE'")
    name, value = field_name_octets(text, name_text), field_value_octets(text, value_text)
    try:
        check_field_name(name)
        check_field_value(name, value)
        check_regular_field(name, value, in_request_header=True)
    except MalformedMessage as error:
        raise FetchError(f"bad header {text!r}: {error.rule} ({cite(error.rfc)})") from None
    return name, value


def field_name_octets(text: str, name: str) -> bytes:
    """The name in lowercase octets; only ASCII letters change (RFC 9114 §4.2), and a name
    is an ASCII token (RFC 9110 §5.6.2), so any other character is refused by name."""
    if not name:
        raise FetchError(f"bad header {text!r}: the field name is empty (RFC 9110 §5.1)")
    other = next((character for character in name if not character.isascii()), None)
    if other is not None:
        raise FetchError(
            f"bad header {text!r}: the field name holds {other!r}; a field name is a token"
            " of ASCII letters, digits and !#$%&'*+-.^_`|~ (RFC 9110 §5.6.2)"
        )
    return name.encode("ascii").lower()


def field_value_octets(text: str, value: str) -> bytes:
    """The value without the spaces and tabs around it (RFC 9110 §5.5), as UTF-8 octets.

    A byte a terminal passed that is not UTF-8 (Python holds it as a lone surrogate) is
    sent as it was typed: octets 0x80-0xFF are allowed in a value (obs-text, RFC 9110 §5.5).
    """
    try:
        return value.strip(" \t").encode("utf-8", "surrogateescape")
    except UnicodeEncodeError as error:
        raise FetchError(
            f"bad header {text!r}: the value holds {error.object[error.start]!r}, which has"
            " no UTF-8 form"
        ) from None


def check_request(
    target: Target, method: str, data: bytes | None, fields: Sequence[Header]
) -> None:
    """Refuse a request the server would find malformed (RFC 9114 §4.1.2), before sending:
    its header section, and a content-length that does not match the content."""
    try:
        head = validate_request(request_header_section(target, method, data, fields))
        ContentLengthTracker.for_request(head).check_sending(len(data or b""), ending=True)
    except MalformedMessage as error:
        raise FetchError(
            f"the request for {shorten_url(target.url)} would be malformed: {error.rule}"
            f" ({cite(error.rfc)})"
        ) from None
