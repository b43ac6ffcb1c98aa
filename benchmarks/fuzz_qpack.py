"""Coverage-guided fuzzing of h3learn's QPACK decoder and parsers (RFC 9204 §6, §7).

The same promise as tests/rfc9204/test_fuzz.py, checked for longer with atheris
(libFuzzer for Python): whatever bytes a peer sends,

- `Decoder.decode` and `Decoder.feed_encoder` succeed or raise a `QpackError`, and feeding
  the encoder stream in pieces ends exactly as feeding it whole;
- the raw parsers (`parse_encoder_instruction`, `parse_decoder_instruction`,
  `parse_field_line`, `FieldSectionPrefix.parse`, `SpanReader.integer` and `.string`)
  succeed or raise `NeedMoreData` or `MalformedInput`, and agree with recording on and off.

Anything else is a crash, which libFuzzer reports with the input that caused it.

Usage: python benchmarks/fuzz_qpack.py [CORPUS_DIR ...] [-max_total_time=60] [libFuzzer flags]
(atheris is not a project dependency: pip install atheris.)
"""

from __future__ import annotations

import contextlib
import sys
from typing import Any

import atheris

with atheris.instrument_imports():
    from h3learn.events import EventLog
    from h3learn.qpack.decoder import Decoder
    from h3learn.qpack.decoder_instructions import parse_decoder_instruction
    from h3learn.qpack.encoder_instructions import (
        InsertWithLiteralName,
        SetDynamicTableCapacity,
        parse_encoder_instruction,
    )
    from h3learn.qpack.errors import QpackError
    from h3learn.qpack.field_lines import FieldSectionPrefix, parse_field_line
    from h3learn.wire.errors import MalformedInput, NeedMoreData
    from h3learn.wire.spans import SpanReader, SpanWriter

MAX_TABLE_CAPACITY = 256
BLOCKED_STREAMS = 2
TABLE_ENTRIES = [
    (b":authority", b"www.example.com"),
    (b"custom-key", b"custom-value"),
    (b":path", b"/"),
    (b"a", b""),
    (b"cookie", b"x=1"),
]
RAW_ERRORS = (NeedMoreData, MalformedInput)


def table_setup() -> bytes:
    """Set Dynamic Table Capacity 256 and five inserts, so references have targets."""
    writer = SpanWriter(record=False)
    SetDynamicTableCapacity(MAX_TABLE_CAPACITY).serialize(writer)
    for name, value in TABLE_ENTRIES:
        InsertWithLiteralName(name, value, False, False).serialize(writer)
    return writer.unit()


TABLE_SETUP = table_setup()


def new_decoder(record: bool) -> Decoder:
    recorder = EventLog().for_endpoint("server") if record else None
    decoder = Decoder(MAX_TABLE_CAPACITY, BLOCKED_STREAMS, recorder=recorder)
    decoder.feed_encoder(TABLE_SETUP)
    return decoder


def table_after(chunks: list[bytes]) -> list[tuple[int, bytes, bytes]] | None:
    decoder = new_decoder(record=False)
    try:
        for chunk in chunks:
            decoder.feed_encoder(chunk)
    except QpackError:
        return None
    return [(entry.absolute_index, entry.name, entry.value) for entry in decoder.table]


def parse_both_ways(parse: Any, data: bytes) -> None:
    outcomes = []
    for record in (True, False):
        try:
            outcomes.append(parse(SpanReader(data, record=record)))
        except RAW_ERRORS as error:
            outcomes.append(type(error))
    if outcomes[0] != outcomes[1]:
        raise AssertionError(f"recording changed the outcome: {outcomes}")


def fuzz_decode(provider: atheris.FuzzedDataProvider) -> None:
    decoder = new_decoder(provider.ConsumeBool())
    with contextlib.suppress(QpackError):
        decoder.decode(4, provider.ConsumeBytes(provider.remaining_bytes()))


def fuzz_feed_encoder(provider: atheris.FuzzedDataProvider) -> None:
    decoder = new_decoder(provider.ConsumeBool())
    with contextlib.suppress(QpackError):
        decoder.feed_encoder(provider.ConsumeBytes(provider.remaining_bytes()))


def fuzz_feed_encoder_split(provider: atheris.FuzzedDataProvider) -> None:
    cuts = [provider.ConsumeIntInRange(0, 255) for _ in range(provider.ConsumeIntInRange(0, 4))]
    data = provider.ConsumeBytes(provider.remaining_bytes())
    points = sorted({min(cut, len(data)) for cut in cuts})
    chunks = [
        data[start:end] for start, end in zip([0, *points], [*points, len(data)], strict=True)
    ]
    if table_after(chunks) != table_after([data]):
        raise AssertionError("feeding the encoder stream in pieces changed the table")


def fuzz_blocked_then_encoder(provider: atheris.FuzzedDataProvider) -> None:
    decoder = new_decoder(True)
    try:
        for number in range(provider.ConsumeIntInRange(0, 3)):
            decoder.decode(4 * number, provider.ConsumeBytes(provider.ConsumeIntInRange(0, 32)))
        decoder.feed_encoder(provider.ConsumeBytes(provider.remaining_bytes()))
        decoder.cancel_stream(0)
        decoder.data_to_send()
    except QpackError:
        pass


def fuzz_raw_parser(parse: Any) -> Any:
    def run(provider: atheris.FuzzedDataProvider) -> None:
        parse_both_ways(parse, provider.ConsumeBytes(provider.remaining_bytes()))

    return run


def fuzz_span_reader(kind: str) -> Any:
    def run(provider: atheris.FuzzedDataProvider) -> None:
        start_bit = provider.ConsumeIntInRange(0, 7 if kind == "integer" else 6)
        data = provider.ConsumeBytes(provider.remaining_bytes())

        def parse(reader: SpanReader) -> Any:
            if start_bit:
                reader.bits(start_bit, "Pattern", "Pattern bits.", "9204#4.1.1")
            if kind == "integer":
                return reader.integer("Integer", "An integer.", "9204#4.1.1")
            return reader.string("String", "A string.", "9204#4.1.2")

        parse_both_ways(parse, data)

    return run


TARGETS = [
    fuzz_decode,
    fuzz_feed_encoder,
    fuzz_feed_encoder_split,
    fuzz_blocked_then_encoder,
    fuzz_raw_parser(parse_encoder_instruction),
    fuzz_raw_parser(parse_decoder_instruction),
    fuzz_raw_parser(parse_field_line),
    fuzz_raw_parser(FieldSectionPrefix.parse),
    fuzz_span_reader("integer"),
    fuzz_span_reader("string"),
]


def test_one_input(data: bytes) -> None:
    provider = atheris.FuzzedDataProvider(data)
    TARGETS[provider.ConsumeIntInRange(0, len(TARGETS) - 1)](provider)


def main() -> None:
    atheris.Setup(sys.argv, test_one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
