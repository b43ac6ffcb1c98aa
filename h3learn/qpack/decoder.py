"""RFC 9204 §2.2: the QPACK decoder (sans-IO).

The decoder turns encoded field sections back into field lists. It owns the *remote*
dynamic table, which the peer's encoder fills through the encoder stream, and it talks back
on the decoder stream. Its inputs and outputs are plain bytes:

    feed_encoder(bytes)            encoder stream in: instructions change the table (§4.3);
                                   returns what this unblocked (`Unblocked`): the sections
                                   decoded, and the streams whose section failed
    decode(stream_id, bytes)       a field section in (§4.5): the decoded fields, or None
                                   if it must wait for inserts (a *blocked* stream, §2.2.1)
    cancel_stream(stream_id, ...)  the stream was reset or abandoned (§2.2.2.2)
    data_to_send()                 decoder stream out: acknowledgments (§4.4)

How it decides what to send (§2.2.2):

- after decoding a section whose Required Insert Count is not zero it sends a Section
  Acknowledgment, which also tells the encoder the decoder has every insert up to that count;
- when `data_to_send` finds inserts the encoder has not yet been told about, it sends one
  Insert Count Increment for all of them;
- when a stream is cancelled, it sends a Stream Cancellation if the encoder may still hold
  references for it: a section with a non-zero Required Insert Count arrived but was never
  acknowledged (blocked, failed, or never read), or the stream was cut off before its end,
  so such sections may still be on their way (`cancel_stream` says exactly when).

A section that needs inserts not yet received waits in a table of blocked streams; there may
be at most SETTINGS_QPACK_BLOCKED_STREAMS of them (§2.1.2). Sections that arrive later on a
blocked stream wait behind it, so each stream's sections come out in the order they came in.
When inserts unblock several streams at once, a section past this decoder's limits costs only
its own stream (RFC 9204 §7.4): it is reported among the failures, the others are decoded.
Every rule in RFC 9204 that ends in "MUST treat this as a connection error" raises the
matching `QpackError`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from h3learn.events import NullRecorder, Recorder
from h3learn.qpack.configuration import check_qpack_settings
from h3learn.qpack.decoder_instructions import (
    DecoderInstruction,
    InsertCountIncrement,
    SectionAcknowledgment,
    StreamCancellation,
)
from h3learn.qpack.dynamic_table import DynamicTable
from h3learn.qpack.encoder_instructions import encoder_instruction_end, parse_encoder_instruction
from h3learn.qpack.errors import DecompressionFailed, EncoderStreamError
from h3learn.qpack.field_lines import (
    FieldSectionPrefix,
    base_from_delta,
    decode_required_insert_count,
    max_entries,
    parse_field_line,
    refers_to_dynamic_table,
)
from h3learn.qpack.field_resolution import ResolvedLine, resolve
from h3learn.qpack.recording import (
    blocked_section_spans,
    record_field_section,
    record_instruction,
    resolved_lines_json,
)
from h3learn.qpack.table_updates import apply_encoder_instruction, check_pending_instruction_size
from h3learn.wire.errors import MalformedInput, NeedMoreData
from h3learn.wire.spans import SpanReader, SpanWriter

Header = tuple[bytes, bytes]


@dataclass(frozen=True, slots=True)
class DecodedFieldSection:
    """A decoded field section: the field lines in order and how they were represented."""

    stream_id: int
    headers: list[Header]
    #: For each header, whether the sender set the N (never-indexed) bit (RFC 9204 §7.1.3).
    never_indexed: list[bool]
    required_insert_count: int
    base: int


@dataclass(frozen=True, slots=True)
class Unblocked:
    """What inserts on the encoder stream released (RFC 9204 §2.2.1), stream by stream."""

    #: The sections decoded, each stream's in the order they arrived.
    sections: list[DecodedFieldSection] = field(default_factory=list)
    #: One error per stream whose released section exceeded this decoder's limits: a
    #: stream error of type QPACK_DECOMPRESSION_FAILED for that stream alone (RFC 9204
    #: §7.4); the sections queued behind it on the same stream are dropped with it.
    failures: list[DecompressionFailed] = field(default_factory=list)


@dataclass(slots=True)
class _BlockedSection:
    required_insert_count: int
    #: The decoder's insert count when the section arrived, which its Required Insert
    #: Count was decoded with (RFC 9204 §4.5.1.1): the trace shows that arithmetic.
    total_inserts: int
    data: bytes


class Decoder:
    """A QPACK decoder; see the module docstring."""

    def __init__(
        self,
        max_table_capacity: int = 0,
        blocked_streams: int = 0,
        recorder: Recorder | None = None,
    ) -> None:
        check_qpack_settings(max_table_capacity, blocked_streams)
        self.recorder: Recorder = recorder if recorder is not None else NullRecorder()
        #: What this endpoint advertised as SETTINGS_QPACK_MAX_TABLE_CAPACITY (§5).
        self.max_table_capacity = max_table_capacity
        #: What this endpoint advertised as SETTINGS_QPACK_BLOCKED_STREAMS (§5).
        self.max_blocked_streams = blocked_streams
        self.table = DynamicTable(max_table_capacity, self.recorder, owner="remote")
        #: The Insert Count the encoder has been told about (RFC 9204 §2.1.4, decoder side).
        self.acknowledged_insert_count = 0
        #: Stream ids of the QUIC streams carrying the instructions, for events only.
        self.encoder_stream_id: int | None = None
        self.decoder_stream_id: int | None = None
        self._encoder_buffer = bytearray()
        #: Per blocked stream, its sections waiting in order (the first needs inserts).
        self._blocked: dict[int, list[_BlockedSection]] = {}
        #: Per stream, how many sections with a non-zero Required Insert Count arrived and
        #: were not acknowledged yet (blocked, or failed): what a Stream Cancellation releases.
        self._unacknowledged: dict[int, int] = {}
        self._out = bytearray()

    # -- the encoder stream (RFC 9204 §4.3) -----------------------------------------------

    def feed_encoder(self, data: bytes) -> Unblocked:
        """Process encoder stream bytes; returns what the new inserts unblocked."""
        self._encoder_buffer += data
        buffer = self._encoder_buffer
        position = 0
        inserts_before = self.table.insert_count
        try:
            while position < len(buffer):
                reader = SpanReader(buffer, position, record=self.recorder.enabled)
                try:
                    # Parsed once all of it is here: see encoder_instruction_end.
                    if encoder_instruction_end(buffer, position) > len(buffer):
                        raise NeedMoreData
                    instruction = parse_encoder_instruction(reader)
                except NeedMoreData:
                    check_pending_instruction_size(len(buffer) - position, self.max_table_capacity)
                    break
                except MalformedInput as error:
                    raise EncoderStreamError(error.rule, error.rfc) from None
                position = reader.position
                if self.recorder.enabled:
                    record_instruction(
                        self.recorder,
                        "instruction_parsed",
                        self.encoder_stream_id,
                        instruction,
                        reader.unit(),
                        reader.field_spans(),
                    )
                apply_encoder_instruction(self.table, instruction, self.max_table_capacity)
        finally:
            del buffer[:position]
        if self.table.insert_count == inserts_before:
            return Unblocked()
        return self._unblock()

    # -- field sections (RFC 9204 §4.5) ---------------------------------------------------

    def decode(self, stream_id: int, data: bytes) -> DecodedFieldSection | None:
        """Decode one encoded field section, or hold it if it must wait (returns None).

        A section waits when it needs inserts not yet received, or when an earlier section
        of the same stream is still waiting: a stream's sections are decoded in order.
        """
        reader = SpanReader(data, record=False)
        try:
            prefix = FieldSectionPrefix.parse(reader)
        except NeedMoreData:
            raise DecompressionFailed(
                "field section ends inside its prefix", "9204#4.5.1"
            ) from None
        except MalformedInput as error:
            if refers_to_dynamic_table(data):
                # Its Delta Base is unusable, but the encoder counted its references all
                # the same: they stay outstanding until a Stream Cancellation (§2.2.2.2).
                self._count_unacknowledged(stream_id)
            raise DecompressionFailed(
                error.rule, error.rfc, stream_id=stream_id, beyond_limit=error.beyond_limit
            ) from None
        total_inserts = self.table.insert_count
        required_insert_count = decode_required_insert_count(
            prefix.encoded_insert_count, self.max_table_capacity, total_inserts
        )
        if required_insert_count:
            self._count_unacknowledged(stream_id)
        waiting = self._blocked.get(stream_id)
        if waiting is not None:
            waiting.append(_BlockedSection(required_insert_count, total_inserts, data))
            return None
        if required_insert_count > total_inserts:
            self._block(stream_id, _BlockedSection(required_insert_count, total_inserts, data))
            return None
        return self._decode_now(stream_id, data, required_insert_count, total_inserts)

    def _count_unacknowledged(self, stream_id: int) -> None:
        """One more section of this stream that refers to the table and is not yet acknowledged."""
        self._unacknowledged[stream_id] = self._unacknowledged.get(stream_id, 0) + 1

    def _block(self, stream_id: int, section: _BlockedSection) -> None:
        """RFC 9204 §2.2.1: wait for inserts, within the advertised number of blocked streams."""
        if len(self._blocked) >= self.max_blocked_streams:
            raise DecompressionFailed(
                f"stream {stream_id} would be blocked stream number {len(self._blocked) + 1},"
                f" more than the {self.max_blocked_streams} this decoder allows"
                " (SETTINGS_QPACK_BLOCKED_STREAMS)",
                "9204#2.1.2",
            )
        self._blocked[stream_id] = [section]
        self._record_blocked(stream_id, section.required_insert_count, section.data)

    def _record_blocked(self, stream_id: int, required_insert_count: int, data: bytes) -> None:
        self._record_stream_state(
            stream_id,
            "blocked",
            required_insert_count,
            f"stream {stream_id} blocked: needs Insert Count {required_insert_count},"
            f" decoder has {self.table.insert_count}",
            data,
        )

    def _record_stream_state(
        self,
        stream_id: int,
        state: str,
        required_insert_count: int,
        summary: str,
        section: bytes = b"",
    ) -> None:
        """The qlog stream_state_updated event: a stream became blocked or unblocked."""
        if self.recorder.enabled:
            self.recorder.record(
                category="qpack",
                name="stream_state_updated",
                stream_id=stream_id,
                data={
                    "stream_id": stream_id,
                    "state": state,
                    "required_insert_count": required_insert_count,
                    "current_insert_count": self.table.insert_count,
                },
                raw=section,
                fields=blocked_section_spans(section) if section else (),
                rfc=("9204#2.2.1",),
                summary=summary,
            )

    def _unblock(self) -> Unblocked:
        """Decode what the inserts so far allow, each stream's sections in their order.

        A stream whose first waiting section can now be decoded is unblocked; the sections
        queued behind it follow, until one that still needs inserts blocks the stream again.
        A section past this decoder's limits ends its stream's decoding there (RFC 9204
        §7.4), and the other streams carry on; a broken rule is a connection error, raised.
        """
        ready = [
            stream_id
            for stream_id, waiting in self._blocked.items()
            if waiting[0].required_insert_count <= self.table.insert_count
        ]
        released = Unblocked()
        for stream_id in ready:
            waiting = self._blocked.pop(stream_id)
            self._record_stream_state(
                stream_id,
                "unblocked",
                waiting[0].required_insert_count,
                f"stream {stream_id} unblocked: Insert Count reached {self.table.insert_count}",
            )
            try:
                while waiting and waiting[0].required_insert_count <= self.table.insert_count:
                    section = waiting.pop(0)
                    released.sections.append(
                        self._decode_now(
                            stream_id,
                            section.data,
                            section.required_insert_count,
                            section.total_inserts,
                        )
                    )
            except DecompressionFailed as error:
                if not error.beyond_limit:
                    raise
                released.failures.append(error)
                continue
            if waiting:
                self._blocked[stream_id] = waiting
                self._record_blocked(stream_id, waiting[0].required_insert_count, waiting[0].data)
        return released

    @property
    def blocked_streams(self) -> list[int]:
        return list(self._blocked)

    def _decode_now(
        self, stream_id: int, data: bytes, required_insert_count: int, total_inserts: int
    ) -> DecodedFieldSection:
        record = self.recorder.enabled
        reader = SpanReader(data, record=record)
        prefix = FieldSectionPrefix.parse(reader)
        base = base_from_delta(required_insert_count, prefix.sign, prefix.delta_base)
        headers: list[Header] = []
        never_indexed: list[bool] = []
        resolved: list[ResolvedLine] = []
        lengths: list[int] = []
        largest_reference = -1
        try:
            while not reader.at_end():
                start = reader.position
                line = parse_field_line(reader)
                result = resolve(line, base, required_insert_count, self.table)
                headers.append((result.name, result.value))
                never_indexed.append(getattr(line, "never_indexed", False))
                if result.absolute_index is not None:
                    largest_reference = max(largest_reference, result.absolute_index)
                if record:
                    resolved.append(result)
                    lengths.append(reader.position - start)
        except NeedMoreData:
            raise DecompressionFailed(
                "field section ends inside a field line", "9204#4.5"
            ) from None
        except MalformedInput as error:
            raise DecompressionFailed(
                error.rule, error.rfc, stream_id=stream_id, beyond_limit=error.beyond_limit
            ) from None
        if required_insert_count and largest_reference != required_insert_count - 1:
            # Smaller than needed was refused above (a reference at or past it, §2.2.3, a
            # MUST); larger than needed is an error a decoder MAY raise, and h3learn does.
            if largest_reference < 0:
                needs = "it refers to no dynamic entry, so it needs 0"
            else:
                needs = (
                    f"its largest dynamic reference is {largest_reference}, so it needs"
                    f" {largest_reference + 1}"
                )
            raise DecompressionFailed(
                f"Required Insert Count is {required_insert_count}, more than this section"
                f" needs: {needs} (a decoder MAY treat a larger count as an error, and"
                " h3learn does)",
                "9204#2.2.1",
            )
        section = DecodedFieldSection(
            stream_id, headers, never_indexed, required_insert_count, base
        )
        if record:
            prefix_json = {
                "encoded_insert_count": prefix.encoded_insert_count,
                "max_entries": max_entries(self.max_table_capacity),
                "total_inserts": total_inserts,
                "required_insert_count": required_insert_count,
                "sign": prefix.sign,
                "delta_base": prefix.delta_base,
                "base": base,
            }
            lines = resolved_lines_json(resolved, lengths)
            raw, spans = reader.unit(), reader.field_spans()
            record_field_section(
                self.recorder, "headers_decoded", stream_id, headers, prefix_json, lines, raw, spans
            )
        if required_insert_count:
            self._acknowledged(stream_id)
            self._send(SectionAcknowledgment(stream_id))
            self.acknowledged_insert_count = max(
                self.acknowledged_insert_count, required_insert_count
            )
        return section

    def _acknowledged(self, stream_id: int) -> None:
        """One section of the stream no longer needs a Stream Cancellation to release it."""
        left = self._unacknowledged[stream_id] - 1
        if left:
            self._unacknowledged[stream_id] = left
        else:
            del self._unacknowledged[stream_id]

    # -- stream cancellation (RFC 9204 §2.2.2.2) -------------------------------------------

    def cancel_stream(
        self,
        stream_id: int,
        *,
        end_received: bool = False,
        unread_sections: Sequence[bytes] = (),
    ) -> None:
        """The stream was reset or its reading abandoned: forget it, and tell the encoder.

        A Stream Cancellation tells the encoder that the stream's references to the dynamic
        table are no longer outstanding (RFC 9204 §2.2.2.2, §4.4.2). It is sent when the
        encoder may still hold some:

        - a section with a non-zero Required Insert Count arrived and was never acknowledged:
          it is blocked, or it failed to decode, or it is among ``unread_sections``, the
          sections of frames that arrived but were never handed to the decoder; or
        - the stream was cut off before its end (``end_received`` false): sections still on
          their way may refer to the table.

        A decoder whose maximum table capacity is 0 sends none (§2.2.2.2 lets it omit them):
        no valid section can refer to a table it does not have, so the encoder holds
        nothing for the stream.

        A stream that arrived whole, every section that refers to the table acknowledged,
        is owed none: nothing is outstanding. Deliberate reading of RFC 9204 §2.2.2.2,
        which also names a stream abandoned "before all encoded field sections are
        processed": when the unprocessed ones all have a Required Insert Count of 0, the
        encoder holds nothing for them (the reason §2.2.2.2 gives for the capacity-0
        exception), so h3learn sends nothing either.
        """
        self._blocked.pop(stream_id, None)
        unacknowledged = self._unacknowledged.pop(stream_id, 0)
        unread = any(refers_to_dynamic_table(section) for section in unread_sections)
        owed = unacknowledged or unread or not end_received
        if owed and self.max_table_capacity > 0:
            self._send(StreamCancellation(stream_id))

    # -- the decoder stream (RFC 9204 §4.4) -----------------------------------------------

    def data_to_send(self) -> bytes:
        """Bytes for the decoder stream, with an Insert Count Increment if one is due."""
        unannounced = self.table.insert_count - self.acknowledged_insert_count
        if unannounced > 0:
            self._send(InsertCountIncrement(unannounced))
            self.acknowledged_insert_count = self.table.insert_count
        data = bytes(self._out)
        self._out.clear()
        return data

    def _send(self, instruction: DecoderInstruction) -> None:
        writer = SpanWriter(record=self.recorder.enabled)
        instruction.serialize(writer)
        self._out += writer.buffer
        if self.recorder.enabled:
            record_instruction(
                self.recorder,
                "instruction_created",
                self.decoder_stream_id,
                instruction,
                writer.unit(),
                writer.field_spans(),
            )
