"""RFC 9204 §4.5.1, §3.2.5, §3.2.6 written out for the byte view (h3learn/web/prefix_math.py).

The worked arithmetic must reach what the encoder and decoder recorded for every field
section of the examples, agree with the QPACK code's own functions where the modulo wraps,
and show Huffman-coded strings as such (RFC 7541 Appendix B).
"""

from __future__ import annotations

import pytest

from h3learn.events import FieldSpan
from h3learn.qpack.field_lines import decode_required_insert_count, encode_required_insert_count
from h3learn.scenarios.examples import EXAMPLES
from h3learn.web.prefix_math import section_arithmetic
from h3learn.web.present import huffman_notes, step_event, stream_types

SECTIONS = [
    (example.id, event)
    for example in EXAMPLES
    for event in example.record()
    if event.name in ("headers_encoded", "headers_decoded")
]


def texts(name: str, data: dict) -> list[str]:  # type: ignore[type-arg]
    answer = section_arithmetic(name, data)
    assert answer is not None
    return [line["text"] for line in answer["lines"]]


@pytest.mark.parametrize(("example", "event"), SECTIONS, ids=lambda v: str(getattr(v, "seq", v)))
def test_the_arithmetic_reaches_the_recorded_required_insert_count_base_and_indexes(
    example: str, event: object
) -> None:
    data = event.data  # type: ignore[attr-defined]
    lines = texts(event.name, data)  # type: ignore[attr-defined]
    prefix = data["prefix"]
    assert not any("the trace records" in line for line in lines), lines
    assert any("Base = " in line and line.endswith(f"= {prefix['base']}.") for line in lines)
    dynamic = [line for line in data["field_lines"] if line.get("table_type") == "dynamic"]
    if prefix["required_insert_count"]:
        for line in dynamic:
            assert any(f"= {line['absolute_index']} (" in text for text in lines)


def test_a_section_without_dynamic_references_says_so() -> None:
    section = next(e for _, e in SECTIONS if e.data["prefix"]["required_insert_count"] == 0)
    lines = texts(section.name, section.data)
    assert "refers to no dynamic entry" in lines[0]
    assert not any("Field line" in line for line in lines)


@pytest.mark.parametrize(
    ("required", "total_inserts"), [(3, 3), (256, 250), (300, 299), (511, 500), (1000, 990)]
)
def test_a_wrapped_encoded_insert_count_decodes_as_the_qpack_code_does(
    required: int, total_inserts: int
) -> None:
    capacity = 4096  # MaxEntries 128, FullRange 256
    encoded = encode_required_insert_count(required, capacity)
    assert decode_required_insert_count(encoded, capacity, total_inserts) == required
    prefix = {
        "encoded_insert_count": encoded,
        "max_entries": 128,
        "total_inserts": total_inserts,
        "required_insert_count": required,
        "sign": False,
        "delta_base": 0,
        "base": required,
    }
    decoded = texts("headers_decoded", {"prefix": prefix, "field_lines": []})
    assert not any("the trace records" in line for line in decoded), decoded
    assert any(line.startswith("ReqInsertCount = MaxWrapped") for line in decoded)
    encoded_lines = texts("headers_encoded", {"prefix": prefix, "field_lines": []})
    assert f"= {encoded}." in encoded_lines[1]


def test_post_base_and_sign_bit_arithmetic() -> None:
    prefix = {
        "encoded_insert_count": 6,
        "max_entries": 128,
        "required_insert_count": 5,
        "sign": True,
        "delta_base": 1,
        "base": 3,
    }
    lines = [
        {"table_type": "dynamic", "index": 0, "name": "a", "absolute_index": 2},
        {
            "table_type": "dynamic",
            "index": 1,
            "is_post_base": True,
            "name": "b",
            "absolute_index": 4,
        },
        {
            "table_type": "dynamic",
            "name_index": 0,
            "is_post_base": True,
            "name": "c",
            "absolute_index": 3,
        },
    ]
    out = texts("headers_encoded", {"prefix": prefix, "field_lines": lines})
    assert "S = 1: Base = ReqInsertCount − DeltaBase − 1 = 5 − 1 − 1 = 3." in out
    assert any("relative index 0 → absolute = Base − 1 − 0 = 3 − 1 − 0 = 2" in t for t in out)
    assert any("post-base index 1 → absolute = Base + 1 = 4 (dynamic entry 4)" in t for t in out)
    assert any("(its name from dynamic entry 3)" in t for t in out)
    lines[0]["absolute_index"] = 7
    out = texts("headers_encoded", {"prefix": prefix, "field_lines": lines})
    assert any(t.endswith("the trace records 7.") for t in out)


def test_other_events_have_no_calculation() -> None:
    assert section_arithmetic("frame_parsed", {"prefix": {}}) is None
    assert section_arithmetic("headers_decoded", {}) is None


def test_huffman_coded_strings_are_noted_and_literal_ones_not() -> None:
    spans = (
        FieldSpan(
            name="Value: H",
            offset=0,
            length=1,
            value=True,
            explain="",
            rfc="",
            bit_offset=0,
            bit_length=1,
        ),
        FieldSpan(name="Value: length", offset=0, length=1, value=7, explain="", rfc=""),
        FieldSpan(name="Value", offset=1, length=7, value="/style.css", explain="", rfc=""),
        FieldSpan(name="Name: H", offset=8, length=1, value=False, explain="", rfc=""),
        FieldSpan(name="Name", offset=9, length=2, value="ab", explain="", rfc=""),
    )
    notes = huffman_notes(spans)
    assert notes[2] == (
        "Huffman-coded (RFC 7541 Appendix B): these 7 bytes decode to the 10 characters shown."
    )
    assert notes[:2] == [None, None] and notes[3:] == [None, None]


def test_a_step_answer_carries_the_notes_and_the_calculation() -> None:
    events = EXAMPLES[1].record()
    step = next(e for e in events if e.name == "headers_decoded" and e.data["prefix"]["base"])
    answer = step_event(step, stream_types(events))
    huffman = [f for f in answer["fields"] if f["huffman"]]
    assert huffman and all(f["value_text"] and "Huffman-coded" in f["note"] for f in huffman)
    assert all(f["note"] is None for f in answer["fields"] if not f["huffman"])
    lines = answer["calculation"]["lines"]
    assert lines[0]["rfc"]["url"] == "https://www.rfc-editor.org/rfc/rfc9204#section-4.5.1.1"
