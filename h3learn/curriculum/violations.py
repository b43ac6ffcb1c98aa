"""What a ``violate`` action sends: frames, instructions and bytes that break a rule on purpose.

RFC 9114 §8 and RFC 9204 §6 say how an endpoint reacts to a peer that breaks the rules; a
lesson shows it by making one side misbehave. The misbehaving side builds its unit with
the project's own frame and instruction classes, so every byte is labelled as usual, and
hands it to `H3Connection.send_deliberately` (a teaching facility: the checks the sender
would make are skipped). The ``frame`` and ``instruction`` tables of a ``violate`` action:

    frame = { type = "settings", settings = [[1, 100]] }   SETTINGS (a second one, say)
    frame = { type = "data", data = "text" }               DATA (on the control stream, say)
    frame = { type = "headers", headers = [[":status", "200"]] }
                                                           HEADERS, encoded with the static
                                                           table and literals only
    frame = { type = "headers", field_section = { required_insert_count = 2, base = 2,
              lines = [{ relative = 0 }, { static = 17 }, { post_base = 0 },
                       { name = "x", value = "y" }] } }
                                                           HEADERS with a field section
                                                           written line by line (RFC 9204
                                                           §4.5); ``encoded_insert_count``
                                                           instead of ``required_insert_count``
                                                           gives the encoded value as it is
    frame = { type = "goaway", identifier = 8 }            GOAWAY
    frame = { type = "max_push_id", push_id = 3 }          MAX_PUSH_ID
    frame = { type = "cancel_push", push_id = 0 }          CANCEL_PUSH
    frame = { type = "push_promise", push_id = 0, headers = [...] }
    frame = { type = 0x21, payload = "text" }              any other type: reserved, unknown,
                                                           or an HTTP/2-only one (0x02, ...)

    instruction = { type = "set_dynamic_table_capacity", capacity = 8192 }
    instruction = { type = "insert_with_name_reference", static = true, index = 17, value = "x" }
    instruction = { type = "insert_with_literal_name", name = "x", value = "y" }
    instruction = { type = "duplicate", index = 0 }
    instruction = { type = "section_acknowledgement", stream = 0 }
    instruction = { type = "stream_cancellation", stream = 0 }
    instruction = { type = "insert_count_increment", increment = 1 }

``raw = "00 04 00"`` sends hex bytes as they are (one labelled span), and ``fin = true``
ends the stream (closing a critical stream, RFC 9114 §6.2.1).
"""

from __future__ import annotations

from collections.abc import Callable

from h3learn.curriculum.source import Table
from h3learn.events import FieldSpan
from h3learn.h3.connection import DeliberateUnit, H3Connection
from h3learn.h3.frames import (
    CancelPushFrame,
    DataFrame,
    Frame,
    GoawayFrame,
    HeadersFrame,
    MaxPushIdFrame,
    PushPromiseFrame,
    SettingsFrame,
    UnknownFrame,
    serialize_frame,
)
from h3learn.qpack.decoder_instructions import (
    InsertCountIncrement,
    SectionAcknowledgment,
    StreamCancellation,
)
from h3learn.qpack.encoder import Encoder
from h3learn.qpack.encoder_instructions import (
    Duplicate,
    InsertWithLiteralName,
    InsertWithNameReference,
    SetDynamicTableCapacity,
)
from h3learn.qpack.field_lines import (
    FieldLine,
    FieldSectionPrefix,
    IndexedFieldLine,
    IndexedFieldLineWithPostBaseIndex,
    LiteralFieldLineWithLiteralName,
    delta_from_base,
    encode_required_insert_count,
)
from h3learn.wire.spans import SpanWriter

Instruction = (
    SetDynamicTableCapacity
    | InsertWithNameReference
    | InsertWithLiteralName
    | Duplicate
    | SectionAcknowledgment
    | StreamCancellation
    | InsertCountIncrement
)


