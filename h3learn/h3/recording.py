"""RFC 9114 §6-§8 in the trace: how a connection records what it does (docs/events.md).

Every frame an `H3Connection` sends or reads, every stream it opens, every error and every
setting becomes an ``http3`` event, so that a learner can step through the exchange byte by
byte. `ConnectionTrace` is the connection's one way to record: it knows which endpoint it
speaks for ("client → server") and builds nothing when recording is off
(``recorder.enabled``), which is what the speed benchmark measures.
"""

from __future__ import annotations

from typing import Any

from h3learn.events import Recorder
from h3learn.h3.errors import code_name
from h3learn.h3.frame_parser import ParsedFrame
from h3learn.h3.settings import Settings, qlog_setting, setting_name
from h3learn.h3.stream_types import stream_type_section


class ConnectionTrace:
    """The events of one endpoint of an HTTP/3 connection, in the ``http3`` category."""

    def __init__(self, recorder: Recorder, *, is_client: bool) -> None:
        self.recorder = recorder
        self.is_client = is_client

    @property
    def me(self) -> str:
        return "client" if self.is_client else "server"

    @property
    def peer(self) -> str:
        return "server" if self.is_client else "client"

    @property
    def arrow(self) -> str:
        """The direction of what this endpoint sends."""
        return "client → server" if self.is_client else "server → client"

    def record(
        self,
        name: str,
        stream_id: int | None,
        data: dict[str, Any],
        *,
        raw: bytes = b"",
        fields: tuple[Any, ...] = (),
        rfc: tuple[str, ...] = (),
        summary: str = "",
    ) -> None:
        if self.recorder.enabled:
            self.recorder.record(
                category="http3",
                name=name,
                stream_id=stream_id,
                data=data,
                raw=raw,
                fields=fields,
                rfc=rfc,
                summary=summary,
            )

    def frame_parsed(self, stream_id: int | None, parsed: ParsedFrame) -> None:
        """A frame read from the peer (RFC 9114 §7), with the labels of its bytes."""
        if not self.recorder.enabled:
            return
        arrow = "server → client" if self.is_client else "client → server"
        self.record(
            "frame_parsed",
            stream_id,
            {
                "stream_id": stream_id,
                "length": parsed.frame.payload_length(),
                "frame": parsed.frame.qlog(),
            },
            raw=parsed.raw,
            fields=parsed.spans,
            rfc=(parsed.frame.section,),
            summary=f"{arrow}: {parsed.frame.describe()} on stream {stream_id}",
        )

    def stream_frame(
        self, name: str, stream_id: int, code: int, why: str, rfc: str, direction: str
    ) -> None:
        """A STOP_SENDING or RESET_STREAM (RFC 9000 §19.5, §19.4), sent or received."""
        if not self.recorder.enabled:
            return
        frame = "STOP_SENDING" if name == "stop_sending" else "RESET_STREAM"
        section = "9000#19.5" if name == "stop_sending" else "9000#19.4"
        if direction == "sent":
            summary = f"{self.arrow}: {frame} on stream {stream_id}, {code_name(code)}: {why}"
        else:
            summary = f"{self.me} receives {frame} on stream {stream_id}, {code_name(code)}"
        self.record(
            name,
            stream_id,
            {
                "stream_id": stream_id,
                "code": code,
                "code_name": code_name(code),
                "reason": why,
                "rfc": rfc,
                "direction": direction,
            },
            rfc=(section, rfc) if rfc != section else (section,),
            summary=summary,
        )

    def stream_error(self, stream_id: int, code: int, rule: str, rfc: str, direction: str) -> None:
        """A stream error or cancellation (RFC 9114 §8, §4.1.1), by this endpoint or the peer."""
        who = self.me if direction == "sent" else "peer"
        self.record(
            "stream_error",
            stream_id,
            {
                "stream_id": stream_id,
                "code": code,
                "code_name": code_name(code),
                "rule": rule,
                "rfc": rfc,
                "direction": direction,
            },
            rfc=(rfc,),
            summary=f"{who} resets stream {stream_id}: {code_name(code)}: {rule}",
        )


def settings_json(settings: Settings) -> list[dict[str, Any]]:
    """SETTINGS as an event records them (RFC 9114 §7.2.4): id, name, value, qlog form."""
    return [
        {
            "id": identifier,
            "name": setting_name(identifier),
            "value": value,
            "qlog": qlog_setting(identifier, value),
        }
        for identifier, value in settings.pairs()
    ]


def stream_type_sections(stream_type: int) -> tuple[str, ...]:
    """What a ``stream_type_set`` event cites: §6.2, and §6.2.3 for a reserved type."""
    section = stream_type_section(stream_type)
    return ("9114#6.2",) if section == "9114#6.2" else ("9114#6.2", section)
