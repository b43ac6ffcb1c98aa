"""The hub lists a capture as ``live`` from the moment its journal exists (docs/web-api.md).

The list of captures (GET /api/captures) is made from the captures folder and the hub's
live captures. A journal in the folder that the hub did not yet know of would be read as a
finished capture: ``closed``, no view, no events. The journal is therefore written only
after the hub knows the capture.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from h3learn.capture.hub import CaptureHub
from h3learn.trace.captures import LIVE, CaptureStore
from h3learn.trace.store import LiveTrace
from h3learn.transport import udp_shared


def test_a_capture_is_listed_live_as_soon_as_its_journal_exists(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    hub = CaptureHub(CaptureStore(tmp_path / "captures"))
    seen: list[list[dict[str, Any]]] = []

    class ListedOnCreation(LiveTrace):
        """A journal that lists the captures the moment its file is there."""

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            seen.append(hub.rows())

    monkeypatch.setattr(udp_shared, "LiveTrace", ListedOnCreation)
    recording = hub.recording_factory()("a connection", {"peer_address": "127.0.0.1:50000"})
    assert [[row["state"] for row in rows] for rows in seen] == [[LIVE]]
    assert hub.rows()[0]["state"] == LIVE
    assert recording.finish() is None  # no event: the capture is gone again
    assert hub.rows() == []


def test_a_journal_that_cannot_be_made_leaves_no_live_capture(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    hub = CaptureHub(CaptureStore(tmp_path / "captures"))

    def refuse(*args: Any, **kwargs: Any) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(udp_shared, "LiveTrace", refuse)
    with pytest.raises(OSError):
        hub.recording_factory()("a connection", {"peer_address": "127.0.0.1:50000"})
    assert hub.rows() == [] and hub.live_ids() == []
