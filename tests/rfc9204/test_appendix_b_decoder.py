"""RFC 9204 Appendix B, from the decoder's side, step by step.

The appendix shows one exchange: an encoded field section with a static name reference
(B.1), the table filled and referenced with post-base indexes (B.2), a speculative insert
(B.3), a Duplicate whose packet is delayed while the stream that needs it is cancelled
(B.4), and an insert that evicts the oldest entry (B.5). Each test replays the steps before
its own, feeds its step's bytes, and checks what the appendix shows: the fields, the table
(absolute index, name, value, size), the insert count and the decoder-stream bytes.

The appendix does not say what the decoder advertised; 220 bytes of table (the capacity
the encoder sets) and 100 blocked streams are assumed, as in the corpus file that holds
the same exchange (tests/vectors/qifs-encoded/examples/examples.out.220.100.1).
"""

from __future__ import annotations

from h3learn.events import EventLog
from h3learn.qpack.decoder import DecodedFieldSection, Decoder

B1_STREAM_0 = bytes.fromhex("0000510b2f696e6465782e68746d6c")
B2_ENCODER = bytes.fromhex(
    "3fbd01"  # Set Dynamic Table Capacity 220
    "c00f7777772e6578616d706c652e636f6d"  # Insert With Name Reference, static 0
    "c10c2f73616d706c652f70617468"  # Insert With Name Reference, static 1
)
B2_STREAM_4 = bytes.fromhex("03811011")
B2_DECODER = bytes.fromhex("84")  # Section Acknowledgment (stream 4)
B3_ENCODER = bytes.fromhex("4a637573746f6d2d6b65790c637573746f6d2d76616c7565")
B3_DECODER = bytes.fromhex("01")  # Insert Count Increment (1)
B4_ENCODER = bytes.fromhex("02")  # Duplicate (relative 2)
B4_STREAM_8 = bytes.fromhex("050080c181")
B4_DECODER = bytes.fromhex("48")  # Stream Cancellation (stream 8)
B5_ENCODER = bytes.fromhex("810d637573746f6d2d76616c756532")

AUTHORITY = (b":authority", b"www.example.com")
PATH = (b":path", b"/sample/path")
CUSTOM = (b"custom-key", b"custom-value")
CUSTOM2 = (b"custom-key", b"custom-value2")


def new_decoder(log: EventLog | None = None) -> Decoder:
    recorder = log.for_endpoint("client") if log is not None else None
    return Decoder(max_table_capacity=220, blocked_streams=100, recorder=recorder)


def table(decoder: Decoder) -> list[tuple[int, bytes, bytes, int]]:
    return [(e.absolute_index, e.name, e.value, e.size) for e in decoder.table]


def decoded(section: DecodedFieldSection | None) -> DecodedFieldSection:
    assert section is not None, "the field section was blocked"
    return section


def replay_b1(decoder: Decoder) -> None:
    decoder.decode(0, B1_STREAM_0)
    decoder.data_to_send()


def replay_b2(decoder: Decoder) -> None:
    replay_b1(decoder)
    decoder.feed_encoder(B2_ENCODER)
    decoder.decode(4, B2_STREAM_4)
    decoder.data_to_send()


def replay_b3(decoder: Decoder) -> None:
    replay_b2(decoder)
    decoder.feed_encoder(B3_ENCODER)
    decoder.data_to_send()


def replay_b4(decoder: Decoder) -> None:
    replay_b3(decoder)
    decoder.decode(8, B4_STREAM_8)
    decoder.cancel_stream(8)
    decoder.data_to_send()
    decoder.feed_encoder(B4_ENCODER)


# -- B.1 ----------------------------------------------------------------------------------


def test_b1_literal_field_line_with_static_name_reference() -> None:
    decoder = new_decoder()
    section = decoded(decoder.decode(0, B1_STREAM_0))
    assert section.headers == [(b":path", b"/index.html")]
    assert (section.required_insert_count, section.base) == (0, 0)
    assert section.never_indexed == [False]
    assert table(decoder) == []
    assert decoder.data_to_send() == b""  # Required Insert Count 0: nothing to acknowledge


# -- B.2 ----------------------------------------------------------------------------------


def test_b2_encoder_stream_sets_capacity_and_inserts_two_entries() -> None:
    decoder = new_decoder()
    replay_b1(decoder)
    assert decoder.feed_encoder(B2_ENCODER).sections == []
    assert decoder.table.capacity == 220
    assert table(decoder) == [(0, *AUTHORITY, 57), (1, *PATH, 49)]
    assert decoder.table.size == 106
    assert decoder.table.insert_count == 2


def test_b2_post_base_references_decode_and_are_acknowledged() -> None:
    decoder = new_decoder()
    replay_b1(decoder)
    decoder.feed_encoder(B2_ENCODER)
    section = decoded(decoder.decode(4, B2_STREAM_4))
    assert section.headers == [AUTHORITY, PATH]
    assert (section.required_insert_count, section.base) == (2, 0)
    assert decoder.data_to_send() == B2_DECODER
    assert decoder.data_to_send() == b""  # the acknowledgment covered both inserts


# -- B.3 ----------------------------------------------------------------------------------


