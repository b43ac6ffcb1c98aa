"""RFC 9204 §2.1.4: what the encoder knows the decoder has received and finished with.

The encoder learns it from the decoder stream (§4.4), and needs it for two rules:

- an entry may be evicted only once its insertion is acknowledged and no field section
  still awaiting acknowledgment refers to it (§2.1.1);
- a section whose Required Insert Count is above the Known Received Count may block the
  decoder, and only so many streams may be blocked at once (§2.1.2).

Three decoder instructions move it forward:

    Section Acknowledgment (§4.4.1)  the oldest unacknowledged section on a stream was
                                     decoded: its references are released, and the Known
                                     Received Count rises to its Required Insert Count
    Stream Cancellation (§4.4.2)     the decoder abandoned a stream: all its sections'
                                     references are released, and a section sent on it
                                     later is never decoded (see `is_abandoned`)
    Insert Count Increment (§4.4.3)  the decoder has received that many more inserts

An instruction that cannot be true (an acknowledgment with nothing to acknowledge, an
increment of 0 or beyond the inserts sent) is a QPACK_DECODER_STREAM_ERROR.
"""

from __future__ import annotations

from collections import Counter, deque
from dataclasses import dataclass

from h3learn.qpack.errors import DecoderStreamError

#: How many abandoned streams the encoder remembers, the most recent ones.
ABANDONED_REMEMBERED = 256


@dataclass(slots=True)
class UnacknowledgedSection:
    """A field section sent on a stream and not yet acknowledged (RFC 9204 §2.1.4)."""

    required_insert_count: int
    referenced: tuple[int, ...]


class Acknowledgments:
    """The encoder's record of the sections it sent and what the decoder has acknowledged."""

    def __init__(self) -> None:
        #: RFC 9204 §2.1.4: how many inserts the decoder has acknowledged.
        self.known_received_count = 0
        #: stream id -> its sections awaiting acknowledgment, oldest first.
        self.unacknowledged: dict[int, deque[UnacknowledgedSection]] = {}
        #: absolute index -> how many unacknowledged sections refer to that entry.
        self.reference_counts: Counter[int] = Counter()
        #: The streams the decoder abandoned most recently (Stream Cancellation), oldest
        #: first; at most ABANDONED_REMEMBERED (a dict used as an ordered set).
        self.abandoned: dict[int, None] = {}

    def section_sent(
        self, stream_id: int, required_insert_count: int, referenced: set[int]
    ) -> None:
        """A section referring to the dynamic table went out on ``stream_id``."""
        pending = UnacknowledgedSection(required_insert_count, tuple(sorted(referenced)))
        self.unacknowledged.setdefault(stream_id, deque()).append(pending)
        self.reference_counts.update(pending.referenced)

    def blocking_streams(self, insert_count: int) -> set[int]:
        """Streams with a section that needs inserts not yet known to be received."""
        if self.known_received_count == insert_count:
            return set()  # every insert is known to be received: nothing can block
        return {
            stream_id
            for stream_id, sections in self.unacknowledged.items()
            if any(s.required_insert_count > self.known_received_count for s in sections)
        }

    def is_referenced(self, absolute_index: int) -> bool:
        """Does a section still awaiting acknowledgment refer to this entry?"""
        return bool(self.reference_counts[absolute_index])

    def sections_awaiting(self) -> int:
        """How many sections, on all streams, are not acknowledged yet."""
        return sum(len(s) for s in self.unacknowledged.values())

    def acknowledge_section(self, stream_id: int) -> None:
        """RFC 9204 §4.4.1: the oldest unacknowledged section on the stream was decoded."""
        sections = self.unacknowledged.get(stream_id)
        if not sections:
            raise DecoderStreamError(
                f"Section Acknowledgment for stream {stream_id}, which has no field section"
                " awaiting acknowledgment",
                "9204#4.4.1",
            )
        section = sections.popleft()
        if not sections:
            del self.unacknowledged[stream_id]
        self._release(section)
        if section.required_insert_count > self.known_received_count:
            self.known_received_count = section.required_insert_count

    def cancel_stream(self, stream_id: int) -> None:
        """RFC 9204 §4.4.2: the decoder abandoned the stream; its references are released."""
        self.abandoned[stream_id] = None
        if len(self.abandoned) > ABANDONED_REMEMBERED:
            del self.abandoned[next(iter(self.abandoned))]
        for section in self.unacknowledged.pop(stream_id, ()):
            self._release(section)

    def is_abandoned(self, stream_id: int) -> bool:
        """Did the decoder abandon this stream? Then it decodes no section sent on it.

        A section can still be sent after the Stream Cancellation: the peer's reset or
        STOP_SENDING for the stream may not have arrived yet. Such a section would never be
        acknowledged, so a reference in it would keep its entry from eviction, and hold one
        of the blocked-stream slots, for the rest of the connection. Only the most recent
        cancellations are remembered (ABANDONED_REMEMBERED): that moment is short, and a
        peer naming stream after stream cannot make the encoder's memory grow.
        """
        return stream_id in self.abandoned

    def increment_insert_count(self, increment: int, insert_count: int) -> None:
        """RFC 9204 §4.4.3: the decoder has received ``increment`` more of ``insert_count``."""
        if increment == 0:
            raise DecoderStreamError("Insert Count Increment of 0", "9204#4.4.3")
        if self.known_received_count + increment > insert_count:
            raise DecoderStreamError(
                f"Insert Count Increment {increment} raises the Known Received Count to"
                f" {self.known_received_count + increment}, beyond the"
                f" {insert_count} inserts sent",
                "9204#4.4.3",
            )
        self.known_received_count += increment

    def _release(self, section: UnacknowledgedSection) -> None:
        counts = self.reference_counts
        for absolute in section.referenced:
            counts[absolute] -= 1
            if counts[absolute] <= 0:
                del counts[absolute]