def raw_unit(octets: bytes, rule: str) -> DeliberateUnit:
    """Bytes with no structure: one span, explained by the rule they break."""
    spans: tuple[FieldSpan, ...] = ()
    if octets:
        spans = (
            FieldSpan(
                name="Deliberate bytes",
                offset=0,
                length=len(octets),
                value=octets.hex(" "),
                explain=f"Sent as they are, to break a rule: {rule}.",
                rfc="9114#8",
            ),
        )
    return DeliberateUnit(
        category="http3",
        name="raw_bytes_sent",
        raw=octets,
        fields=spans,
        data={"length": len(octets)},
        rfc=("9114#8",),
        describe=f"{len(octets)} raw bytes" if octets else "the end of the stream (FIN)",
        rule=rule,
    )


# -- frames (RFC 9114 §7.2) ---------------------------------------------------------------


def frame_unit(table: Table, sender: H3Connection, stream_id: int, rule: str) -> DeliberateUnit:
    kind = table.raw("type")
    section_spans: tuple[FieldSpan, ...] | None = None
    if isinstance(kind, int) and not isinstance(kind, bool):
        frame: Frame = UnknownFrame(kind, table.text("payload", "").encode())
    elif kind == "headers" and table.has("field_section"):
        if table.has("headers"):
            raise table.error(None, "a HEADERS frame takes either 'headers' or 'field_section'")
        crafted = table.table("field_section")
        assert crafted is not None
        section, section_spans = _crafted_section(crafted, sender)
        frame = HeadersFrame(section)
    elif isinstance(kind, str) and kind in FRAME_BUILDERS:
        frame = FRAME_BUILDERS[kind](table, stream_id)
    else:
        known = ", ".join(FRAME_BUILDERS)
        raise table.error("type", f"must be one of {known}, or a frame type number")
    table.finish()
    raw, spans = serialize_frame(frame)
    if section_spans is not None:
        # The frame's one "Encoded Field Section" span, replaced by the section's own labels.
        labelled: list[FieldSpan] = []
        for span in spans:
            if span.name == "Encoded Field Section":
                labelled.extend(inner.shifted(span.offset) for inner in section_spans)
            else:
                labelled.append(span)
        spans = tuple(labelled)
    return DeliberateUnit(
        category="http3",
        name="frame_created",
        raw=raw,
        fields=spans,
        data={"stream_id": stream_id, "length": frame.payload_length(), "frame": frame.qlog()},
        rfc=(frame.section,),
        describe=frame.describe(),
        rule=rule,
    )


def _static_section(table: Table, key: str, stream_id: int) -> bytes:
    """A field section using only the static table and literals: valid, whatever the peer."""
    from h3learn.curriculum.actions import read_headers

    headers = [(n.encode(), v.encode()) for n, v in read_headers(table, key)]
    encoder_stream, section = Encoder().encode(stream_id, headers)
    assert encoder_stream == b"", "an encoder with no table inserts nothing"
    return section


def _crafted_section(table: Table, sender: H3Connection) -> tuple[bytes, tuple[FieldSpan, ...]]:
    """RFC 9204 §4.5: a prefix and field lines exactly as the lesson writes them."""
    if table.has("encoded_insert_count"):
        encoded = table.integer("encoded_insert_count")
        required = encoded
    else:
        required = table.integer("required_insert_count", 0)
        capacity = sender.encoder.max_table_capacity
        if required and capacity < 32:
            raise table.error(
                "required_insert_count",
                "the peer allows no dynamic table: give 'encoded_insert_count' instead",
            )
        encoded = encode_required_insert_count(required, capacity) if required else 0
    base = table.integer("base", required)
    sign, delta_base = delta_from_base(required, base)
    writer = SpanWriter()
    FieldSectionPrefix(encoded, sign, delta_base).serialize(writer)
    lines = table.raw("lines")
    if not isinstance(lines, list) or not lines:
        raise table.error("lines", "must be a list of field lines like [{ static = 17 }]")
    for index, item in enumerate(lines):
        if not isinstance(item, dict):
            raise table.error("lines", f"item {index + 1} must be a table")
        _field_line(table.child("lines", {}).child(index, item)).serialize(writer)
    table.finish()
    return writer.unit(), writer.field_spans()


