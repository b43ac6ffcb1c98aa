"""A what-if lab: one lesson's scenario recorded under several settings, its bytes compared.

RFC 9204 lets each side decide how hard QPACK works for it: how large a dynamic table the
peer's encoder may fill (SETTINGS_QPACK_MAX_TABLE_CAPACITY, RFC 9204 §3.2.3), how many
streams that encoder may risk blocking (SETTINGS_QPACK_BLOCKED_STREAMS, §2.1.2), and, on
the encoder's own side, whether strings are Huffman-coded (§4.1.2). A lesson may declare
``[[variant]]`` tables, each a name and the settings to try::

    [[variant]]
    name = "No dynamic table"
    both = { qpack_max_table_capacity = 0 }       # both sides' settings
    client = { huffman = false }                  # one side's (these win over "both")

The catalogue records the lesson's scenario once per variant, as a what-if rerun
(`lesson.record_lesson` with the variant's overrides), and `measure` turns each trace into
the figures of one row, with the functions the live compare page uses
(h3learn/trace/compare.py). A page load has two QPACK encoders, so every figure adds both
directions: the client's encoder (requests, as the server received them) and the server's
(responses, as the client received them).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass

from h3learn.curriculum.scenario import SIDES, Overrides, describe_overrides, read_side
from h3learn.curriculum.source import Path_, Table
from h3learn.events import Event
from h3learn.trace.compare import LINE_KINDS, http3_bytes_sent, qpack_profile


@dataclass(frozen=True, slots=True)
class Variant:
    """One ``[[variant]]``: a name and the settings it changes, per side."""

    name: str
    overrides: Overrides
    path: Path_ = ()

    def describe(self) -> str:
        """The settings, once when both sides share them: "huffman = false, client ..."."""
        return describe_overrides(self.overrides)


def read_variant(table: Table) -> Variant:
    """Read one ``[[variant]]``; every setting is checked as in ``[scenario.client]``."""
    name = table.required_text("name")
    both = read_side(table.table("both")).values
    overrides: Overrides = {}
    for side in SIDES:
        values = both | read_side(table.table(side)).values
        if values:
            overrides[side] = values
    table.finish()
    if not overrides:
        raise table.error(None, "a variant changes at least one setting (both, client, server)")
    return Variant(name=name, overrides=overrides, path=table.path)


@dataclass(frozen=True, slots=True)
class Figures:
    """What one recorded page load put on the wire, both directions together."""

    #: HEADERS (and PUSH_PROMISE) field sections, as encoded: requests, responses, total.
    request_section_bytes: int
    response_section_bytes: int
    field_section_bytes: int
    #: QPACK encoder streams (inserts, capacity) and decoder streams (acknowledgments).
    encoder_stream_bytes: int
    decoder_stream_bytes: int
    #: Everything written on every stream: frames, instructions, stream types.
    http3_bytes: int
    #: Field lines by what they refer to (RFC 9204 §4.5.2-§4.5.6).
    dynamic_lines: int
    static_lines: int
    literal_lines: int
    #: Field sections a decoder had to hold until inserts arrived (RFC 9204 §2.2.1).
    blocked_sections: int
    field_sections: int
    #: The octets of every name and value, what the fields take uncompressed.
    plain_bytes: int

    def to_json(self) -> dict[str, int]:
        return asdict(self)


def measure(events: Iterable[Event]) -> Figures:
    """The figures of one trace of both endpoints (a lesson's, or one of its variants')."""
    events = list(events)
    # What each side *received* describes the other side's encoder: the server's view is
    # the client's requests, the client's view the server's responses.
    requests, responses = qpack_profile(events, "server"), qpack_profile(events, "client")
    both = (requests, responses)

    def total(part: str, key: str) -> int:
        return sum(int(profile[part][key]) for profile in both)

    lines = {
        kind: sum(int(p["field_sections"]["field_lines"][kind]) for p in both)
        for kind in LINE_KINDS
    }
    return Figures(
        request_section_bytes=requests["field_sections"]["encoded_bytes"],
        response_section_bytes=responses["field_sections"]["encoded_bytes"],
        field_section_bytes=total("field_sections", "encoded_bytes"),
        encoder_stream_bytes=total("encoder_stream", "bytes"),
        decoder_stream_bytes=total("decoder_stream", "bytes"),
        http3_bytes=sum(http3_bytes_sent(events, side) for side in SIDES),
        dynamic_lines=lines["dynamic"],
        static_lines=lines["static"],
        literal_lines=lines["literal"],
        blocked_sections=total("field_sections", "blocked"),
        field_sections=total("field_sections", "count"),
        plain_bytes=total("field_sections", "plain_bytes"),
    )


#: The table's columns: figure -> its heading (the lesson page and docs/lessons.md).
COLUMNS: dict[str, str] = {
    "field_section_bytes": "field sections (bytes)",
    "encoder_stream_bytes": "encoder streams (bytes)",
    "decoder_stream_bytes": "decoder streams (bytes)",
    "http3_bytes": "all HTTP/3 bytes",
    "dynamic_lines": "dynamic",
    "static_lines": "static",
    "literal_lines": "literal",
    "blocked_sections": "blocked sections",
}
