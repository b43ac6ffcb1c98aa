"""A lesson's scenario as data: the transport and each side's settings, checked key by key.

The ``[scenario]`` table chooses the transport (``memory`` or ``quic``) and each side's
settings (``[scenario.client]``, ``[scenario.server]``): `SETTING_KEYS` lists them with their
types, defaults and a sentence for docs/lessons.md: the SETTINGS the side announces, how its
QPACK encoder behaves and, over QUIC, the flow-control credit it grants. A what-if rerun or a
lesson's ``[[variant]]`` changes them per side (`Overrides`).

The script the scenario runs, its ``[[action]]`` tables, is read by actions.py; runner.py
records both into the lesson's trace.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from h3learn.curriculum.source import Table
from h3learn.h3.settings import Settings
from h3learn.wire.varint import VARINT_MAX

SIDES = ("client", "server")
TRANSPORTS = ("memory", "quic")

#: Settings changed per side (what-if reruns, variants): side -> setting -> value.
Overrides = dict[str, dict[str, Any]]

#: The settings keys of ``[scenario.client]`` / ``[scenario.server]``: name -> (type, default,
#: what it is). The first six are SETTINGS the side announces (RFC 9114 §7.2.4.1, RFC 9204
#: §5); then three steer its QPACK encoder, and the ``quic_`` ones its QUIC (QUIC_KEYS).
SETTING_KEYS: dict[str, tuple[type, Any, str]] = {
    "qpack_max_table_capacity": (
        int,
        0,
        "SETTINGS_QPACK_MAX_TABLE_CAPACITY this side announces: the dynamic table its decoder"
        " allows (RFC 9204 §5)",
    ),
    "qpack_blocked_streams": (
        int,
        0,
        "SETTINGS_QPACK_BLOCKED_STREAMS: how many streams its decoder lets wait (RFC 9204 §5)",
    ),
    "max_field_section_size": (
        int,
        None,
        "SETTINGS_MAX_FIELD_SECTION_SIZE (RFC 9114 §4.2.2); absent: unlimited",
    ),
    "enable_connect_protocol": (bool, False, "SETTINGS_ENABLE_CONNECT_PROTOCOL (RFC 9220 §3)"),
    "h3_datagram": (bool, False, "SETTINGS_H3_DATAGRAM (RFC 9297 §2.1.1)"),
    "extra_settings": (
        list,
        [],
        "more [identifier, value] pairs sent as they are: reserved (GREASE) ones, unknown"
        " ones, or an HTTP/2 one to cause H3_SETTINGS_ERROR (RFC 9114 §7.2.4.1)",
    ),
    "huffman": (
        bool,
        True,
        "whether this side's QPACK encoder Huffman-codes strings when shorter (RFC 9204 §4.1.2)",
    ),
    "encoder_base": (
        str,
        "shortest",
        'how this side\'s QPACK encoder picks the Base (RFC 9204 §4.5.1.2): "shortest" (the'
        ' shortest section) or "before_inserts" (the insert count before the section\'s own'
        " inserts, so that those are referenced with post-base indexes, §3.2.6)",
    ),
    "encoder_table_capacity": (
        int,
        None,
        "the dynamic table capacity this side's encoder chooses, at most the peer's maximum"
        " (RFC 9204 §3.2.3); absent: the peer's maximum",
    ),
    "quic_max_stream_data": (
        int,
        None,
        "QUIC transport only: the flow-control credit this side grants the peer on each"
        " stream at the start, in bytes (the initial_max_stream_data transport parameters,"
        " RFC 9000 §4.1, §18.2), raised as it reads; absent: 1 MiB",
    ),
    "quic_max_data": (
        int,
        None,
        "QUIC transport only: the credit this side grants the peer for the whole connection"
        " at the start (initial_max_data, RFC 9000 §4.1), raised as it reads; absent: 1 MiB",
    ),
}
#: The settings that only the QUIC transport has (the memory transport has no flow control).
QUIC_KEYS = ("quic_max_stream_data", "quic_max_data")
NEEDS_QUIC = 'needs the QUIC transport (transport = "quic"): memory has no flow control'


@dataclass(frozen=True, slots=True)
class SideSettings:
    """One side's configuration: what it announces and how its QPACK encoder behaves."""

    values: dict[str, Any] = field(default_factory=dict)

    def get(self, key: str) -> Any:
        return self.values.get(key, SETTING_KEYS[key][1])

    def settings(self) -> Settings:
        """The `Settings` this side announces in its SETTINGS frame."""
        return Settings(
            qpack_max_table_capacity=self.get("qpack_max_table_capacity"),
            max_field_section_size=self.get("max_field_section_size"),
            qpack_blocked_streams=self.get("qpack_blocked_streams"),
            enable_connect_protocol=self.get("enable_connect_protocol"),
            h3_datagram=self.get("h3_datagram"),
            ignored=tuple((pair[0], pair[1]) for pair in self.get("extra_settings")),
        )

    def with_overrides(self, overrides: dict[str, Any]) -> SideSettings:
        return SideSettings(self.values | overrides)

    def quic_keys(self) -> list[str]:
        """The QUIC-only settings given (an error on the memory transport)."""
        return [key for key in QUIC_KEYS if self.values.get(key) is not None]