def test_b3_speculative_insert_is_announced_with_an_insert_count_increment() -> None:
    decoder = new_decoder()
    replay_b2(decoder)
    assert decoder.feed_encoder(B3_ENCODER).sections == []
    assert table(decoder) == [(0, *AUTHORITY, 57), (1, *PATH, 49), (2, *CUSTOM, 54)]
    assert decoder.table.size == 160
    assert decoder.table.insert_count == 3
    assert decoder.data_to_send() == B3_DECODER


# -- B.4 ----------------------------------------------------------------------------------


def test_b4_section_ahead_of_its_duplicate_is_blocked_then_cancelled() -> None:
    decoder = new_decoder()
    replay_b3(decoder)
    # The encoder-stream packet with the Duplicate is delayed: Required Insert Count 4 is
    # more than the decoder's 3, so stream 8 waits.
    assert decoder.decode(8, B4_STREAM_8) is None
    assert decoder.blocked_streams == [8]
    decoder.cancel_stream(8)
    assert decoder.blocked_streams == []
    assert decoder.data_to_send() == B4_DECODER
    # The Duplicate arrives at last; the cancelled section is not decoded.
    assert decoder.feed_encoder(B4_ENCODER).sections == []
    assert table(decoder) == [
        (0, *AUTHORITY, 57),
        (1, *PATH, 49),
        (2, *CUSTOM, 54),
        (3, *AUTHORITY, 57),
    ]
    assert decoder.table.size == 217
    assert decoder.table.insert_count == 4


def test_b4_without_the_cancellation_the_duplicate_unblocks_stream_8() -> None:
    decoder = new_decoder()
    replay_b3(decoder)
    assert decoder.decode(8, B4_STREAM_8) is None
    assert decoder.data_to_send() == b""
    unblocked = decoder.feed_encoder(B4_ENCODER).sections
    assert [section.stream_id for section in unblocked] == [8]
    section = unblocked[0]
    # Base 4: relative 0 is absolute 3 (the duplicate), static 1 is :path=/, relative 1
    # is absolute 2.
    assert section.headers == [AUTHORITY, (b":path", b"/"), CUSTOM]
    assert (section.required_insert_count, section.base) == (4, 4)
    assert decoder.data_to_send() == bytes.fromhex("88")  # Section Acknowledgment (8)


# -- B.5 ----------------------------------------------------------------------------------


def test_b5_insert_with_dynamic_name_reference_evicts_the_oldest_entry() -> None:
    decoder = new_decoder()
    replay_b4(decoder)
    assert decoder.feed_encoder(B5_ENCODER).sections == []
    assert table(decoder) == [
        (1, *PATH, 49),
        (2, *CUSTOM, 54),
        (3, *AUTHORITY, 57),
        (4, *CUSTOM2, 55),
    ]
    assert decoder.table.size == 215
    assert decoder.table.insert_count == 5
    # The appendix leaves the last two inserts unacknowledged; h3learn announces them
    # when asked for decoder-stream bytes (RFC 9204 §2.2.2.3 leaves the timing open).
    assert decoder.data_to_send() == bytes.fromhex("02")


# -- the whole exchange, as events ----------------------------------------------------------


def test_whole_exchange_is_recorded_with_the_bytes_of_every_step() -> None:
    log = EventLog()
    decoder = new_decoder(log)
    decoder.decode(0, B1_STREAM_0)
    decoder.feed_encoder(B2_ENCODER)
    decoder.decode(4, B2_STREAM_4)
    stream_b2 = decoder.data_to_send()
    decoder.feed_encoder(B3_ENCODER)
    stream_b3 = decoder.data_to_send()
    decoder.decode(8, B4_STREAM_8)
    decoder.cancel_stream(8)
    stream_b4 = decoder.data_to_send()
    decoder.feed_encoder(B4_ENCODER)
    decoder.feed_encoder(B5_ENCODER)
    assert (stream_b2, stream_b3, stream_b4) == (B2_DECODER, B3_DECODER, B4_DECODER)

    def raw_of(name: str) -> bytes:
        return b"".join(event.raw for event in log.events if event.name == name)

    assert raw_of("instruction_parsed") == B2_ENCODER + B3_ENCODER + B4_ENCODER + B5_ENCODER
    assert raw_of("instruction_created") == B2_DECODER + B3_DECODER + B4_DECODER
    assert raw_of("headers_decoded") == B1_STREAM_0 + B2_STREAM_4
    assert [e.data["instruction_type"] for e in log.events if e.name == "instruction_parsed"] == [
        "set_dynamic_table_capacity",
        "insert_with_name_reference",
        "insert_with_name_reference",
        "insert_without_name_reference",
        "duplicate",
        "insert_with_name_reference",
    ]
    blocked = [e for e in log.events if e.name == "stream_state_updated"]
    assert [(e.stream_id, e.data["state"], e.raw) for e in blocked] == [(8, "blocked", B4_STREAM_8)]
    evicted = [e for e in log.events if e.data.get("update_type") == "evicted"]
    assert [[entry["index"] for entry in e.data["entries"]] for e in evicted] == [[0]]
    assert {event.endpoint for event in log.events} == {"client"}
    assert [event.seq for event in log.events] == list(range(len(log.events)))
