"""RFC 9114 §4.1-§4.6: malformed requests, responses and trailer sections.

One test per rule, named after it; each checks that the section the rule comes from appears
in the error. Then the DATA-versus-Content-Length tracker (§4.1.2), push promises (§4.6),
the field section size (§4.2.2), and Hypothesis: what is accepted comes back unchanged,
random field lines only ever raise MalformedMessage, and h3learn refuses every response
aioquic refuses (it may be stricter, never laxer).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import pytest
from aioquic.h3.connection import MessageError, validate_response_headers
from aioquic.h3.connection import validate_trailers as aioquic_trailers
from hypothesis import given, settings
from hypothesis import strategies as st

from h3learn.h3.content_length import ContentLengthTracker
from h3learn.h3.errors import ErrorCode, H3StreamError
from h3learn.h3.http_fields import CONNECTION_SPECIFIC_FIELDS
from h3learn.h3.messages import (
    Header,
    MalformedMessage,
    RequestHead,
    ResponseHead,
    UnpushableRequest,
    field_section_size,
)
from h3learn.h3.pseudo_headers import (
    validate_push_promise_request,
    validate_request,
    validate_response,
    validate_trailers,
)

GET: list[Header] = [
    (b":method", b"GET"),
    (b":scheme", b"https"),
    (b":authority", b"example.com"),
    (b":path", b"/index.html"),
]
CONNECT: list[Header] = [(b":method", b"CONNECT"), (b":authority", b"example.com:443")]
WEBSOCKET: list[Header] = [
    (b":method", b"CONNECT"),
    (b":protocol", b"websocket"),
    (b":scheme", b"https"),
    (b":authority", b"example.com"),
    (b":path", b"/chat"),
]
OK: list[Header] = [(b":status", b"200")]


def replace(field_lines: list[Header], name: bytes, value: bytes | None) -> list[Header]:
    """``field_lines`` with the value of ``name`` changed, or the field removed (None)."""
    if value is None:
        return [line for line in field_lines if line[0] != name]
    return [(n, value if n == name else v) for n, v in field_lines]


def assert_malformed(
    field_lines: Sequence[Header],
    section: str,
    words: str,
    validate: Callable[[Sequence[Header]], object] = validate_request,
) -> MalformedMessage:
    """``validate`` refuses ``field_lines``, citing ``section`` and saying ``words``."""
    with pytest.raises(MalformedMessage) as caught:
        validate(field_lines)
    text = str(caught.value)
    assert text.startswith(f"H3_MESSAGE_ERROR ({section}): "), text
    assert words in caught.value.rule, text
    return caught.value


# -- valid messages --------------------------------------------------------------------


def test_get_request_keeps_its_pseudo_headers_and_regular_fields() -> None:
    head = validate_request([*GET, (b"accept", b"*/*"), (b"user-agent", b"h3learn")])
    assert head == RequestHead(
        method=b"GET",
        scheme=b"https",
        authority=b"example.com",
        path=b"/index.html",
        protocol=None,
        headers=((b"accept", b"*/*"), (b"user-agent", b"h3learn")),
        content_length=None,
    )


@pytest.mark.parametrize("method", [b"HEAD", b"DELETE", b"PUT", b"PATCH", b"purge"])
def test_requests_with_other_methods_are_valid(method: bytes) -> None:
    assert validate_request(replace(GET, b":method", method)).method == method


def test_post_request_carries_its_content_length() -> None:
    head = validate_request([*replace(GET, b":method", b"POST"), (b"content-length", b"12")])
    assert head.content_length == 12


def test_options_request_for_the_whole_server_uses_asterisk() -> None:
    head = validate_request(replace(replace(GET, b":method", b"OPTIONS"), b":path", b"*"))
    assert head.path == b"*"


def test_request_may_name_its_server_in_host_instead_of_authority() -> None:
    head = validate_request([*replace(GET, b":authority", None), (b"host", b"example.com")])
    assert head.authority is None
    assert head.headers == ((b"host", b"example.com"),)


def test_request_may_carry_both_authority_and_an_equal_host() -> None:
    validate_request([*GET, (b"host", b"example.com")])


def test_te_trailers_is_allowed_in_a_request() -> None:
    validate_request([*GET, (b"te", b"trailers")])


@pytest.mark.parametrize("authority", [b"example.com:443", b"[2001:db8::1]:8443", b"10.0.0.1:22"])
def test_connect_request_has_only_method_and_authority(authority: bytes) -> None:
    head = validate_request(replace(CONNECT, b":authority", authority))
    assert (head.method, head.authority, head.scheme, head.path) == (
        b"CONNECT",
        authority,
        None,
        None,
    )


def test_extended_connect_request_is_valid_once_enabled() -> None:
    head = validate_request(WEBSOCKET, enable_connect_protocol=True)
    assert head.protocol == b"websocket"
    assert head.path == b"/chat"


def test_other_schemes_are_not_held_to_the_http_path_and_authority_rules() -> None:
    """Simplification of RFC 9114 §4.3.1: only http and https are known to need them."""
    head = validate_request([(b":method", b"GET"), (b":scheme", b"urn"), (b":path", b"")])
    assert head.authority is None


@pytest.mark.parametrize("status", [200, 404, 503])
def test_final_response_is_valid(status: int) -> None:
    head = validate_response([(b":status", str(status).encode()), (b"content-length", b"0")])
    assert head == ResponseHead(
        status=status, headers=((b"content-length", b"0"),), content_length=0
    )
    assert not head.informational


@pytest.mark.parametrize("status", [100, 103])
def test_interim_response_is_informational(status: int) -> None:
    assert validate_response([(b":status", str(status).encode())]).informational


def test_trailer_section_of_regular_fields_is_valid() -> None:
    validate_trailers([(b"grpc-status", b"0"), (b"server-timing", b"total;dur=12")])


def test_field_value_may_hold_inner_whitespace_and_obs_text() -> None:
    head = validate_request([*GET, (b"x-note", b"a \tb \xe2\x9c\x93"), (b"x-empty", b"")])
    assert head.headers[0] == (b"x-note", b"a \tb \xe2\x9c\x93")


# -- errors --------------------------------------------------------------------------


def test_error_names_the_code_the_section_and_the_rule() -> None:
    error = assert_malformed(GET[1:], "RFC 9114 §4.3.1", "no :method")
    assert str(error) == (
        "H3_MESSAGE_ERROR (RFC 9114 §4.3.1): request has no :method pseudo-header"
    )
    assert error.code == ErrorCode.H3_MESSAGE_ERROR
    stream_error = error.as_stream_error(4)
    assert isinstance(stream_error, H3StreamError)
    assert (stream_error.stream_id, stream_error.code, stream_error.rfc) == (
        4,
        error.code,
        "9114#4.3.1",
    )


# -- RFC 9114 §4.2: field names and values --------------------------------------------


@pytest.mark.parametrize("name", [b"Accept", b"X-FOO", b":Method"])
def test_uppercase_field_name_is_malformed(name: bytes) -> None:
    assert_malformed([*GET, (name, b"x")], "RFC 9114 §4.2", "uppercase")


def test_empty_field_name_is_malformed() -> None:
    assert_malformed([*GET, (b"", b"x")], "RFC 9114 §4.1.2", "empty field name")


@pytest.mark.parametrize("name", [b"x foo", b"x:foo", b"x\x00", b"caf\xc3\xa9", b"(x)", b"a/b"])
def test_field_name_with_a_non_token_character_is_malformed(name: bytes) -> None:
    assert_malformed([*GET, (name, b"x")], "RFC 9114 §4.1.2", "not a token character")


@pytest.mark.parametrize(("octet", "label"), [(b"\x00", "NUL"), (b"\r", "CR"), (b"\n", "LF")])
def test_field_value_with_nul_cr_or_lf_is_malformed(octet: bytes, label: str) -> None:
    value = b"evil" + octet + b"x-injected: 1"
    assert_malformed([*GET, (b"x-a", value)], "RFC 9114 §4.1.2", f"contains {label} at offset 4")


@pytest.mark.parametrize("octet", [b"\x01", b"\x1b", b"\x7f"])
def test_field_value_with_another_control_character_is_malformed(octet: bytes) -> None:
    assert_malformed([*GET, (b"x-a", b"a" + octet)], "RFC 9114 §4.1.2", "control character")


@pytest.mark.parametrize("value", [b" x", b"x ", b"\tx", b"x\t", b" "])
def test_field_value_with_leading_or_trailing_whitespace_is_malformed(value: bytes) -> None:
    assert_malformed([*GET, (b"x-a", value)], "RFC 9114 §4.1.2", "whitespace")


def test_pseudo_header_values_follow_the_same_character_rules() -> None:
    assert_malformed(replace(GET, b":path", b"/a\r\nhost: evil"), "RFC 9114 §4.1.2", "CR")


@pytest.mark.parametrize(
    "name", [b"connection", b"keep-alive", b"proxy-connection", b"transfer-encoding", b"upgrade"]
)
@pytest.mark.parametrize("kind", ["request", "response", "trailers"])
def test_connection_specific_fields_are_malformed(name: bytes, kind: str) -> None:
    field = (name, b"chunked" if name == b"transfer-encoding" else b"close")
    if kind == "request":
        assert_malformed([*GET, field], "RFC 9114 §4.2", "connection-specific")
    elif kind == "response":
        assert_malformed([*OK, field], "RFC 9114 §4.2", "connection-specific", validate_response)
    else:
        assert_malformed([field], "RFC 9114 §4.2", "connection-specific", validate_trailers)


@pytest.mark.parametrize("value", [b"gzip", b"trailers, deflate", b""])
def test_te_other_than_trailers_is_malformed(value: bytes) -> None:
    assert_malformed([*GET, (b"te", value)], "RFC 9114 §4.2", "not 'trailers'")


def test_te_outside_a_request_header_section_is_malformed() -> None:
    te = (b"te", b"trailers")
    assert_malformed([*OK, te], "RFC 9114 §4.2", "TE outside", validate_response)
    assert_malformed([te], "RFC 9114 §4.2", "TE outside", validate_trailers)


def test_content_length_in_a_trailer_section_is_malformed() -> None:
    field_lines = [(b"content-length", b"0")]
    assert_malformed(field_lines, "RFC 9110 §6.5.1", "trailer section", validate_trailers)


# -- RFC 9114 §4.3: where pseudo-header fields may appear --------------------------------


def test_undefined_pseudo_header_is_malformed() -> None:
    assert_malformed([*GET, (b":version", b"3")], "RFC 9114 §4.3", "undefined pseudo-header")


def test_pseudo_header_after_a_regular_field_is_malformed() -> None:
    field_lines = [*GET[:3], (b"accept", b"*/*"), GET[3]]
    assert_malformed(field_lines, "RFC 9114 §4.3", "after the regular field 'accept'")


@pytest.mark.parametrize("name", [b":method", b":scheme", b":authority", b":path"])
def test_repeated_request_pseudo_header_is_malformed(name: bytes) -> None:
    repeated = next(line for line in GET if line[0] == name)
    assert_malformed([repeated, *GET], "RFC 9114 §4.3.1", "appears twice")


def test_repeated_status_is_malformed() -> None:
    assert_malformed([*OK, *OK], "RFC 9114 §4.3.2", "appears twice", validate_response)


def test_response_pseudo_header_in_a_request_is_malformed() -> None:
    assert_malformed([*GET, *OK], "RFC 9114 §4.3", "response pseudo-header field ':status'")


@pytest.mark.parametrize("line", [*GET, (b":protocol", b"websocket")])
def test_request_pseudo_header_in_a_response_is_malformed(line: Header) -> None:
    assert_malformed([*OK, line], "RFC 9114 §4.3", "request pseudo-header field", validate_response)


@pytest.mark.parametrize("line", [GET[0], OK[0]])
def test_pseudo_header_in_a_trailer_section_is_malformed(line: Header) -> None:
    assert_malformed([line], "RFC 9114 §4.3", "in a trailer section", validate_trailers)


# -- RFC 9114 §4.3.1: request pseudo-header fields --------------------------------------


def test_request_without_method_is_malformed() -> None:
    assert_malformed(replace(GET, b":method", None), "RFC 9114 §4.3.1", "no :method")


@pytest.mark.parametrize("method", [b"", b"GET /", b"G\xc3\x89T"])
def test_method_that_is_not_a_token_is_malformed(method: bytes) -> None:
    assert_malformed(replace(GET, b":method", method), "RFC 9114 §4.3.1", "is not a token")


def test_request_without_scheme_is_malformed() -> None:
    assert_malformed(replace(GET, b":scheme", None), "RFC 9114 §4.3.1", "no :scheme")


def test_request_without_path_is_malformed() -> None:
    assert_malformed(replace(GET, b":path", None), "RFC 9114 §4.3.1", "no :path")


@pytest.mark.parametrize("scheme", [b"", b"1http", b"ht/tp"])
def test_scheme_that_is_not_a_uri_scheme_is_malformed(scheme: bytes) -> None:
    assert_malformed(replace(GET, b":scheme", scheme), "RFC 9114 §4.3.1", "not a URI scheme")


@pytest.mark.parametrize("scheme", [b"http", b"https", b"HTTPS"])
def test_empty_path_in_an_http_request_is_malformed(scheme: bytes) -> None:
    request = replace(replace(GET, b":scheme", scheme), b":path", b"")
    assert_malformed(request, "RFC 9114 §4.3.1", "empty :path")


def test_asterisk_path_outside_options_is_malformed() -> None:
    assert_malformed(replace(GET, b":path", b"*"), "RFC 9114 §4.3.1", "not OPTIONS")


def test_http_path_that_does_not_start_with_slash_is_malformed() -> None:
    assert_malformed(replace(GET, b":path", b"index.html"), "RFC 9114 §4.3.1", "start with '/'")


def test_http_request_without_authority_or_host_is_malformed() -> None:
    request = replace(GET, b":authority", None)
    assert_malformed(request, "RFC 9114 §4.3.1", "neither :authority nor Host")


def test_empty_authority_or_host_is_malformed() -> None:
    assert_malformed(replace(GET, b":authority", b""), "RFC 9114 §4.3.1", "empty :authority")
    host_only = [*replace(GET, b":authority", None), (b"host", b"")]
    assert_malformed(host_only, "RFC 9114 §4.3.1", "empty :authority or Host")


def test_authority_and_host_that_disagree_are_malformed() -> None:
    request = [*GET, (b"host", b"evil.example")]
    assert_malformed(request, "RFC 9114 §4.3.1", "disagree")


def test_authority_with_userinfo_is_malformed() -> None:
    request = replace(GET, b":authority", b"user:pw@example.com")
    assert_malformed(request, "RFC 9114 §4.3.1", "userinfo")


def test_more_than_one_host_field_is_malformed() -> None:
    request = [*GET, (b"host", b"example.com"), (b"host", b"example.com")]
    assert_malformed(request, "RFC 9110 §7.2", "more than one Host")


# -- RFC 9114 §4.4 and RFC 9220 §3: CONNECT and extended CONNECT -------------------------


@pytest.mark.parametrize("line", [(b":scheme", b"https"), (b":path", b"/")])
def test_connect_with_scheme_or_path_is_malformed(line: Header) -> None:
    assert_malformed(
        [*CONNECT, line], "RFC 9114 §4.4", f"CONNECT request with '{line[0].decode()}'"
    )


def test_connect_without_authority_is_malformed() -> None:
    assert_malformed(CONNECT[:1], "RFC 9114 §4.4", "no :authority")


@pytest.mark.parametrize("authority", [b"example.com", b"example.com:", b":443", b"u@h:443"])
def test_connect_authority_that_is_not_host_and_port_is_malformed(authority: bytes) -> None:
    request = replace(CONNECT, b":authority", authority)
    assert_malformed(request, "RFC 9114 §4.4", "is not host:port")


def test_protocol_without_enable_connect_protocol_is_malformed() -> None:
    assert_malformed(WEBSOCKET, "RFC 9220 §3", "SETTINGS_ENABLE_CONNECT_PROTOCOL was not sent")


def test_protocol_outside_connect_is_malformed() -> None:
    request = [*GET, (b":protocol", b"websocket")]
    with pytest.raises(MalformedMessage, match=r"\(RFC 9220 §3\): :protocol in a 'GET' request"):
        validate_request(request, enable_connect_protocol=True)


@pytest.mark.parametrize("name", [b":scheme", b":path"])
def test_extended_connect_without_scheme_or_path_is_malformed(name: bytes) -> None:
    with pytest.raises(MalformedMessage, match=r"\(RFC 9220 §3\): extended CONNECT .* no"):
        validate_request(replace(WEBSOCKET, name, None), enable_connect_protocol=True)


def test_extended_connect_follows_the_ordinary_authority_rules() -> None:
    """RFC 8441 §4 reads :authority as in any request: for https, it or Host is needed."""
    with pytest.raises(MalformedMessage, match=r"§4.3.1\): 'https' request has neither"):
        validate_request(replace(WEBSOCKET, b":authority", None), enable_connect_protocol=True)
    with_host = [*replace(WEBSOCKET, b":authority", None), (b"host", b"example.com")]
    assert validate_request(with_host, enable_connect_protocol=True).authority is None


def test_protocol_that_is_not_a_token_is_malformed() -> None:
    request = replace(WEBSOCKET, b":protocol", b"web socket")
    with pytest.raises(MalformedMessage, match=r"\(RFC 9220 §3\): .* not an upgrade token"):
        validate_request(request, enable_connect_protocol=True)


# -- RFC 9114 §4.3.2 and §4.5: response pseudo-header fields ------------------------------


def test_response_without_status_is_malformed() -> None:
    field_lines = [(b"content-length", b"0")]
    assert_malformed(field_lines, "RFC 9114 §4.3.2", "no :status", validate_response)


@pytest.mark.parametrize("status", [b"20", b"2000", b"2x0", b"+20", b"099", b"600", b""])
def test_status_that_is_not_three_digits_from_100_to_599_is_malformed(status: bytes) -> None:
    response = [(b":status", status)]
    assert_malformed(response, "RFC 9114 §4.3.2", "three-digit code", validate_response)


def test_101_switching_protocols_is_malformed() -> None:
    response = [(b":status", b"101")]
    assert_malformed(response, "RFC 9114 §4.5", "101 (Switching Protocols)", validate_response)


# -- RFC 9110 §8.6: the Content-Length field ----------------------------------------------


@pytest.mark.parametrize("value", [b"-1", b"+1", b"1.0", b"0x10", b"1_000", b"", b"1 2", b"5,"])
def test_content_length_that_is_not_a_non_negative_integer_is_malformed(value: bytes) -> None:
    request = [*GET, (b"content-length", value)]
    assert_malformed(request, "RFC 9110 §8.6", "not a non-negative integer")


@pytest.mark.parametrize(
    "fields",
    [
        [(b"content-length", b"42, 42")],
        [(b"content-length", b"42"), (b"content-length", b"42")],
        [(b"content-length", b"042")],
    ],
)
def test_content_length_repeating_one_number_is_that_number(fields: list[Header]) -> None:
    assert validate_response([*OK, *fields]).content_length == 42


@pytest.mark.parametrize(
    "fields",
    [[(b"content-length", b"42, 43")], [(b"content-length", b"42"), (b"content-length", b"0")]],
)
def test_content_length_values_that_disagree_are_malformed(fields: list[Header]) -> None:
    assert_malformed([*OK, *fields], "RFC 9110 §8.6", "disagree", validate_response)


@pytest.mark.parametrize("value", [str(2**62).encode(), b"9" * 5000])
def test_content_length_larger_than_a_quic_stream_is_malformed(value: bytes) -> None:
    request = [*GET, (b"content-length", value)]
    assert_malformed(request, "RFC 9110 §8.6", "more than a QUIC stream can carry")


def test_content_length_with_many_leading_zeros_is_still_a_number() -> None:
    assert validate_response([*OK, (b"content-length", b"0" * 5000 + b"7")]).content_length == 7


# -- RFC 9114 §4.1.2: DATA against Content-Length -----------------------------------------


def test_data_matching_content_length_is_accepted() -> None:
    tracker = ContentLengthTracker(10)
    for length in (3, 0, 7):
        tracker.add(length)
    tracker.finish()


def test_data_beyond_content_length_is_malformed() -> None:
    tracker = ContentLengthTracker(10)
    tracker.add(6)
    with pytest.raises(MalformedMessage, match=r"\(RFC 9114 §4.1.2\): 12 bytes of DATA, more"):
        tracker.add(6)


def test_data_short_of_content_length_at_end_of_stream_is_malformed() -> None:
    tracker = ContentLengthTracker(10)
    tracker.add(4)
    with pytest.raises(MalformedMessage, match=r"§4.1.2\): stream ended after 4 bytes"):
        tracker.finish()


def test_without_content_length_any_amount_of_data_is_accepted() -> None:
    tracker = ContentLengthTracker(None)
    tracker.add(1_000_000)
    tracker.finish()


def test_response_to_head_may_declare_a_length_but_carries_no_data() -> None:
    head = validate_response([*OK, (b"content-length", b"5000")])
    tracker = ContentLengthTracker.for_response(head, request_method=b"HEAD")
    tracker.add(0)
    tracker.finish()
    with pytest.raises(MalformedMessage, match=r"\(RFC 9110 §6.4.1\): .* a response to HEAD"):
        tracker.add(1)


@pytest.mark.parametrize("status", [b"103", b"204", b"304"])
def test_1xx_204_and_304_responses_carry_no_data(status: bytes) -> None:
    head = validate_response([(b":status", status), (b"content-length", b"12")])
    tracker = ContentLengthTracker.for_response(head, request_method=b"GET")
    tracker.finish()
    with pytest.raises(MalformedMessage, match=r"RFC 9110 §6.4.1.*which has no content"):
        tracker.add(12)


def test_connect_tunnel_data_is_not_content() -> None:
    request = validate_request([*CONNECT, (b"content-length", b"0")])
    ContentLengthTracker.for_request(request).add(100)
    response = validate_response([*OK, (b"content-length", b"0")])
    tracker = ContentLengthTracker.for_response(response, request_method=b"CONNECT")
    tracker.add(100)
    tracker.finish()


def test_request_tracker_uses_the_request_content_length() -> None:
    request = validate_request([*GET, (b"content-length", b"2")])
    tracker = ContentLengthTracker.for_request(request)
    with pytest.raises(MalformedMessage):
        tracker.add(3)


def test_negative_data_length_is_a_programming_error() -> None:
    with pytest.raises(ValueError):
        ContentLengthTracker(None).add(-1)


# -- RFC 9114 §4.6: promised requests -----------------------------------------------------


@pytest.mark.parametrize("method", [b"GET", b"HEAD"])
def test_push_promise_of_a_safe_cacheable_request_is_valid(method: bytes) -> None:
    head = validate_push_promise_request(replace(GET, b":method", method))
    assert head.method == method


@pytest.mark.parametrize("method", [b"POST", b"PUT", b"DELETE", b"OPTIONS", b"TRACE"])
def test_push_promise_of_an_unsafe_or_uncacheable_method_is_unpushable(method: bytes) -> None:
    error = assert_malformed(
        replace(GET, b":method", method),
        "RFC 9114 §4.6",
        "only GET and HEAD",
        validate_push_promise_request,
    )
    assert isinstance(error, UnpushableRequest)


def test_push_promise_of_connect_is_unpushable() -> None:
    assert_malformed(CONNECT, "RFC 9114 §4.6", "only GET and HEAD", validate_push_promise_request)


def test_push_promise_with_content_is_unpushable() -> None:
    promise = [*GET, (b"content-length", b"3")]
    assert_malformed(promise, "RFC 9114 §4.6", "has content", validate_push_promise_request)
    validate_push_promise_request([*GET, (b"content-length", b"0")])


def test_push_promise_without_authority_is_unpushable() -> None:
    promise = [*replace(GET, b":authority", None), (b"host", b"example.com")]
    assert_malformed(promise, "RFC 9114 §4.6", "no :authority", validate_push_promise_request)


def test_malformed_push_promise_is_malformed_not_merely_unpushable() -> None:
    error = assert_malformed(
        GET[1:], "RFC 9114 §4.3.1", "no :method", validate_push_promise_request
    )
    assert not isinstance(error, UnpushableRequest)


# -- RFC 9114 §4.2.2: field section size ------------------------------------------------


def test_field_section_size_counts_name_value_and_32_per_line() -> None:
    # RFC 7541 §4.1 counts the same way: ":authority" + "www.example.com" + 32 = 57.
    assert field_section_size([(b":authority", b"www.example.com")]) == 57
    assert field_section_size(GET) == sum(len(n) + len(v) + 32 for n, v in GET)
    assert field_section_size([]) == 0
    assert field_section_size([(b"", b"")]) == 32


# -- Hypothesis ---------------------------------------------------------------------------

TOKEN_CHARS = "!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyz"
#: Regular fields with rules of their own; the order test leaves them out.
SPECIAL_FIELDS = CONNECTION_SPECIFIC_FIELDS | {b"te", b"host", b"content-length"}
regular_names = (
    st.text(TOKEN_CHARS, min_size=1, max_size=12)
    .map(str.encode)
    .filter(lambda name: name not in SPECIAL_FIELDS)
)
field_values = st.binary(max_size=16).map(
    lambda value: bytes(b for b in value if b == 0x09 or 0x20 <= b != 0x7F).strip(b" \t")
)
requests = st.sampled_from(
    [
        (GET, {}),
        (replace(GET, b":method", b"POST"), {}),
        (CONNECT, {}),
        (WEBSOCKET, {"enable_connect_protocol": True}),
        ([GET[3], GET[1], GET[0], GET[2]], {}),
    ]
)


@given(requests, st.lists(st.tuples(regular_names, field_values), max_size=8))
def test_accepted_request_keeps_every_field_line_in_order(
    request: tuple[list[Header], dict[str, bool]], regular: list[Header]
) -> None:
    pseudo_lines, options = request
    head = validate_request([*pseudo_lines, *regular], **options)
    assert head.headers == tuple(regular)
    pseudo = dict(pseudo_lines)
    assert head.method == pseudo[b":method"]
    assert head.scheme == pseudo.get(b":scheme")
    assert head.authority == pseudo.get(b":authority")
    assert head.path == pseudo.get(b":path")
    assert head.protocol == pseudo.get(b":protocol")


# Names and values a fuzzer would rarely find by chance, mixed with arbitrary bytes.
NAMES = b":method :scheme :authority :path :protocol :status :x host te content-length accept"
VALUES = b"GET CONNECT OPTIONS HEAD https example.com h:1 / * 200 101 204 trailers 7 websocket"
likely_names = st.sampled_from([*NAMES.split(), b"connection", b"Accept", b""])
likely_values = st.sampled_from([*VALUES.split(), b"", b"7, 7", b" x"])
some_names = st.one_of(likely_names, likely_names, likely_names, st.binary(max_size=8))
some_values = st.one_of(likely_values, likely_values, likely_values, st.binary(max_size=8))
some_lines = st.tuples(some_names, some_values)
VALID_SECTIONS = [GET, CONNECT, WEBSOCKET, OK, [(b":status", b"204")], [(b"x-a", b"1")]]


@st.composite
def mutated_sections(draw: st.DrawFn) -> list[Header]:
    """A valid section with up to three field lines inserted, removed or given new values."""
    lines = list(draw(st.sampled_from(VALID_SECTIONS)))
    for _ in range(draw(st.integers(0, 3))):
        at = draw(st.integers(0, len(lines)))
        action = draw(st.sampled_from(["insert", "remove", "revalue"]))
        if action == "insert":
            lines.insert(at, draw(some_lines))
        elif lines and at < len(lines):
            if action == "remove":
                del lines[at]
            else:
                lines[at] = (lines[at][0], draw(some_values))
    return lines


field_line_lists = st.one_of(
    st.lists(some_lines, max_size=8), mutated_sections(), mutated_sections()
)


@settings(max_examples=300)
@given(field_line_lists, st.booleans())
def test_random_field_lines_raise_only_malformed_message(
    field_lines: list[Header], enable_connect_protocol: bool
) -> None:
    validators: list[Callable[[Sequence[Header]], object]] = [
        lambda lines: validate_request(lines, enable_connect_protocol=enable_connect_protocol),
        validate_response,
        validate_trailers,
        validate_push_promise_request,
    ]
    for validate in validators:
        try:
            result = validate(field_lines)
        except MalformedMessage as error:
            assert error.code == ErrorCode.H3_MESSAGE_ERROR
            assert str(error).startswith("H3_MESSAGE_ERROR (RFC ")
            continue
        if isinstance(result, RequestHead | ResponseHead):
            assert result.headers == tuple(line for line in field_lines if line[0][:1] != b":")
        if isinstance(result, RequestHead):
            pseudo = dict(field_lines)
            assert (result.method, result.path) == (pseudo[b":method"], pseudo.get(b":path"))
            assert result.authority == pseudo.get(b":authority")
            assert (result.scheme, result.protocol) == (
                pseudo.get(b":scheme"),
                pseudo.get(b":protocol"),
            )


@settings(max_examples=300)
@given(field_line_lists)
def test_every_response_and_trailer_section_aioquic_refuses_is_refused(
    field_lines: list[Header],
) -> None:
    """Cross-check with aioquic: h3learn may be stricter, never laxer.

    One known difference is left out: RFC 9110 §8.6 lets a recipient read a content-length
    that repeats one number ("7, 7") as that number, which h3learn does (see
    test_content_length_repeating_one_number_is_that_number) and aioquic does not.
    """
    repeated_number = any(
        name == b"content-length"
        and b"," in value
        and len({part.strip() for part in value.split(b",")}) == 1
        for name, value in field_lines
    )
    for ours, theirs in (
        (validate_response, validate_response_headers),
        (validate_trailers, aioquic_trailers),
    ):
        try:
            theirs(field_lines)
        except MessageError:
            if repeated_number:
                continue
            with pytest.raises(MalformedMessage):
                ours(field_lines)
