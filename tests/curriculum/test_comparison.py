"""The what-if lab (h3learn/curriculum/comparison.py): variants read strictly, and every
figure of the comparison table is what the traces show.

The figures are computed from what each side *received* (h3learn/trace/compare.py); the
tests count the same things again from what each side *sent*, event by event, and over
QUIC from the bytes handed to QUIC, so a figure that drifted from the trace would show.
Lesson 16's conclusion compares the rows in words; its claims are checked here too.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from h3learn.curriculum.catalogue import Curriculum
from h3learn.curriculum.comparison import COLUMNS, Figures, measure
from h3learn.curriculum.lesson import load_lesson, record_lesson
from h3learn.curriculum.source import SourceError
from h3learn.events import Event
from h3learn.trace.compare import DECODER_INSTRUCTIONS, http3_bytes_sent

LESSONS = Path(__file__).resolve().parents[2] / "lessons"
LAB = "16-what-if-lab"

TINY = """\
title = "Variants"
summary = "One GET, three ways."
goals = ["Compare."]
introduction = "Text."

[scenario.client]
qpack_max_table_capacity = 4096

[scenario.server]
qpack_max_table_capacity = 4096

[[action]]
do = "request"
label = "page"
headers = [["user-agent", "a browser"], ["accept", "text/html"]]

[[action]]
do = "request"
label = "again"
headers = [["user-agent", "a browser"], ["accept", "text/html"]]

[[variant]]
name = "No table"
both = { qpack_max_table_capacity = 0 }

[[variant]]
name = "No Huffman on the client"
client = { huffman = false }
"""


@pytest.fixture(scope="module")
def lab() -> list[tuple[str, Figures, list[Event]]]:
    """Each variant of lesson 16: its name, its figures as the catalogue computed them, and
    its trace recorded again independently."""
    curriculum = Curriculum.open(LESSONS)
    lesson = curriculum.lessons[LAB]
    return [
        (variant.name, figures, record_lesson(lesson, variant.overrides, strict=False).events)
        for variant, figures in curriculum.comparison(LAB)
    ]


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "01-variants.toml"
    path.write_text(text)
    return path


def sent(events: list[Event], name: str, kinds: frozenset[str] | None = None) -> int:
    """Bytes of the units both sides *created* (the figures count what was received)."""
    return sum(
        len(e.raw)
        for e in events
        if e.name == name and (kinds is None or e.data.get("instruction_type") in kinds)
    )


# -- reading variants ------------------------------------------------------------------------


def test_a_variant_applies_both_then_its_sides_settings(tmp_path: Path) -> None:
    lesson = load_lesson(write(tmp_path, TINY))
    no_table, no_huffman = lesson.variants
    assert no_table.overrides == {
        "client": {"qpack_max_table_capacity": 0},
        "server": {"qpack_max_table_capacity": 0},
    }
    assert no_table.describe() == "qpack_max_table_capacity = 0"
    assert no_huffman.overrides == {"client": {"huffman": False}}
    assert no_huffman.describe() == "client huffman = false"


@pytest.mark.parametrize(
    ("mistake", "replacement", "message"),
    [
        ("both = { qpack_max_table_capacity = 0 }", "both = { colour = 0 }", "unknown setting"),
        ("client = { huffman = false }", "client = { huffman = 1 }", "must be true or false"),
        ('name = "No Huffman on the client"', 'name = "No table"', "variant name 'No table'"),
        ("both = { qpack_max_table_capacity = 0 }", "", "changes at least one setting"),
    ],
)
def test_a_bad_variant_names_its_line(
    tmp_path: Path, mistake: str, replacement: str, message: str
) -> None:
    text = TINY.replace(mistake, replacement)
    with pytest.raises(SourceError, match=message) as caught:
        load_lesson(write(tmp_path, text))
    line = text.splitlines()[caught.value.line - 1]
    assert line.startswith(("[[variant]]", "both", "client", "name"))


# -- the figures -------------------------------------------------------------------------------


def test_each_figure_is_what_the_senders_events_add_up_to(
    lab: list[tuple[str, Figures, list[Event]]],
) -> None:
    for name, figures, events in lab:
        sections = [e for e in events if e.name == "headers_encoded"]
        assert figures.field_section_bytes == sum(len(e.raw) for e in sections), name
        assert figures.request_section_bytes == sum(
            len(e.raw) for e in sections if e.endpoint == "client"
        )
        encoder = frozenset(
            {
                "set_dynamic_table_capacity",
                "insert_with_name_reference",
                "insert_without_name_reference",
                "duplicate",
            }
        )
        assert figures.encoder_stream_bytes == sent(events, "instruction_created", encoder), name
        assert figures.decoder_stream_bytes == sent(
            events, "instruction_created", DECODER_INSTRUCTIONS
        ), name
        lines = [line["table"] for e in sections for line in e.data["field_lines"]]
        assert (figures.dynamic_lines, figures.static_lines, figures.literal_lines) == (
            lines.count("dynamic"),
            lines.count("static"),
            lines.count("literal"),
        ), name
        blocked = [e for e in events if e.category == "qpack" and e.data.get("state") == "blocked"]
        assert figures.blocked_sections == len(blocked), name
        frames = sent(events, "frame_created")
        types = sum(
            len(e.raw) for e in events if e.name == "stream_type_set" and e.data["owner"] == "local"
        )
        instructions = sent(events, "instruction_created")
        assert figures.http3_bytes == frames + types + instructions, name


def test_every_variant_decodes_to_the_same_fields(
    lab: list[tuple[str, Figures, list[Event]]],
) -> None:
    """QPACK's settings change the bytes, never what the application receives."""

    def decoded(events: list[Event]) -> list[object]:
        return [(e.stream_id, e.data["headers"]) for e in events if e.name == "headers_decoded"]

    first = decoded(lab[0][2])
    assert len(first) == 16
    for name, figures, events in lab:
        assert decoded(events) == first, name
        assert figures.plain_bytes == lab[0][1].plain_bytes


