"""RFC 9114 §7.2.4.1: the settings an endpoint announces in its SETTINGS frame.

A SETTINGS frame (RFC 9114 §7.2.4; the frame itself is in `h3learn.h3.frames`) is a list of
(identifier, value) pairs, both variable-length integers. Each one describes the sender: a
limit it imposes on what it receives, or an extension it is willing to use. Nothing is
negotiated; each side reads the other's list and adapts.

    identifier  name                       default    defined in
    0x01        QPACK_MAX_TABLE_CAPACITY   0          RFC 9204 §5
    0x06        MAX_FIELD_SECTION_SIZE     unlimited  RFC 9114 §7.2.4.1
    0x07        QPACK_BLOCKED_STREAMS      0          RFC 9204 §5
    0x08        ENABLE_CONNECT_PROTOCOL    0          RFC 9220 §3 (RFC 8441 §3)
    0x33        H3_DATAGRAM                0          RFC 9297 §2.1.1

The rules a receiver checks here:

- identifiers 0x02..0x05 are HTTP/2 settings with no HTTP/3 meaning; receiving one is a
  connection error of type H3_SETTINGS_ERROR (RFC 9114 §7.2.4.1, Appendix A.3);
- an identifier may appear only once; a receiver MAY treat a repeat as H3_SETTINGS_ERROR
  (RFC 9114 §7.2.4). This project does (a deliberately strict reading);
- ENABLE_CONNECT_PROTOCOL and H3_DATAGRAM take only the values 0 and 1;
- reserved identifiers (``0x1f * N + 0x21``) and identifiers this endpoint does not know are
  ignored (RFC 9114 §7.2.4, §9). `Settings` keeps them, in order, so the UI can show them.

Until the peer's SETTINGS frame arrives, every setting has its default (RFC 9114 §7.2.4.2).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import IntEnum
from typing import TYPE_CHECKING, Any

from h3learn.h3.errors import ErrorCode, H3ConnectionError, is_reserved
from h3learn.h3.registry import Registry

if TYPE_CHECKING:
    # Only for the type of `Settings.from_frame`'s argument: frames.py imports this module.
    from h3learn.h3.frames import SettingsFrame


class SettingId(IntEnum):
    """The "HTTP/3 Settings" registry (RFC 9114 §11.2.2), names without ``SETTINGS_``."""

    QPACK_MAX_TABLE_CAPACITY = 0x01
    MAX_FIELD_SECTION_SIZE = 0x06
    QPACK_BLOCKED_STREAMS = 0x07
    ENABLE_CONNECT_PROTOCOL = 0x08
    H3_DATAGRAM = 0x33


#: RFC 9114 §7.2.4.1 and Appendix A.3: HTTP/2 settings that HTTP/3 reserves and forbids.
HTTP2_ONLY_SETTINGS: dict[int, str] = {
    0x02: "SETTINGS_ENABLE_PUSH",
    0x03: "SETTINGS_MAX_CONCURRENT_STREAMS",
    0x04: "SETTINGS_INITIAL_WINDOW_SIZE",
    0x05: "SETTINGS_MAX_FRAME_SIZE",
}

#: RFC 9114 §11.2.2 lists 0x00 as "Reserved" too, but it was never an HTTP/2 setting, so the
#: §7.2.4.1 rule that makes HTTP/2 identifiers an error does not name it. This project reads
#: it as an identifier with no meaning, ignored like any unknown one (aioquic rejects it).
RESERVED_SETTING_ZERO = 0x00

#: What each setting says about its sender, and where it is defined.
SETTING_INFO: dict[SettingId, tuple[str, str]] = {
    SettingId.QPACK_MAX_TABLE_CAPACITY: (
        "the largest dynamic table capacity, in bytes, the sender's QPACK decoder accepts "
        "(0: no dynamic table)",
        "9204#5",
    ),
    SettingId.MAX_FIELD_SECTION_SIZE: (
        "the largest field section, counted as in RFC 9114 §4.2.2, the sender will accept",
        "9114#7.2.4.1",
    ),
    SettingId.QPACK_BLOCKED_STREAMS: (
        "how many streams may wait at once for QPACK encoder instructions the sender lacks",
        "9204#5",
    ),
    SettingId.ENABLE_CONNECT_PROTOCOL: (
        "1: the sender accepts extended CONNECT requests with a :protocol pseudo-header",
        "9220#3",
    ),
    SettingId.H3_DATAGRAM: (
        "1: the sender is willing to receive HTTP/3 datagrams",
        "9297#2.1.1",
    ),
}

#: Settings whose value must be 0 or 1, with the section that says so.
BOOLEAN_SETTINGS: dict[SettingId, str] = {
    # RFC 8441 §3 requires 0 or 1 without naming an error; RFC 9220 §3 carries the setting
    # over unchanged, and H3_SETTINGS_ERROR is the code RFC 9114 §8.1 gives a bad payload.
    SettingId.ENABLE_CONNECT_PROTOCOL: "9220#3",
    # RFC 9297 §2.1.1 names H3_SETTINGS_ERROR itself.
    SettingId.H3_DATAGRAM: "9297#2.1.1",
}

#: The qlog names of settings (http3 SETTINGS frame, ``HTTP3Setting.name``).
QLOG_SETTING_NAME: dict[SettingId, str] = {
    setting: f"settings_{setting.name.lower()}" for setting in SettingId
}


SETTINGS = Registry(SettingId, "setting", HTTP2_ONLY_SETTINGS)
known_setting = SETTINGS.known


def is_reserved_setting(identifier: int) -> bool:
    """RFC 9114 §7.2.4.1: ``0x1f * N + 0x21`` identifiers are reserved and have no meaning."""
    return is_reserved(identifier)


def setting_name(identifier: int) -> str:
    """e.g. "QPACK_MAX_TABLE_CAPACITY", "reserved setting 0x21", "unknown setting 0x2b603742"."""
    return SETTINGS.name(identifier)


def explain_setting_identifier(identifier: int) -> str:
    """One sentence for the label of a setting's Identifier field."""
    known = known_setting(identifier)
    if known is not None:
        meaning, _ = SETTING_INFO[known]
        return f"Setting {identifier:#04x}, {known.name}: {meaning}."
    if identifier in HTTP2_ONLY_SETTINGS:
        return (
            f"Setting {identifier:#04x} is HTTP/2's {HTTP2_ONLY_SETTINGS[identifier]}, which "
            "HTTP/3 forbids: receiving it is H3_SETTINGS_ERROR (RFC 9114 §7.2.4.1)."
        )
    if is_reserved_setting(identifier):
        return (
            f"Setting {identifier:#x} is reserved (RFC 9114 §7.2.4.1): it means nothing and is "
            "sent to check that receivers ignore settings they do not know."
        )
    return f"Setting {identifier:#x} is unknown here, so it is ignored (RFC 9114 §7.2.4)."


