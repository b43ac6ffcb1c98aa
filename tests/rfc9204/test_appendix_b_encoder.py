"""RFC 9204 Appendix B, from the encoder's side: the same choices give the same bytes.

B.1 needs no choice the strategy would not make: with no dynamic table (capacity 0) and
Huffman coding off (the appendix sends every string as it is), the normal `encode` writes
the appendix's bytes. B.2 - B.5 make choices the strategy would not (an insert nobody has
asked for yet, a Duplicate of an entry that is not draining, a Base of 0), so they are made
explicitly with `Encoder.insert`, `Encoder.duplicate` and ``encode(..., base=...)``; the
decoder's instructions of the appendix are fed back with `feed_decoder`. After each step
the encoder's table, its Known Received Count, and a decoder fed the same bytes agree with
the table the appendix shows.

The appendix does not say what the decoder advertised; 220 bytes of table and 100 blocked
streams are assumed, as in the corpus file that holds the same exchange.
"""

from __future__ import annotations

import pytest

from h3learn.qpack.decoder import Decoder
from h3learn.qpack.encoder import Encoder

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

Table = list[tuple[int, bytes, bytes]]


class Exchange:
    """The appendix's encoder, with a decoder fed everything the encoder sends."""

    def __init__(self) -> None:
        self.encoder = Encoder(huffman=False)
        self.encoder.apply_settings(220, 100)
        self.decoder = Decoder(220, 100)

    def to_decoder(self, encoder_stream: bytes) -> bytes:
        self.decoder.feed_encoder(encoder_stream)
        return encoder_stream

    def local_table(self) -> Table:
        return [(e.absolute_index, e.name, e.value) for e in self.encoder.table]

    def remote_table(self) -> Table:
        return [(e.absolute_index, e.name, e.value) for e in self.decoder.table]

    def b1(self) -> bytes:
        encoder_stream, section = self.encoder.encode(0, [(b":path", b"/index.html")])
        assert encoder_stream == b""
        return section

    def b2(self) -> tuple[bytes, bytes]:
        encoder_stream = self.to_decoder(
            self.encoder.insert(*AUTHORITY) + self.encoder.insert(*PATH)
        )
        none, section = self.encoder.encode(4, [AUTHORITY, PATH], base=0)
        assert none == b""
        self.encoder.feed_decoder(B2_DECODER)
        return encoder_stream, section

    def b3(self) -> bytes:
        encoder_stream = self.to_decoder(self.encoder.insert(*CUSTOM))
        self.encoder.feed_decoder(B3_DECODER)
        return encoder_stream

    def b4(self) -> tuple[bytes, bytes]:
        encoder_stream = self.to_decoder(self.encoder.duplicate(0))
        none, section = self.encoder.encode(8, [AUTHORITY, (b":path", b"/"), CUSTOM])
        assert none == b""
        self.encoder.feed_decoder(B4_DECODER)
        return encoder_stream, section

    def b5(self) -> bytes:
        return self.to_decoder(self.encoder.insert(*CUSTOM2))


def test_b1_literal_with_static_name_reference_and_no_dynamic_table() -> None:
    """RFC 9204 Appendix B.1: a literal with a static name reference; Base and RIC 0."""
    encoder = Encoder(huffman=False)
    encoder.apply_settings(0, 0)
    assert encoder.encode(0, [(b":path", b"/index.html")]) == (b"", B1_STREAM_0)
    assert Exchange().b1() == B1_STREAM_0


def test_b2_capacity_then_inserts_then_post_base_references() -> None:
    """RFC 9204 Appendix B.2: Set Dynamic Table Capacity precedes the first insert."""
    exchange = Exchange()
    exchange.b1()
    assert exchange.b2() == (B2_ENCODER, B2_STREAM_4)
    expected = [(0, *AUTHORITY), (1, *PATH)]
    assert exchange.local_table() == exchange.remote_table() == expected
    assert exchange.encoder.table.size == 106
    assert exchange.encoder.known_received_count == 2


def test_b3_speculative_insert_acknowledged_by_insert_count_increment() -> None:
    """RFC 9204 Appendix B.3: an insert with a literal name; Increment 1 acknowledges it."""
    exchange = Exchange()
    exchange.b1()
    exchange.b2()
    assert exchange.encoder.known_received_count == 2
    assert exchange.b3() == B3_ENCODER
    assert exchange.local_table() == exchange.remote_table()
    assert exchange.encoder.table.size == 160
    assert exchange.encoder.known_received_count == 3


def test_b4_duplicate_then_section_then_stream_cancellation() -> None:
    """RFC 9204 Appendix B.4: Duplicate relative 2; relative references from Base 4."""
    exchange = Exchange()
    exchange.b1()
    exchange.b2()
    exchange.b3()
    assert exchange.b4() == (B4_ENCODER, B4_STREAM_8)
    assert exchange.local_table() == exchange.remote_table()
    assert exchange.local_table()[-1] == (3, *AUTHORITY)
    assert exchange.encoder.table.size == 217
    # The cancellation released the section's references and acknowledged nothing.
    assert exchange.encoder.known_received_count == 3


def test_b5_insert_with_dynamic_name_reference_evicts_the_oldest_entry() -> None:
    """RFC 9204 Appendix B.5: the entry at absolute index 0 is evictable, so it goes."""
    exchange = Exchange()
    exchange.b1()
    exchange.b2()
    exchange.b3()
    exchange.b4()
    assert exchange.b5() == B5_ENCODER
    expected = [(1, *PATH), (2, *CUSTOM), (3, *AUTHORITY), (4, *CUSTOM2)]
    assert exchange.local_table() == exchange.remote_table() == expected
    assert exchange.encoder.table.size == 215


def test_insert_is_refused_while_an_unacknowledged_section_refers_to_the_oldest_entry() -> None:
    """RFC 9204 §2.1.1: after B.3, a section on stream 8 that refers to entry 0 pins it."""
    exchange = Exchange()
    exchange.b1()
    exchange.b2()
    exchange.b3()
    exchange.encoder.encode(8, [AUTHORITY])
    exchange.encoder.insert(*CUSTOM2)  # 215 of 220 bytes: nothing needs to be evicted
    with pytest.raises(ValueError, match="not evictable"):
        exchange.encoder.insert(b"a", b"b")  # 34 bytes more: entry 0 would have to go
    assert exchange.local_table()[0] == (0, *AUTHORITY)
    exchange.encoder.feed_decoder(bytes.fromhex("88"))  # Section Acknowledgment (stream 8)
    exchange.encoder.insert(b"a", b"b")
    assert exchange.local_table()[0] == (1, *PATH)
