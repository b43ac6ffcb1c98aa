"""RFC 9204 §2.1: the QPACK encoder (sans-IO).

The encoder turns a list of fields into an encoded field section (§4.5) plus, on the
encoder stream, the instructions (§4.3) that put entries into the peer decoder's copy of
the dynamic table. It owns the *local* dynamic table, the one it fills, and listens to the
decoder stream (§4.4) to learn what the decoder has received and finished with
(acknowledgments.py):

    apply_settings(capacity, blocked)  the peer's SETTINGS_QPACK_MAX_TABLE_CAPACITY and
                                       SETTINGS_QPACK_BLOCKED_STREAMS (§5)
    encode(stream_id, headers)         -> (encoder stream bytes, encoded field section)
    feed_decoder(bytes)                decoder stream in: acknowledgments (§4.4)

The rules it must keep (§2.1.1 - §2.1.4):

- The table starts with capacity 0 (§3.2.2). Before the first insert the encoder sends Set
  Dynamic Table Capacity, at most the decoder's maximum (§3.2.3). If that maximum is 0 the
  dynamic table is off and the encoder sends no instructions at all.
- An entry may be evicted only when it is *evictable* (§2.1.1): the decoder has acknowledged
  its insertion (its absolute index is below the Known Received Count) and no field section
  still awaiting acknowledgment refers to it. An insert (or Duplicate) that would evict
  anything else is not made, and the encoder records why (``insert_skipped``).
- A field section whose Required Insert Count exceeds the Known Received Count could block
  the decoder (§2.1.2). At most SETTINGS_QPACK_BLOCKED_STREAMS streams may carry such a
  section at any time; a stream that already does may add more.
- An instruction is written only if QUIC flow control lets the encoder stream carry all of
  it now (§2.1.3, flow_control.py), when the caller says how much it may carry (``credit``).
  An insert or Duplicate that does not fit is not made (``insert_skipped`` again): the
  field goes as a literal or refers to what the table already holds.
- The Required Insert Count is exactly one more than the largest absolute index referenced.
- A section for a stream the decoder has abandoned (Stream Cancellation, §4.4.2; the peer's
  reset may still be on its way) refers to the static table only: the decoder will never
  acknowledge it, so a dynamic reference would hold its entry, and a blocked-stream slot,
  for the rest of the connection.

How it decides (the strategy, in the order `encode` tries things for each field line):

1. A field marked *never indexed* (§7.1.3) is always sent as a literal with the N bit set,
   and never inserted. By default these are ``authorization``, ``proxy-authorization`` and
   ``cookie`` values shorter than 20 bytes. The reason is the compression oracle of
   §7.1: an attacker who can make the client send guesses next to a secret can learn from
   the size of the output whether a guess matched a table entry. Long random values take
   too many guesses; short cookies and credentials do not, so they stay out of the table
   and carry the N bit so that intermediaries keep them out of theirs too.
2. An exact match in the static table is referenced (one or two bytes, never blocks).
3. An exact match in the dynamic table is referenced if the reference is allowed: the entry
   is acknowledged, or this section may block. If it is not allowed, the field is sent as a
   literal and not inserted a second time. If the entry lies in the *draining* region
   (the oldest entries, the next to be evicted; §2.1.1.1) and there is room, it is first
   copied to the front with Duplicate (§4.3.4), so that often used entries survive the
   first-in, first-out table instead of falling out and being sent again in full.
4. Otherwise the field may be inserted, if it is *worth it*: it was seen recently (a field
   that came once tends to come again: the same user agent, the same host), or, when the
   section may block, its name's values usually repeat (80% of the time so far; both kept by
   field_history.py). Fields whose values rarely repeat (``:path``, ``content-length``)
   mostly stay literals; so do entries larger than three quarters of the table. When the
   section may block, the new entry is referenced straight away (a post-base or relative
   reference). Otherwise the field goes as a literal this time and the entry serves later
   sections once acknowledged; that doubles the cost of this occurrence, so then only
   recently seen fields are inserted.
5. A literal reuses a name from the static table if there is one, else a dynamic entry with
   that name (if it may be referenced), else sends the name too. A name that the tables lack
   and that has been seen before (``x-fb-debug``, whose values never repeat) gets an entry
   of its own with an empty value, so that its later literals can refer to it.

Then the prefix (§4.5.1, section_encoding.py): the Required Insert Count follows from the
references; the Base is the value, among those worth trying, that makes the section shortest
(§4.5.1.2), or, with ``base_choice = "before_inserts"``, the insert count before this
section's own inserts, as the single-pass encoder of Appendix C does (its new entries are
then post-base, §3.2.6). Every string is Huffman-coded only when that is shorter (§4.1.2).

Every instruction and field section is recorded as an event with its bytes labelled; the
dynamic table records its own inserts and evictions. With recording off no labels are built.
"""