def explain_setting_value(identifier: int) -> str:
    """One sentence for the label of a setting's Value field."""
    known = known_setting(identifier)
    if known is not None:
        return f"The value of {known.name}."
    return "The value of a setting the receiver ignores."


def qlog_setting(identifier: int, value: int) -> dict[str, Any]:
    """One entry of a qlog SETTINGS frame: a known name, "reserved", or "unknown" + the id."""
    known = known_setting(identifier)
    if known is not None:
        return {"name": QLOG_SETTING_NAME[known], "value": value}
    if is_reserved_setting(identifier) or identifier in HTTP2_ONLY_SETTINGS:
        return {"name": "reserved", "value": value}
    return {"name": "unknown", "name_bytes": identifier, "value": value}


def check_settings(pairs: Iterable[tuple[int, int]]) -> None:
    """Raise H3ConnectionError (H3_SETTINGS_ERROR) if the pairs break a rule above."""
    seen: set[int] = set()
    for identifier, value in pairs:
        if identifier in HTTP2_ONLY_SETTINGS:
            raise H3ConnectionError(
                ErrorCode.H3_SETTINGS_ERROR,
                f"setting {identifier:#04x} is HTTP/2's {HTTP2_ONLY_SETTINGS[identifier]}, "
                "which has no HTTP/3 meaning and must not be sent",
                "9114#7.2.4.1",
            )
        if identifier in seen:
            raise H3ConnectionError(
                ErrorCode.H3_SETTINGS_ERROR,
                f"{setting_name(identifier)} appears twice in one SETTINGS frame",
                "9114#7.2.4",
            )
        seen.add(identifier)
        known = known_setting(identifier)
        if known is not None and known in BOOLEAN_SETTINGS and value not in (0, 1):
            raise H3ConnectionError(
                ErrorCode.H3_SETTINGS_ERROR,
                f"{known.name} is {value}, but it may only be 0 or 1",
                BOOLEAN_SETTINGS[known],
            )


