"""Carrying out a lesson's scenario: two endpoints, the actions in order, one trace.

The transport is `MemoryPair` (ideal in-order streams, RFC 9114 §6 left to a perfect QUIC)
or, for lessons where QUIC itself matters (ALPN, packets), `QuicMemoryPair` (real QUIC and
TLS 1.3 over in-memory datagrams, RFC 9114 §3.3). Both run on a virtual clock, so a lesson
gives the same trace, byte for byte, every time.

`run_scenario` returns a `Recording` (recording.py): the events, where each action's events
start and end (for selectors' ``during``), and what every stream name stands for: the labels
the actions gave (``page``, a push's label) and the roles (``client control stream``,
``server encoder stream``, ...). Each action is carried out by its handler (handlers.py). An
action the protocol refuses (a request after GOAWAY, a push beyond MAX_PUSH_ID) raises
`ActionFailed` with the reason, which the loader turns into an error at the action's line.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from h3learn.curriculum.actions import Action
from h3learn.curriculum.handlers import RUNNERS
from h3learn.curriculum.recording import ActionFailed, Network, Recording, Run, name_roles
from h3learn.curriculum.scenario import NEEDS_QUIC, SIDES, Scenario, SideSettings
from h3learn.events import EventLog
from h3learn.h3.connection import H3UsageError
from h3learn.transport.virtual_clock import VirtualClock


def run_scenario(
    scenario: Scenario,
    actions: list[Action],
    overrides: dict[str, dict[str, Any]] | None = None,
    on_action: Callable[[Action, Exception], Exception] | None = None,
) -> Recording:
    """Record the scenario (with ``overrides`` per side applied to its settings)."""
    overrides = overrides or {}
    clock = VirtualClock()
    log = EventLog(clock=clock)

    def connect(action: Action | None) -> Network:
        """A connection with the scenario's settings, changed by a ``new_connection``
        action's, then by the what-if ``overrides`` (which win)."""
        changed = {} if action is None else action.values
        client, server = (
            scenario.side(side)
            .with_overrides(changed.get(side, {}))
            .with_overrides(overrides.get(side, {}))
            for side in ("client", "server")
        )
        transport = changed.get("transport", scenario.transport)
        if transport == "memory":
            # The memory transport has no flow control: QUIC settings inherited from the
            # scenario or a what-if do nothing there, but asking for one here is a mistake.
            for side in SIDES:
                quic_only = SideSettings(changed.get(side, {})).quic_keys()
                if quic_only:
                    raise ActionFailed(f"{side}.{quic_only[0]} {NEEDS_QUIC}", side)
        return Network(transport, client, server, log, clock)

    run = Run(connect(None), Recording(events=log.events))
    run.connect = connect
    if scenario.exchange_settings_first or scenario.transport == "quic":
        run.network.deliver()
    # After the first delivery: over QUIC the server opens its streams only then.
    name_roles(run)
    for action in actions:
        start = len(log.events)
        if action.id is not None:
            run.recording.action_ids[action.id] = action.index
        try:
            RUNNERS[action.do](run, action)
            if action.deliver:
                run.network.deliver()
        except (ActionFailed, H3UsageError, ValueError, KeyError) as error:
            if on_action is None:
                raise
            raise on_action(action, error) from None
        run.recording.action_ranges.append((start, len(log.events)))
    return run.recording