from __future__ import annotations

from collections.abc import Container, Sequence

from h3learn.events import NullRecorder, Recorder
from h3learn.qpack import inserts
from h3learn.qpack.acknowledgments import Acknowledgments
from h3learn.qpack.configuration import check_qpack_settings
from h3learn.qpack.decoder_instructions import (
    DecoderInstruction,
    InsertCountIncrement,
    SectionAcknowledgment,
    StreamCancellation,
    parse_decoder_instruction,
)
from h3learn.qpack.dynamic_table import DynamicTable, entry_size
from h3learn.qpack.errors import DecoderStreamError
from h3learn.qpack.field_history import FieldHistory
from h3learn.qpack.flow_control import EncoderStreamCredit
from h3learn.qpack.recording import record_instruction
from h3learn.qpack.section_encoding import FieldLinePlan, choose_base, serialize_section
from h3learn.qpack.static_table import STATIC_INDEX_BY_FIELD, STATIC_INDEX_BY_NAME
from h3learn.wire.errors import MalformedInput, NeedMoreData
from h3learn.wire.spans import SpanReader, display

Header = tuple[bytes, bytes]

#: Names whose values are never indexed by default (RFC 9204 §7.1.3); see the module docstring.
SENSITIVE_NAMES: frozenset[bytes] = frozenset({b"authorization", b"proxy-authorization"})
#: ``cookie`` values shorter than this are never indexed either (RFC 9204 §7.1.3).
SHORT_COOKIE_LIMIT = 20

#: The draining region (RFC 9204 §2.1.1.1): an entry is draining when the free space plus
#: the entries older than it add up to at most DRAINING_SHARE of the capacity, so that the
#: next few inserts would start evicting it. The encoder copies those still in use
#: to the front with Duplicate and refers to the copy, so that the originals can drain.
DRAINING_SHARE = 0.25
#: Entries larger than this share of the capacity are not inserted: one would push out
#: too many others.
LARGEST_ENTRY_SHARE = 0.75


