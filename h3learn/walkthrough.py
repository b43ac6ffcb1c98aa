"""``h3learn walkthrough``: a QPACK exchange (RFC 9204 §2) step by step in the terminal.

A client's encoder compresses a few requests; the server's decoder decodes them and answers
on its decoder stream. Every event both sides record is printed in order: what happened,
the RFC section, and the bytes split into labelled fields (bits of prefix bytes included).

By default the encoder stream reaches the server before each field section. With
``--sections-first`` every field section overtakes the encoder-stream bytes it depends on,
as can happen on a lossy network, so the decoder has to hold the stream as *blocked*
(RFC 9204 §2.2.1) until the inserts arrive.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from h3learn.cli_arguments import setting_value
from h3learn.command_error import CommandError
from h3learn.events import Event, EventLog, FieldSpan
from h3learn.qif_cli import read_qif_file
from h3learn.qpack.decoder import Decoder
from h3learn.qpack.encoder import Encoder
from h3learn.qpack.errors import QpackError

Header = tuple[bytes, bytes]

#: The requests of a small page load: the document, then two of its resources.
DEFAULT_REQUESTS: tuple[tuple[Header, ...], ...] = (
    (
        (b":method", b"GET"),
        (b":scheme", b"https"),
        (b":authority", b"www.example.org"),
        (b":path", b"/"),
        (b"user-agent", b"h3learn/0.1 (learning HTTP/3)"),
        (b"accept", b"text/html"),
        (b"accept-language", b"en-GB,en;q=0.8"),
    ),
    (
        (b":method", b"GET"),
        (b":scheme", b"https"),
        (b":authority", b"www.example.org"),
        (b":path", b"/style.css"),
        (b"user-agent", b"h3learn/0.1 (learning HTTP/3)"),
        (b"accept", b"text/css,*/*;q=0.1"),
        (b"accept-language", b"en-GB,en;q=0.8"),
        (b"referer", b"https://www.example.org/"),
    ),
    (
        (b":method", b"GET"),
        (b":scheme", b"https"),
        (b":authority", b"www.example.org"),
        (b":path", b"/app.js"),
        (b"user-agent", b"h3learn/0.1 (learning HTTP/3)"),
        (b"accept", b"*/*"),
        (b"accept-language", b"en-GB,en;q=0.8"),
        (b"referer", b"https://www.example.org/"),
    ),
)


def add_parser(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = subparsers.add_parser(
        "walkthrough",
        help="step through a QPACK exchange in the terminal",
        description=__doc__.split("\n\n")[0] if __doc__ else None,
    )
    parser.add_argument(
        "--qif", type=Path, help="header lists to send (.qif); default: a page load"
    )
    parser.add_argument(
        "--table-capacity",
        type=setting_value,
        default=4096,
        help="the server's SETTINGS_QPACK_MAX_TABLE_CAPACITY (default 4096)",
    )
    parser.add_argument(
        "--blocked-streams",
        type=setting_value,
        default=100,
        help="the server's SETTINGS_QPACK_BLOCKED_STREAMS (default 100)",
    )
    parser.add_argument(
        "--sections-first",
        action="store_true",
        help="deliver each field section before the encoder stream bytes",
    )
    parser.add_argument("--no-bytes", action="store_true", help="print summaries only")
    parser.set_defaults(run=run)


def record_exchange(
    requests: Sequence[Sequence[Header]],
    table_capacity: int,
    blocked_streams: int,
    sections_first: bool,
) -> EventLog:
    """Run the exchange and return every event both endpoints recorded."""
    step = [0.0]
    log = EventLog(clock=lambda: step[0])
    encoder = Encoder(recorder=log.for_endpoint("client"))
    decoder = Decoder(table_capacity, blocked_streams, recorder=log.for_endpoint("server"))
    # Stream ids as HTTP/3 would use them: the client's unidirectional QPACK encoder stream
    # is 2 and the server's decoder stream 7 (RFC 9000 §2.1); requests go on 0, 4, 8, ...
    encoder.encoder_stream_id = decoder.encoder_stream_id = 2
    encoder.decoder_stream_id = decoder.decoder_stream_id = 7
    encoder.apply_settings(table_capacity, blocked_streams)
    for number, headers in enumerate(requests):
        stream_id = number * 4
        instructions, field_section = encoder.encode(stream_id, headers)
        step[0] += 1
        if sections_first:
            decoder.decode(stream_id, field_section)
            decoder.feed_encoder(instructions)
        else:
            decoder.feed_encoder(instructions)
            decoder.decode(stream_id, field_section)
        step[0] += 1
        encoder.feed_decoder(decoder.data_to_send())
        step[0] += 1
    return log


def run(args: argparse.Namespace) -> int:
    requests: Sequence[Sequence[Header]] = DEFAULT_REQUESTS
    if args.qif is not None:
        requests = read_qif_file(args.qif)
    try:
        log = record_exchange(
            requests, args.table_capacity, args.blocked_streams, args.sections_first
        )
    except QpackError as error:
        raise CommandError(str(error)) from None
    for event in log.events:
        print(render_event(event, with_bytes=not args.no_bytes))
    return 0


def render_event(event: Event, with_bytes: bool = True) -> str:
    """An event as a few lines of text: a heading, the summary, and the labelled bytes."""
    stream = "" if event.stream_id is None else f"  stream {event.stream_id}"
    sections = ", ".join(cite(section) for section in event.rfc)
    lines = [
        f"#{event.seq:<4} {event.endpoint:6} {event.category}:{event.name}{stream}",
        f"      {event.summary}",
    ]
    if sections:
        lines.append(f"      {sections}")
    if with_bytes and event.raw:
        lines.append(f"      bytes: {event.raw.hex(' ')}")
        lines.extend(f"        {render_span(span, event.raw)}" for span in event.fields)
    return "\n".join(lines)


def render_span(span: FieldSpan, raw: bytes) -> str:
    octets = raw[span.offset : span.offset + span.length]
    if span.bit_offset is not None and span.bit_length is not None:
        first = format(octets[0], "08b")
        bits = first[span.bit_offset : span.bit_offset + span.bit_length]
        where = f"byte {span.offset} bits {bits:>8}"
        if span.length > 1:
            where += f" +{span.length - 1} bytes"
    else:
        where = f"bytes {span.offset}-{span.offset + span.length - 1}"
    value = span.value if isinstance(span.value, str) else repr(span.value)
    if len(value) > 60:
        value = value[:57] + "..."
    return f"{where:34} {span.name} = {value}"


def cite(section: str) -> str:
    number, _, part = section.partition("#")
    return f"RFC {number} §{part}"