@dataclass(frozen=True, slots=True)
class Settings:
    """One endpoint's settings: the defaults (RFC 9114 §7.2.4.2) until its SETTINGS arrives."""

    #: RFC 9204 §5: 0 means the peer's encoder may not use the dynamic table at all.
    qpack_max_table_capacity: int = 0
    #: RFC 9114 §4.2.2: None means unlimited (the default).
    max_field_section_size: int | None = None
    #: RFC 9204 §5: 0 means no stream may ever be blocked.
    qpack_blocked_streams: int = 0
    #: RFC 9220 §3.
    enable_connect_protocol: bool = False
    #: RFC 9297 §2.1.1.
    h3_datagram: bool = False
    #: Reserved and unknown settings, in the order received: ignored, kept for display.
    ignored: tuple[tuple[int, int], ...] = ()

    @classmethod
    def from_pairs(cls, pairs: Iterable[tuple[int, int]]) -> Settings:
        """Check the pairs (see `check_settings`) and apply them over the defaults."""
        pairs = tuple(pairs)
        check_settings(pairs)
        values: dict[SettingId, int] = {}
        ignored: list[tuple[int, int]] = []
        for identifier, value in pairs:
            known = known_setting(identifier)
            if known is None:
                ignored.append((identifier, value))
            else:
                values[known] = value
        return cls(
            qpack_max_table_capacity=values.get(SettingId.QPACK_MAX_TABLE_CAPACITY, 0),
            max_field_section_size=values.get(SettingId.MAX_FIELD_SECTION_SIZE),
            qpack_blocked_streams=values.get(SettingId.QPACK_BLOCKED_STREAMS, 0),
            enable_connect_protocol=values.get(SettingId.ENABLE_CONNECT_PROTOCOL, 0) == 1,
            h3_datagram=values.get(SettingId.H3_DATAGRAM, 0) == 1,
            ignored=tuple(ignored),
        )

    @classmethod
    def from_frame(cls, frame: SettingsFrame) -> Settings:
        """The settings a received SETTINGS frame announces; raises H3_SETTINGS_ERROR."""
        return cls.from_pairs(frame.settings)

    def pairs(self) -> tuple[tuple[int, int], ...]:
        """The pairs to send: every setting that differs from its default, then ``ignored``.

        RFC 9114 §7.2.4.2 asks a server that accepts 0-RTT to include every setting that
        differs from its default; sending only those is enough in every case.
        """
        pairs: list[tuple[int, int]] = []
        if self.qpack_max_table_capacity:
            pairs.append((SettingId.QPACK_MAX_TABLE_CAPACITY, self.qpack_max_table_capacity))
        if self.max_field_section_size is not None:
            pairs.append((SettingId.MAX_FIELD_SECTION_SIZE, self.max_field_section_size))
        if self.qpack_blocked_streams:
            pairs.append((SettingId.QPACK_BLOCKED_STREAMS, self.qpack_blocked_streams))
        if self.enable_connect_protocol:
            pairs.append((SettingId.ENABLE_CONNECT_PROTOCOL, 1))
        if self.h3_datagram:
            pairs.append((SettingId.H3_DATAGRAM, 1))
        return (*pairs, *self.ignored)

    def describe(self) -> str:
        """e.g. "QPACK_MAX_TABLE_CAPACITY=4096, QPACK_BLOCKED_STREAMS=16, ... (default)"."""
        default = Settings()
        shown = [
            ("QPACK_MAX_TABLE_CAPACITY", self.qpack_max_table_capacity),
            ("MAX_FIELD_SECTION_SIZE", self.max_field_section_size),
            ("QPACK_BLOCKED_STREAMS", self.qpack_blocked_streams),
            ("ENABLE_CONNECT_PROTOCOL", int(self.enable_connect_protocol)),
            ("H3_DATAGRAM", int(self.h3_datagram)),
        ]
        parts = []
        for name, value in shown:
            text = "unlimited" if value is None else str(value)
            is_default = getattr(default, name.lower()) == value
            parts.append(f"{name}={text}" + (" (default)" if is_default else ""))
        line = ", ".join(parts)
        if self.ignored:
            line += "; ignored: " + ", ".join(
                f"{setting_name(identifier)}={value}" for identifier, value in self.ignored
            )
        return line

    def qlog(self) -> dict[str, Any]:
        """The data of a qlog http3 ``parameters_set`` event (the caller adds ``initiator``)."""
        data: dict[str, Any] = {
            "max_table_capacity": self.qpack_max_table_capacity,
            "blocked_streams_count": self.qpack_blocked_streams,
            "extended_connect": int(self.enable_connect_protocol),
            "h3_datagram": int(self.h3_datagram),
        }
        if self.max_field_section_size is not None:
            data["max_field_section_size"] = self.max_field_section_size
        return data
