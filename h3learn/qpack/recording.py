"""How the QPACK encoder and decoder report instructions and field sections (RFC 9204 §4).

Both sides record the same two kinds of event in the same shapes (docs/events.md): an
instruction on the encoder or decoder stream (§4.3, §4.4), and a field section with its
prefix calculation and what each field line stood for (§4.5). These helpers build them, so
the encoder's ``headers_encoded`` and the decoder's ``headers_decoded`` cannot drift apart.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from h3learn.events import FieldSpan, Recorder
from h3learn.qpack.decoder_instructions import DecoderInstruction
from h3learn.qpack.encoder_instructions import EncoderInstruction
from h3learn.qpack.field_lines import FieldLine, FieldSectionPrefix
from h3learn.qpack.field_resolution import ResolvedLine
from h3learn.wire.spans import SpanReader, display

Header = tuple[bytes, bytes]


def record_instruction(
    recorder: Recorder,
    name: str,
    stream_id: int | None,
    instruction: EncoderInstruction | DecoderInstruction,
    raw: bytes,
    fields: tuple[FieldSpan, ...],
) -> None:
    """An ``instruction_created`` or ``instruction_parsed`` event."""
    stream = "encoder" if isinstance(instruction, EncoderInstruction) else "decoder"
    recorder.record(
        category="qpack",
        name=name,
        stream_id=stream_id,
        data=instruction.qlog(),
        raw=raw,
        fields=fields,
        rfc=(instruction.section,),
        summary=f"{stream} stream: {instruction.describe()}",
    )


def field_line_json(
    line: FieldLine,
    name: bytes,
    value: bytes,
    absolute_index: int | None,
    static_index: int | None,
    encoded_length: int,
) -> dict[str, Any]:
    """What one field line was, what it stood for, and how many bytes it took
    (``encoded_length``: measured where it was written or read, RFC 9204 §4.5.2 - §4.5.6)."""
    entry: dict[str, Any] = {
        "representation": type(line).__name__,
        **line.qlog(),
        "name": display(name),
        "value": display(value),
        "encoded_length": encoded_length,
    }
    if absolute_index is not None:
        entry["table"] = "dynamic"
        entry["absolute_index"] = absolute_index
    elif static_index is not None:
        entry["table"] = "static"
        entry["static_index"] = static_index
    else:
        entry["table"] = "literal"
    return entry


def record_field_section(
    recorder: Recorder,
    name: str,
    stream_id: int,
    headers: Sequence[Header],
    prefix: dict[str, Any],
    field_lines: list[dict[str, Any]],
    raw: bytes,
    fields: tuple[FieldSpan, ...],
    note: str = "",
) -> None:
    """A ``headers_encoded`` or ``headers_decoded`` event.

    ``field_lines`` (from `field_line_json`, one per header, in order) already hold each
    header's name and value as text; ``headers`` reuses them. ``note`` ends the summary:
    why the section looks as it does, when its fields alone do not say.
    """
    verb = "encoded" if name == "headers_encoded" else "decoded"
    recorder.record(
        category="qpack",
        name=name,
        stream_id=stream_id,
        data={
            "stream_id": stream_id,
            "headers": [{"name": line["name"], "value": line["value"]} for line in field_lines],
            "prefix": prefix,
            "field_lines": field_lines,
        },
        raw=raw,
        fields=fields,
        rfc=("9204#4.5",),
        summary=(
            f"{verb} field section on stream {stream_id}: {len(headers)} fields,"
            f" Required Insert Count {prefix['required_insert_count']}, Base {prefix['base']}"
            + (f" ({note})" if note else "")
        ),
    )


def blocked_section_spans(data: bytes) -> tuple[FieldSpan, ...]:
    """Labels for a blocked section (RFC 9204 §2.2.1): its prefix, then its field lines as
    one run, which cannot be resolved until the inserts they need have arrived."""
    reader = SpanReader(data, record=True)
    FieldSectionPrefix.parse(reader)
    reader.raw(
        len(data) - reader.position,
        "Field lines (blocked)",
        "Field line representations, decoded once the inserts they need have arrived.",
        "9204#2.2.1",
    )
    return reader.field_spans()


def resolved_lines_json(resolved: Sequence[ResolvedLine], lengths: Sequence[int]) -> list[Any]:
    """The decoder's field lines for ``headers_decoded``: each as read, with what it stood for."""
    return [
        field_line_json(
            result.line,
            result.name,
            result.value,
            result.absolute_index,
            result.static_index,
            length,
        )
        for result, length in zip(resolved, lengths, strict=True)
    ]
