"""RFC 9114 §4.2: what a field line's name and value may hold, and which fields HTTP/3 refuses.

Every field line of a request, response or trailer section passes these checks before its
meaning is looked at (the pseudo-header fields' rules come after, in
`h3learn.h3.pseudo_headers`). A field name is a lowercase token (RFC 9114 §4.2 with
RFC 9110 §5.1); a field value holds no control characters and no whitespace at either end
(RFC 9114 §4.1.2 with RFC 9110 §5.5). Of the regular fields, the connection-specific ones
HTTP/1.1 needs have no place in HTTP/3, and TE may only say "trailers" (RFC 9114 §4.2). A
field line that breaks any of them makes the message malformed (`MalformedMessage`).

Readings this module chose where the RFCs leave room (each is marked where it is coded):

- Field values are checked against the full RFC 9110 §5.5 grammar: every control character
  except HTAB is refused, not only NUL, CR and LF.
- TE: "trailers" is compared without regard to case, as ABNF string literals are.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from h3learn.h3.messages import Header, MalformedMessage, show

# -- regular fields HTTP/3 treats specially (RFC 9114 §4.2) ------------------------------

#: RFC 9110 §7.6.1: fields that describe one hop's connection. HTTP/3 has other means for
#: all of them (Transfer-Encoding: RFC 9114 §4.1; Upgrade: §4.5), so each is malformed.
CONNECTION_SPECIFIC_FIELDS = frozenset(
    {b"connection", b"keep-alive", b"proxy-connection", b"transfer-encoding", b"upgrade"}
)
TE = b"te"
#: The one TE value HTTP/3 allows, and only in a request's header section (RFC 9114 §4.2).
TRAILERS = b"trailers"

# -- grammar (RFC 9110) -------------------------------------------------------------------

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