def _field_line(table: Table) -> FieldLine:
    if table.has("static"):
        line: FieldLine = IndexedFieldLine(static=True, index=table.integer("static"))
    elif table.has("relative"):
        line = IndexedFieldLine(static=False, index=table.integer("relative"))
    elif table.has("post_base"):
        line = IndexedFieldLineWithPostBaseIndex(table.integer("post_base"))
    elif table.has("name"):
        name = table.text("name").encode()
        line = LiteralFieldLineWithLiteralName(False, name, table.text("value", "").encode())
    else:
        raise table.error(
            None,
            "a field line is { static = N }, { relative = N },"
            ' { post_base = N } or { name = "...", value = "..." }',
        )
    table.finish()
    return line


def _push_promise(table: Table, stream_id: int) -> Frame:
    return PushPromiseFrame(
        table.integer("push_id", required=True), _static_section(table, "headers", stream_id)
    )


FRAME_BUILDERS: dict[str, Callable[[Table, int], Frame]] = {
    "data": lambda t, i: DataFrame(t.text("data", "").encode()),
    "headers": lambda t, i: HeadersFrame(_static_section(t, "headers", i)),
    "settings": lambda t, i: SettingsFrame(_pairs(t, "settings")),
    "goaway": lambda t, i: GoawayFrame(t.integer("identifier", required=True)),
    "max_push_id": lambda t, i: MaxPushIdFrame(t.integer("push_id", required=True)),
    "cancel_push": lambda t, i: CancelPushFrame(t.integer("push_id", required=True)),
    "push_promise": _push_promise,
}


def _pairs(table: Table, key: str) -> tuple[tuple[int, int], ...]:
    value = table.raw(key)
    if value is None:
        return ()
    good = isinstance(value, list) and all(
        isinstance(p, list) and len(p) == 2 and all(isinstance(x, int) for x in p) for p in value
    )
    if not good:
        raise table.error(key, "must be a list of [identifier, value] pairs of integers")
    return tuple((p[0], p[1]) for p in value)


# -- QPACK instructions (RFC 9204 §4.3, §4.4) ----------------------------------------------


def instruction_unit(table: Table, stream_id: int, rule: str) -> DeliberateUnit:
    kind = table.text("type", required=True)
    if kind not in INSTRUCTION_BUILDERS:
        known = ", ".join(INSTRUCTION_BUILDERS)
        raise table.error("type", f"must be one of {known}")
    instruction: Instruction = INSTRUCTION_BUILDERS[kind](table)
    table.finish()
    return deliberate_instruction(instruction, rule, encoder_side=kind in ENCODER_INSTRUCTIONS)


def deliberate_instruction(
    instruction: Instruction, rule: str, *, encoder_side: bool
) -> DeliberateUnit:
    """A QPACK instruction as a unit to send by hand (on the encoder stream if
    ``encoder_side``, else the decoder stream), with its labelled bytes."""
    writer = SpanWriter()
    instruction.serialize(writer)
    return DeliberateUnit(
        category="qpack",
        name="instruction_created",
        raw=writer.unit(),
        fields=writer.field_spans(),
        data=instruction.qlog(),
        rfc=(instruction.section,),
        describe=f"{'encoder' if encoder_side else 'decoder'} stream: {instruction.describe()}",
        rule=rule,
    )


def _text(table: Table, key: str) -> bytes:
    return str(table.text(key, required=True)).encode()


INSTRUCTION_BUILDERS: dict[str, Callable[[Table], Instruction]] = {
    "set_dynamic_table_capacity": lambda t: SetDynamicTableCapacity(
        t.integer("capacity", required=True)
    ),
    "insert_with_name_reference": lambda t: InsertWithNameReference(
        t.flag("static", True), t.integer("index", required=True), _text(t, "value")
    ),
    "insert_with_literal_name": lambda t: InsertWithLiteralName(
        _text(t, "name"), _text(t, "value")
    ),
    "duplicate": lambda t: Duplicate(t.integer("index", required=True)),
    "section_acknowledgement": lambda t: SectionAcknowledgment(t.integer("stream", required=True)),
    "stream_cancellation": lambda t: StreamCancellation(t.integer("stream", required=True)),
    "insert_count_increment": lambda t: InsertCountIncrement(t.integer("increment", required=True)),
}
ENCODER_INSTRUCTIONS = frozenset(
    {
        "set_dynamic_table_capacity",
        "insert_with_name_reference",
        "insert_with_literal_name",
        "duplicate",
    }
)
