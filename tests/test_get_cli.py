"""``h3learn get``: what it checks before it connects, and the request it makes of a URL.

RFC 9114 §4.3.1 puts the URL's path and query in ``:path`` as RFC 3986 writes them, so a
space or a non-ASCII letter is percent-encoded (§2.1); RFC 9110 §9.1 makes a method a
token; RFC 9114 §4.2 and §4.3.1 decide which ``--header`` field lines a request may carry.
Each mistake in the command line is one clear line and exit status 1, before any
packet is sent (nothing listens on the ports used here).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from h3learn.cli import main
from h3learn.transport.fetch_errors import FetchError
from h3learn.transport.request_fields import USER_AGENT, parse_field_line, request_header_section
from h3learn.transport.urls import parse_url, percent_encode


def failure(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    """Run ``h3learn get ARGV``; assert status 1 and one line on stderr, and return it."""
    assert main(["get", *argv]) == 1
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and error.startswith("h3learn get: "), error
    return error


@pytest.mark.parametrize(
    ("url", "path"),
    [
        ("https://localhost:4433/ä b?q=ü", "/%C3%A4%20b?q=%C3%BC"),
        ("https://localhost/a%2Fb?x=%41", "/a%2Fb?x=%41"),  # escapes already made stay
        ("https://localhost/100%", "/100%25"),  # a "%" that starts no escape
        ("https://localhost/a:b@c;d=e,f!$&'()*+?q=/x?y#fragment", "/a:b@c;d=e,f!$&'()*+?q=/x?y"),
        ('https://localhost/"<>^`{|}\\', "/%22%3C%3E%5E%60%7B%7C%7D%5C"),
    ],
)
def test_path_is_percent_encoded_where_rfc3986_section_3_3_requires(url: str, path: str) -> None:
    assert parse_url(url).path == path


def test_percent_encode_keeps_reserved_characters_and_is_idempotent() -> None:
    once = percent_encode("/ä b/%zz?q=ü&r=/?")
    assert once == "/%C3%A4%20b/%25zz?q=%C3%BC&r=/?"
    assert percent_encode(once) == once


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("https://localhost:abc/", "the port 'abc' is not a number"),
        ("https://[::1]:x1/", "the port 'x1' is not a number"),
        ("https://localhost:70000/", "the port 70000 is not a port a server listens on (1-65535)"),
    ],
)
def test_a_port_that_is_not_a_number_is_named(url: str, message: str) -> None:
    with pytest.raises(FetchError) as error:
        parse_url(url)
    assert str(error.value) == f"bad URL {url!r}: {message}"


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("https://x..y/", "the host 'x..y' has an empty label"),
        (f"https://{'a' * 64}.example/", "longer than 63 characters (RFC 1035 §2.3.4)"),
        ("https://localhost:0/", "port 0 is not a port a server listens on (1-65535)"),
    ],
)
def test_a_host_or_port_no_server_can_have_is_refused_in_words(url: str, message: str) -> None:
    with pytest.raises(FetchError, match=re.escape(message)):
        parse_url(url)
    assert parse_url("https://[::1]:4433/").host == "::1"  # an address is taken as it is


def test_a_huge_url_is_shortened_in_messages_so_the_reason_shows() -> None:
    url = "ftp://127.0.0.1/" + "a" * 100_000
    with pytest.raises(FetchError) as raised:
        parse_url(url)
    message = str(raised.value)
    assert len(message) < 300 and "(100016 characters)" in message
    assert message.endswith("HTTP/3 needs an https URL (RFC 9114 §3.1), not 'ftp'")


def test_a_method_with_a_space_is_not_a_token_rfc9110_section_9_1(
    capsys: pytest.CaptureFixture[str],
) -> None:
    error = failure(capsys, "-k", "-X", "BAD METHOD", "https://127.0.0.1:9/")
    assert "it contains a space" in error and "token (RFC 9110 §9.1" in error
    assert "capital" not in error


def test_a_lower_case_standard_method_is_named_case_sensitive(
    capsys: pytest.CaptureFixture[str],
) -> None:
    error = failure(capsys, "-k", "-X", "get", "https://127.0.0.1:9/")
    assert "case-sensitive" in error and "GET" in error


def test_connect_is_refused_as_a_method_get_cannot_make(
    capsys: pytest.CaptureFixture[str],
) -> None:
    error = failure(capsys, "-k", "-X", "CONNECT", "https://127.0.0.1:9/")
    assert "does not make CONNECT requests" in error and "(RFC 9114 §4.4)" in error


def test_a_ca_file_without_a_certificate_is_refused_at_once(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    not_a_certificate = tmp_path / "notcert.pem"
    not_a_certificate.write_text("garbage\n")
    error = failure(capsys, "--cafile", str(not_a_certificate), "https://127.0.0.1:9/")
    assert f"the CA file {not_a_certificate} holds no certificate" in error
    assert "Traceback" not in error


def test_recording_to_a_folder_is_refused_before_connecting(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "recdir"
    folder.mkdir()
    monkeypatch.chdir(tmp_path)
    # Port 9 (discard): were it contacted, the error would be a timeout, not this.
    error = failure(capsys, "-k", "--record", "recdir", "https://127.0.0.1:9/")
    assert error == "h3learn get: cannot record to recdir: it is a folder; name a file in it\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["recdir"], "no journal is left"
    assert not any(folder.iterdir())


@pytest.mark.parametrize(
    ("header", "message"),
    [
        ("Connection: close", "connection-specific field 'connection' (RFC 9114 §4.2)"),
        ("te: gzip", "TE with value 'gzip', not 'trailers' (RFC 9114 §4.2)"),
        (":path: /x", "pseudo-header fields come from the URL and the method (RFC 9114 §4.3.1)"),
        ("x-name", "write it as 'NAME: VALUE'"),
        ("bad name: v", "contains 0x20, which is not a token character (RFC 9110 §5.6.2)"),
        ("x-v: a\x01b", "value of 'x-v' contains control character 0x01 at offset 1"),
        (": v", "the field name is empty (RFC 9110 §5.1)"),
        ("\u212a-x: v", "the field name holds '\u212a'; a field name is a token of ASCII"),
        ("x-v: \ud800", "the value holds '\\ud800', which has no UTF-8 form"),
    ],
)
def test_a_header_option_http3_forbids_is_refused_with_its_rule(
    capsys: pytest.CaptureFixture[str], header: str, message: str
) -> None:
    error = failure(capsys, "-k", "-H", header, "https://127.0.0.1:9/")
    assert error.startswith(f"h3learn get: bad header {header!r}: ") and message in error


def test_a_host_header_that_contradicts_the_url_is_refused_before_connecting(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """RFC 9114 §4.3.1: with both :authority and Host, they must be the same."""
    error = failure(capsys, "-k", "-H", "Host: other.example", "https://127.0.0.1:9/")
    assert "the request for https://127.0.0.1:9/ would be malformed" in error
    assert "Host 'other.example' disagree (RFC 9114 §4.3.1)" in error


def test_a_content_length_that_differs_from_the_data_is_refused_before_connecting(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """RFC 9114 §4.1.2: the DATA must add up to the content-length the request announces."""
    error = failure(capsys, "-k", "-d", "abc", "-H", "content-length: 10", "https://127.0.0.1:9/")
    assert "would be malformed" in error and "content-length is 10" in error
    assert "(RFC 9114 §4.1.2)" in error


def test_a_value_byte_that_is_not_utf8_is_sent_as_typed() -> None:
    """RFC 9110 §5.5: obs-text (0x80-0xFF) may appear in a value; a terminal's byte that
    is not UTF-8 reaches Python as a lone surrogate and goes out as that byte."""
    raw = b"x-n: caf\xe9".decode("utf-8", "surrogateescape")
    assert parse_field_line(raw) == (b"x-n", b"caf\xe9")
    assert parse_field_line("X-N:  caf\u00e9 ") == (b"x-n", "café".encode())


def test_header_options_follow_the_defaults_they_do_not_replace() -> None:
    target = parse_url("https://localhost:4433/a?b")
    fields = [(b"accept", b"text/html"), (b"x-lesson", b"1"), (b"x-lesson", b"2")]
    assert request_header_section(target, "POST", b"abc", fields) == [
        (b":method", b"POST"),
        (b":scheme", b"https"),
        (b":authority", b"localhost:4433"),
        (b":path", b"/a?b"),
        (b"user-agent", USER_AGENT),
        (b"accept", b"text/html"),
        (b"x-lesson", b"1"),
        (b"x-lesson", b"2"),
        (b"content-length", b"3"),
    ]
    given_length = request_header_section(target, "POST", b"abc", [(b"content-length", b"3")])
    assert given_length.count((b"content-length", b"3")) == 1
