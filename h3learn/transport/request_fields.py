"""RFC 9114 §4.1, §4.2, §4.3.1: the header section h3learn's client sends with a request.

A request's header section starts with its pseudo-header fields (RFC 9114 §4.3), taken
from the method and the URL. h3learn's client then adds a user-agent and an accept field,
and after them the field lines the user asked for: ``h3learn get -H 'Name: value'``, or
the header lines of the live page's fetch form. Those are how a learner puts a field of
their own into QPACK's dynamic table and watches it be referred to by later requests.

A user's field line is read as HTTP/1.1 writes one, ``Name: value``, and made HTTP/3's:

- the name is sent in lowercase, which RFC 9114 §4.2 asks of every HTTP/3 sender;
- the spaces and tabs around the value are not part of it (RFC 9110 §5.5);
- it must then pass the checks the receiving server makes (h3learn.h3.http_fields), so
  that a field HTTP/3 forbids, such as ``Connection``, is refused before anything is sent,
  with the rule it breaks, instead of being reset by the server as H3_MESSAGE_ERROR.

The whole section is checked as the server will check it (h3learn.h3.pseudo_headers): a
Host field that names another authority than the URL, for one, is malformed (§4.3.1).
Every refusal is a `FetchError` with a one-line reason.
"""

from __future__ import annotations

from collections.abc import Sequence
from importlib.metadata import version as package_version

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
    if text.startswith(":"):
        raise FetchError(
            f"bad header {text!r}: pseudo-header fields come from the URL and the method"
            " (RFC 9114 §4.3.1)"
        )
    name, colon, value = text.partition(":")
    if not colon:
        raise FetchError(f"bad header {text!r}: write it as 'NAME: VALUE'")
    field_line = (name.lower().encode(), value.strip(" \t").encode())
    try:
        check_field_name(field_line[0])
        check_field_value(*field_line)
        check_regular_field(*field_line, in_request_header=True)
    except MalformedMessage as error:
        raise FetchError(f"bad header {text!r}: {error.rule} ({cite(error.rfc)})") from None
    return field_line


def check_request(
    target: Target, method: str, data: bytes | None, fields: Sequence[Header]
) -> None:
    """Refuse a request the server would find malformed (RFC 9114 §4.1.2), before sending."""
    try:
        validate_request(request_header_section(target, method, data, fields))
    except MalformedMessage as error:
        raise FetchError(
            f"the request for {shorten_url(target.url)} would be malformed: {error.rule}"
            f" ({cite(error.rfc)})"
        ) from None
