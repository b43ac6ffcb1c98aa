"""RFC 9204 §4.3, the decoder's side: what each encoder instruction does to its table.

The decoder keeps its own copy of the dynamic table, which only the peer's encoder
instructions change (RFC 9204 §3.2):

    Set Dynamic Table Capacity    the new capacity, at most the maximum this decoder
                                  advertised (§4.3.1); entries that no longer fit are
                                  evicted, oldest first (§3.2.2)
    Insert with Name Reference    a new entry whose name is a static or dynamic entry's
    Insert with Literal Name      a new entry with both name and value sent as strings
    Duplicate                     an existing entry inserted again as the newest (§4.3.4)

A rule broken by any of them is a connection error of type
QPACK_ENCODER_STREAM_ERROR, raised here as `EncoderStreamError` (§6). The decoder buffers an
instruction that has not all arrived yet, and `check_pending_instruction_size` bounds how
much it will buffer (§7.4).
"""

from __future__ import annotations

from h3learn.qpack.dynamic_table import DynamicTable, absolute_from_encoder_relative, entry_size
from h3learn.qpack.encoder_instructions import (
    EncoderInstruction,
    InsertWithLiteralName,
    InsertWithNameReference,
    SetDynamicTableCapacity,
)
from h3learn.qpack.errors import EncoderStreamError
from h3learn.qpack.field_resolution import static_entry

Header = tuple[bytes, bytes]


def apply_encoder_instruction(
    table: DynamicTable, instruction: EncoderInstruction, max_table_capacity: int
) -> None:
    """Change the decoder's table as ``instruction`` says, or raise the rule it breaks."""
    if isinstance(instruction, SetDynamicTableCapacity):
        if instruction.capacity > max_table_capacity:
            raise EncoderStreamError(
                f"Set Dynamic Table Capacity {instruction.capacity} exceeds the maximum"
                f" {max_table_capacity} this decoder advertised",
                "9204#4.3.1",
            )
        table.set_capacity(instruction.capacity)
        return
    if isinstance(instruction, InsertWithNameReference):
        if instruction.static:
            where = "encoder instruction"
            name = static_entry(instruction.name_index, where, EncoderStreamError)[0]
        else:
            name = _dynamic_entry(table, instruction.name_index)[0]
        value = instruction.value
    elif isinstance(instruction, InsertWithLiteralName):
        name, value = instruction.name, instruction.value
    else:
        name, value = _dynamic_entry(table, instruction.index)
    size = entry_size(name, value)
    if size > table.capacity:
        raise EncoderStreamError(
            f"inserted entry of {size} bytes is larger than the table capacity {table.capacity}",
            "9204#3.2.2",
        )
    table.insert(name, value)


def _dynamic_entry(table: DynamicTable, relative_index: int) -> Header:
    """The entry an encoder instruction names by relative index (§3.2.5): 0 is the newest."""
    absolute = absolute_from_encoder_relative(relative_index, table.insert_count)
    entry = table.get(absolute) if absolute >= 0 else None
    if entry is None:
        raise EncoderStreamError(
            f"encoder instruction refers to relative index {relative_index} (absolute"
            f" {absolute}), which is not in the dynamic table (evicted or never inserted)",
            "9204#2.2.3",
        )
    return entry.name, entry.value


def check_pending_instruction_size(pending: int, max_table_capacity: int) -> None:
    """RFC 9204 §7.4: refuse to buffer an instruction larger than any that could fit.

    An insert must fit the table, and Huffman coding at most quadruples a string, so an
    unfinished instruction longer than that can only be an error (or an attack).
    """
    limit = 4 * max_table_capacity + 64
    if pending > limit:
        raise EncoderStreamError(
            f"unfinished encoder instruction already {pending} bytes long; no entry that"
            f" fits a table of at most {max_table_capacity} bytes needs that many",
            "9204#7.4",
        )
