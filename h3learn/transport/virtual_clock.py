"""RFC 9000 §10.1, §13.2.1: the virtual clock a scenario runs on, the same every run.

QUIC's timers (the ACK delay of RFC 9000 §13.2.1, loss detection, the idle timeout of
§10.1) and every event's ``time`` read this clock, never the wall clock, and only the
transport moves it on: the in-memory QUIC pair (quic_memory.py) to the next delivery or
timer that is due, a lesson's ``wait`` action by the time it names. So a scenario gives
the same times, run after run.

    clock = VirtualClock()
    log = EventLog(clock=clock)      # every event is stamped with clock()
    clock.seconds += 0.005           # what a transport does; the protocol never does
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class VirtualClock:
    """Seconds since the start of the exchange; calling it gives milliseconds (for EventLog)."""

    seconds: float = 0.0

    def __call__(self) -> float:
        return round(self.seconds * 1000.0, 3)
