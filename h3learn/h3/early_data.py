"""RFC 9114 §7.2.4.2: the connection's side of 0-RTT, settings remembered from a session.

A client resuming a connection may send requests in 0-RTT, before the server's SETTINGS
can arrive. It then follows the settings the server announced on the connection that gave
the session ticket (`restore_settings`). The server decides whether to accept 0-RTT
(`accepts_early_data`): only if a client following the remembered settings cannot break
its current ones (the rules are the table of zero_rtt.py). When the handshake is over,
`handshake_completed` tells the client which settings it must follow until the SETTINGS
arrive: the remembered ones, or, if 0-RTT was refused, the defaults; requests sent in
refused 0-RTT that relied on more than the defaults are lost, and the client closes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from h3learn.h3 import zero_rtt
from h3learn.h3.errors import ErrorCode, H3UsageError
from h3learn.h3.http_events import StreamReset
from h3learn.h3.recording import settings_json
from h3learn.h3.settings import Settings

if TYPE_CHECKING:
    from h3learn.h3.connection import H3Connection


def restore_settings(conn: H3Connection, remembered: Settings) -> None:
    """Client: start from the server's remembered settings instead of the defaults."""
    conn.peer_settings = remembered
    conn.encoder.apply_settings(
        remembered.qpack_max_table_capacity, remembered.qpack_blocked_streams
    )
    conn.trace.record(
        "parameters_restored",
        None,
        {"owner": "remote", "settings": settings_json(remembered)},
        rfc=(zero_rtt.SECTION,),
        summary=(
            f"client restores the server's SETTINGS remembered from the previous"
            f" connection, and follows them in 0-RTT: {remembered.describe()}"
        ),
    )


def accepts_early_data(conn: H3Connection, remembered: Settings) -> bool:
    """Server: may 0-RTT data be accepted from a client that remembered ``remembered``?

    RFC 9114 §7.2.4.2: only if a client that follows the remembered settings cannot
    break this server's current ones. The transport asks while the handshake decides
    whether to resume, and refuses 0-RTT when the answer is no.
    """
    if conn.is_client:
        raise H3UsageError("only a server decides on 0-RTT (RFC 9114 §7.2.4.2)")
    problem = zero_rtt.incompatibility(
        remembered, conn.local_settings, zero_rtt.announced_ids(conn.local_settings)
    )
    accepted = problem is None
    verb = "accepts" if accepted else "refuses"
    reason = (
        "the remembered settings are compatible with this server's"
        if problem is None
        else f"a client following its remembered settings could break this server's: {problem.rule}"
    )
    record_decision(
        conn, accepted, reason, remembered, conn.local_settings, f"server {verb} 0-RTT: {reason}"
    )
    return accepted


def handshake_completed(conn: H3Connection, *, early_data_accepted: bool) -> None:
    """The QUIC handshake finished; ``early_data_accepted``: the server took 0-RTT data.

    A client that remembered settings learns here which settings it must follow until
    the server's SETTINGS arrive: the remembered ones (0-RTT accepted), or the defaults
    (RFC 9114 §7.2.4.2: a 1-RTT connection starts from the defaults).
    """
    conn.early_data_accepted = early_data_accepted
    remembered = conn.remembered_settings
    if not conn.is_client or remembered is None:
        return
    lost = not early_data_accepted and relied_on_remembered(conn, remembered)
    if early_data_accepted:
        reason = (
            "the server accepted 0-RTT, so its SETTINGS must keep every remembered value"
            " the 0-RTT data may rely on"
        )
    elif lost:
        reason = (
            "the server refused 0-RTT, so what was sent in it is lost and must not be"
            " resent as it was (RFC 9001 §4.6.2): it followed remembered settings that a"
            " 1-RTT connection does not have. The client closes this connection; its"
            " requests were not processed and may be retried on a new one"
        )
    else:
        reason = (
            "the server refused 0-RTT: this is a 1-RTT connection, so the server's"
            " settings are the defaults until its SETTINGS arrive"
        )
    if not early_data_accepted and not conn.peer_settings_received:
        conn.peer_settings = Settings()
        if not lost:
            conn.encoder.apply_settings(0, 0)
    record_decision(
        conn, early_data_accepted, reason, remembered, conn.peer_settings, f"client: {reason}"
    )
    if lost:
        for stream in list(conn._requests.values()):
            conn._events.append(
                StreamReset(
                    stream_id=stream.stream_id,
                    error_code=ErrorCode.H3_REQUEST_REJECTED,
                    retry_safe=True,
                    rule="it refused the 0-RTT data the request was sent in",
                    rfc="9114#7.2.4.2",
                )
            )
        conn.close(ErrorCode.H3_NO_ERROR, "0-RTT was refused after requests were sent in it")


def record_decision(
    conn: H3Connection,
    accepted: bool,
    reason: str,
    remembered: Settings,
    settings: Settings,
    summary: str,
) -> None:
    """Record whether 0-RTT is accepted, why, and the settings in force after it."""
    conn.trace.record(
        "early_data_decision",
        None,
        {
            "accepted": accepted,
            "reason": reason,
            "remembered": settings_json(remembered),
            "settings": settings_json(settings),
            "rfc": zero_rtt.SECTION,
        },
        rfc=(zero_rtt.SECTION,),
        summary=summary,
    )


def relied_on_remembered(conn: H3Connection, remembered: Settings) -> bool:
    """Did this client send something only the remembered settings allow? (Strictly:
    did it use the QPACK table or send a request, while the remembered settings allow
    more than the defaults.)"""
    if conn.peer_settings_received:
        return False
    used = conn.encoder.capacity_sent or bool(conn._requests)
    return used and zero_rtt.incompatibility(remembered, Settings(), ()) is not None