def test_http3_bytes_are_what_was_handed_to_quic() -> None:
    """Over QUIC, the bytes counted from HTTP/3's events equal the stream data QUIC sent."""
    events = record_lesson(load_lesson(LESSONS / "11-goaway-and-shutdown.toml")).events
    for side in ("client", "server"):
        handed = sum(
            e.data["length"] for e in events if e.name == "stream_data_sent" and e.endpoint == side
        )
        assert http3_bytes_sent(events, side) == handed > 0


def test_measure_adds_both_directions() -> None:
    events = record_lesson(load_lesson(LESSONS / "05-the-dynamic-table.toml")).events
    figures = measure(events)
    assert figures.field_section_bytes == (
        figures.request_section_bytes + figures.response_section_bytes
    )
    assert figures.response_section_bytes > 0 and figures.request_section_bytes > 0
    assert set(COLUMNS) <= set(figures.to_json())


def test_the_claims_of_the_what_if_lab_hold(
    lab: list[tuple[str, Figures, list[Event]]],
) -> None:
    """What lesson 16 says in words about its table (its conclusion and notes)."""
    rows = {name: figures for name, figures, _ in lab}
    plain_none = rows["No dynamic table, no Huffman"]
    none = rows["No dynamic table"]
    small_safe = rows["256-byte table, no blocking"]
    small = rows["256-byte table, 100 blocked streams"]
    big_safe = rows["4096-byte table, no blocking"]
    big = rows["4096-byte table, 100 blocked streams (this lesson)"]
    big_plain = rows["4096-byte table, 100 blocked streams, no Huffman"]
    # Huffman takes about a fifth off without a dynamic table, less with one.
    without_table = 1 - none.field_section_bytes / plain_none.field_section_bytes
    with_table = 1 - big.field_section_bytes / big_plain.field_section_bytes
    assert 0.18 < without_table < 0.25 and with_table < without_table
    # Without blocking the burst refers to nothing new: the requests are as large as with no
    # table, and the 4096-byte table costs more in all than no table.
    assert big_safe.request_section_bytes == none.request_section_bytes
    assert big_safe.http3_bytes > none.http3_bytes
    assert big_safe.blocked_sections == small_safe.blocked_sections == 0
    # With blocked streams, all seven requests of the burst wait, and the totals shrink.
    assert big.blocked_sections == small.blocked_sections == 7
    assert big.http3_bytes < small.http3_bytes < none.http3_bytes < plain_none.http3_bytes
    assert min(f.http3_bytes for f in rows.values()) == big.http3_bytes


def test_capacity_decides_what_fits(lab: list[tuple[str, Figures, list[Event]]]) -> None:
    """The conclusion: the user-agent entry (143 bytes) never enters a 256-byte table, which
    evicts; a 4096-byte table takes everything and evicts nothing."""
    for name, _, events in lab:
        updates = [e for e in events if e.name == "dynamic_table_updated"]
        entries = [
            (entry["name"], entry["size"])
            for e in updates
            if e.data["update_type"] == "inserted"
            for entry in e.data["entries"]
        ]
        evicted = [e for e in updates if e.data["update_type"] == "evicted"]
        if name.startswith("256"):
            assert "user-agent" not in dict(entries) and evicted, name
        elif name.startswith("4096"):
            assert ("user-agent", 143) in entries and not evicted, name
