"""RFC 9000 §12.2, RFC 8999 §5: the network between the two endpoints of the in-memory QUIC pair.

Each endpoint's QUIC hands over the UDP datagrams it wants sent (`datagrams_to_send`, each
carrying one or more coalesced QUIC packets, RFC 9000 §12.2); the network keeps them in
flight for a fixed one-way delay and then gives each to the other endpoint
(`receive_datagram`). Nothing is lost, reordered or duplicated, so a scenario always runs
the same way, until `disconnect` cuts the network: from then on every datagram is lost,
and neither endpoint is told (RFC 9114 §5.4).

No socket is ever opened: the endpoints only pretend to have addresses (`ADDRESSES`). A
server learns where its client is from the client's first datagram, so until that has
arrived it has nowhere to send (`has_peer_address`).

Every datagram sent is recorded as a ``transport`` ``datagram_sent`` event: its length and
the form of its first packet's header, read from the one bit every QUIC version keeps in
place (RFC 8999 §5.1 long, §5.2 short).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Any

from aioquic.quic.connection import QuicConnection

from h3learn.events import ENDPOINTS, Recorder

#: Where the endpoints pretend to be. No socket is ever opened.
ADDRESSES = {"client": ("127.0.0.1", 50000), "server": ("127.0.0.1", 4433)}

#: RFC 8999 §5.1: the most significant bit of a QUIC packet's first byte is the header form.
HEADER_FORM_BIT = 0x80


def peer_of(name: str) -> str:
    """The other endpoint: "server" for "client", and the other way round."""
    return "server" if name == "client" else "client"


@dataclass
class Datagram:
    """A UDP datagram in flight: when it arrives, where, and its bytes."""

    arrival: float
    receiver: str
    data: bytes


@dataclass
class VirtualNetwork:
    """The datagrams in flight between the client and the server, earliest arrival first."""

    #: Seconds each datagram takes from one endpoint to the other.
    one_way_delay: float
    #: Where each endpoint records the datagrams it sends.
    recorders: dict[str, Recorder]
    in_flight: deque[Datagram] = field(default_factory=deque)
    #: Endpoints that know where to send: the client from `connect`, the server once the
    #: client's first datagram has told it the client's address.
    has_peer_address: set[str] = field(default_factory=lambda: {"client"})
    #: False once `disconnect` has cut the network: every datagram is lost.
    up: bool = True

    def collect(self, quic: dict[str, QuicConnection], now: float) -> None:
        """Take every datagram the endpoints want sent now, and put it in flight."""
        for name in ENDPOINTS:
            if name not in self.has_peer_address:
                continue
            receiver = peer_of(name)
            for data, _address in quic[name].datagrams_to_send(now=now):
                self._record_datagram(name, data)
                if self.up:
                    self.in_flight.append(Datagram(now + self.one_way_delay, receiver, data))

    def next_arrival(self) -> float | None:
        """When the next datagram arrives, if one is in flight."""
        return self.in_flight[0].arrival if self.in_flight else None

    def deliver_due(self, quic: dict[str, QuicConnection], now: float) -> None:
        """Hand every datagram whose arrival time has come to its receiver."""
        while self.in_flight and self.in_flight[0].arrival <= now:
            datagram = self.in_flight.popleft()
            sender = peer_of(datagram.receiver)
            quic[datagram.receiver].receive_datagram(datagram.data, ADDRESSES[sender], now=now)
            self.has_peer_address.add(datagram.receiver)

    def disconnect(self) -> None:
        """The network fails: what is in flight is lost, and so is every datagram from now on."""
        self.up = False
        self.in_flight.clear()

    def _record_datagram(self, name: str, data: bytes) -> None:
        recorder = self.recorders[name]
        if not recorder.enabled:
            return
        header_form = "long" if data[0] & HEADER_FORM_BIT else "short"
        peer = peer_of(name)
        facts: dict[str, Any] = {"length": len(data), "first_packet_header": header_form}
        lost = ""
        if not self.up:
            facts["lost"] = True
            lost = ", lost: the network is down"
        recorder.record(
            category="transport",
            name="datagram_sent",
            stream_id=None,
            data=facts,
            # RFC 8999 §5.1 or §5.2: the invariant layout of the first packet's header.
            rfc=("9000#12.2", "8999#5.1" if header_form == "long" else "8999#5.2"),
            summary=(
                f"{name} → {peer}: UDP datagram of {len(data)} bytes ({header_form} header{lost})"
            ),
        )