class Encoder:
    """A QPACK encoder; see the module docstring for its rules and its strategy."""

    def __init__(
        self,
        recorder: Recorder | None = None,
        *,
        huffman: bool = True,
        preferred_capacity: int | None = None,
    ) -> None:
        self.recorder: Recorder = recorder if recorder is not None else NullRecorder()
        #: Huffman-code strings when shorter (True) or never (False) (RFC 9204 §4.1.2).
        self.huffman = huffman
        #: The capacity this encoder would like; the table uses min(this, the peer's maximum).
        self.preferred_capacity = preferred_capacity
        self.table = DynamicTable(0, self.recorder, owner="local")
        #: The peer's SETTINGS_QPACK_MAX_TABLE_CAPACITY and SETTINGS_QPACK_BLOCKED_STREAMS.
        self.max_table_capacity = 0
        self.max_blocked_streams = 0
        #: How the Base is chosen (RFC 9204 §4.5.1.2): "shortest" (the shortest section) or
        #: "before_inserts" (the insert count before this section's inserts, Appendix C).
        self.base_choice = "shortest"
        #: ``cookie`` values shorter than this are never indexed (0 turns the rule off).
        self.short_cookie_limit = SHORT_COOKIE_LIMIT
        #: Stream ids of the QUIC streams carrying the instructions, for events only.
        self.encoder_stream_id: int | None = None
        self.decoder_stream_id: int | None = None
        self._capacity_sent = False
        self._decoder_buffer = bytearray()
        #: RFC 9204 §2.1.4: the sections sent and what the decoder has acknowledged.
        self.acknowledgments = Acknowledgments()
        #: The newest entry holding each (name, value), and each name (RFC 9204 §3.2.4).
        self._newest_by_field: dict[Header, int] = {}
        self._newest_by_name: dict[bytes, int] = {}
        #: What the strategy remembers of the fields encoded so far (field_history.py).
        self._history = FieldHistory()
        #: RFC 9204 §2.1.3: what flow control still lets the encoder stream carry during
        #: the current `encode` (None: no limit was given).
        self._credit: EncoderStreamCredit | None = None

    # -- settings (RFC 9204 §5) ------------------------------------------------------------

    def apply_settings(self, max_table_capacity: int, blocked_streams: int) -> None:
        """Take the peer decoder's settings; call once, before encoding with the table."""
        check_qpack_settings(max_table_capacity, blocked_streams)
        self.max_table_capacity = max_table_capacity
        self.max_blocked_streams = blocked_streams
        self.table.maximum_capacity = max_table_capacity
        self._history.set_window(self._target_capacity())

    @property
    def known_received_count(self) -> int:
        """RFC 9204 §2.1.4: how many inserts the decoder has acknowledged."""
        return self.acknowledgments.known_received_count

    @property
    def capacity_sent(self) -> bool:
        """Has this encoder set the table's capacity (and so used the peer's maximum)?"""
        return self._capacity_sent

    def _target_capacity(self) -> int:
        if self.preferred_capacity is None:
            return self.max_table_capacity
        return min(self.max_table_capacity, self.preferred_capacity)

    # -- encoding a field section (RFC 9204 §4.5) ------------------------------------------

    def encode(
        self,
        stream_id: int,
        headers: Sequence[Header],
        never_indexed: Container[bytes] = SENSITIVE_NAMES,
        *,
        base: int | None = None,
        credit: EncoderStreamCredit | None = None,
    ) -> tuple[bytes, bytes]:
        """Encode one field section; returns (encoder stream bytes, encoded field section).

        ``never_indexed`` names the fields sent with the N bit (RFC 9204 §7.1.3); short
        cookies always are. ``base`` fixes the Base instead of letting the encoder choose
        it (RFC 9204 Appendix B shows such a choice). ``credit`` is what QUIC flow control
        lets the encoder stream carry now (RFC 9204 §2.1.3); None: no limit. A negative
        ``base`` is refused before anything is inserted: the prefix cannot express it.
        """
        if base is not None and base < 0:
            raise ValueError(
                f"Base {base} is negative: the value of Base MUST NOT be negative, and a Sign"
                " bit with any Delta Base gives at least 0 (RFC 9204 §4.5.1.2)"
            )
        self._credit = credit
        try:
            return self._encode(stream_id, headers, never_indexed, base)
        finally:
            self._credit = None

    def _encode(
        self,
        stream_id: int,
        headers: Sequence[Header],
        never_indexed: Container[bytes],
        base: int | None,
    ) -> tuple[bytes, bytes]:
        encoder_stream = bytearray()
        inserts_before = self.table.insert_count
        may_block = self._may_block(stream_id)
        # The decoder abandoned this stream and will not read this section (§4.4.2): it
        # refers to the static table only, so that it holds no dynamic entry for good.
        static_only = self.acknowledgments.is_abandoned(stream_id)
        referenced: set[int] = set()
        plans = []
        for name, value in headers:
            sensitive = name in never_indexed or (
                name == b"cookie" and len(value) < self.short_cookie_limit
            )
            if static_only:
                plans.append(static_plan(name, value, sensitive))
                continue
            plan = self._plan_field_line(
                name, value, sensitive, may_block, referenced, encoder_stream
            )
            if plan.absolute_index is not None:
                referenced.add(plan.absolute_index)
            plans.append(plan)
            if not sensitive and self.max_table_capacity:
                self._history.remember(name, value)

        required_insert_count = max(referenced) + 1 if referenced else 0
        if base is None and self.base_choice == "before_inserts" and required_insert_count:
            base = inserts_before
        if base is None:
            base = choose_base(plans, required_insert_count)
        section = serialize_section(
            stream_id,
            headers,
            plans,
            required_insert_count,
            base,
            max_table_capacity=self.max_table_capacity,
            huffman=self._h(),
            recorder=self.recorder,
            note=ABANDONED_NOTE if static_only else "",
        )
        if required_insert_count:
            self.acknowledgments.section_sent(stream_id, required_insert_count, referenced)
        return bytes(encoder_stream), section

    def _may_block(self, stream_id: int) -> bool:
        """RFC 9204 §2.1.2: may this section refer to entries not yet acknowledged?"""
        blocking = self._blocking_streams()
        return stream_id in blocking or len(blocking) < self.max_blocked_streams

    def _blocking_streams(self) -> set[int]:
        """Streams with a section that needs inserts not yet known to be received."""
        return self.acknowledgments.blocking_streams(self.table.insert_count)

    def _plan_field_line(
        self,
        name: bytes,
        value: bytes,
        sensitive: bool,
        may_block: bool,
        referenced: set[int],
        encoder_stream: bytearray,
    ) -> FieldLinePlan:
        """Steps 1-5 of the strategy in the module docstring, for one field line."""
        if sensitive:
            return self._literal(name, value, may_block, never_indexed=True)
        static_index = STATIC_INDEX_BY_FIELD.get((name, value))
        if static_index is not None:
            return FieldLinePlan("indexed", name, value, static_index=static_index)
        if not self.max_table_capacity:
            return self._literal(name, value, may_block)

        absolute = self._newest_by_field.get((name, value))
        if absolute is not None and self._is_draining(absolute):
            # The copy is referenced only if this section may block; otherwise the old entry
            # is, and the Duplicate must not evict it.
            duplicate = inserts.try_duplicate(
                self, absolute, referenced, encoder_stream, keep=not may_block
            )
            if duplicate is not None and may_block:
                absolute = duplicate
        if absolute is not None and self._may_reference(absolute, may_block):
            return FieldLinePlan("indexed", name, value, absolute_index=absolute)
        if absolute is not None:
            # In the table but not yet acknowledged, and this section may not block: a
            # literal this time. Inserting the field again would only fill the table with a
            # second copy; the first becomes usable once the decoder acknowledges it.
            return self._literal(name, value, may_block)

        if self._worth_inserting(name, value, may_block):
            inserted = inserts.try_insert(self, name, value, referenced, encoder_stream)
            if inserted is not None and may_block:
                return FieldLinePlan("indexed", name, value, absolute_index=inserted)
        elif self._worth_inserting_name(name, may_block):
            inserts.try_insert(self, name, b"", referenced, encoder_stream)
        return self._literal(name, value, may_block)

    def _literal(
        self, name: bytes, value: bytes, may_block: bool, never_indexed: bool = False
    ) -> FieldLinePlan:
        """Step 5: a literal value, with the name from a table when one has it."""
        static_index = STATIC_INDEX_BY_NAME.get(name)
        if static_index is not None:
            return FieldLinePlan("literal", name, value, static_index, None, never_indexed)
        absolute = self._newest_by_name.get(name)
        if absolute is not None and self._may_reference(absolute, may_block):
            return FieldLinePlan("literal", name, value, None, absolute, never_indexed)
        return FieldLinePlan("literal", name, value, None, None, never_indexed)

    def _may_reference(self, absolute_index: int, may_block: bool) -> bool:
        return may_block or absolute_index < self.known_received_count

    # -- the strategy's tests --------------------------------------------------------------

    def _worth_inserting(self, name: bytes, value: bytes, may_block: bool) -> bool:
        """Step 4: is this field likely to be sent again while it is still in the table?"""
        if entry_size(name, value) > LARGEST_ENTRY_SHARE * self._target_capacity():
            return False
        if self._history.is_recent(name, value):
            return True
        if not may_block:
            # A field inserted now could only be referenced by later sections, and is sent
            # as a literal as well: that doubles its cost, so only recent fields qualify.
            return False
        return self._history.values_usually_repeat(name)

    def _worth_inserting_name(self, name: bytes, may_block: bool) -> bool:
        """Step 5: should a name the tables lack get an entry of its own, with no value?

        A name that keeps coming back with new values (``x-fb-debug``) costs its bytes in
        every literal; an entry (name, "") lets the literals refer to it instead.
        """
        if name in STATIC_INDEX_BY_NAME:
            return False
        newest = self._newest_by_name.get(name)
        if newest is not None and not self._is_draining(newest):
            return False
        return self._history.name_seen(name)

    def _is_draining(self, absolute_index: int) -> bool:
        """RFC 9204 §2.1.1.1: is this entry close to the eviction point (see DRAINING_SHARE)?"""
        headroom = DRAINING_SHARE * self.table.capacity
        freed = self.table.capacity - self.table.size
        for entry in self.table:
            freed += entry.size
            if entry.absolute_index == absolute_index:
                return freed - entry.size <= headroom
        return False

    # -- explicit choices, for lessons and RFC 9204 Appendix B ----------------------------

    def insert(self, name: bytes, value: bytes) -> bytes:
        """Insert (name, value) now, whatever the strategy would decide.

        Returns the encoder stream bytes (preceded by Set Dynamic Table Capacity if this is
        the first insert). Raises ValueError if the entry does not fit without evicting an
        entry that is not evictable (RFC 9204 §2.1.1).
        """
        encoder_stream = bytearray()
        if (
            not self.max_table_capacity
            or inserts.try_insert(self, name, value, set(), encoder_stream) is None
        ):
            raise ValueError(
                f"cannot insert {display(name)}: {display(value)} without evicting an entry"
                " that is not evictable, or at all (RFC 9204 §2.1.1)"
            )
        return bytes(encoder_stream)

    def duplicate(self, absolute_index: int) -> bytes:
        """Send Duplicate (RFC 9204 §4.3.4) of an entry; returns the encoder stream bytes."""
        encoder_stream = bytearray()
        present = self.table.get(absolute_index) is not None
        if (
            not present
            or inserts.try_duplicate(self, absolute_index, set(), encoder_stream, keep=False)
            is None
        ):
            raise ValueError(
                f"cannot duplicate entry {absolute_index}: it is not in the table, or the copy"
                " would evict an entry that is not evictable (RFC 9204 §2.1.1)"
            )
        return bytes(encoder_stream)

    # -- encoder instructions (RFC 9204 §4.3; written by inserts.py) -----------------------

    def _h(self) -> bool | None:
        """The Huffman choice for a string: None lets the writer pick the shorter form."""
        return None if self.huffman else False

    # -- the decoder stream (RFC 9204 §4.4) ------------------------------------------------

    def feed_decoder(self, data: bytes) -> None:
        """Process decoder stream bytes; an unfinished instruction waits for the rest."""
        self._decoder_buffer += data
        buffer = self._decoder_buffer
        position = 0
        try:
            while position < len(buffer):
                reader = SpanReader(buffer, position, record=self.recorder.enabled)
                try:
                    instruction = parse_decoder_instruction(reader)
                except NeedMoreData:
                    break
                except MalformedInput as error:
                    raise DecoderStreamError(error.rule, error.rfc) from None
                position = reader.position
                if self.recorder.enabled:
                    record_instruction(
                        self.recorder,
                        "instruction_parsed",
                        self.decoder_stream_id,
                        instruction,
                        reader.unit(),
                        reader.field_spans(),
                    )
                self._execute(instruction)
        finally:
            del buffer[:position]

    def _execute(self, instruction: DecoderInstruction) -> None:
        """Apply one decoder instruction (RFC 9204 §4.4) and record the new state."""
        acknowledgments = self.acknowledgments
        if isinstance(instruction, SectionAcknowledgment):
            stream_id = instruction.stream_id
            acknowledgments.acknowledge_section(stream_id)
            self._record_state(stream_id, "9204#4.4.1", f"stream {stream_id} acknowledged")
        elif isinstance(instruction, StreamCancellation):
            stream_id = instruction.stream_id
            acknowledgments.cancel_stream(stream_id)
            self._record_state(stream_id, "9204#4.4.2", f"stream {stream_id} cancelled")
        else:
            assert isinstance(instruction, InsertCountIncrement)
            increment = instruction.increment
            acknowledgments.increment_insert_count(increment, self.table.insert_count)
            self._record_state(None, "9204#4.4.3", f"Insert Count Increment {increment}")

    def _record_state(self, stream_id: int | None, rfc: str, what: str) -> None:
        if not self.recorder.enabled:
            return
        self.recorder.record(
            category="qpack",
            name="state_updated",
            stream_id=stream_id,
            data={
                "owner": self.table.owner,
                "known_received_count": self.known_received_count,
                "current_insert_count": self.table.insert_count,
                "blocking_streams": sorted(self._blocking_streams()),
                "unacknowledged_sections": self.acknowledgments.sections_awaiting(),
            },
            rfc=(rfc, "9204#2.1.4"),
            summary=f"{what}: Known Received Count {self.known_received_count}",
        )


#: The end of a section's summary when its stream was abandoned (RFC 9204 §4.4.2).
ABANDONED_NOTE = "static table only: the decoder abandoned this stream, RFC 9204 §4.4.2"


def static_plan(name: bytes, value: bytes, never_indexed: bool) -> FieldLinePlan:
    """A field line that uses the static table at most: an exact match, or its name."""
    static_index = STATIC_INDEX_BY_FIELD.get((name, value))
    if static_index is not None and not never_indexed:
        return FieldLinePlan("indexed", name, value, static_index=static_index)
    static_name = STATIC_INDEX_BY_NAME.get(name)
    return FieldLinePlan("literal", name, value, static_name, None, never_indexed)
