"""In-memory ideal streams: two HTTP/3 endpoints wired together without QUIC.

RFC 9114 §6 leaves reliable, ordered delivery of each stream to QUIC; this transport plays
QUIC's part perfectly and deterministically: every byte one side sends on a stream arrives,
in order, at the other side, and the same scenario always gives the same trace, byte for
byte. It makes no protocol decisions: it only carries `SendStreamData`, `ResetStream`,
`StopSending` and `CloseConnection` actions across.

Real networks deliver different streams' bytes in any order relative to each other. A
scenario can show what that does by holding back one stream (`hold`), for example the QPACK
encoder stream, so that a field section arrives before the inserts it needs and the decoder
must block (RFC 9204 §2.2.1), then releasing it (`release`).

Deliberate simplification of docs/events.md ("Category transport"): being no QUIC, it
records no transport events; the trace holds only what the two endpoints record.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from h3learn.events import EventLog
from h3learn.h3.actions import Action, CloseConnection, ResetStream, SendStreamData, StopSending
from h3learn.h3.connection import H3Connection
from h3learn.h3.http_events import H3Event
from h3learn.h3.settings import Settings

ENDPOINTS = ("client", "server")


@dataclass
class _Delivery:
    """One action on its way from ``sender`` to the other endpoint."""

    sender: str
    action: Action


@dataclass
class MemoryPair:
    """A client and a server connection and the ideal network between them."""

    client: H3Connection
    server: H3Connection
    log: EventLog
    #: Events each side's application received, in order.
    received: dict[str, list[H3Event]] = field(default_factory=lambda: {e: [] for e in ENDPOINTS})
    _in_flight: deque[_Delivery] = field(default_factory=deque)
    _held: dict[tuple[str, int], list[_Delivery]] = field(default_factory=dict)
    _clock: list[float] = field(default_factory=lambda: [0.0])
    #: False when the caller passed its own log: `advance` cannot move that log's clock.
    _owns_clock: bool = True

    @classmethod
    def create(
        cls,
        client_settings: Settings | None = None,
        server_settings: Settings | None = None,
        log: EventLog | None = None,
        initiate: bool = True,
    ) -> MemoryPair:
        """Two connected endpoints sharing one event log with a virtual clock."""
        clock = [0.0]
        owns_clock = log is None
        if log is None:
            log = EventLog(clock=lambda: clock[0])
        client = H3Connection(
            is_client=True, settings=client_settings, recorder=log.for_endpoint("client")
        )
        server = H3Connection(
            is_client=False, settings=server_settings, recorder=log.for_endpoint("server")
        )
        pair = cls(client=client, server=server, log=log, _clock=clock, _owns_clock=owns_clock)
        if initiate:
            client.initiate()
            server.initiate()
        return pair

    def endpoint(self, name: str) -> H3Connection:
        return self.client if name == "client" else self.server

    def peer_of(self, name: str) -> str:
        return "server" if name == "client" else "client"

    # -- scenario controls -----------------------------------------------------------------

    def hold(self, sender: str, stream_id: int) -> None:
        """Keep back everything ``sender`` writes on ``stream_id`` until `release`."""
        self._held.setdefault((sender, stream_id), [])

    def release(self, sender: str, stream_id: int) -> list[H3Event]:
        """Deliver what was held on that stream, in order, and stop holding it."""
        held = self._held.pop((sender, stream_id), [])
        self._in_flight.extendleft(reversed(held))
        return self.pump()

    def advance(self, milliseconds: float) -> None:
        """Move the virtual clock on (every event is stamped with it)."""
        if not self._owns_clock:
            raise ValueError("this pair records into a log with its own clock; advance that one")
        self._clock[0] += milliseconds

    # -- delivery ----------------------------------------------------------------------------

    def pump(self, max_rounds: int = 10_000) -> list[H3Event]:
        """Carry actions across until both sides are quiet; returns the events delivered."""
        delivered: list[H3Event] = []
        for _ in range(max_rounds):
            self._collect()
            if not self._in_flight:
                return delivered
            delivery = self._in_flight.popleft()
            key = (delivery.sender, _stream_of(delivery.action))
            if key in self._held:
                self._held[key].append(delivery)
                continue
            receiver_name = self.peer_of(delivery.sender)
            events = self._deliver(self.endpoint(receiver_name), delivery.action)
            self.received[receiver_name].extend(events)
            delivered.extend(events)
        raise RuntimeError(f"the endpoints were still talking after {max_rounds} deliveries")

    def _collect(self) -> None:
        for name in ENDPOINTS:
            for action in self.endpoint(name).actions_to_send():
                self._in_flight.append(_Delivery(name, action))

    @staticmethod
    def _deliver(receiver: H3Connection, action: Action) -> list[H3Event]:
        if isinstance(action, SendStreamData):
            return receiver.receive_stream_data(action.stream_id, action.data, action.end_stream)
        if isinstance(action, ResetStream):
            return receiver.receive_stream_reset(action.stream_id, action.error_code)
        if isinstance(action, StopSending):
            return receiver.receive_stop_sending(action.stream_id, action.error_code)
        assert isinstance(action, CloseConnection)
        return receiver.connection_closed(action.error_code, action.reason)


def _stream_of(action: Action) -> int:
    return -1 if isinstance(action, CloseConnection) else action.stream_id
