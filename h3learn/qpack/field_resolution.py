"""RFC 9204 §4.5.2-§4.5.6: what a field line representation stands for.

A decoded field line names its field in one of three ways: by an index into the static
table (§3.1), by an index into the dynamic table, counted back from the section's Base
(*relative*, §3.2.5) or forward from it (*post-base*, §3.2.6), or by spelling the name out
(a literal). `resolve` turns a parsed line into the name and value it stands for, and says
which table it came from, for the decoder's trace.

References the section is not allowed to make are decompression failures (§2.2.3): a static
index past the table's end, a dynamic index at or above the Required Insert Count the
section declared, or an entry the table has already evicted.
"""

from __future__ import annotations

from typing import NamedTuple

from h3learn.qpack.dynamic_table import (
    DynamicTable,
    absolute_from_post_base,
    absolute_from_relative,
)
from h3learn.qpack.errors import DecompressionFailed, QpackError
from h3learn.qpack.field_lines import (
    FieldLine,
    IndexedFieldLine,
    IndexedFieldLineWithPostBaseIndex,
    LiteralFieldLineWithLiteralName,
    LiteralFieldLineWithNameReference,
    LiteralFieldLineWithPostBaseNameReference,
)
from h3learn.qpack.static_table import STATIC_TABLE, STATIC_TABLE_SIZE

Header = tuple[bytes, bytes]


class ResolvedLine(NamedTuple):
    """What a field line representation resolved to (for the headers_decoded event)."""

    line: FieldLine
    name: bytes
    value: bytes
    table: str  # "static", "dynamic" or "literal"
    absolute_index: int | None = None
    static_index: int | None = None


def resolve(
    line: FieldLine, base: int, required_insert_count: int, table: DynamicTable
) -> ResolvedLine:
    """Find the name and value ``line`` stands for, in a section with this Base and
    Required Insert Count (RFC 9204 §4.5.2 - §4.5.6)."""
    if isinstance(line, IndexedFieldLine):
        if line.static:
            name, value = static_entry(line.index)
            return ResolvedLine(line, name, value, "static", static_index=line.index)
        absolute = absolute_from_relative(line.index, base)
        entry = dynamic_entry(table, absolute, required_insert_count, "relative", line.index)
        return ResolvedLine(line, entry[0], entry[1], "dynamic", absolute)
    if isinstance(line, LiteralFieldLineWithNameReference):
        if line.static:
            name = static_entry(line.name_index)[0]
            return ResolvedLine(line, name, line.value, "static", static_index=line.name_index)
        absolute = absolute_from_relative(line.name_index, base)
        name = dynamic_entry(table, absolute, required_insert_count, "relative", line.name_index)[0]
        return ResolvedLine(line, name, line.value, "dynamic", absolute)
    if isinstance(line, LiteralFieldLineWithLiteralName):
        return ResolvedLine(line, line.name, line.value, "literal")
    if isinstance(line, IndexedFieldLineWithPostBaseIndex):
        absolute = absolute_from_post_base(line.index, base)
        entry = dynamic_entry(table, absolute, required_insert_count, "post-base", line.index)
        return ResolvedLine(line, entry[0], entry[1], "dynamic", absolute)
    assert isinstance(line, LiteralFieldLineWithPostBaseNameReference)
    absolute = absolute_from_post_base(line.name_index, base)
    name, _ = dynamic_entry(table, absolute, required_insert_count, "post-base", line.name_index)
    return ResolvedLine(line, name, line.value, "dynamic", absolute)


def static_entry(
    index: int, what: str = "field line", error: type[QpackError] = DecompressionFailed
) -> Header:
    """The static table's entry ``index`` (RFC 9204 §3.1, Appendix A); ``what`` refers to
    it, and an index past the end is ``error`` (an encoder instruction's is
    QPACK_ENCODER_STREAM_ERROR)."""
    if index >= STATIC_TABLE_SIZE:
        raise error(
            f"{what} refers to static index {index}; the static table has"
            f" {STATIC_TABLE_SIZE} entries (0-{STATIC_TABLE_SIZE - 1})",
            "9204#3.1",
        )
    _, name, value = STATIC_TABLE[index]
    return name, value


def dynamic_entry(
    table: DynamicTable, absolute: int, required_insert_count: int, kind: str, index: int
) -> Header:
    """The dynamic entry a section may reference: below its Required Insert Count and not
    evicted (RFC 9204 §2.2.3). ``kind`` and ``index`` say how the line wrote it."""
    if absolute < 0 or absolute >= required_insert_count:
        raise DecompressionFailed(
            f"field line's {kind} index {index} means absolute index {absolute}, outside"
            f" 0..{required_insert_count - 1} (below the Required Insert Count"
            f" {required_insert_count})",
            "9204#2.2.3",
        )
    entry = table.get(absolute)
    if entry is None:
        raise DecompressionFailed(
            f"field line refers to dynamic entry {absolute}, which has been evicted",
            "9204#2.2.3",
        )
    return entry.name, entry.value
