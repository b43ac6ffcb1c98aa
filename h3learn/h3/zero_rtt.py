"""RFC 9114 §7.2.4.2: SETTINGS on a resumed connection that sends 0-RTT data.

On a new connection a client knows nothing of the server's settings and starts from the
defaults (RFC 9114 §7.2.4.2). When it resumes an earlier connection with a TLS session
ticket, QUIC lets it send application data in its very first flight, 0-RTT, before the
server has said anything (RFC 9001 §4.6 and RFC 9000 §7.4.1 for the
transport side). HTTP/3 then needs the
server's settings before they can arrive, so the client uses the ones the server announced
on the connection that gave it the ticket: the *remembered* settings. Everything the client
sends in 0-RTT (its QPACK table use, the size of its field sections, an extended CONNECT)
complies with them.

That only works if the server, once it accepts the 0-RTT data, still lives by those values:

- the server decides whether to accept 0-RTT knowing the remembered settings; if its
  current settings could be broken by a client that follows the remembered ones, it must
  refuse 0-RTT (the client then starts again from the defaults, as on a 1-RTT connection);
- a server that accepted 0-RTT may announce different settings, but none that *reduces* a
  limit or *changes* a value the client's 0-RTT data may already rely on, and it must list
  every setting that differs from its default;
- the client checks the server's SETTINGS frame against what it remembered; a frame that
  breaks either rule is a connection error of type H3_SETTINGS_ERROR.

RFC 9204 §3.2.3 is stricter for one setting, SETTINGS_QPACK_MAX_TABLE_CAPACITY: a remembered
non-zero value must come back unchanged (not even larger), and any other value, or leaving
it out, is QPACK_DECODER_STREAM_ERROR, because the client's encoder may already have set the
table's capacity from it. Where both documents cover the same mistake (leaving out a
remembered capacity), this project reports the more specific QPACK code.

What "might be violated" means for each setting the project understands:

    setting                    remembered value        the server may not announce
    QPACK_MAX_TABLE_CAPACITY   non-zero                anything but the same value (RFC 9204)
    QPACK_BLOCKED_STREAMS      n                       less than n
    MAX_FIELD_SECTION_SIZE     n (or unlimited)        less than n (any limit at all)
    ENABLE_CONNECT_PROTOCOL    1                       0
    H3_DATAGRAM                1                       0

Reserved and unknown identifiers carry no meaning, so nothing about them is checked.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from h3learn.h3.errors import ErrorCode
from h3learn.h3.settings import SettingId, Settings, known_setting
from h3learn.qpack.errors import QpackErrorCode

SECTION = "9114#7.2.4.2"
QPACK_SECTION = "9204#3.2.3"


@dataclass(frozen=True, slots=True)
class Incompatibility:
    """Why announced settings break the remembered ones: the error code, the rule, the section."""

    code: int
    rule: str
    rfc: str


def incompatibility(
    remembered: Settings, announced: Settings, announced_ids: Collection[int]
) -> Incompatibility | None:
    """The first rule of the module docstring that ``announced`` breaks, or None.

    ``announced_ids`` are the identifiers the SETTINGS frame carried: omitting a setting
    is a rule of its own, even when its default would be harmless (an omitted
    MAX_FIELD_SECTION_SIZE means "unlimited", larger than any remembered limit).
    """
    remembered_capacity = remembered.qpack_max_table_capacity
    if remembered_capacity and (
        SettingId.QPACK_MAX_TABLE_CAPACITY not in announced_ids
        or announced.qpack_max_table_capacity != remembered_capacity
    ):
        said = (
            "leaves it out"
            if SettingId.QPACK_MAX_TABLE_CAPACITY not in announced_ids
            else f"say {announced.qpack_max_table_capacity}"
        )
        return Incompatibility(
            QpackErrorCode.QPACK_DECODER_STREAM_ERROR,
            f"the remembered QPACK_MAX_TABLE_CAPACITY is {remembered_capacity} and the SETTINGS"
            f" {said}; a remembered non-zero capacity must be repeated exactly",
            QPACK_SECTION,
        )
    for setting, value in _non_default(remembered):
        if setting not in announced_ids:
            return Incompatibility(
                ErrorCode.H3_SETTINGS_ERROR,
                f"the SETTINGS leave out {setting.name}, remembered with the non-default value"
                f" {value}; every setting that differs from its default must be listed",
                SECTION,
            )
    for name, before, after in _reductions(remembered, announced):
        return Incompatibility(
            ErrorCode.H3_SETTINGS_ERROR,
            f"{name} is lowered from {before} to {after}, which data sent in 0-RTT may already"
            " rely on",
            SECTION,
        )
    return None


def _non_default(settings: Settings) -> list[tuple[SettingId, int]]:
    """The known settings whose value differs from the default (Settings.pairs sends them)."""
    found = []
    for identifier, value in settings.pairs():
        setting = known_setting(identifier)
        if setting is not None:
            found.append((setting, value))
    return found


def _reductions(remembered: Settings, announced: Settings) -> list[tuple[str, str, str]]:
    """(name, remembered, announced) for every limit lowered or feature switched off."""
    found = []
    if announced.qpack_blocked_streams < remembered.qpack_blocked_streams:
        found.append(
            (
                "QPACK_BLOCKED_STREAMS",
                str(remembered.qpack_blocked_streams),
                str(announced.qpack_blocked_streams),
            )
        )
    before, after = remembered.max_field_section_size, announced.max_field_section_size
    if after is not None and (before is None or after < before):
        found.append(("MAX_FIELD_SECTION_SIZE", _limit(before), _limit(after)))
    if remembered.enable_connect_protocol and not announced.enable_connect_protocol:
        found.append(("ENABLE_CONNECT_PROTOCOL", "1", "0"))
    if remembered.h3_datagram and not announced.h3_datagram:
        found.append(("H3_DATAGRAM", "1", "0"))
    return found


def _limit(value: int | None) -> str:
    return "unlimited" if value is None else str(value)


def announced_ids(settings: Settings) -> set[int]:
    """The identifiers a SETTINGS frame built from ``settings`` carries."""
    return {identifier for identifier, _ in settings.pairs()}