def describe_overrides(overrides: Overrides) -> str:
    """Changed settings in words, a setting both sides share named once:
    "huffman = false, client qpack_blocked_streams = 0"."""
    client, server = overrides.get("client", {}), overrides.get("server", {})
    shared = {key: value for key, value in client.items() if server.get(key, object()) == value}
    parts = [f"{key} = {_shown(value)}" for key, value in sorted(shared.items())]
    for side, values in (("client", client), ("server", server)):
        parts += [
            f"{side} {key} = {_shown(value)}"
            for key, value in sorted(values.items())
            if key not in shared
        ]
    return ", ".join(parts)


def _shown(value: Any) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


def check_setting(key: str, value: Any) -> str | None:
    """Why ``value`` cannot be setting ``key`` (None when it can)."""
    if key not in SETTING_KEYS:
        return f"unknown setting (known: {', '.join(SETTING_KEYS)})"
    kind = SETTING_KEYS[key][0]
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        return f"must be {'true or false' if kind is bool else kind.__name__}, not {value!r}"
    if isinstance(value, int) and value < 0:
        return f"must not be negative, not {value}"
    if isinstance(value, int) and value > VARINT_MAX:
        return f"{value} does not fit a varint: at most 2^62-1 (RFC 9000 §16)"
    if key == "encoder_base" and value not in ("shortest", "before_inserts"):
        return f'must be "shortest" or "before_inserts", not {value!r}'
    if isinstance(value, list):
        for pair in value:
            good = isinstance(pair, list) and len(pair) == 2
            if not good or not all(isinstance(x, int) and not isinstance(x, bool) for x in pair):
                return f"items are [identifier, value] pairs of integers, not {pair!r}"
            if not all(0 <= x <= VARINT_MAX for x in pair):
                return (
                    f"{pair!r}: an identifier and a value are varints, 0 to 2^62-1"
                    " (RFC 9114 §7.2.4.1, RFC 9000 §16)"
                )
    return None


def capacity_problem(side: SideSettings, peer: SideSettings) -> str | None:
    """Why ``side``'s encoder cannot choose its ``encoder_table_capacity`` (None if it can).

    RFC 9204 §3.2.3: the encoder MUST NOT set a capacity above the decoder's maximum, the
    peer's SETTINGS_QPACK_MAX_TABLE_CAPACITY. Refused here rather than silently lowered, so
    that a what-if's title never names a capacity its trace does not use.
    """
    chosen = side.get("encoder_table_capacity")
    maximum = peer.get("qpack_max_table_capacity")
    if chosen is None or chosen <= maximum:
        return None
    return (
        f"{chosen} is above the peer's qpack_max_table_capacity of {maximum}: an encoder"
        " MUST NOT set a capacity beyond it (RFC 9204 §3.2.3)"
    )


def read_side(table: Table | None) -> SideSettings:
    if table is None:
        return SideSettings()
    values: dict[str, Any] = {}
    for key in table.data:
        problem = check_setting(key, table.data[key])
        if problem is not None:
            raise table.error(key, problem)
        values[key] = table.raw(key)
    return SideSettings(values)


@dataclass(frozen=True, slots=True)
class Scenario:
    transport: str = "memory"
    #: Let SETTINGS and the QPACK stream types reach each side before the first action.
    exchange_settings_first: bool = True
    client: SideSettings = field(default_factory=SideSettings)
    server: SideSettings = field(default_factory=SideSettings)

    def side(self, name: str) -> SideSettings:
        return self.client if name == "client" else self.server


def read_transport(table: Table, key: str) -> str:
    """``memory`` (the default) or ``quic``."""
    transport: str = table.text(key, "memory")
    if transport not in TRANSPORTS:
        raise table.error(key, f"must be one of {', '.join(TRANSPORTS)}, not {transport!r}")
    return transport


def read_scenario(table: Table | None) -> Scenario:
    if table is None:
        return Scenario()
    scenario = Scenario(
        transport=read_transport(table, "transport"),
        exchange_settings_first=table.flag("exchange_settings_first", True),
        client=read_side(table.table("client")),
        server=read_side(table.table("server")),
    )
    for name, peer in zip(SIDES, reversed(SIDES), strict=True):
        quic_only = scenario.side(name).quic_keys()
        side_table = table.table(name)
        if quic_only and scenario.transport != "quic" and side_table is not None:
            raise side_table.error(quic_only[0], NEEDS_QUIC)
        problem = capacity_problem(scenario.side(name), scenario.side(peer))
        if problem is not None and side_table is not None:
            raise side_table.error("encoder_table_capacity", problem)
    table.finish()
    return scenario
