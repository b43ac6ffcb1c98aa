"""A scenario's run: the endpoints and transport, what it keeps track of, what it records.

runner.py carries out a lesson's actions, each with its handler (handlers.py), on a
`Network`: the two `H3Connection` endpoints and what carries bytes between them
(`MemoryPair` or `QuicMemoryPair`) on one virtual clock. `Run` is the state of one run: the
current connection's network, the labels the actions gave to streams and pushes, the held
streams. `Recording` is the result: the events and what every stream name stands for. An
action the protocol refuses raises `ActionFailed`.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable
from dataclasses import dataclass, field

from h3learn.curriculum.actions import Action
from h3learn.curriculum.scenario import SideSettings
from h3learn.events import Event, EventLog
from h3learn.h3.connection import H3Connection
from h3learn.transport.memory import MemoryPair
from h3learn.transport.quic_memory import QuicMemoryPair
from h3learn.transport.quic_memory_configuration import ReceiveLimits
from h3learn.transport.virtual_clock import VirtualClock

#: The streams each side opens at start (RFC 9114 §6.2.1, RFC 9204 §4.2), by role.
ROLES = ("control", "encoder", "decoder")


class ActionFailed(Exception):
    """An action could not be carried out; ``table`` points at what was wrong, if known."""

    def __init__(self, message: str, key: str | None = None) -> None:
        super().__init__(message)
        self.key = key


@dataclass
class Recording:
    """A recorded scenario: the trace and what its names stand for."""

    events: list[Event]
    #: A stream name (a label, or a role like "client control stream") -> its stream ID.
    streams: dict[str, int] = field(default_factory=dict)
    #: A push's label -> its push ID.
    push_ids: dict[str, int] = field(default_factory=dict)
    #: For each action, the events it recorded: [start, end) in seq.
    action_ranges: list[tuple[int, int]] = field(default_factory=list)
    #: Action ids -> their index.
    action_ids: dict[str, int] = field(default_factory=dict)
    #: Where each connection of the lesson starts (seq), the first at 0 (``new_connection``).
    part_starts: list[int] = field(default_factory=lambda: [0])
    #: A label -> the connection (index into part_starts) whose stream it names.
    label_parts: dict[str, int] = field(default_factory=dict)

    def part_of(self, seq: int) -> int:
        """The connection the event ``seq`` belongs to."""
        return bisect.bisect_right(self.part_starts, seq) - 1


class Network:
    """The two endpoints and what carries bytes between them (memory or QUIC).

    Every connection of a lesson records into one log with one virtual clock, so a lesson
    in several parts (``new_connection``) is still one trace in one order.
    """

    def __init__(
        self,
        transport: str,
        client: SideSettings,
        server: SideSettings,
        log: EventLog,
        clock: VirtualClock,
    ) -> None:
        self.transport = transport
        self.clock = clock
        self.log = log
        self.memory: MemoryPair | None = None
        self.quic: QuicMemoryPair | None = None
        if transport == "memory":
            self.memory = MemoryPair.create(
                client_settings=client.settings(), server_settings=server.settings(), log=log
            )
            self.client = _configured(self.memory.client, client)
            _configured(self.memory.server, server)
        else:
            self.client = _configured(
                H3Connection(
                    is_client=True, settings=client.settings(), recorder=log.for_endpoint("client")
                ),
                client,
            )

            def make_server() -> H3Connection:
                """Called by the pair once the client's first flight has reached the server
                and TLS has selected "h3": a real server begins its HTTP/3 only then."""
                connection = H3Connection(
                    is_client=False, settings=server.settings(), recorder=log.for_endpoint("server")
                )
                return _configured(connection, server)

            self.quic = QuicMemoryPair.create(
                client=self.client,
                server=make_server,
                log=log,
                clock=clock,
                limits={"client": _receive_limits(client), "server": _receive_limits(server)},
            )

    @property
    def server(self) -> H3Connection:
        """The server's connection (over QUIC, it exists once the first `deliver` has run)."""
        if self.memory is not None:
            return self.memory.server
        assert self.quic is not None
        return self.quic.h3learn("server")

    def endpoint(self, name: str) -> H3Connection:
        return self.client if name == "client" else self.server

    def deliver(self) -> None:
        if self.memory is not None:
            self.memory.pump()
        else:
            assert self.quic is not None
            self.quic.pump()

    def wait(self, milliseconds: int) -> None:
        if self.quic is not None:
            self.quic.advance(milliseconds / 1000)
        else:
            self.clock.seconds += milliseconds / 1000

    def disconnect(self) -> None:
        if self.quic is None:
            raise ActionFailed('disconnect needs the QUIC transport (transport = "quic")')
        self.quic.disconnect()

    def pair(self) -> MemoryPair:
        if self.memory is None:
            raise ActionFailed('hold and release need the memory transport (transport = "memory")')
        return self.memory


def _configured(connection: H3Connection, side: SideSettings) -> H3Connection:
    """``connection`` with this side's encoder choices applied."""
    connection.encoder.huffman = side.get("huffman")
    connection.encoder.preferred_capacity = side.get("encoder_table_capacity")
    connection.encoder.base_choice = side.get("encoder_base")
    return connection


def _receive_limits(side: SideSettings) -> ReceiveLimits:
    """The QUIC flow-control credit this side grants at the start (RFC 9000 §4.1)."""
    return ReceiveLimits(
        max_data=side.get("quic_max_data"), max_stream_data=side.get("quic_max_stream_data")
    )


@dataclass
class Run:
    network: Network
    recording: Recording
    #: label -> (who opened it, stream ID) for request and push streams.
    labels: dict[str, int] = field(default_factory=dict)
    #: push label -> the request label it was promised on.
    promises: dict[str, str] = field(default_factory=dict)
    held: set[tuple[str, int]] = field(default_factory=set)
    #: Makes the next connection (for ``new_connection``, whose action may change its
    #: transport and settings).
    connect: Callable[[Action], Network] | None = None

    def stream(self, name: str) -> int:
        """A stream by label or role; `ActionFailed` naming what exists when unknown."""
        if name in self.recording.streams:
            return self.recording.streams[name]
        known = ", ".join(sorted(self.recording.streams))
        raise ActionFailed(f"no stream is called {name!r} (known so far: {known})")

    def labelled(self, label: str) -> int:
        if label in self.promises and label not in self.labels:
            raise ActionFailed(f"push {label!r} has no push stream yet: `respond` to it first")
        if label not in self.labels:
            known = ", ".join(sorted(self.labels)) or "none yet"
            raise ActionFailed(f"no request or push is labelled {label!r} (known: {known})")
        return self.labels[label]

    def name_stream(self, label: str, stream_id: int) -> None:
        if label in self.recording.streams:
            raise ActionFailed(f"the label {label!r} is already used")
        self.labels[label] = stream_id
        self.recording.streams[label] = stream_id
        self.recording.label_parts[label] = len(self.recording.part_starts) - 1


def name_roles(run: Run) -> None:
    """Point the role names at the current connection's streams."""
    for side in ("client", "server"):
        connection = run.network.endpoint(side)
        streams = (
            connection.control_stream_id,
            connection.encoder.encoder_stream_id,
            connection.decoder.decoder_stream_id,
        )
        for role, stream_id in zip(ROLES, streams, strict=True):
            assert stream_id is not None
            run.recording.streams[f"{side} {role} stream"] = stream_id
