"""RFC 9204 §2.1.3: avoiding flow-control deadlocks (the encoder stream's QUIC credit).

QUIC lets a sender put only so many bytes on each stream (the peer's MAX_STREAM_DATA for
it) and on all its streams together (the peer's MAX_DATA), and the receiver decides when
to allow more (RFC 9000 §4.1). The QPACK encoder stream is a QUIC stream like any other,
so its instructions are held back when its credit runs out. That can lock up:

- a request's field section refers to an entry whose insert is stuck behind flow control
  on the encoder stream, so the decoder blocks the request stream (§2.2.1);
- a receiver may keep its credit for the connection (or the encoder stream) until it has
  read and released data on the blocked request stream, which in turn waits for the insert.

Neither side can move. A decoder may also simply wait for the whole of a long instruction
before it grants more credit on the encoder stream. So an encoder should not start writing
an instruction unless the credit covers all of it, on the encoder stream and on the
connection. When it does not, the field is sent without the insert: a literal, or a
reference to an entry or name that is already there, which costs field section bytes on
the request stream instead.

The encoder is sans-IO and knows nothing of QUIC: whoever carries the encoder stream passes
the credit in when it asks for a field section (`Encoder.encode(..., credit=...)`), and
the encoder spends it instruction by instruction. Without a credit (a transport with no
flow control, such as the in-memory streams) the encoder writes whatever it chooses.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class EncoderStreamCredit:
    """How many more bytes QUIC flow control lets the encoder stream carry now.

    Both numbers count the bytes already written, including those QUIC has not sent yet.
    They may be negative when more was written than the peer allows so far (those bytes
    wait in QUIC for more credit).
    """

    #: The encoder stream's own limit (the peer's MAX_STREAM_DATA for it) less what was
    #: written on it (RFC 9000 §4.1).
    stream: int
    #: The connection's limit (the peer's MAX_DATA) less what was written on every stream.
    connection: int

    @property
    def available(self) -> int:
        """The bytes an instruction may take: the smaller of the two credits."""
        return max(0, min(self.stream, self.connection))

    def spend(self, size: int) -> EncoderStreamCredit:
        """The credit after ``size`` more bytes are written on the encoder stream."""
        return EncoderStreamCredit(self.stream - size, self.connection - size)

    def shortfall(self, instruction_size: int) -> str | None:
        """RFC 9204 §2.1.3: why an instruction of this size may not be written (None: it may)."""
        if instruction_size <= self.available:
            return None
        return (
            f"its instruction takes {instruction_size} bytes and QUIC flow control lets the"
            f" encoder stream carry only {self.available} more now (stream credit"
            f" {self.stream}, connection credit {self.connection})"
        )
