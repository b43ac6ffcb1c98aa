"""RFC 3986, RFC 9114 §3.1: the https URL a client is asked to fetch, checked and split.

HTTP/3 serves only the "https" scheme (RFC 9114 §3.1): the URL names the origin to connect
to (host and port, 443 unless it says otherwise) and gives the request its :authority and
:path pseudo-header fields (RFC 9114 §4.3.1). `parse_url` checks it by RFC 3986's rules
(scheme, userinfo, host, port) and splits it into a `Target`; a bad URL is a `FetchError`
that says what is wrong, before any packet is sent:

- the port is a number a server can listen on, 1 to 65535 (RFC 3986 §3.2.3);
- a host name's labels are 1 to 63 characters (RFC 1035 §2.3.4); an IP literal is taken as
  it is, an IPv6 one in brackets (RFC 3986 §3.2.2);
- user information ("user@host") is refused (RFC 9110 §4.2.4);
- the path and query are percent-encoded where RFC 3986 §3.3-§3.4 needs it
  (`percent_encode`).

Messages show a very long URL shortened (`shorten_url`), so that the reason stays readable.
"""

from __future__ import annotations

import ipaddress
import re
import string
from dataclasses import dataclass
from urllib.parse import urlsplit

from h3learn.transport.fetch_errors import FetchError


@dataclass(frozen=True, slots=True)
class Target:
    """A URL split into what an HTTP/3 request needs (RFC 9114 §3.1, §4.3.1)."""

    url: str
    host: str
    port: int
    authority: str
    path: str

    @property
    def origin(self) -> tuple[str, int]:
        return self.host, self.port

    @property
    def shown(self) -> str:
        """The URL as messages show it: a very long one shortened, so the reason is seen."""
        return shorten_url(self.url)


#: Messages show at most this many characters of a URL (a 100 kB URL would bury the reason).
URL_SHOWN = 120


def shorten_url(url: str) -> str:
    if len(url) <= URL_SHOWN:
        return url
    return f"{url[:URL_SHOWN]}… ({len(url)} characters)"


#: RFC 3986 §2.3, §2.2, §3.3: the characters a path segment (pchar) holds as they are:
#: unreserved, sub-delims, ":" and "@". A path adds "/", a query "/" and "?" (§3.4).
UNRESERVED = string.ascii_letters + string.digits + "-._~"
SUB_DELIMS = "!$&'()*+,;="
PCHAR = frozenset(UNRESERVED + SUB_DELIMS + ":@")
PATH_AND_QUERY_CHARACTERS = PCHAR | frozenset("/?")
#: RFC 3986 §2.1: pct-encoded = "%" HEXDIG HEXDIG.
PERCENT_ENCODED = re.compile(r"%[0-9A-Fa-f]{2}")


def percent_encode(path: str) -> str:
    """A path and query that RFC 3986 §3.3-§3.4 allows in :path (RFC 9114 §4.3.1).

    What may stand as it is stays (the reserved characters among it, so the URL keeps its
    meaning), and so does an escape already made (``%2F``); anything else (a space, a
    non-ASCII letter, a "%" that starts no escape) becomes its UTF-8 bytes as %XX (§2.1).
    """
    encoded: list[str] = []
    position = 0
    while position < len(path):
        character = path[position]
        if PERCENT_ENCODED.match(path, position):
            encoded.append(path[position : position + 3])
            position += 3
            continue
        if character in PATH_AND_QUERY_CHARACTERS:
            encoded.append(character)
        else:
            encoded.extend(f"%{byte:02X}" for byte in character.encode("utf-8"))
        position += 1
    return "".join(encoded)


def _port_of(url: str, netloc: str) -> int | None:
    """The URL's port (RFC 3986 §3.2.3), or None; FetchError if it is not a port number."""
    host_and_port = netloc.rpartition("@")[2]
    if host_and_port.startswith("["):  # an IPv6 literal, RFC 3986 §3.2.2
        host_and_port = host_and_port.partition("]")[2]
    _, colon, text = host_and_port.partition(":")
    if not colon or not text:
        return None
    if not (text.isascii() and text.isdigit()):
        raise FetchError(f"bad URL {url!r}: the port {text!r} is not a number")
    port = int(text)
    if port > 0xFFFF:
        raise FetchError(
            f"bad URL {url!r}: the port {port} is not a port a server listens on (1-65535)"
        )
    return port


def parse_url(url: str) -> Target:
    """Check an https URL and split it; raises FetchError saying what is wrong."""
    shown = shorten_url(url)
    try:
        parts = urlsplit(url)
    except ValueError as error:
        raise FetchError(f"bad URL {shown!r}: {error}") from None
    port = _port_of(shown, parts.netloc)
    if parts.scheme != "https":
        raise FetchError(
            f"bad URL {shown!r}: HTTP/3 needs an https URL (RFC 9114 §3.1), not {parts.scheme!r}"
            if parts.scheme
            else f"bad URL {shown!r}: it needs the https:// scheme"
        )
    host = parts.hostname
    if not host:
        raise FetchError(f"bad URL {shown!r}: no host")
    if parts.username is not None or parts.password is not None:
        raise FetchError(f"bad URL {shown!r}: user information is not allowed (RFC 9110 §4.2.4)")
    port = 443 if port is None else port
    if port == 0:
        raise FetchError(f"bad URL {shown!r}: port 0 is not a port a server listens on (1-65535)")
    check_host(shown, host)
    shown_host = f"[{host}]" if ":" in host else host
    authority = shown_host if port == 443 else f"{shown_host}:{port}"
    path = parts.path or "/"
    if parts.query:
        path += "?" + parts.query
    path = percent_encode(path)
    return Target(url=url, host=host, port=port, authority=authority, path=path)


def check_host(shown: str, host: str) -> None:
    """A host name's labels are 1 to 63 characters (RFC 1035 §2.3.4; RFC 3986 §3.2.2 names
    the host); an IP address literal is taken as it is."""
    try:
        ipaddress.ip_address(host)
        return
    except ValueError:
        pass
    try:
        host.encode("idna")
    except UnicodeError:
        raise FetchError(
            f"bad URL {shown!r}: the host {shorten_url(host)!r} has an empty label or one"
            " longer than 63 characters (RFC 1035 §2.3.4)"
        ) from None
