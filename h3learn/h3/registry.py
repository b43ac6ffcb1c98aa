"""RFC 9114 §11.2: the shape the HTTP/3 registries share (frame types, settings, stream types).

Each of these registries gives meanings to the values of one variable-length integer, and a
value a receiver reads is always one of four things:

    registered      it has a name and a meaning                 e.g. SETTINGS (0x04)
    HTTP/2 only     HTTP/2 used it for something HTTP/3 drops;  e.g. PING (0x06): a frame
                    receiving it is an error                    type no one may send
    reserved        0x1f * N + 0x21: means nothing, sent to     e.g. 0x21, 0x40
                    check that receivers ignore what they do
                    not know (RFC 9114 §7.2.8, §7.2.4.1, §6.2.3)
    unknown         anything else: ignored (RFC 9114 §9)

`Registry` holds one registry's enum and its HTTP/2 leftovers and answers the two questions
every module asks: which registered value is this, and what is it called.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import IntEnum
from typing import Generic, TypeVar

from h3learn.h3.errors import is_reserved

Member = TypeVar("Member", bound=IntEnum)


@dataclass(frozen=True)
class Registry(Generic[Member]):
    """One registry: its registered values (an IntEnum) and its HTTP/2 leftovers."""

    members: type[Member]
    #: What a value is called in messages: "frame type", "setting", "stream type".
    noun: str
    #: HTTP/2 values HTTP/3 forbids, with their HTTP/2 names.
    http2_only: Mapping[int, str] = field(default_factory=dict)
    _by_value: dict[int, Member] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_by_value", {int(m): m for m in self.members})

    def known(self, value: int) -> Member | None:
        """The registered member with this value, or None."""
        return self._by_value.get(value)

    def name(self, value: int) -> str:
        """e.g. "SETTINGS", "PING (HTTP/2 only)", "reserved frame type 0x21", "unknown ..."."""
        known = self._by_value.get(value)
        if known is not None:
            return known.name
        if value in self.http2_only:
            return f"{self.http2_only[value]} (HTTP/2 only)"
        if is_reserved(value):
            return f"reserved {self.noun} {value:#x}"
        return f"unknown {self.noun} {value:#x}"
